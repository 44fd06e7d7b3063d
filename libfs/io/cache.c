// SPDX-License-Identifier: GPL-2.0
/*
 * The metadata buffer cache: a liburcu lock-free hash table (cds_lfht) maps
 * (daddr, length) to refcounted buffers, so lookups from many AG workers
 * never take a lock.  Insertion and eviction share one mutex-protected
 * second-chance FIFO (CLOCK, an LRU approximation that costs a hit only an
 * atomic store instead of a list move under a lock).  A buffer is evicted
 * only when nobody holds it and it is clean; its memory is freed after an
 * RCU grace period, so a concurrent lookup never touches freed memory.
 * Buffer memory comes from the cache's own slab (slab.h): a buffer takes
 * the bytes it is counted for, and an emptied chunk goes back to the kernel.
 *
 * The bulletproof flavour (urcu-bp) is used so that callers, including
 * worker pools this library does not own, need not register threads.
 *
 * It also owns the write path: dirty buffers carry their metadata type,
 * and writeback (fs_cache_flush) re-stamps each one's CRC, runs the read
 * verifier over the new bytes, and writes them sorted and coalesced in
 * O_DIRECT-aligned runs through the device's engine.  The same check is
 * offered for buffers written outside the cache (fs_meta_seal: the log
 * replay's blocks, mkfs's), so every metadata write is judged one way.
 * Under -m, dirty buffers past the cap are staged in a temporary file
 * (fs_cache_set_stage) and read back where their bytes are needed.
 *
 * Long because: the read path, the write path and the staging all work on
 * the buffers' private state (references, FIFO, dirty marks) under one lock.
 */
#include "libfs/io/cache.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <urcu-bp.h>
#include <urcu/rculfhash.h>

#include "libfs/format/crc.h"
#include "libfs/format/findings.h"
#include "libfs/io/slab.h"
#include "libfs/util/spill.h"

struct cbuf {
	struct fs_buf pub;
	struct fs_cache *cache;      /* its cache (pub.data is a piece of its slab) */
	struct cds_lfht_node node;
	struct rcu_head rcu;
	struct cbuf *prev, *next;    /* FIFO, under lru_lock */
	int refs;                    /* atomic; -1: being evicted */
	uint32_t flags;              /* atomic */
	uint8_t accessed;            /* atomic: second chance */
	bool marked;                 /* dirty through fs_buf_mark_dirty (under lru_lock) */
	bool staged;                 /* atomic: marked, its bytes in the staging file, data NULL */
	struct fs_spill_run run;     /* while staged: where (set under lru_lock) */
	struct fs_dirty_info dinfo;  /* valid while marked */
};

struct fs_cache {
	struct fs_dev *dev;
	struct cds_lfht *ht;
	struct fs_slab *slab;        /* every buffer's data (fs_slab_alloc, fs_slab_free) */
	uint64_t cap;                /* atomic; 0 = none */
	pthread_mutex_t lru_lock;
	struct cbuf *head, *tail;    /* oldest .. newest */
	struct fs_cache_stats st;    /* fields updated atomically */
	uint64_t dirty_bytes;        /* marked buffers' bytes in memory (under lru_lock; atomic reads) */
	uint64_t staged_bytes;       /* marked buffers' bytes in the staging file (likewise) */
	struct fs_spill *stage;      /* fs_cache_set_stage: where dirty buffers go past the cap */
	uint64_t stage_over;         /* ... or past this many bytes (0: the cap) */
	int stage_err;               /* the first staging error (under lru_lock) */
	/*
	 * fs_cache_stage_soft: a write to the staging file that fails keeps
	 * its buffer in memory and ends staging (stage_off), with no error
	 */
	bool stage_soft, stage_off;
	uint64_t rcu_frees;          /* atomic: buffers waiting in call_rcu for cbuf_free_rcu */
	/*
	 * Lookups' hits and misses per thread stripe, each on a line of its
	 * own (fs_cache_get_stats sums them): every lookup of every
	 * worker bumping one pair bounced its line between the workers.
	 */
	struct { _Alignas(64) uint64_t hits, misses; } hm[8];
};

/* This thread's stripe of the hit counters (threads numbered as they first look up). */
static unsigned hm_stripe(void)
{
	static unsigned next;
	static _Thread_local unsigned mine;	/* stripe + 1; 0: not numbered yet */

	if (!mine)
		mine = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % 8 + 1;
	return mine - 1;
}

/*
 * Records of forgotten buffers, back from their grace period
 * (cbuf_recycle_rcu), for cbuf_new to reuse (any cache's): linked by next.
 * Shared, so a cache destroyed before its records come back need not wait
 * for them.
 */
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cbuf *spare;

#define ADD(field, v) __atomic_add_fetch(&(field), (v), __ATOMIC_RELAXED)
#define SUB(field, v) __atomic_sub_fetch(&(field), (v), __ATOMIC_RELAXED)
#define LOAD(field)   __atomic_load_n(&(field), __ATOMIC_RELAXED)

struct key {
	fs_daddr_t daddr;
	uint32_t len;
};

static unsigned long key_hash(fs_daddr_t daddr, uint32_t len)
{
	/* splitmix64 finaliser: neighbouring daddrs land in unrelated buckets */
	uint64_t x = daddr * 0x9e3779b97f4a7c15ull ^ ((uint64_t)len << 40);

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (unsigned long)x;
}

static int key_match(struct cds_lfht_node *node, const void *k)
{
	const struct cbuf *b = caa_container_of(node, struct cbuf, node);
	const struct key *key = k;

	return b->pub.daddr == key->daddr && b->pub.len == key->len;
}

static void cbuf_free(struct cbuf *b)
{
	fs_slab_free(b->cache->slab, b->pub.data, b->pub.len);
	free(b);
}

/* An evicted or forgotten buffer after its grace period. */
static void cbuf_free_rcu(struct rcu_head *head)
{
	struct cbuf *b = caa_container_of(head, struct cbuf, rcu);
	struct fs_cache *c = b->cache;

	cbuf_free(b);
	/* last: fs_cache_destroy may free the cache once this reaches 0 */
	__atomic_sub_fetch(&c->rcu_frees, 1, __ATOMIC_RELEASE);
}

static void cbuf_free_later(struct fs_cache *c, struct cbuf *b)
{
	__atomic_add_fetch(&c->rcu_frees, 1, __ATOMIC_RELAXED);
	urcu_bp_call_rcu(&b->rcu, cbuf_free_rcu);
}

/*
 * A forgotten batch's records (their data already freed), chained through
 * next, after their grace period: kept for reuse, so the RCU thread frees
 * nothing into the workers' malloc arenas.
 */
