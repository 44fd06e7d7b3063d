// SPDX-License-Identifier: GPL-2.0
/*
 * Metadata readahead: turns a list of metadata objects into few large reads
 * (windows of up to 2 MiB over dense regions, exact reads for isolated
 * objects), runs them through the device's batch engine, and chops every
 * completed window into one cached buffer per object, dropping the bytes in
 * between (the I/O path, doc/design.md, "libfs").  Metadata read once and
 * never again (inode clusters) is streamed instead: the same plan, windows
 * kept in flight on the queue, each completed window's objects handed to a
 * callback in place and the buffer reused, nothing cached.
 * Both read into the queue's slot buffers (fs_ioq_buffer_fit), kept across
 * calls: fresh 2 MiB buffers per call cost a page fault per 4 KiB.  The
 * bytes in flight on a queue, and so what its buffers hold, stay within
 * inflight_max (4 MiB: two 2 MiB windows, or sixteen inode clusters'
 * reads): sixteen 2 MiB windows in flight on each of a worker's two
 * queues held about 50 MiB more for two workers, a run long (aged
 * benchmark image, -t 2: 131 MiB peak, 86 with the cap).
 */
#include "libfs/io/readahead.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RA_DEFAULT_WINDOW (2u << 20)
#define RA_DEFAULT_GAP    (64u << 10)
#define RA_DEFAULT_QDEPTH 16u
#define RA_DEFAULT_INFLIGHT (4u << 20)

static int cmp_extent(const void *pa, const void *pb)
{
	const struct fs_ra_extent *a = pa, *b = pb;

	if (a->daddr != b->daddr)
		return a->daddr < b->daddr ? -1 : 1;
	return a->len < b->len ? -1 : a->len > b->len;
}

static void opts_resolve(const struct fs_ra_opts *o, uint32_t align, uint32_t *window,
			 uint32_t *gap, unsigned *qdepth)
{
	*window = o && o->max_window ? o->max_window : RA_DEFAULT_WINDOW;
	if (o && o->inflight_max && *window > o->inflight_max)
		*window = o->inflight_max;
	*gap = o && o->gap_max ? o->gap_max : RA_DEFAULT_GAP;
	*qdepth = o && o->qdepth ? o->qdepth : RA_DEFAULT_QDEPTH;
	/* a window must hold at least one aligned unit */
	if (*window < align)
		*window = align;
	*window = *window / align * align;
}

int fs_ra_plan(const struct fs_dev *dev, struct fs_ra_extent *ext, size_t *n,
	       const struct fs_ra_opts *o, struct fs_ra_window **out, size_t *nwin)
{
	uint64_t align = dev->direct && dev->dio_align ? dev->dio_align : FS_BBSIZE;
	uint32_t max_window, gap;
	unsigned qdepth;
	struct fs_ra_window *w = NULL;
	size_t m = 0, nw = 0, cap = 0;

	opts_resolve(o, (uint32_t)align, &max_window, &gap, &qdepth);
	*out = NULL;
	*nwin = 0;
	if (!*n)
		return 0;
	qsort(ext, *n, sizeof(*ext), cmp_extent);
	/* drop exact duplicates and objects the device cannot hold */
	for (size_t i = 0; i < *n; i++) {
		if (!ext[i].len || ext[i].daddr > (dev->size >> FS_BBSHIFT) ||
		    ext[i].len > dev->size - fs_daddr_to_bytes(ext[i].daddr))
			continue;
		if (m && ext[m - 1].daddr == ext[i].daddr && ext[m - 1].len == ext[i].len)
			continue;
		ext[m++] = ext[i];
	}
	*n = m;

	for (size_t i = 0; i < m; i++) {
		uint64_t s = fs_daddr_to_bytes(ext[i].daddr) / align * align;
		uint64_t e = (fs_daddr_to_bytes(ext[i].daddr) + ext[i].len + align - 1) / align * align;
		struct fs_ra_window *cur = nw ? &w[nw - 1] : NULL;

		if (e > dev->size)
			e = dev->size;	/* an unaligned device end: the engine reports it */
		if (cur && s <= cur->off + cur->len + gap &&
		    (e > cur->off + cur->len ? e : cur->off + cur->len) - cur->off <= max_window) {
			if (e > cur->off + cur->len)
				cur->len = (uint32_t)(e - cur->off);
			cur->count++;
			continue;
		}
		if (nw == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct fs_ra_window *nv = realloc(w, ncap * sizeof(*nv));
			if (!nv) {
				free(w);
				return -ENOMEM;
			}
			w = nv;
			cap = ncap;
		}
		if (e - s > UINT32_MAX) {
			free(w);
			return -EFBIG;
		}
		w[nw++] = (struct fs_ra_window){ .off = s, .len = (uint32_t)(e - s), .first = (uint32_t)i,
						 .count = 1 };
	}
	*out = w;
	*nwin = nw;
	return 0;
}

