// SPDX-License-Identifier: GPL-2.0
/*
 * The cache's buffer memory (slab.h).  Each chunk is 2 MiB, mapped at a
 * 2 MiB boundary so a piece finds its chunk by masking its address; the
 * chunk's first piece holds its header.  Pieces are handed out from the
 * chunk's free list, else from its never-used tail (so untouched pages are
 * never faulted in).  A size keeps a list of its chunks that have a free
 * piece, newest first, and one empty chunk in reserve: a second empty one
 * is unmapped, so memory the cache lets go returns to the kernel.
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
	struct chunk *spare;         /* an empty chunk kept (listed in avail) */
};

struct fs_slab {
	struct sclass cls[NCLASS];
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
	free(s);
}

/* The class of len: a power of two from 512 to 64 KiB, else -1. */
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

/* A new chunk of class i, 2 MiB aligned, or NULL. */
static struct chunk *chunk_map(struct fs_slab *s, int i)
{
	unsigned char *p = mmap(NULL, 2 * CHUNK_SIZE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t at, head, tail;
	struct chunk *ch;

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
	ch->npieces = (uint32_t)(CHUNK_SIZE >> (i + MIN_SHIFT)) - 1;
	ch->cls = (uint8_t)i;
	ch->all_next = s->cls[i].all;
	if (ch->all_next)
		ch->all_next->all_prev = ch;
	s->cls[i].all = ch;
	ADD(s->chunks, 1);
	ADD(s->chunk_maps, 1);
	return ch;
}

static void *piece_alloc(struct fs_slab *s, int i)
{
	struct sclass *k = &s->cls[i];
	struct chunk *ch;
	void *p;

	pthread_mutex_lock(&k->lock);
	ch = k->avail;
	if (!ch) {
		ch = chunk_map(s, i);
		if (!ch) {
			pthread_mutex_unlock(&k->lock);
			return NULL;
		}
		avail_push(k, ch);
	}
	if (ch == k->spare)
		k->spare = NULL;
	if (ch->free) {
		p = ch->free;
		ch->free = ch->free->next;
	} else {
		p = (unsigned char *)ch + ((size_t)(1 + ch->bump++) << (i + MIN_SHIFT));
	}
	if (++ch->used == ch->npieces)
		avail_unlink(k, ch);
	pthread_mutex_unlock(&k->lock);
	return p;
}

static void piece_free(struct fs_slab *s, void *p)
{
	struct chunk *ch = (struct chunk *)((uintptr_t)p & ~(CHUNK_SIZE - 1));
	struct sclass *k = &s->cls[ch->cls];
	struct piece *pc = p;

	pthread_mutex_lock(&k->lock);
	pc->next = ch->free;
	ch->free = pc;
	if (!ch->listed)
		avail_push(k, ch);
	if (--ch->used == 0 && ch != k->spare) {
		if (!k->spare) {
			k->spare = ch;
		} else {
			avail_unlink(k, ch);
			if (ch->all_prev)
				ch->all_prev->all_next = ch->all_next;
			else
				k->all = ch->all_next;
			if (ch->all_next)
				ch->all_next->all_prev = ch->all_prev;
			chunk_unmap(s, ch);
		}
	}
	pthread_mutex_unlock(&k->lock);
}

void *fs_slab_alloc(struct fs_slab *s, size_t len)
{
	int i = class_of(len);
	void *p = NULL;

	if (!len)
		return NULL;
	if (i >= 0) {
		p = piece_alloc(s, i);
		if (p)
			ADD(s->piece_bytes, len);
		return p;
	}
	len = (len + s->align - 1) / s->align * s->align;
	if (posix_memalign(&p, s->align, len))
		return NULL;
	ADD(s->large_bytes, len);
	return p;
}

void fs_slab_free(struct fs_slab *s, void *p, size_t len)
{
	if (!p)
		return;
	if (class_of(len) >= 0) {
		piece_free(s, p);
		SUB(s->piece_bytes, len);
		return;
	}
	free(p);
	SUB(s->large_bytes, (len + s->align - 1) / s->align * s->align);
}

void fs_slab_get_stats(struct fs_slab *s, struct fs_slab_stats *st)
{
	st->piece_bytes = __atomic_load_n(&s->piece_bytes, __ATOMIC_RELAXED);
	st->large_bytes = __atomic_load_n(&s->large_bytes, __ATOMIC_RELAXED);
	st->chunks = __atomic_load_n(&s->chunks, __ATOMIC_RELAXED);
	st->chunk_maps = __atomic_load_n(&s->chunk_maps, __ATOMIC_RELAXED);
}
