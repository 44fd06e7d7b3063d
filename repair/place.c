// SPDX-License-Identifier: GPL-2.0
/*
 * Where a plan puts new blocks (a rebuilt directory's, attr fork's or
 * realtime inode's, a rebuilt fork's bmbt): only in space free before and
 * after the repair, owned by nobody, not even by old metadata the AG
 * rebuild will free (a crash before the new metadata is complete must not
 * find it overwritten), near the inode, its AG first.  The free runs come
 * from the model (model_ag_free_gaps) the first time an AG is asked, and
 * shrink as blocks are taken; so all of it needs a model that knows every
 * block owner (repair_model_incomplete), as the AG rebuild does.
 */
#include <errno.h>
#include <stdlib.h>

#include "libfs/build/bload.h"
#include "libfs/format/btree.h"
#include "libfs/util/vec.h"
#include "repair/place.h"
#include "repair/rules.h"

/* Free runs of one AG that this repair may put new blocks in. */
struct repair_space {
	bool loaded;
	struct place_run { fs_agblock_t start; uint32_t len; } *v;
	size_t n, cap;
};

/*
 * Inodes the model does not know own blocks it does not know either:
 * inodes the scan could not read (unreadable chunks), and every inode of a
 * chunk an inode btree lost.  Rebuilding free space anywhere could then
 * hand their blocks out.  NULL, or why not.
 */
const char *repair_model_incomplete(struct repair_ctx *rx)
{
	if (repair_plan_findings(rx, REPAIR_PLAN_MODEL, NULL) > 0)
		return "some inodes could not be read";
	for (fs_agnumber_t a = 0; a < rx->fs->g.agcount; a++)
		if (!rx->sx->chunks_known[a])
			return "an inode btree could not be walked whole, so inode chunks may be unknown";
	return NULL;
}

static void on_space(void *priv, fs_agnumber_t agno, fs_agblock_t agbno, uint32_t len)
{
	struct repair_space *sp = priv;

	(void)agno;
	if (sp->loaded && !FS_VEC_ROOM(sp->v, sp->n, sp->cap, 64))
		sp->v[sp->n++] = (struct place_run){ agbno, len };
	else
		sp->loaded = false;	/* out of memory: no space from this AG */
}

/*
 * Count contiguous blocks in AG agno that are free now and stay free:
 * owned by nobody, not even old metadata the rebuild will free (a crash
 * before the new metadata is complete must not find them overwritten).
 */
static int alloc_blocks(struct repair_ctx *rx, fs_agnumber_t agno, uint32_t count,
			fs_agblock_t *out)
{
	struct repair_space *sp;

	if (!rx->space) {
		rx->space = calloc(rx->fs->g.agcount, sizeof(*rx->space));
		if (!rx->space)
			return -ENOMEM;
	}
	sp = &rx->space[agno];
	if (!sp->loaded) {
		sp->loaded = true;
		model_ag_free_gaps(rx->sx->model, agno, MODEL_CLASS_BIT(MC_FREE), on_space, sp);
		if (!sp->loaded)
			return -ENOMEM;
	}
	for (size_t i = 0; i < sp->n; i++)
		if (sp->v[i].len >= count) {
			*out = sp->v[i].start;
			sp->v[i].start += count;
			sp->v[i].len -= count;
			return 0;
		}
	return -ENOSPC;
}

int repair_place(struct repair_ctx *rx, fs_ino_t ino, uint32_t fsbs, fs_fsblock_t *fsb)
{
	const struct fs_geom *g = &rx->fs->g;
	fs_agnumber_t a0 = fs_ino_to_agno(g, ino);

	for (fs_agnumber_t k = 0; k < g->agcount; k++) {
		fs_agnumber_t a = (a0 + k) % g->agcount;
		fs_agblock_t agbno;

		if (scan_ag_unread(rx->sx, a))
			continue;
		if (!alloc_blocks(rx, a, fsbs, &agbno)) {
			*fsb = fs_agbno_to_fsb(g, a, agbno);
			return 0;
		}
	}
	return -ENOSPC;
}

/*
 * A rebuilt fork (a directory's, an attr fork's) whose extents do not fit
 * its inode gets a bmbt from the one bulk loader, its blocks placed like
 * the fork's own (near the inode, free before and after) and entered in
 * the model as the fork's bmbt blocks.
 */
struct fork_bmbt {
	struct repair_ctx *rx;
	fs_ino_t ino;
	uint8_t mflags;            /* MODEL_EXT_NEW, | MODEL_EXT_ATTRFORK */
	struct fs_bload_cache_target tgt;
};

static int fork_bmbt_alloc(void *priv, uint64_t *ptr)
{
	struct fork_bmbt *fb = priv;
	const struct fs_geom *g = &fb->rx->fs->g;
	fs_fsblock_t fsb;
	int err = repair_place(fb->rx, fb->ino, 1, &fsb);

	if (!err)
		err = model_add(fb->rx->sx->model, fs_fsb_to_agno(g, fsb), fs_fsb_to_agbno(g, fsb),
				1, MC_BMBT, fb->ino, 0, fb->mflags);
	*ptr = fsb;
	return err;
}

static int fork_bmbt_write(void *priv, uint64_t ptr, uint32_t level, const void *block)
{
	struct fork_bmbt *fb = priv;

	return fs_bload_cache_writer(&fb->tgt, ptr, level, block);
}

int repair_fork_map(struct repair_ctx *rx, fs_ino_t ino, int whichfork,
		    const struct fs_bmap_ext *ext, size_t n, void *fork, size_t size,
		    uint8_t *format, uint64_t *bmbt)
{
	const struct fs_geom *g = &rx->fs->g;
	struct fork_bmbt fb = {
		.rx = rx, .ino = ino,
		.mflags = MODEL_EXT_NEW | (whichfork == XFS_ATTR_FORK ? MODEL_EXT_ATTRFORK : 0),
		.tgt = { .cache = rx->sx->cache, .g = g, .ops = fs_btree_ops_get(FS_BTREE_BMBT),
			 .ino = ino, .wclass = FS_WCLASS_NEW },
	};

	return fs_bload_fork(g, ino, ext, n, fork, (uint32_t)size, fork_bmbt_alloc,
			     fork_bmbt_write, &fb, format, bmbt);
}

void repair_place_free(struct repair_ctx *rx)
{
	for (fs_agnumber_t a = 0; rx->space && a < rx->fs->g.agcount; a++)
		free(rx->space[a].v);
	free(rx->space);
	rx->space = NULL;
}
