// SPDX-License-Identifier: GPL-2.0
/*
 * The log replay's overlay: the sectors the replay changed, kept in memory
 * (a map from sector to its copy) and laid over the device for every read
 * the replay makes (replay_buf_get) and, once installed, for every reader
 * of the device (fs_replay_patch); the objects in it that have a verifier,
 * noted as they are made and judged by the cache flush's own check before
 * anything is written (replay_check_writes); the small u64 map it and the
 * replay's cancel and intent tables are built on; and the error message
 * helper the replay's files share.
 */
#include "libfs/log/logreplay_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/util/vec.h"

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

uint64_t *u64map_find(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = hash64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->k[i] == key + 1)
			return &m->v[i];
		if (!m->k[i])
			return NULL;
	}
}

int u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	uint64_t *slot;

	if ((m->n + 1) * 2 > m->cap) {
		struct u64map nm = { 0 };

		nm.cap = m->cap ? m->cap * 2 : 1024;
		nm.k = calloc(nm.cap, sizeof(*nm.k));
		nm.v = calloc(nm.cap, sizeof(*nm.v));
		if (!nm.k || !nm.v) {
			free(nm.k);
			free(nm.v);
			return -ENOMEM;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->k[i]) {
				size_t j = hash64(m->k[i] - 1) & (nm.cap - 1);

				while (nm.k[j])
					j = (j + 1) & (nm.cap - 1);
				nm.k[j] = m->k[i];
				nm.v[j] = m->v[i];
			}
		nm.n = m->n;
		free(m->k);
		free(m->v);
		*m = nm;
	}
	slot = u64map_find(m, key);
	if (slot) {
		*slot = val;
		return 0;
	}
	for (size_t i = hash64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
		if (!m->k[i]) {
			m->k[i] = key + 1;
			m->v[i] = val;
			m->n++;
			return 0;
		}
}