/* Insert every object a completed window carries. */
static void chop(struct fs_cache *c, const struct fs_ra_extent *ext, const struct fs_ra_window *w,
		 const unsigned char *buf, struct fs_ra_stats *st)
{
	/* a plan made by fs_ra_plan keeps every object inside its window */
	st->bytes_kept += fs_cache_insert_many(c, ext + w->first, w->count, buf, w->off, w->len);
}

static uint32_t inflight_of(const struct fs_ra_opts *o)
{
	return o && o->inflight_max ? o->inflight_max : RA_DEFAULT_INFLIGHT;
}

int fs_readahead(struct fs_cache *c, struct fs_ioq *q, struct fs_ra_extent *ext, size_t n,
		 const struct fs_ra_opts *o, struct fs_ra_stats *stp)
{
	uint32_t inflight = inflight_of(o);
	unsigned char *busy = NULL;     /* per slot of the queue: in the batch being read */
	struct fs_dev *dev = fs_cache_dev(c);
	uint64_t align = dev->direct && dev->dio_align ? dev->dio_align : FS_BBSIZE;
	struct fs_ra_stats st = { .extents = n };
	struct fs_ra_window *w = NULL;
	struct fs_io_req *reqs = NULL;
	uint32_t max_window, gap;
	unsigned qdepth;
	size_t m = 0, nw = 0;
	int err;

	opts_resolve(o, (uint32_t)align, &max_window, &gap, &qdepth);
	/* what is cached already needs no read */
	for (size_t i = 0; i < n; i++) {
		if (fs_cache_contains(c, ext[i].daddr, ext[i].len))
			st.cached++;
		else
			ext[m++] = ext[i];
	}
	err = fs_ra_plan(dev, ext, &m, o, &w, &nw);
	if (err)
		goto out;
	/* the queue's own slot buffers: reused across calls, no pages faulted in anew */
	if (qdepth > fs_ioq_depth(q))
		qdepth = fs_ioq_depth(q);
	reqs = calloc(qdepth, sizeof(*reqs));
	busy = calloc(fs_ioq_depth(q), 1);
	if (!reqs || !busy) {
		err = -ENOMEM;
		goto out;
	}
	/*
	 * Windows whose pages are all in the page cache are copied from there
	 * into the next free slot and chopped at once (no device read); the
	 * others are read qdepth at a time.
	 */
	for (size_t next = 0; next < nw;) {
		size_t cnt = 0;
		uint64_t bytes = 0;
		const struct fs_ra_window *batch[64];

		while (next < nw && cnt < qdepth && cnt < sizeof(batch) / sizeof(batch[0]) &&
		       (!cnt || bytes + w[next].len <= inflight)) {
			const struct fs_ra_window *win = &w[next++];
			unsigned char *buf = fs_ioq_buffer_fit(q, (unsigned)cnt, win->len, inflight, busy);

			if (!buf) {
				err = -ENOMEM;
				goto out;
			}
			if (!fs_dev_read_resident(dev, buf, win->len, win->off)) {
				if (win->count > 1)
					st.windows++;
				else
					st.exact++;
				st.bytes_read += win->len;
				chop(c, ext, win, buf, &st);
				continue;
			}
			batch[cnt] = win;
			busy[cnt] = 1;
			bytes += win->len;
			reqs[cnt++] = (struct fs_io_req){ .off = win->off, .len = win->len, .buf = buf };
		}
		if (!cnt)
			continue;
		memset(busy, 0, cnt);
		err = fs_ioq_read_batch(q, reqs, cnt);
		if (err)
			goto out;
		for (size_t i = 0; i < cnt; i++) {
			const struct fs_ra_window *win = batch[i];

			if (win->count > 1)
				st.windows++;
			else
				st.exact++;
			if (reqs[i].result != (long)win->len) {
				st.failed++;
				continue;
			}
			st.bytes_read += win->len;
			chop(c, ext, win, reqs[i].buf, &st);
		}
	}
out:
	free(reqs);
	free(busy);
	free(w);
	if (stp) {
		stp->extents += st.extents;
		stp->cached += st.cached;
		stp->windows += st.windows;
		stp->exact += st.exact;
		stp->bytes_read += st.bytes_read;
		stp->bytes_kept += st.bytes_kept;
		stp->failed += st.failed;
	}
	return err;
}