static void cbuf_recycle_rcu(struct rcu_head *head)
{
	struct cbuf *first = caa_container_of(head, struct cbuf, rcu), *last = first;

	while (last->next)
		last = last->next;
	pthread_mutex_lock(&spare_lock);
	last->next = spare;
	spare = first;
	pthread_mutex_unlock(&spare_lock);
}

static void spare_free(void)
{
	struct cbuf *b, *next;

	pthread_mutex_lock(&spare_lock);
	b = spare;
	spare = NULL;
	pthread_mutex_unlock(&spare_lock);
	for (; b; b = next) {
		next = b->next;
		free(b);
	}
}

/* Take a reference unless the buffer is being evicted. */
static bool cbuf_tryget(struct cbuf *b)
{
	int r = __atomic_load_n(&b->refs, __ATOMIC_ACQUIRE);

	while (r >= 0)
		if (__atomic_compare_exchange_n(&b->refs, &r, r + 1, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return true;
	return false;
}

int fs_cache_create(struct fs_dev *dev, uint64_t cap_bytes, struct fs_cache **out)
{
	/* aligned: each stripe of hit counters has a cache line of its own */
	struct fs_cache *c = aligned_alloc(_Alignof(struct fs_cache), sizeof(*c));

	if (!c)
		return -ENOMEM;
	memset(c, 0, sizeof(*c));
	c->dev = dev;
	c->cap = cap_bytes;
	if (fs_slab_create(dev ? dev->dio_align : 0, &c->slab)) {
		free(c);
		return -ENOMEM;
	}
	pthread_mutex_init(&c->lru_lock, NULL);
	c->ht = cds_lfht_new_flavor(1024, 1024, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				    &urcu_bp_flavor, NULL);
	if (!c->ht) {
		pthread_mutex_destroy(&c->lru_lock);
		fs_slab_destroy(c->slab);
		free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void fs_cache_destroy(struct fs_cache *c)
{
	struct cbuf *b, *next;

	if (!c)
		return;
	/*
	 * Evicted buffers still waiting for a grace period (a barrier waits
	 * for every callback queued, the records of forgotten batches too,
	 * and a grace period waited for may take 10 ms: only when needed)
	 */
	if (__atomic_load_n(&c->rcu_frees, __ATOMIC_ACQUIRE))
		urcu_bp_barrier();
	urcu_bp_read_lock();
	for (b = c->head; b; b = b->next)
		cds_lfht_del(c->ht, &b->node);
	urcu_bp_read_unlock();
	urcu_bp_synchronize_rcu();
	for (b = c->head; b; b = next) {
		next = b->next;
		cbuf_free(b);
	}
	cds_lfht_destroy(c->ht, NULL);
	pthread_mutex_destroy(&c->lru_lock);
	fs_slab_destroy(c->slab);
	free(c);
}

static void fifo_unlink(struct fs_cache *c, struct cbuf *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		c->head = b->next;
	if (b->next)
		b->next->prev = b->prev;
	else
		c->tail = b->prev;
	b->prev = b->next = NULL;
}

static void fifo_append(struct fs_cache *c, struct cbuf *b)
{
	b->next = NULL;
	b->prev = c->tail;
	if (c->tail)
		c->tail->next = b;
	else
		c->head = b;
	c->tail = b;
}

/*
 * Evict from the oldest end until `need` more bytes fit under the cap.
 * Buffers in use, dirty, or touched since they last came round get passed
 * over (the touched ones lose their mark); two rounds at most.
 */
static void evict_locked(struct fs_cache *c, uint64_t need)
{
	uint64_t cap = LOAD(c->cap);
	uint64_t budget = 2 * LOAD(c->st.buffers) + 1;

	if (!cap)
		return;
	while (c->head && budget--) {
		struct cbuf *b = c->head;
		int zero = 0;

		if (LOAD(c->st.bytes) + need <= cap)
			break;
		fifo_unlink(c, b);
		if (__atomic_load_n(&b->flags, __ATOMIC_ACQUIRE) & FS_BUF_DIRTY ||
		    __atomic_exchange_n(&b->accessed, 0, __ATOMIC_ACQ_REL) ||
		    !__atomic_compare_exchange_n(&b->refs, &zero, -1, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			fifo_append(c, b);
			continue;
		}
		urcu_bp_read_lock();
		cds_lfht_del(c->ht, &b->node);
		urcu_bp_read_unlock();
		SUB(c->st.bytes, b->pub.len);
		SUB(c->st.buffers, 1);
		ADD(c->st.evictions, 1);
		cbuf_free_later(c, b);
	}
}

/*
 * Under lru_lock, for a buffer the caller holds: a staged one's bytes read
 * back (it stays dirty).  Holding it keeps it from being staged again.
 * 0 or an errno (the buffer stays staged).
 */
static int unstage_locked(struct fs_cache *c, struct cbuf *b)
{
	unsigned char *data;
	int err;

	if (!__atomic_load_n(&b->staged, __ATOMIC_ACQUIRE))
		return 0;
	data = fs_slab_alloc(c->slab, b->pub.len);
	if (!data)
		return -ENOMEM;
	err = fs_spill_read(c->stage, &b->run, data);
	if (err) {
		fs_slab_free(c->slab, data, b->pub.len);
		return err;
	}
	fs_spill_discard(c->stage, &b->run);
	b->pub.data = data;
	__atomic_store_n(&b->staged, false, __ATOMIC_RELEASE);
	__atomic_store_n(&c->staged_bytes, c->staged_bytes - b->pub.len, __ATOMIC_RELAXED);
	__atomic_store_n(&c->dirty_bytes, c->dirty_bytes + b->pub.len, __ATOMIC_RELAXED);
	ADD(c->st.bytes, b->pub.len);
	return 0;
}

/* The same, taking the lock; on failure the reference is dropped and NULL returned. */
static struct cbuf *unstage(struct fs_cache *c, struct cbuf *b)
{
	int err;

	if (!b || !__atomic_load_n(&b->staged, __ATOMIC_ACQUIRE))
		return b;
	pthread_mutex_lock(&c->lru_lock);
	err = unstage_locked(c, b);
	if (err && !c->stage_err)
		c->stage_err = err;
	pthread_mutex_unlock(&c->lru_lock);
	if (err) {
		__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL);
		return NULL;
	}
	return b;
}

/*
 * Under lru_lock: marked buffers nobody holds written to the staging file
 * (oldest first) and their memory freed, until need more dirty bytes fit
 * in three quarters of the cap (or stage_over).  0 or the staging file's error.
 */
static int stage_locked(struct fs_cache *c, uint64_t need)
{
	uint64_t cap = c->stage_over ? c->stage_over : LOAD(c->cap), want = cap / 4 * 3;

	for (struct cbuf *b = c->head; b && c->dirty_bytes + need > want; b = b->next) {
		int zero = 0, err;

		if (!b->marked || __atomic_load_n(&b->staged, __ATOMIC_ACQUIRE) ||
		    !__atomic_compare_exchange_n(&b->refs, &zero, -1, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		err = fs_spill_write(c->stage, b->pub.data, b->pub.len, &b->run);
		if (!err) {
			fs_slab_free(c->slab, b->pub.data, b->pub.len);
			b->pub.data = NULL;
			__atomic_store_n(&b->staged, true, __ATOMIC_RELEASE);
			__atomic_store_n(&c->dirty_bytes, c->dirty_bytes - b->pub.len,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&c->staged_bytes, c->staged_bytes + b->pub.len,
					 __ATOMIC_RELAXED);
			SUB(c->st.bytes, b->pub.len);
		}
		__atomic_store_n(&b->refs, 0, __ATOMIC_RELEASE);
		if (err && c->stage_soft) {
			c->stage_off = true;	/* the rest stays in memory; the staged ones read back */
			return 0;
		}
		if (err) {
			if (!c->stage_err)
				c->stage_err = err;
			return err;
		}
	}
	return 0;
}

static void keep_stage_err(struct fs_cache *c, int err)
{
	pthread_mutex_lock(&c->lru_lock);
	if (!c->stage_err)
		c->stage_err = err;
	pthread_mutex_unlock(&c->lru_lock);
}

void fs_cache_set_stage(struct fs_cache *c, struct fs_spill *stage, uint64_t over)
{
	c->stage = stage;
	c->stage_over = over;
}

void fs_cache_stage_soft(struct fs_cache *c)
{
	c->stage_soft = true;
}

int fs_cache_stage_error(struct fs_cache *c)
{
	int err;

	pthread_mutex_lock(&c->lru_lock);
	err = c->stage_err;
	pthread_mutex_unlock(&c->lru_lock);
	return err;
}

uint64_t fs_cache_staged_bytes(struct fs_cache *c)
{
	return LOAD(c->staged_bytes);
}

static struct cbuf *lookup_ref(struct fs_cache *c, fs_daddr_t daddr, uint32_t len, bool count)
{
	struct key k = { daddr, len };
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;
	struct cbuf *b = NULL;

	urcu_bp_read_lock();
	cds_lfht_lookup(c->ht, key_hash(daddr, len), key_match, &k, &it);
	node = cds_lfht_iter_get_node(&it);
	if (node) {
		b = caa_container_of(node, struct cbuf, node);
		if (cbuf_tryget(b)) {
			if (count)
				__atomic_store_n(&b->accessed, 1, __ATOMIC_RELAXED);
		} else {
			b = NULL;
		}
	}
	urcu_bp_read_unlock();
	if (count)
		ADD(*(b ? &c->hm[hm_stripe()].hits : &c->hm[hm_stripe()].misses), 1);
	return unstage(c, b);
}

struct fs_buf *fs_cache_lookup(struct fs_cache *c, fs_daddr_t daddr, uint32_t len)
{
	struct cbuf *b = lookup_ref(c, daddr, len, true);

	return b ? &b->pub : NULL;
}

bool fs_cache_contains(struct fs_cache *c, fs_daddr_t daddr, uint32_t len)
{
	struct key k = { daddr, len };
	struct cds_lfht_iter it;
	bool found;

	urcu_bp_read_lock();
	cds_lfht_lookup(c->ht, key_hash(daddr, len), key_match, &k, &it);
	found = cds_lfht_iter_get_node(&it) != NULL;
	urcu_bp_read_unlock();
	return found;
}

static struct cbuf *cbuf_new(struct fs_cache *c, fs_daddr_t daddr, uint32_t len,
			     unsigned char *data)
{
	struct cbuf *b = NULL;

	if (__atomic_load_n(&spare, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&spare_lock);
		b = spare;
		if (b)
			spare = b->next;
		pthread_mutex_unlock(&spare_lock);
	}
	if (b)
		memset(b, 0, sizeof(*b));
	else
		b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->cache = c;
	b->pub.daddr = daddr;
	b->pub.len = len;
	b->pub.data = data;
	b->refs = 1;
	cds_lfht_node_init(&b->node);
	return b;
}

/*
 * Under lru_lock: add b (refs 1) to the table and the FIFO, unless the key
 * is cached already; then b is freed and the cached one returned with a
 * reference taken.
 */
static struct cbuf *insert_locked(struct fs_cache *c, struct cbuf *b)
{
	struct key k = { b->pub.daddr, b->pub.len };
	unsigned long hash = key_hash(k.daddr, k.len);
	uint64_t bytes, peak;

	for (;;) {
		struct cds_lfht_node *got;
		struct cbuf *old;

		urcu_bp_read_lock();
		got = cds_lfht_add_unique(c->ht, hash, key_match, &k, &b->node);
		if (got == &b->node) {
			urcu_bp_read_unlock();
			break;
		}
		old = caa_container_of(got, struct cbuf, node);
		if (cbuf_tryget(old)) {
			/* someone else cached it first: theirs wins */
			urcu_bp_read_unlock();
			cbuf_free(b);
			return old;	/* staged, perhaps: the caller reads it back if it needs it */
		}
		/* the old one is being evicted (by a caller of evict_locked, so not now) */
		urcu_bp_read_unlock();
		sched_yield();
	}
	fifo_append(c, b);
	ADD(c->st.buffers, 1);
	ADD(c->st.inserts, 1);
	bytes = ADD(c->st.bytes, b->pub.len);
	peak = LOAD(c->st.peak_bytes);
	while (bytes > peak && !__atomic_compare_exchange_n(&c->st.peak_bytes, &peak, bytes, false,
							     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	if (LOAD(c->cap) && bytes > LOAD(c->cap))
		ADD(c->st.over_cap, 1);
	return b;
}

/* Insert a buffer whose data the cache now owns; returns the buffer that is cached. */
static struct cbuf *insert_owned(struct fs_cache *c, fs_daddr_t daddr, uint32_t len,
				 unsigned char *data, int *err)
{
	struct cbuf *b = cbuf_new(c, daddr, len, data);

	if (!b) {
		fs_slab_free(c->slab, data, len);
		*err = -ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&c->lru_lock);
	evict_locked(c, len);
	b = insert_locked(c, b);
	pthread_mutex_unlock(&c->lru_lock);
	b = unstage(c, b);
	if (!b)
		*err = -EIO;
	return b;
}

int fs_cache_insert(struct fs_cache *c, fs_daddr_t daddr, uint32_t len, const void *data,
		    struct fs_buf **out)
{
	unsigned char *copy;
	struct cbuf *b;
	int err = 0;

	if (!len)
		return -EINVAL;
	copy = fs_slab_alloc(c->slab, len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, len);
	b = insert_owned(c, daddr, len, copy, &err);
	if (!b)
		return err;
	if (out)
		*out = &b->pub;
	else
		fs_buf_put(c, &b->pub);
	return 0;
}

uint64_t fs_cache_insert_many(struct fs_cache *c, const struct fs_ra_extent *ext, size_t n,
			      const unsigned char *base, uint64_t base_off, uint64_t base_len)
{
	enum { CHUNK = 64 };
	uint64_t kept = 0;

	for (size_t i = 0; i < n;) {
		struct cbuf *v[CHUNK];
		size_t m = 0;
		uint64_t need = 0;

		const struct fs_ra_extent *x[CHUNK];
		void *copy[CHUNK];
		size_t nx = 0;

		/* the objects inside the window; their pieces taken a run of one length at a time */
		for (; i < n && nx < CHUNK; i++) {
			uint64_t at = fs_daddr_to_bytes(ext[i].daddr) - base_off;

			if (!ext[i].len || fs_daddr_to_bytes(ext[i].daddr) < base_off ||
			    at > base_len || ext[i].len > base_len - at)
				continue;
			x[nx++] = &ext[i];
		}
		for (size_t a = 0, b; a < nx; a = b) {
			size_t got;

			for (b = a + 1; b < nx && x[b]->len == x[a]->len; b++)
				;
			got = fs_slab_alloc_many(c->slab, x[a]->len, copy + a, b - a);
			for (size_t k = a + got; k < b; k++)
				copy[k] = NULL;
		}
		/* copies made outside the lock */
		for (size_t k = 0; k < nx; k++) {
			if (!copy[k])
				continue;
			memcpy(copy[k], base + (fs_daddr_to_bytes(x[k]->daddr) - base_off), x[k]->len);
			v[m] = cbuf_new(c, x[k]->daddr, x[k]->len, copy[k]);
			if (!v[m]) {
				fs_slab_free(c->slab, copy[k], x[k]->len);
				continue;
			}
			need += x[k]->len;
			m++;
		}
		pthread_mutex_lock(&c->lru_lock);
		evict_locked(c, need);
		for (size_t k = 0; k < m; k++) {
			uint32_t len = v[k]->pub.len;

			v[k] = insert_locked(c, v[k]);
			kept += len;
		}
		pthread_mutex_unlock(&c->lru_lock);
		for (size_t k = 0; k < m; k++)
			fs_buf_put(c, &v[k]->pub);
	}
	return kept;
}

/* len bytes at daddr read from the device into a new slab piece (*data, the caller's). */
static int read_piece(struct fs_cache *c, fs_daddr_t daddr, uint32_t len, unsigned char **data)
{
	int err;

	if (!len)
		return -EINVAL;
	if (daddr > UINT64_MAX >> FS_BBSHIFT)
		return -ENXIO;
	*data = fs_slab_alloc(c->slab, len);
	if (!*data)
		return -ENOMEM;
	err = fs_dev_read(c->dev, *data, len, fs_daddr_to_bytes(daddr));
	ADD(c->st.reads, 1);
	if (err) {
		fs_slab_free(c->slab, *data, len);
		*data = NULL;
	}
	return err;
}

int fs_cache_read(struct fs_cache *c, fs_daddr_t daddr, uint32_t len, struct fs_buf **out)
{
	struct cbuf *b = lookup_ref(c, daddr, len, true);
	unsigned char *data;
	int err = 0;

	if (b) {
		*out = &b->pub;
		return 0;
	}
	err = read_piece(c, daddr, len, &data);
	if (err)
		return err;
	b = insert_owned(c, daddr, len, data, &err);
	if (!b)
		return err;
	*out = &b->pub;
	return 0;
}

int fs_cache_read_once(struct fs_cache *c, fs_daddr_t daddr, uint32_t len, void *buf)
{
	struct cbuf *b = lookup_ref(c, daddr, len, true);
	unsigned char *data;
	int err;

	if (b) {
		memcpy(buf, b->pub.data, len);
		fs_buf_put(c, &b->pub);
		fs_cache_forget(c, daddr, len);
		return 0;
	}
	/* a slab piece is aligned for O_DIRECT, where buf may not be */
	err = read_piece(c, daddr, len, &data);
	if (err)
		return err;
	memcpy(buf, data, len);
	fs_slab_free(c->slab, data, len);
	return 0;
}

/* Under lru_lock: take (daddr, len) out of the table and the FIFO if clean and unheld. */
static struct cbuf *forget_locked(struct fs_cache *c, fs_daddr_t daddr, uint32_t len)
{
	struct key k = { daddr, len };
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;
	struct cbuf *b;
	int zero = 0;

	urcu_bp_read_lock();
	cds_lfht_lookup(c->ht, key_hash(daddr, len), key_match, &k, &it);
	node = cds_lfht_iter_get_node(&it);
	b = node ? caa_container_of(node, struct cbuf, node) : NULL;
	/* as eviction: only a clean buffer nobody holds (refs 0 -> -1 keeps lookups off it) */
	if (b && (__atomic_load_n(&b->flags, __ATOMIC_ACQUIRE) & FS_BUF_DIRTY ||
		  !__atomic_compare_exchange_n(&b->refs, &zero, -1, false, __ATOMIC_ACQ_REL,
					       __ATOMIC_ACQUIRE)))
		b = NULL;
	if (b)
		cds_lfht_del(c->ht, &b->node);
	urcu_bp_read_unlock();
	if (b) {
		fifo_unlink(c, b);
		SUB(c->st.bytes, b->pub.len);
		SUB(c->st.buffers, 1);
		ADD(c->st.forgotten, 1);
	}
	return b;
}

bool fs_cache_forget(struct fs_cache *c, fs_daddr_t daddr, uint32_t len)
{
	struct cbuf *b;

	pthread_mutex_lock(&c->lru_lock);
	b = forget_locked(c, daddr, len);
	pthread_mutex_unlock(&c->lru_lock);
	if (b)
		cbuf_free_later(c, b);
	return b != NULL;
}

size_t fs_cache_forget_many(struct fs_cache *c, const struct fs_ra_extent *ext, size_t n)
{
	struct cbuf *dead = NULL;
	size_t dropped = 0;

	if (!n)
		return 0;
	pthread_mutex_lock(&c->lru_lock);
	for (size_t i = 0; i < n; i++) {
		struct cbuf *b = forget_locked(c, ext[i].daddr, ext[i].len);

		if (b) {
			b->next = dead;	/* out of the FIFO: the link is free */
			dead = b;
			dropped++;
		}
	}
	pthread_mutex_unlock(&c->lru_lock);
	if (!dead)
		return 0;
	/*
	 * Their data goes now: a lookup that still finds one of them cannot
	 * take a reference (refs -1), and only a reference reads the data.
	 * The records go after a grace period (a lookup may still be walking
	 * past them), by the RCU thread, so this worker does not wait for it:
	 * with two workers, a wait here slept 10 ms at a time (liburcu-bp's
	 * sleep when a reader stays inside), up to 77 ms of a 0.4 s check of
	 * the aged benchmark image.
	 */
	for (struct cbuf *b = dead; b;) {
		void *run[64];
		uint32_t len = b->pub.len;
		size_t k = 0;

		/* a run of one length goes back under one lock of the slab */
		for (; b && k < 64 && b->pub.len == len; b = b->next) {
			run[k++] = b->pub.data;
			b->pub.data = NULL;
		}
		fs_slab_free_many(c->slab, run, len, k);
	}
	urcu_bp_call_rcu(&dead->rcu, cbuf_recycle_rcu);
	return dropped;
}

void fs_buf_put(struct fs_cache *c, struct fs_buf *pub)
{
	struct cbuf *b;
	int left;

	if (!pub)
		return;
	b = caa_container_of(pub, struct cbuf, pub);
	left = __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL);
	/* a cache held above its cap by references shrinks as they go */
	if (left == 0 && LOAD(c->cap) && LOAD(c->st.bytes) > LOAD(c->cap)) {
		pthread_mutex_lock(&c->lru_lock);
		evict_locked(c, 0);
		pthread_mutex_unlock(&c->lru_lock);
	}
}

uint32_t fs_buf_flags(const struct fs_buf *pub)
{
	const struct cbuf *b = caa_container_of(pub, const struct cbuf, pub);

	return __atomic_load_n(&b->flags, __ATOMIC_ACQUIRE);
}

void fs_buf_set_flags(struct fs_buf *pub, uint32_t set, uint32_t clear)
{
	struct cbuf *b = caa_container_of(pub, struct cbuf, pub);
	uint32_t f = __atomic_load_n(&b->flags, __ATOMIC_RELAXED);

	while (!__atomic_compare_exchange_n(&b->flags, &f, (f & ~clear) | set, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		;
}

void fs_cache_set_cap(struct fs_cache *c, uint64_t cap_bytes)
{
	__atomic_store_n(&c->cap, cap_bytes, __ATOMIC_RELAXED);
	pthread_mutex_lock(&c->lru_lock);
	evict_locked(c, 0);
	/* a cap lowered below the dirty bytes in memory: those past it staged */
	if (c->stage && !c->stage_off && cap_bytes && !c->stage_over && c->dirty_bytes > cap_bytes)
		stage_locked(c, 0);
	pthread_mutex_unlock(&c->lru_lock);
}

uint64_t fs_cache_cap(const struct fs_cache *c)
{
	return __atomic_load_n(&c->cap, __ATOMIC_RELAXED);
}

void fs_cache_trim(struct fs_cache *c)
{
	fs_slab_trim(c->slab);
	spare_free();
}

void fs_cache_get_stats(struct fs_cache *c, struct fs_cache_stats *st)
{
	struct fs_slab_stats ss;

	fs_slab_get_stats(c->slab, &ss);
	st->mem_bytes = ss.piece_bytes + ss.large_bytes;
	st->mapped_bytes = ss.chunks * FS_SLAB_CHUNK;
	st->hits = st->misses = 0;
	for (unsigned k = 0; k < 8; k++) {
		st->hits += LOAD(c->hm[k].hits);
		st->misses += LOAD(c->hm[k].misses);
	}
	st->inserts = LOAD(c->st.inserts);
	st->evictions = LOAD(c->st.evictions);
	st->forgotten = LOAD(c->st.forgotten);
	st->reads = LOAD(c->st.reads);
	st->bytes = LOAD(c->st.bytes);
	st->peak_bytes = LOAD(c->st.peak_bytes);
	st->buffers = LOAD(c->st.buffers);
	st->over_cap = LOAD(c->st.over_cap);
}

struct fs_dev *fs_cache_dev(const struct fs_cache *c)
{
	return c->dev;
}

/* ---- the write path ---- */

int fs_cache_get_new(struct fs_cache *c, fs_daddr_t daddr, uint32_t len, struct fs_buf **out)
{
	struct cbuf *b;
	unsigned char *data;
	int err = 0;

	if (!len)
		return -EINVAL;
	if (daddr > UINT64_MAX >> FS_BBSHIFT || fs_daddr_to_bytes(daddr) > c->dev->size ||
	    len > c->dev->size - fs_daddr_to_bytes(daddr))
		return -ENXIO;
	b = lookup_ref(c, daddr, len, true);
	if (!b) {
		data = fs_slab_alloc(c->slab, len);
		if (!data)
			return -ENOMEM;
		b = insert_owned(c, daddr, len, data, &err);
		if (!b)
			return err;
	}
	/* a new buffer or one somebody cached first: either way it is overwritten whole */
	memset(b->pub.data, 0, len);
	*out = &b->pub;
	return 0;
}

int fs_buf_mark_dirty(struct fs_cache *c, struct fs_buf *pub, const struct fs_dirty_info *info)
{
	struct cbuf *b = caa_container_of(pub, struct cbuf, pub);
	uint64_t cap;

	if (!info || info->type >= FS_MT_NR || info->wclass >= FS_WCLASS_NR)
		return -EINVAL;
	pthread_mutex_lock(&c->lru_lock);
	if (!b->marked) {
		cap = LOAD(c->cap);
		/* past the cap: others' dirty bytes to the staging file first, if there is one */
		if (c->stage && !c->stage_off &&
		    (c->stage_over ? c->dirty_bytes + pub->len > c->stage_over :
				 cap && c->dirty_bytes + pub->len > cap))
			stage_locked(c, pub->len);
		if (cap && c->dirty_bytes + pub->len > cap) {
			pthread_mutex_unlock(&c->lru_lock);
			return -ENOSPC;
		}
		__atomic_store_n(&c->dirty_bytes, c->dirty_bytes + pub->len, __ATOMIC_RELAXED);
		b->marked = true;
	}
	b->dinfo = *info;
	fs_buf_set_flags(pub, FS_BUF_DIRTY, 0);
	pthread_mutex_unlock(&c->lru_lock);
	return 0;
}

uint64_t fs_cache_dirty_bytes(struct fs_cache *c)
{
	return LOAD(c->dirty_bytes) + LOAD(c->staged_bytes);
}

bool fs_cache_dirty_fits(struct fs_cache *c, uint64_t bytes)
{
	uint64_t cap = LOAD(c->cap);

	return !cap || c->stage || (bytes <= cap && LOAD(c->dirty_bytes) <= cap - bytes);
}

static void name_object(struct fs_flush_result *res, const struct cbuf *b)
{
	res->type = b->dinfo.type;
	res->daddr = b->pub.daddr;
	res->len = b->pub.len;
	res->agno = b->dinfo.agno;
	res->ino = b->dinfo.ino;
}

/* Re-stamp the CRCs of a dirty buffer and verify its new bytes: 0 or -EUCLEAN. */
static int finish_and_verify(const struct fs_flush_opts *o, struct cbuf *b,
			     struct fs_flush_result *res)
{
	const struct fs_dirty_info *d = &b->dinfo;
	const struct fs_verifier *v = fs_verifier_get(d->type);
	uint32_t unit = fs_verify_unit(o->g, d->type, b->pub.len);
	size_t crc_off = d->type == FS_MT_SB ? FS_SB_CRC_OFF : v->crc_off;
	struct fs_findings fl;
	int ret = 0;

	if (b->pub.len % unit) {
		name_object(res, b);
		res->has_code = false;
		snprintf(res->message, sizeof(res->message),
			 "%s buffer of %u bytes is not a whole number of %u-byte units", v->name,
			 b->pub.len, unit);
		return -EUCLEAN;
	}
	fs_findings_init(&fl);
	for (uint32_t off = 0; off < b->pub.len && !ret; off += unit) {
		unsigned char *p = b->pub.data + off;
		struct fs_vctx vc = {
			.g = o->g, .fl = &fl, .agno = d->agno,
			.daddr = b->pub.daddr + off / FS_BBSIZE,
			.have_log_head = o->have_log_head, .head_lsn = o->head_lsn,
			.ino = d->type == FS_MT_INODE ? d->ino + off / unit : d->ino,
		};

		if (crc_off != SIZE_MAX && crc_off + 4 <= unit)
			fs_crc_update(p, unit, crc_off);
		fs_verify(d->type, &vc, p, unit);
		if (fl.n || fl.dropped) {
			name_object(res, b);
			res->daddr = vc.daddr;
			res->ino = vc.ino;
			res->has_code = fl.n > 0;
			if (fl.n)
				res->code = fl.v[0].code;
			snprintf(res->message, sizeof(res->message), "%s",
				 fl.n ? fl.v[0].message : "findings were dropped");
			ret = -EUCLEAN;
		}
	}
	fs_findings_free(&fl);
	return ret;
}

int fs_meta_seal(const struct fs_flush_opts *o, const struct fs_dirty_info *info,
		 fs_daddr_t daddr, void *data, uint32_t len, struct fs_flush_result *res)
{
	struct fs_flush_result dummy;
	/* the flush's own check, on a buffer the cache does not hold */
	struct cbuf one = { .pub = { .daddr = daddr, .len = len, .data = data } };

	if (!res)
		res = &dummy;
	memset(res, 0, sizeof(*res));
	if (!o || !o->g || !info || info->type >= FS_MT_NR || !len || !data)
		return -EINVAL;
	one.dinfo = *info;
	return finish_and_verify(o, &one, res);
}

/*
 * finish_and_verify for any dirty buffer: a staged one is read back, sealed
 * and written to the staging file again (the flush runs alone: nobody else
 * touches it meanwhile).
 */
static int seal_buf(struct fs_cache *c, const struct fs_flush_opts *o, struct cbuf *b,
		    struct fs_flush_result *res)
{
	struct fs_spill_run old = b->run;
	int err;

	if (!b->staged)
		return finish_and_verify(o, b, res);
	b->pub.data = fs_slab_alloc(c->slab, b->pub.len);
	if (!b->pub.data)
		return -ENOMEM;
	err = fs_spill_read(c->stage, &old, b->pub.data);
	if (!err)
		err = finish_and_verify(o, b, res);
	if (!err)
		err = fs_spill_write(c->stage, b->pub.data, b->pub.len, &b->run);
	if (!err)
		fs_spill_discard(c->stage, &old);
	else
		b->run = old;
	fs_slab_free(c->slab, b->pub.data, b->pub.len);
	b->pub.data = NULL;
	if (err && err != -EUCLEAN && !res->message[0]) {
		name_object(res, b);
		snprintf(res->message, sizeof(res->message), "the staging file in %s: %s",
			 fs_spill_dir(c->stage), strerror(-err));
	}
	return err;
}

/* Bytes [from, from + len) of a dirty buffer into dst, staged or not. */
static int buf_bytes(struct fs_cache *c, const struct cbuf *b, uint64_t from, uint64_t len,
		     void *dst)
{
	unsigned char *tmp;
	int err;

	if (!__atomic_load_n(&b->staged, __ATOMIC_ACQUIRE)) {
		memcpy(dst, b->pub.data + from, len);
		return 0;
	}
	if (!from && len == b->pub.len)
		return fs_spill_read(c->stage, &b->run, dst);
	tmp = malloc(b->pub.len);
	if (!tmp)
		return -ENOMEM;
	err = fs_spill_read(c->stage, &b->run, tmp);
	if (!err)
		memcpy(dst, tmp + from, len);
	free(tmp);
	return err;
}

void fs_flush_result_describe(const struct fs_flush_result *res, char *msg, size_t ml)
{
	const struct fs_verifier *v = fs_verifier_get(res->type);
	const char *name = v ? v->name : "metadata";

	snprintf(msg, ml, "BUG: %s %s block at daddr %llu (AG %u, inode %llu) fails its verifier "
		 "before it is written (%s: %s)", strchr("AEIOUaeiou", name[0]) ? "an" : "a", name,
		 (unsigned long long)res->daddr, res->agno, (unsigned long long)res->ino,
		 res->has_code ? fs_code_name(res->code) : "unknown", res->message);
}

static int cmp_cbuf_daddr(const void *x, const void *y)
{
	const struct cbuf *a = *(struct cbuf *const *)x, *b = *(struct cbuf *const *)y;

	if (a->pub.daddr != b->pub.daddr)
		return a->pub.daddr < b->pub.daddr ? -1 : 1;
	return a->pub.len < b->pub.len ? -1 : a->pub.len > b->pub.len;
}

/* One device write: the buffers [first, first+n) of the sorted list, in aligned bytes [start, end). */
struct wgroup {
	uint64_t start, end;
	size_t first, n;
	bool shares_prev;          /* its first unit is the previous group's last one */
};

static uint64_t align_down(uint64_t v, uint64_t a) { return v / a * a; }
static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
static uint64_t buf_start(const struct cbuf *b) { return fs_daddr_to_bytes(b->pub.daddr); }
static uint64_t buf_end(const struct cbuf *b) { return buf_start(b) + b->pub.len; }

/*
 * Fill a group's write buffer: bytes no dirty buffer covers are read from
 * the device first (whole alignment units around each gap), then every
 * buffer is copied over them, so a unit shared with bytes the flush does
 * not own is written back as the device held it.
 */
static int fill_group(struct fs_cache *c, struct cbuf **v, const struct wgroup *gr,
		      uint64_t align, unsigned char *out, struct fs_flush_result *res)
{
	uint64_t cursor = gr->start;
	int err;

	for (size_t i = 0; i <= gr->n; i++) {
		uint64_t s = i < gr->n ? buf_start(v[gr->first + i]) : gr->end;

		if (s > cursor) {
			uint64_t rs = align_down(cursor, align), re = align_up(s, align);

			if (rs < gr->start)
				rs = gr->start;
			if (re > gr->end)
				re = gr->end;
			err = fs_dev_read(c->dev, out + (rs - gr->start), re - rs, rs);
			if (err) {
				res->daddr = rs >> FS_BBSHIFT;
				res->len = (uint32_t)(re - rs);
				snprintf(res->message, sizeof(res->message),
					 "reading the rest of an alignment unit failed");
				return err;
			}
			res->rmw_reads++;
		}
		if (i < gr->n && buf_end(v[gr->first + i]) > cursor)
			cursor = buf_end(v[gr->first + i]);
	}
	for (size_t i = 0; i < gr->n; i++) {
		struct cbuf *b = v[gr->first + i];

		err = buf_bytes(c, b, 0, b->pub.len, out + (buf_start(b) - gr->start));
		if (err) {
			name_object(res, b);
			snprintf(res->message, sizeof(res->message),
				 "reading it back from the staging file failed");
			return err;
		}
	}
	return 0;
}

/* In-flight write memory per batch: bounded whatever the queue depth. */
#define FLUSH_BATCH_BYTES (16u << 20)

static int write_groups(struct fs_cache *c, struct cbuf **v, struct wgroup *gr, size_t ngr,
			uint64_t align, struct fs_flush_result *res)
{
	struct fs_dev *dev = c->dev;
	struct fs_ioq *q = NULL;
	struct fs_io_req *reqs;
	unsigned depth = dev->qdepth ? dev->qdepth : 1;
	size_t g0 = 0;
	int err;

	reqs = calloc(depth, sizeof(*reqs));
	if (!reqs)
		return -ENOMEM;
	err = fs_ioq_create(dev, &q);
	while (!err && g0 < ngr) {
		size_t n = 0;
		uint64_t bytes = 0;

		while (g0 + n < ngr && n < depth && (n == 0 || bytes < FLUSH_BATCH_BYTES)) {
			struct wgroup *w = &gr[g0 + n];
			struct fs_io_req *r = &reqs[n];

			/*
			 * A group sharing a unit with the one before reads that unit
			 * back only once the batch holding the other is written.
			 */
			if (n && w->shares_prev)
				break;

			r->off = w->start;
			r->len = w->end - w->start;
			r->buf = fs_dev_alloc(dev, r->len);
			r->priv = w;
			n++;
			if (!r->buf) {
				err = -ENOMEM;
				break;
			}
			err = fill_group(c, v, w, align, r->buf, res);
			if (err)
				break;
			bytes += r->len;
		}
		if (!err) {
			err = fs_ioq_write_batch(q, reqs, n);
			if (err) {
				for (size_t i = 0; i < n; i++)
					if (reqs[i].result < 0 || i == n - 1) {
						res->daddr = reqs[i].off >> FS_BBSHIFT;
						res->len = (uint32_t)reqs[i].len;
						break;
					}
				snprintf(res->message, sizeof(res->message), "device write failed: %s",
					 strerror(-err));
			} else {
				res->writes += n;
				res->bytes += bytes;
			}
		}
		for (size_t i = 0; i < n; i++)
			free(reqs[i].buf);
		g0 += n;
	}
	fs_ioq_destroy(q);
	free(reqs);
	return err;
}

/*
 * Clean cached buffers that overlap what was just written under other
 * keys (a single inode inside a cached cluster, a header sector inside a
 * cached block) get the new bytes too, so the cache never serves what the
 * device no longer holds.  Under lru_lock: the list cannot change.
 */
static void refresh_overlapping(struct fs_cache *c, struct cbuf **v, size_t n)
{
	for (struct cbuf *b = c->head; b; b = b->next) {
		uint64_t bs = buf_start(b), be = buf_end(b);
		size_t lo = 0, hi = n;

		if (b->marked)
			continue;
		/* the first written buffer ending past bs: ends ascend, as nothing overlaps */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (buf_end(v[mid]) > bs)
				hi = mid;
			else
				lo = mid + 1;
		}
		for (size_t i = lo; i < n && buf_start(v[i]) < be; i++) {
			uint64_t os = bs > buf_start(v[i]) ? bs : buf_start(v[i]);
			uint64_t oe = be < buf_end(v[i]) ? be : buf_end(v[i]);

			/* a staged one that cannot be read back: the run fails on the error */
			if (buf_bytes(c, v[i], os - buf_start(v[i]), oe - os, b->pub.data + (os - bs)) &&
			    !c->stage_err)
				c->stage_err = -EIO;
		}
	}
}

/*
 * Every dirty buffer, referenced (dirty ones are never evicted anyway),
 * sorted by address; overlaps are refused across classes, or flushing one
 * class then another would overwrite the first's bytes with stale ones.
 * 0 with the list in *out and its length in *count (the caller puts and frees them), -ENOMEM, or
 * -EEXIST naming the overlap in res.
 */
static int collect_dirty(struct fs_cache *c, struct cbuf ***out, size_t *count,
			 struct fs_flush_result *res)
{
	struct cbuf **v = NULL, *b;
	size_t n = 0, cap = 0;
	int err = 0;

	pthread_mutex_lock(&c->lru_lock);
	for (b = c->head; b; b = b->next) {
		if (!b->marked)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct cbuf **nv = realloc(v, ncap * sizeof(*nv));

			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
			cap = ncap;
		}
		if (cbuf_tryget(b))
			v[n++] = b;
	}
	pthread_mutex_unlock(&c->lru_lock);
	if (!err && n) {
		qsort(v, n, sizeof(*v), cmp_cbuf_daddr);
		for (size_t i = 1; i < n; i++)
			if (buf_start(v[i]) < buf_end(v[i - 1])) {
				name_object(res, v[i]);
				snprintf(res->message, sizeof(res->message),
					 "dirty buffers overlap: daddr %llu (+%u bytes) and daddr %llu",
					 (unsigned long long)v[i - 1]->pub.daddr, v[i - 1]->pub.len,
					 (unsigned long long)v[i]->pub.daddr);
				err = -EEXIST;
				break;
			}
	}
	*out = v;
	*count = n;
	return err;
}

struct fs_dirty_set {
	struct fs_cache *c;
	struct cbuf **v;           /* sorted by address, no two overlapping */
	size_t n;
};

int fs_cache_dirty_set(struct fs_cache *c, const struct fs_flush_opts *o,
		       struct fs_dirty_set **out, struct fs_flush_result *res)
{
	struct fs_flush_result dummy;
	struct fs_dirty_set *s;
	int err;

	if (!res)
		res = &dummy;
	memset(res, 0, sizeof(*res));
	*out = NULL;
	if (!o || !o->g)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->c = c;
	err = collect_dirty(c, &s->v, &s->n, res);
	for (size_t i = 0; !err && i < s->n; i++)
		if (o->wclass == FS_WCLASS_ALL || s->v[i]->dinfo.wclass == o->wclass)
			err = seal_buf(c, o, s->v[i], res);
	if (err) {
		fs_dirty_set_free(s);
		return err;
	}
	*out = s;
	return 0;
}

void fs_dirty_set_patch(void *priv, void *buf, size_t len, uint64_t off)
{
	const struct fs_dirty_set *s = priv;
	size_t lo = 0, hi;

	if (!s || !s->n || !len)
		return;
	/* the first buffer ending after off (ends ascend: no two overlap) */
	hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (buf_end(s->v[mid]) <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < s->n && buf_start(s->v[i]) < off + len; i++) {
		uint64_t bs = buf_start(s->v[i]), be = buf_end(s->v[i]);
		uint64_t from = bs > off ? bs : off, to = be < off + len ? be : off + len;

		/* a staged buffer that cannot be read back leaves the device's bytes: the
		 * verify then reports them, and the staging error fails the run anyway */
		if (buf_bytes(s->c, s->v[i], from - bs, to - from, (unsigned char *)buf + (from - off)))
			keep_stage_err(s->c, -EIO);
	}
}

void fs_dirty_set_free(struct fs_dirty_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		fs_buf_put(s->c, &s->v[i]->pub);
	free(s->v);
	free(s);
}

/* Written buffers that were staged leave the cache (they are clean, and hold no bytes). */
static void drop_written_staged(struct fs_cache *c, struct cbuf **v, size_t n)
{
	pthread_mutex_lock(&c->lru_lock);
	for (size_t i = 0; i < n; i++) {
		struct cbuf *b = v[i];
		int zero = 0;

		if (!b->staged || b->marked ||
		    !__atomic_compare_exchange_n(&b->refs, &zero, -1, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		fs_spill_discard(c->stage, &b->run);
		urcu_bp_read_lock();
		cds_lfht_del(c->ht, &b->node);
		urcu_bp_read_unlock();
		fifo_unlink(c, b);
		SUB(c->st.buffers, 1);
		cbuf_free_later(c, b);
	}
	pthread_mutex_unlock(&c->lru_lock);
}

int fs_cache_flush(struct fs_cache *c, const struct fs_flush_opts *o, struct fs_flush_result *res)
{
	struct fs_flush_result dummy;
	struct cbuf **v = NULL;
	struct wgroup *gr = NULL;
	size_t n = 0, ngr = 0;
	uint64_t align, max_write;
	int err = 0;

	if (!res)
		res = &dummy;
	memset(res, 0, sizeof(*res));
	if (!o || !o->g)
		return -EINVAL;
	align = c->dev->direct ? c->dev->dio_align : FS_BBSIZE;
	max_write = o->max_write ? o->max_write : 2u << 20;
	if (max_write < align)
		max_write = align;

	err = collect_dirty(c, &v, &n, res);
	if (err || !n)
		goto out;
	/* the class's buffers are written; the others wait for their flush */
	{
		size_t w = 0;

		for (size_t i = 0; i < n; i++) {
			if (o->wclass == FS_WCLASS_ALL || v[i]->dinfo.wclass == o->wclass)
				v[w++] = v[i];
			else
				fs_buf_put(c, &v[i]->pub);
		}
		n = w;
	}
	/* every buffer is judged before the first byte goes out */
	for (size_t i = 0; i < n; i++) {
		err = seal_buf(c, o, v[i], res);
		if (err)
			goto out;
	}

	/*
	 * Coalesce: a buffer joins the group before it when their aligned
	 * ranges share a unit or touch, while the group stays within
	 * max_write.  Past that, a buffer sharing a unit with the group
	 * starts a new group marked shares_prev: written in a later batch,
	 * after re-reading that unit, so neither write loses the other's
	 * bytes and no group grows beyond max_write (bounded memory).
	 */
	gr = calloc(n, sizeof(*gr));
	if (!gr) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t s = align_down(buf_start(v[i]), align), e = align_up(buf_end(v[i]), align);
		struct wgroup *last = ngr ? &gr[ngr - 1] : NULL;

		if (e > c->dev->size) {
			/* a partial unit at the device's end: the size is the limit */
			e = c->dev->size;
		}
		if (last && s <= last->end && (e > last->end ? e : last->end) - last->start <= max_write) {
			if (e > last->end)
				last->end = e;
			last->n++;
			continue;
		}
		gr[ngr++] = (struct wgroup){ .start = s, .end = e, .first = i, .n = 1,
					     .shares_prev = last && s < last->end };
	}
	err = write_groups(c, v, gr, ngr, align, res);
	if (err)
		goto out;
	if (o->sync) {
		err = fs_dev_flush(c->dev);
		if (err) {
			snprintf(res->message, sizeof(res->message), "device flush failed");
			goto out;
		}
	}
	pthread_mutex_lock(&c->lru_lock);
	refresh_overlapping(c, v, n);
	for (size_t i = 0; i < n; i++) {
		v[i]->marked = false;
		if (v[i]->staged)
			__atomic_store_n(&c->staged_bytes, c->staged_bytes - v[i]->pub.len,
					 __ATOMIC_RELAXED);
		else
			__atomic_store_n(&c->dirty_bytes, c->dirty_bytes - v[i]->pub.len,
					 __ATOMIC_RELAXED);
		fs_buf_set_flags(&v[i]->pub, 0, FS_BUF_DIRTY);
	}
	pthread_mutex_unlock(&c->lru_lock);
	res->buffers = n;
out:
	for (size_t i = 0; i < n; i++)
		fs_buf_put(c, &v[i]->pub);
	if (!err)
		drop_written_staged(c, v, n);
	free(v);
	free(gr);
	return err;
}