void u64map_free(struct u64map *m)
{
	free(m->k);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

int replay_fail(struct fs_replay *rp, int err, const char *fmt, ...)
{
	va_list ap;

	if (rp->msg && rp->ml) {
		va_start(ap, fmt);
		vsnprintf(rp->msg, rp->ml, fmt, ap);
		va_end(ap);
	}
	return err;
}

bool replay_range_ok(const struct fs_replay *rp, int64_t daddr, uint64_t bbs)
{
	const struct fs_geom *g = &rp->fs->g;
	uint64_t fs_bbs = g->dblocks << (g->blocklog - BBSHIFT);

	return daddr >= 0 && bbs > 0 && bbs <= MAX_BUF_BBS && (uint64_t)daddr + bbs <= fs_bbs &&
	       (((uint64_t)daddr + bbs) << BBSHIFT) <= rp->fs->dev->size;
}

/* The current contents of [daddr, daddr + bbs): the overlay over the device. */
int replay_buf_get(struct fs_replay *rp, uint64_t daddr, uint32_t bbs, unsigned char **out)
{
	unsigned char *b = malloc((size_t)bbs << BBSHIFT);
	int err;

	if (!b)
		return -ENOMEM;
	err = fs_dev_read(rp->fs->dev, b, (size_t)bbs << BBSHIFT, daddr << BBSHIFT);
	if (err) {
		free(b);
		return replay_fail(rp, err, "reading sectors %llu+%u for replay failed: %s",
			    (unsigned long long)daddr, bbs, strerror(-err));
	}
	/* fs_dev_read patched it already when the overlay is installed; if not, do it here */
	if (rp->fs->dev->read_patch_priv != rp)
		fs_replay_patch(rp, b, (size_t)bbs << BBSHIFT, daddr << BBSHIFT);
	*out = b;
	return 0;
}

int replay_read_fsblock(void *priv, fs_fsblock_t fsb, void *buf)
{
	struct fs_replay *rp = priv;
	const struct fs_geom *g = &rp->fs->g;
	unsigned char *b = NULL;
	int err = replay_buf_get(rp, fs_fsb_to_daddr(g, fsb), g->blocksize >> BBSHIFT, &b);

	if (err)
		return err;
	memcpy(buf, b, g->blocksize);
	free(b);
	return 0;
}

int replay_buf_put(struct fs_replay *rp, uint64_t daddr, uint32_t bbs, const unsigned char *b)
{
	for (uint32_t i = 0; i < bbs; i++) {
		uint64_t *idx = u64map_find(&rp->sect, daddr + i);
		size_t at;

		if (idx) {
			at = *idx;
		} else {
			int err;

			if (rp->ndata == rp->capdata) {
				size_t cap = rp->capdata ? rp->capdata * 2 : 4096;
				unsigned char *d = realloc(rp->data, cap << BBSHIFT);

				if (!d)
					return -ENOMEM;
				rp->data = d;
				rp->capdata = cap;
			}
			at = rp->ndata++;
			err = u64map_put(&rp->sect, daddr + i, at);
			if (err)
				return err;
		}
		memcpy(rp->data + (at << BBSHIFT), b + ((size_t)i << BBSHIFT), BBSIZE);
	}
	return 0;
}

void fs_replay_patch(void *priv, void *buf, size_t len, uint64_t off)
{
	const struct fs_replay *rp = priv;
	uint64_t first = off >> BBSHIFT, last = (off + len + BBSIZE - 1) >> BBSHIFT;

	if (!rp || !rp->sect.n || !len)
		return;
	for (uint64_t s = first; s < last; s++) {
		const uint64_t *idx = u64map_find(&rp->sect, s);
		uint64_t so = s << BBSHIFT, from, to;

		if (!idx)
			continue;
		from = so > off ? so : off;
		to = so + BBSIZE < off + len ? so + BBSIZE : off + len;
		memcpy((unsigned char *)buf + (from - off), rp->data + (*idx << BBSHIFT) + (from - so),
		       to - from);
	}
}

uint64_t replay_cancel_key(int64_t blkno, uint32_t len)
{
	return ((uint64_t)blkno << 16) ^ len;
}

bool replay_is_cancelled(const struct fs_replay *rp, int64_t blkno, uint32_t len)
{
	const uint64_t *c = u64map_find(&rp->cancel, replay_cancel_key(blkno, len));

	return c && *c && *c != MAP_GONE;
}

int replay_note_write(struct fs_replay *rp, uint64_t daddr, uint32_t bbs, uint32_t off,
		      uint32_t len, enum fs_mtype t, fs_ino_t ino)
{
	const struct fs_geom *g = &rp->fs->g;
	uint64_t ag_bbs = (uint64_t)g->agblocks << (g->blocklog - BBSHIFT);

	if (!len || (uint64_t)off + len > (uint64_t)bbs << BBSHIFT)
		return -EINVAL;
	if (FS_VEC_ROOM(rp->writes, rp->nwrites, rp->capwrites, 256))
		return -ENOMEM;
	rp->writes[rp->nwrites++] = (struct rwrite){
		.daddr = daddr, .bbs = bbs, .off = off, .len = len,
		.info = { .type = t, .ino = ino,
			  .agno = (fs_agnumber_t)((daddr + off / BBSIZE) / ag_bbs) },
	};
	return 0;
}

/* replay_buf_get without the device read when the overlay holds every sector (a noted object's do) */
static int overlay_copy(struct fs_replay *rp, uint64_t daddr, uint32_t bbs, unsigned char **out)
{
	unsigned char *b = malloc((size_t)bbs << BBSHIFT);

	if (!b)
		return -ENOMEM;
	for (uint32_t i = 0; i < bbs; i++) {
		const uint64_t *idx = u64map_find(&rp->sect, daddr + i);

		if (!idx) {
			free(b);
			return replay_buf_get(rp, daddr, bbs, out);
		}
		memcpy(b + ((size_t)i << BBSHIFT), rp->data + (*idx << BBSHIFT), BBSIZE);
	}
	*out = b;
	return 0;
}

int replay_check_writes(struct fs_replay *rp, struct fs_flush_result *res,
			const struct rwrite **bad)
{
	/* the replay's own LSNs are at most the head; the log is reset past it */
	struct fs_flush_opts fo = { .g = &rp->fs->g };
	int err = 0;

	for (size_t i = 0; i < rp->nwrites && !err; i++) {
		const struct rwrite *w = &rp->writes[i];
		unsigned char *b;

		err = overlay_copy(rp, w->daddr, w->bbs, &b);
		if (err)
			break;
		err = fs_meta_seal(&fo, &w->info, w->daddr + w->off / BBSIZE, b + w->off, w->len,
				   res);
		if (err == -EUCLEAN)
			*bad = w;
		else if (!err)
			err = replay_buf_put(rp, w->daddr, w->bbs, b);
		free(b);
	}
	return err;
}