/* One window in flight: the request, its buffer (the queue's), the window it reads. */
struct stream_slot {
	struct fs_io_req req;
	unsigned char *buf;
	unsigned idx;
	size_t win;
};

struct stream {
	struct fs_dev *dev;
	struct fs_ioq *q;
	const struct fs_ra_extent *ext;
	const struct fs_ra_window *w;
	size_t nw, next, inflight;
	uint64_t bytes;              /* in flight */
	uint32_t cap;                /* inflight_max */
	unsigned char *busy;         /* per slot: a read in flight */
	fs_ra_stream_fn cb;
	void *priv;
	struct fs_ra_stats st;
};

/* A window's objects to the callback: data the window's bytes, or NULL (it failed). */
static void stream_deliver(struct stream *sm, const struct fs_ra_window *win,
			   const unsigned char *data, long result)
{
	if (win->count > 1)
		sm->st.windows++;
	else
		sm->st.exact++;
	if (result != (long)win->len)
		sm->st.failed++;
	else
		sm->st.bytes_read += win->len;
	for (uint32_t k = 0; k < win->count; k++) {
		const struct fs_ra_extent *x = &sm->ext[win->first + k];
		uint64_t at = fs_daddr_to_bytes(x->daddr) - win->off;
		bool ok = result == (long)win->len && at + x->len <= win->len;

		if (ok)
			sm->st.bytes_kept += x->len;
		sm->cb(sm->priv, x, ok ? data + at : NULL);
	}
}

/*
 * The next windows, in order: those whose pages are all in the page cache
 * are copied from there into slot sl's buffer and handed out (no device
 * read); the first that is not goes to the queue in slot sl, unless it
 * would pass the bytes in flight (sm->cap) with others in flight: then sl
 * stays idle.  0, or negative errno.
 */
static int stream_next(struct stream *sm, struct stream_slot *sl)
{
	int err;

	while (sm->next < sm->nw) {
		const struct fs_ra_window *win = &sm->w[sm->next];

		if (sm->inflight && sm->bytes + win->len > sm->cap)
			return 0;
		sl->buf = fs_ioq_buffer_fit(sm->q, sl->idx, win->len, sm->cap, sm->busy);
		if (!sl->buf)
			return -ENOMEM;
		if (!fs_dev_read_resident(sm->dev, sl->buf, win->len, win->off)) {
			sm->next++;
			stream_deliver(sm, win, sl->buf, (long)win->len);
			continue;
		}
		sl->win = sm->next++;
		sl->req = (struct fs_io_req){ .off = win->off, .len = win->len, .buf = sl->buf,
					      .priv = sl };
		err = fs_ioq_submit(sm->q, &sl->req);
		if (!err) {
			sm->inflight++;
			sm->bytes += win->len;
			sm->busy[sl->idx] = 1;
		}
		return err;
	}
	return 0;
}

