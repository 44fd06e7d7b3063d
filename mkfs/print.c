// SPDX-License-Identifier: GPL-2.0
/*
 * The geometry report, laid out as mkfs.xfs prints it so that scripts and
 * habits that read mkfs.xfs's output read ours: with exchange-range or
 * parent pointers as 6.10 prints it (an exchange= line, parent= under
 * naming), without them as 6.1 does (the layout Debian's mkfs.xfs prints).
 */
#include <stdbool.h>
#include <stdio.h>

#include "mkfs/write.h"

void mkfs_print_geometry(const char *target, const char *logdev, const char *rtdev,
			 const struct mkfs_plan *p)
{
	const struct xfs_sb *sb = &p->sb;
	bool six10 = p->exchange || p->parent;

	printf("meta-data=%-22s isize=%-6u agcount=%u, agsize=%u blks\n", target, p->inodesize,
	       p->agcount, p->agblocks);
	printf("         =%-22s sectsz=%-5u attr=%u, projid32bit=%u\n", "", p->sectsize, 2, 1);
	printf("         =%-22s crc=%-8u finobt=%u, sparse=%u, rmapbt=%u\n", "", 1, p->finobt,
	       p->sparse, p->rmapbt);
	printf("         =%-22s reflink=%-4u bigtime=%u inobtcount=%u nrext64=%u\n", "", p->reflink,
	       p->bigtime, p->inobtcount, p->nrext64);
	if (six10)
		printf("         =%-22s exchange=%-3u\n", "", p->exchange);
	printf("data     =%-22s bsize=%-6u blocks=%llu, imaxpct=%u\n", "", p->blocksize,
	       (unsigned long long)p->dblocks, p->imaxpct);
	printf("         =%-22s sunit=%-6u swidth=%u blks\n", "", p->dsunit, p->dswidth);
	if (six10)
		printf("naming   =version %-14u bsize=%-6u ascii-ci=%d, ftype=%d, parent=%d\n", 2,
		       p->dirblocksize, 0, 1, p->parent);
	else
		printf("naming   =version %-14u bsize=%-6u ascii-ci=%d, ftype=%d\n", 2,
		       p->dirblocksize, 0, 1);
	printf("log      =%-22s bsize=%-6u blocks=%u, version=%d\n",
	       p->extlog && logdev ? logdev : "internal log", p->blocksize,
	       p->logblocks, 2);
	printf("         =%-22s sectsz=%-5u sunit=%u blks, lazy-count=%d\n", "",
	       sb->sb_logsectsize ? sb->sb_logsectsize : 512,
	       sb->sb_logsunit > 1 ? sb->sb_logsunit / p->blocksize : 0, 1);
	printf("realtime =%-22s extsz=%-6u blocks=%llu, rtextents=%llu\n",
	       p->rblocks && rtdev ? rtdev : "none", sb->sb_rextsize * p->blocksize,
	       (unsigned long long)p->rblocks, (unsigned long long)p->rextents);
}
