// SPDX-License-Identifier: GPL-2.0
/*
 * The cache's buffer memory (slab.h).  Each chunk is 2 MiB, mapped at a
 * 2 MiB boundary so a piece finds its chunk by masking its address; the
 * chunk's first piece holds its header.  Pieces are handed out from the
 * chunk's free list, else from its never-used tail (so untouched pages are
 * never faulted in).  A size keeps a list of its chunks that have a free
 * piece, newest first.  A chunk left empty goes to a reserve shared by
 * every size (at most RESERVE_CHUNKS), which a size short of room takes
 * before it maps a new chunk: the scan's batches fill chunks and empty
 * them again, and a chunk unmapped and mapped anew cost a page fault per
 * 4 KiB touched (8% of the CPU time of a check of the aged benchmark
 * image: 103 chunks mapped in 0.6 s; a -t 2 run made 516 mmap calls,
 * 198 with the reserve and the batch frees of the cache).  A kept chunk
 * keeps every page it ever touched, so another size's few pieces in it
 * hold more than a fresh chunk would: with two workers the aged image's
 * peak rose by about 3 MiB with 8 chunks kept, 7 MiB with 16.
 * fs_slab_trim unmaps the reserve (the scan does at each phase's end); a
 * chunk past RESERVE_CHUNKS is unmapped at once.
 */
#include "libfs/io/slab.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>

#define CHUNK_SIZE  ((uintptr_t)FS_SLAB_CHUNK)
#define MIN_SHIFT   9            /* 512 bytes */
#define MAX_SHIFT   16           /* 64 KiB */
#define NCLASS      (MAX_SHIFT - MIN_SHIFT + 1)
#define RESERVE_CHUNKS 8u        /* empty chunks kept mapped: 16 MiB */

struct piece {
	struct piece *next;
};

struct chunk {
	struct chunk *prev, *next;   /* the class's chunks with a free piece (listed) */
	struct chunk *all_prev, *all_next; /* every chunk of the class */
	struct piece *free;
	uint32_t used;               /* pieces handed out */
	uint32_t bump;               /* the first never-used piece */
	uint32_t npieces;            /* pieces past the header's */
	uint8_t cls;
	bool listed;
};

struct sclass {
	pthread_mutex_t lock;
	struct chunk *avail;         /* chunks with a free piece */
	struct chunk *all;
};

struct fs_slab {
	struct sclass cls[NCLASS];
	pthread_mutex_t reserve_lock; /* taken inside a size's lock, never around one */
	struct chunk *reserve;       /* empty chunks of no size, linked by next */
	unsigned nreserve;
	size_t align;
	uint64_t piece_bytes, large_bytes, chunks, chunk_maps;   /* atomic */
};

#define ADD(f, v) __atomic_add_fetch(&(f), (v), __ATOMIC_RELAXED)
#define SUB(f, v) __atomic_sub_fetch(&(f), (v), __ATOMIC_RELAXED)

int fs_slab_create(size_t align, struct fs_slab **out)
{
	struct fs_slab *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (int i = 0; i < NCLASS; i++)
		pthread_mutex_init(&s->cls[i].lock, NULL);
	pthread_mutex_init(&s->reserve_lock, NULL);
	s->align = align > 4096 ? align : 4096;
	*out = s;
	return 0;
}

static void chunk_unmap(struct fs_slab *s, struct chunk *ch)
{
	munmap(ch, CHUNK_SIZE);
	SUB(s->chunks, 1);
}

void fs_slab_destroy(struct fs_slab *s)
{
	if (!s)
		return;
	for (int i = 0; i < NCLASS; i++) {
		struct chunk *ch = s->cls[i].all, *next;

		for (; ch; ch = next) {
			next = ch->all_next;
			chunk_unmap(s, ch);
		}
		pthread_mutex_destroy(&s->cls[i].lock);
	}
	fs_slab_trim(s);
	pthread_mutex_destroy(&s->reserve_lock);
	free(s);
}

/* The class of len: a power of two from 256 bytes to 64 KiB, else -1. */
static int class_of(size_t len)
{
	if (len < (1u << MIN_SHIFT) || len > (1u << MAX_SHIFT) || (len & (len - 1)))
		return -1;
	return __builtin_ctzl(len) - MIN_SHIFT;
}

static void avail_unlink(struct sclass *k, struct chunk *ch)
{
	if (ch->prev)
		ch->prev->next = ch->next;
	else
		k->avail = ch->next;
	if (ch->next)
		ch->next->prev = ch->prev;
	ch->prev = ch->next = NULL;
	ch->listed = false;
}

static void avail_push(struct sclass *k, struct chunk *ch)
{
	ch->prev = NULL;
	ch->next = k->avail;
	if (k->avail)
		k->avail->prev = ch;
	k->avail = ch;
	ch->listed = true;
}

/* A chunk of 2 MiB at a 2 MiB boundary, from the reserve or newly mapped, or NULL. */
static struct chunk *chunk_get(struct fs_slab *s)
{
	unsigned char *p;
	uintptr_t at, head, tail;
	struct chunk *ch;

	pthread_mutex_lock(&s->reserve_lock);
	ch = s->reserve;
	if (ch) {
		s->reserve = ch->next;
		s->nreserve--;
	}
	pthread_mutex_unlock(&s->reserve_lock);
	if (ch)
		return ch;
	p = mmap(NULL, 2 * CHUNK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	at = ((uintptr_t)p + CHUNK_SIZE - 1) & ~(CHUNK_SIZE - 1);
	head = at - (uintptr_t)p;
	tail = CHUNK_SIZE - head;
	if (head)
		munmap(p, head);
	if (tail)
		munmap((unsigned char *)at + CHUNK_SIZE, tail);
	ch = (struct chunk *)at;
	/* a huge page would make the whole chunk resident at its first touch */
	madvise(ch, CHUNK_SIZE, MADV_NOHUGEPAGE);
	ADD(s->chunks, 1);
	ADD(s->chunk_maps, 1);
	return ch;
}

/* A chunk for class i, with no piece handed out, or NULL. */
static struct chunk *chunk_new(struct fs_slab *s, int i)
{
	struct chunk *ch = chunk_get(s);