int fs_ra_stream(struct fs_dev *dev, struct fs_ioq *q, struct fs_ra_extent *ext, size_t n,
		 const struct fs_ra_opts *o, fs_ra_stream_fn cb, void *priv, struct fs_ra_stats *stp)
{
	uint64_t align = dev->direct && dev->dio_align ? dev->dio_align : FS_BBSIZE;
	struct stream sm = { .dev = dev, .q = q, .ext = ext, .cb = cb, .priv = priv,
			     .cap = inflight_of(o), .st = { .extents = n } };
	struct fs_ra_window *w = NULL;
	struct stream_slot *slots = NULL;
	uint32_t max_window, gap;
	unsigned qdepth, nslots = 0;
	size_t nw = 0;
	int err;

	opts_resolve(o, (uint32_t)align, &max_window, &gap, &qdepth);
	/* objects the device cannot hold would be dropped by the plan: say so now */
	for (size_t i = 0; i < n; i++) {
		if (ext[i].len && ext[i].daddr <= (dev->size >> FS_BBSHIFT) &&
		    ext[i].len <= dev->size - fs_daddr_to_bytes(ext[i].daddr))
			ext[nw++] = ext[i];
		else
			cb(priv, &ext[i], NULL);
	}
	n = nw;
	nw = 0;
	err = fs_ra_plan(dev, ext, &n, o, &w, &nw);
	if (err || !nw)
		goto out;
	sm.w = w;
	sm.nw = nw;
	nslots = qdepth < fs_ioq_depth(q) ? qdepth : fs_ioq_depth(q);
	if (nslots > nw)
		nslots = (unsigned)nw;
	slots = calloc(nslots, sizeof(*slots));
	sm.busy = calloc(fs_ioq_depth(q), 1);
	if (!slots || !sm.busy) {
		err = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < nslots; i++)
		slots[i].idx = i;
	for (unsigned i = 0; i < nslots && sm.next < nw; i++) {
		err = stream_next(&sm, &slots[i]);
		if (err)
			goto drain;
	}
	while (sm.inflight) {
		struct fs_io_req *r;
		struct stream_slot *sl;

		err = fs_ioq_wait(q, &r);
		if (err)
			goto out;
		sm.inflight--;
		sl = r->priv;
		sm.bytes -= w[sl->win].len;
		sm.busy[sl->idx] = 0;
		stream_deliver(&sm, &w[sl->win], sl->buf, r->result);
		err = stream_next(&sm, sl);
		/* slots left idle by the cap take the next windows while they fit */
		for (unsigned i = 0; !err && i < nslots && sm.next < nw; i++)
			if (!sm.busy[slots[i].idx]) {
				err = stream_next(&sm, &slots[i]);
				if (!sm.busy[slots[i].idx])
					break;
			}
		if (err)
			goto drain;
	}
	goto out;
drain:
	/* the queue must be empty before the buffers go */
	while (sm.inflight) {
		struct fs_io_req *r;

		if (fs_ioq_wait(q, &r))
			break;
		sm.inflight--;
	}
out:
	free(slots);
	free(sm.busy);
	free(w);
	if (stp) {
		stp->extents += sm.st.extents;
		stp->windows += sm.st.windows;
		stp->exact += sm.st.exact;
		stp->bytes_read += sm.st.bytes_read;
		stp->bytes_kept += sm.st.bytes_kept;
		stp->failed += sm.st.failed;
	}
	return err;
}
