// SPDX-License-Identifier: GPL-2.0
/*
 * Geometry reports for --geometry: xfs_info-style text, and one JSON object
 * whose keys are xfs_db's superblock field names with the values xfs_db
 * prints (numbers as numbers, UUIDs and the label as strings, NULL inode
 * numbers as null).
 */
#include <inttypes.h>
#include <string.h>
#include <uuid/uuid.h>

#include "check/geometry.h"

static void uuid_str(const void *u, char out[37])
{
	uuid_unparse_lower(u, out);
}

void check_print_geometry_text(const struct fs *fs, const char *path, FILE *out)
{
	const struct xfs_sb *sb = &fs->sb;
	const struct fs_geom *g = &fs->g;

	fprintf(out, "meta-data=%-22s isize=%-6u agcount=%u, agsize=%u blks\n", path,
		sb->sb_inodesize, sb->sb_agcount, sb->sb_agblocks);
	fprintf(out, "         =%-22s sectsz=%-5u attr=%u, projid32bit=%u\n", "", sb->sb_sectsize,
		g->attr2 ? 2 : 1, g->projid32 ? 1 : 0);
	fprintf(out, "         =%-22s crc=%-8u finobt=%u, sparse=%u, rmapbt=%u\n", "", g->crc,
		g->finobt, g->spinodes, g->rmapbt);
	fprintf(out, "         =%-22s reflink=%-4u bigtime=%u inobtcount=%u nrext64=%u\n", "",
		g->reflink, g->bigtime, g->inobtcount, g->nrext64);
	fprintf(out, "data     =%-22s bsize=%-6u blocks=%" PRIu64 ", imaxpct=%u\n", "",
		sb->sb_blocksize, (uint64_t)sb->sb_dblocks, sb->sb_imax_pct);
	fprintf(out, "         =%-22s sunit=%-6u swidth=%u blks\n", "", sb->sb_unit, sb->sb_width);
	fprintf(out, "naming   =version 2              bsize=%-6u ascii-ci=%u, ftype=%u\n",
		g->dirblksize, 0, g->ftype);
	fprintf(out, "log      =%-22s bsize=%-6u blocks=%u, version=2\n",
		g->log_internal ? "internal log" : "external", sb->sb_blocksize, sb->sb_logblocks);
	fprintf(out, "         =%-22s sectsz=%-5u sunit=%u blks, lazy-count=%u\n", "",
		sb->sb_logsectsize ? sb->sb_logsectsize : 512,
		sb->sb_logsunit > 1 ? sb->sb_logsunit / sb->sb_blocksize : 0, g->lazysbcount);
	fprintf(out, "realtime =%-22s extsz=%-6u blocks=%" PRIu64 ", rtextents=%" PRIu64 "\n",
		sb->sb_rblocks ? "external" : "none", sb->sb_rextsize * sb->sb_blocksize,
		(uint64_t)sb->sb_rblocks, (uint64_t)sb->sb_rextents);
}

static void jnum(FILE *out, bool *first, const char *key, uint64_t v)
{
	fprintf(out, "%s\"%s\":%" PRIu64, *first ? "" : ",", key, v);
	*first = false;
}

static void jino(FILE *out, bool *first, const char *key, uint64_t v)
{
	if (v == NULLFSINO) {
		fprintf(out, "%s\"%s\":null", *first ? "" : ",", key);
		*first = false;
	} else {
		jnum(out, first, key, v);
	}
}

static void jstr(FILE *out, bool *first, const char *key, const char *v)
{
	fprintf(out, "%s\"%s\":", *first ? "" : ",", key);
	fs_json_string(out, v);
	*first = false;
}