	if (!ch)
		return NULL;
	*ch = (struct chunk){ .npieces = (uint32_t)(CHUNK_SIZE >> (i + MIN_SHIFT)) - 1,
			      .cls = (uint8_t)i, .all_next = s->cls[i].all };
	if (ch->all_next)
		ch->all_next->all_prev = ch;
	s->cls[i].all = ch;
	return ch;
}

/* An empty chunk leaves its class (whose lock is held) for the reserve, or is unmapped. */
static void chunk_retire(struct fs_slab *s, struct sclass *k, struct chunk *ch)
{
	avail_unlink(k, ch);
	if (ch->all_prev)
		ch->all_prev->all_next = ch->all_next;
	else
		k->all = ch->all_next;
	if (ch->all_next)
		ch->all_next->all_prev = ch->all_prev;
	pthread_mutex_lock(&s->reserve_lock);
	if (s->nreserve < RESERVE_CHUNKS) {
		ch->next = s->reserve;
		s->reserve = ch;
		s->nreserve++;
		ch = NULL;
	}
	pthread_mutex_unlock(&s->reserve_lock);
	if (ch)
		chunk_unmap(s, ch);
}

void fs_slab_trim(struct fs_slab *s)
{
	struct chunk *ch, *next;

	if (!s)
		return;
	pthread_mutex_lock(&s->reserve_lock);
	ch = s->reserve;
	s->reserve = NULL;
	s->nreserve = 0;
	pthread_mutex_unlock(&s->reserve_lock);
	for (; ch; ch = next) {
		next = ch->next;
		chunk_unmap(s, ch);
	}
}

/* A piece of class i (its lock held), or NULL. */
static void *piece_take(struct fs_slab *s, struct sclass *k, int i)
{
	struct chunk *ch = k->avail;
	void *p;

	if (!ch) {
		ch = chunk_new(s, i);
		if (!ch)
			return NULL;
		avail_push(k, ch);
	}
	if (ch->free) {
		p = ch->free;
		ch->free = ch->free->next;
	} else {
		p = (unsigned char *)ch + ((size_t)(1 + ch->bump++) << (i + MIN_SHIFT));
	}
	if (++ch->used == ch->npieces)
		avail_unlink(k, ch);
	return p;
}

/* Piece p back to its chunk (its class's lock held). */
static void piece_put(struct fs_slab *s, struct sclass *k, void *p)
{
	struct chunk *ch = (struct chunk *)((uintptr_t)p & ~(CHUNK_SIZE - 1));
	struct piece *pc = p;

	pc->next = ch->free;
	ch->free = pc;
	if (!ch->listed)
		avail_push(k, ch);
	if (--ch->used == 0)
		chunk_retire(s, k, ch);
}

/* One large block (outside the chunks), or NULL. */
static void *large_alloc(struct fs_slab *s, size_t len)
{
	void *p = NULL;

	len = (len + s->align - 1) / s->align * s->align;
	if (posix_memalign(&p, s->align, len))
		return NULL;
	ADD(s->large_bytes, len);
	return p;
}

size_t fs_slab_alloc_many(struct fs_slab *s, size_t len, void **out, size_t n)
{
	int i = class_of(len);
	size_t got = 0;

	if (!len)
		return 0;
	if (i < 0) {
		while (got < n && (out[got] = large_alloc(s, len)))
			got++;
		return got;
	}
	pthread_mutex_lock(&s->cls[i].lock);
	while (got < n && (out[got] = piece_take(s, &s->cls[i], i)))
		got++;
	pthread_mutex_unlock(&s->cls[i].lock);
	ADD(s->piece_bytes, got * len);
	return got;
}

void *fs_slab_alloc(struct fs_slab *s, size_t len)
{
	void *p;

	return fs_slab_alloc_many(s, len, &p, 1) ? p : NULL;
}

void fs_slab_free_many(struct fs_slab *s, void *const *p, size_t len, size_t n)
{
	int i = class_of(len);
	size_t freed = 0;

	if (i < 0) {
		for (size_t k = 0; k < n; k++)
			if (p[k]) {
				free(p[k]);
				SUB(s->large_bytes, (len + s->align - 1) / s->align * s->align);
			}
		return;
	}
	pthread_mutex_lock(&s->cls[i].lock);
	for (size_t k = 0; k < n; k++)
		if (p[k]) {
			piece_put(s, &s->cls[i], p[k]);
			freed++;
		}
	pthread_mutex_unlock(&s->cls[i].lock);
	SUB(s->piece_bytes, freed * len);
}

void fs_slab_free(struct fs_slab *s, void *p, size_t len)
{
	fs_slab_free_many(s, &p, len, 1);
}

void fs_slab_get_stats(struct fs_slab *s, struct fs_slab_stats *st)
{
	st->piece_bytes = __atomic_load_n(&s->piece_bytes, __ATOMIC_RELAXED);
	st->large_bytes = __atomic_load_n(&s->large_bytes, __ATOMIC_RELAXED);
	st->chunks = __atomic_load_n(&s->chunks, __ATOMIC_RELAXED);
	st->chunk_maps = __atomic_load_n(&s->chunk_maps, __ATOMIC_RELAXED);
}
