// SPDX-License-Identifier: GPL-2.0
/*
 * The metadata buffer cache: a liburcu lock-free hash table (cds_lfht) maps
 * (daddr, length) to refcounted buffers, so lookups from many AG workers
 * never take a lock.  Insertion and eviction share one mutex-protected
 * second-chance FIFO (CLOCK, an LRU approximation that costs a hit only an
 * atomic store instead of a list move under a lock).  A buffer is evicted
 * only when nobody holds it and it is clean; its memory is freed after an
 * RCU grace period, so a concurrent lookup never touches freed memory.
 *
 * The bulletproof flavour (urcu-bp) is used so that callers, including
 * worker pools this library does not own, need not register threads.
 */
#include "libfs/cache.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <urcu-bp.h>
#include <urcu/rculfhash.h>

struct cbuf {
	struct fs_buf pub;
	struct cds_lfht_node node;
	struct rcu_head rcu;
	struct cbuf *prev, *next;    /* FIFO, under lru_lock */
	int refs;                    /* atomic; -1: being evicted */
	uint32_t flags;              /* atomic */
	uint8_t accessed;            /* atomic: second chance */
};

struct fs_cache {
	struct fs_dev *dev;
	struct cds_lfht *ht;
	uint64_t cap;                /* atomic; 0 = none */
	pthread_mutex_t lru_lock;
	struct cbuf *head, *tail;    /* oldest .. newest */
	struct fs_cache_stats st;    /* fields updated atomically */
};

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
	free(b->pub.data);
	free(b);
}

static void cbuf_free_rcu(struct rcu_head *head)
{
	cbuf_free(caa_container_of(head, struct cbuf, rcu));
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
	struct fs_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->dev = dev;
	c->cap = cap_bytes;
	pthread_mutex_init(&c->lru_lock, NULL);
	c->ht = cds_lfht_new_flavor(1024, 1024, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				    &urcu_bp_flavor, NULL);
	if (!c->ht) {
		pthread_mutex_destroy(&c->lru_lock);
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
	urcu_bp_barrier();		/* evicted buffers still waiting for a grace period */
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
		urcu_bp_call_rcu(&b->rcu, cbuf_free_rcu);
	}
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
		ADD(*(b ? &c->st.hits : &c->st.misses), 1);
	return b;
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

/* Insert a buffer whose data the cache now owns; returns the buffer that is cached. */
static struct cbuf *insert_owned(struct fs_cache *c, fs_daddr_t daddr, uint32_t len,
				 unsigned char *data, int *err)
{
	struct key k = { daddr, len };
	struct cbuf *b = calloc(1, sizeof(*b));
	uint64_t bytes, peak;

	if (!b) {
		free(data);
		*err = -ENOMEM;
		return NULL;
	}
	b->pub.daddr = daddr;
	b->pub.len = len;
	b->pub.data = data;
	b->refs = 1;
	cds_lfht_node_init(&b->node);

	pthread_mutex_lock(&c->lru_lock);
	evict_locked(c, len);
	for (;;) {
		struct cds_lfht_node *got;
		struct cbuf *old;

		urcu_bp_read_lock();
		got = cds_lfht_add_unique(c->ht, key_hash(daddr, len), key_match, &k, &b->node);
		if (got == &b->node) {
			urcu_bp_read_unlock();
			break;
		}
		old = caa_container_of(got, struct cbuf, node);
		if (cbuf_tryget(old)) {
			/* someone else cached it first: theirs wins */
			urcu_bp_read_unlock();
			pthread_mutex_unlock(&c->lru_lock);
			cbuf_free(b);
			return old;
		}
		/* the old one is being evicted (by a caller of evict_locked, so not now) */
		urcu_bp_read_unlock();
		sched_yield();
	}
	fifo_append(c, b);
	ADD(c->st.buffers, 1);
	ADD(c->st.inserts, 1);
	bytes = ADD(c->st.bytes, len);
	peak = LOAD(c->st.peak_bytes);
	while (bytes > peak && !__atomic_compare_exchange_n(&c->st.peak_bytes, &peak, bytes, false,
							     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	if (LOAD(c->cap) && bytes > LOAD(c->cap))
		ADD(c->st.over_cap, 1);
	pthread_mutex_unlock(&c->lru_lock);
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
	copy = malloc(len);
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

int fs_cache_read(struct fs_cache *c, fs_daddr_t daddr, uint32_t len, struct fs_buf **out)
{
	struct cbuf *b = lookup_ref(c, daddr, len, true);
	unsigned char *data;
	int err = 0;

	if (b) {
		*out = &b->pub;
		return 0;
	}
	if (!len)
		return -EINVAL;
	if (daddr > UINT64_MAX >> FS_BBSHIFT)
		return -ENXIO;
	data = fs_dev_alloc(c->dev, len);
	if (!data)
		return -ENOMEM;
	err = fs_dev_read(c->dev, data, len, fs_daddr_to_bytes(daddr));
	ADD(c->st.reads, 1);
	if (err) {
		free(data);
		return err;
	}
	b = insert_owned(c, daddr, len, data, &err);
	if (!b)
		return err;
	*out = &b->pub;
	return 0;
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
	pthread_mutex_unlock(&c->lru_lock);
}

uint64_t fs_cache_cap(const struct fs_cache *c)
{
	return __atomic_load_n(&c->cap, __ATOMIC_RELAXED);
}

void fs_cache_get_stats(struct fs_cache *c, struct fs_cache_stats *st)
{
	st->hits = LOAD(c->st.hits);
	st->misses = LOAD(c->st.misses);
	st->inserts = LOAD(c->st.inserts);
	st->evictions = LOAD(c->st.evictions);
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