void check_print_geometry_json(const struct fs *fs, FILE *out)
{
	const struct xfs_sb *sb = &fs->sb;
	char u[37], label[XFSLABEL_MAX + 1];
	bool f = true;

	fputc('{', out);
	jnum(out, &f, "magicnum", sb->sb_magicnum);
	jnum(out, &f, "blocksize", sb->sb_blocksize);
	jnum(out, &f, "dblocks", sb->sb_dblocks);
	jnum(out, &f, "rblocks", sb->sb_rblocks);
	jnum(out, &f, "rextents", sb->sb_rextents);
	uuid_str(&sb->sb_uuid, u);
	jstr(out, &f, "uuid", u);
	jnum(out, &f, "logstart", sb->sb_logstart);
	jino(out, &f, "rootino", sb->sb_rootino);
	jino(out, &f, "rbmino", sb->sb_rbmino);
	jino(out, &f, "rsumino", sb->sb_rsumino);
	jnum(out, &f, "rextsize", sb->sb_rextsize);
	jnum(out, &f, "agblocks", sb->sb_agblocks);
	jnum(out, &f, "agcount", sb->sb_agcount);
	jnum(out, &f, "rbmblocks", sb->sb_rbmblocks);
	jnum(out, &f, "logblocks", sb->sb_logblocks);
	jnum(out, &f, "versionnum", sb->sb_versionnum);
	jnum(out, &f, "sectsize", sb->sb_sectsize);
	jnum(out, &f, "inodesize", sb->sb_inodesize);
	jnum(out, &f, "inopblock", sb->sb_inopblock);
	memcpy(label, sb->sb_fname, XFSLABEL_MAX);
	label[XFSLABEL_MAX] = 0;
	jstr(out, &f, "fname", label);
	jnum(out, &f, "blocklog", sb->sb_blocklog);
	jnum(out, &f, "sectlog", sb->sb_sectlog);
	jnum(out, &f, "inodelog", sb->sb_inodelog);
	jnum(out, &f, "inopblog", sb->sb_inopblog);
	jnum(out, &f, "agblklog", sb->sb_agblklog);
	jnum(out, &f, "rextslog", sb->sb_rextslog);
	jnum(out, &f, "inprogress", sb->sb_inprogress);
	jnum(out, &f, "imax_pct", sb->sb_imax_pct);
	jnum(out, &f, "icount", sb->sb_icount);
	jnum(out, &f, "ifree", sb->sb_ifree);
	jnum(out, &f, "fdblocks", sb->sb_fdblocks);
	jnum(out, &f, "frextents", sb->sb_frextents);
	jino(out, &f, "uquotino", sb->sb_uquotino);
	jino(out, &f, "gquotino", sb->sb_gquotino);
	jnum(out, &f, "qflags", sb->sb_qflags);
	jnum(out, &f, "flags", sb->sb_flags);
	jnum(out, &f, "shared_vn", sb->sb_shared_vn);
	jnum(out, &f, "inoalignmt", sb->sb_inoalignmt);
	jnum(out, &f, "unit", sb->sb_unit);
	jnum(out, &f, "width", sb->sb_width);
	jnum(out, &f, "dirblklog", sb->sb_dirblklog);
	jnum(out, &f, "logsectlog", sb->sb_logsectlog);
	jnum(out, &f, "logsectsize", sb->sb_logsectsize);
	jnum(out, &f, "logsunit", sb->sb_logsunit);
	jnum(out, &f, "features2", sb->sb_features2);
	jnum(out, &f, "bad_features2", sb->sb_bad_features2);
	jnum(out, &f, "features_compat", sb->sb_features_compat);
	jnum(out, &f, "features_ro_compat", sb->sb_features_ro_compat);
	jnum(out, &f, "features_incompat", sb->sb_features_incompat);
	jnum(out, &f, "features_log_incompat", sb->sb_features_log_incompat);
	/*
	 * sb_crc holds the stored CRC read little-endian (how XFS stores it);
	 * xfs_db prints the field's bytes as a big-endian number like every
	 * other field, so the JSON holds the same.
	 */
	jnum(out, &f, "crc", __builtin_bswap32(sb->sb_crc));
	jnum(out, &f, "spino_align", sb->sb_spino_align);
	jino(out, &f, "pquotino", sb->sb_pquotino);
	jnum(out, &f, "lsn", sb->sb_lsn);
	uuid_str(&sb->sb_meta_uuid, u);
	jstr(out, &f, "meta_uuid", u);
	fputs("}\n", out);
}
