// SPDX-License-Identifier: GPL-2.0
/*
 * Xattr intents in the log (ATTRI items): their decoding and the checks the
 * kernel's recovery makes on each before it goes further
 * (xlog_recover_attri_commit_pass2 and xfs_attri_validate, read for the
 * rules).  A bad ATTRI fails the kernel's whole recovery, done item or
 * not, so the replay refuses it.  The checks, for the non-parent-pointer
 * ops a filesystem without parent pointers can hold: the format region is
 * exactly struct xfs_attri_log_format; no op flag bits outside the type;
 * the op is set, remove or replace; the filter has no bit outside
 * XFS_ATTRI_FILTER_MASK (INCOMPLETE is accepted and ignored); the name is
 * 1..255 bytes without NUL; the value at most 64 KiB and absent for a
 * remove; the name and value regions are their lengths rounded up to 4
 * bytes; the inode number is one the filesystem can have.  The pad word
 * (alfi_igen in newer kernels) is looked at only for parent-pointer ops, so
 * not here.
 */
#include "libfs/logattr.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <xfs/xfs_da_format.h>
#include <xfs/xfs_log_format.h>

static int bad(char *why, size_t wl, const char *s, uint32_t v)
{
	if (why && wl)
		snprintf(why, wl, s, v);
	return -EUCLEAN;
}

int fs_log_attri_parse(const struct fs_geom *g, const struct fs_log_item *it,
		       struct fs_log_attri *a, char *why, size_t wl)
{
	struct xfs_attri_log_format f;
	uint32_t op, want;

	if (it->n < 1 || it->reg[0].len != sizeof(f))
		return bad(why, wl, "format region of %u bytes", it->n ? it->reg[0].len : 0);
	memcpy(&f, it->reg[0].p, sizeof(f));
	op = f.alfi_op_flags & XFS_ATTRI_OP_FLAGS_TYPE_MASK;
	if (f.alfi_op_flags & ~XFS_ATTRI_OP_FLAGS_TYPE_MASK)
		return bad(why, wl, "op flags %#x", f.alfi_op_flags);
	if (op != XFS_ATTRI_OP_FLAGS_SET && op != XFS_ATTRI_OP_FLAGS_REMOVE &&
	    op != XFS_ATTRI_OP_FLAGS_REPLACE)
		return bad(why, wl, "unknown op %u", op);
	if (f.alfi_attr_filter & ~XFS_ATTRI_FILTER_MASK)
		return bad(why, wl, "attr filter %#x", f.alfi_attr_filter);
	if (f.alfi_value_len > XFS_XATTR_SIZE_MAX)
		return bad(why, wl, "value of %u bytes", f.alfi_value_len);
	if (op == XFS_ATTRI_OP_FLAGS_REMOVE && f.alfi_value_len)
		return bad(why, wl, "remove with a value of %u bytes", f.alfi_value_len);
	if (!f.alfi_name_len || f.alfi_name_len > 255)
		return bad(why, wl, "name of %u bytes", f.alfi_name_len);
	if (!fs_ino_valid(g, f.alfi_ino))
		return bad(why, wl, "inode %u out of the filesystem", (uint32_t)f.alfi_ino);
	want = 2 + (f.alfi_value_len ? 1 : 0);
	if (it->n != want)
		return bad(why, wl, "%u regions", it->n);
	if (it->reg[1].len != ((f.alfi_name_len + 3) & ~3u))
		return bad(why, wl, "name region of %u bytes", it->reg[1].len);
	if (memchr(it->reg[1].p, 0, f.alfi_name_len))
		return bad(why, wl, "NUL in a name of %u bytes", f.alfi_name_len);
	if (f.alfi_value_len && it->reg[2].len != ((f.alfi_value_len + 3) & ~3u))
		return bad(why, wl, "value region of %u bytes", it->reg[2].len);
	*a = (struct fs_log_attri){
		.id = f.alfi_id, .ino = f.alfi_ino, .op = op,
		.filter = f.alfi_attr_filter & (XFS_ATTR_ROOT | XFS_ATTR_SECURE),
		.namelen = f.alfi_name_len, .valuelen = f.alfi_value_len,
		.name = it->reg[1].p, .value = f.alfi_value_len ? it->reg[2].p : NULL,
	};
	return 0;
}
