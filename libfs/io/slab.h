/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_SLAB_H
#define XFSX_SLAB_H

#include <stddef.h>
#include <stdint.h>

/*
 * The cache's buffer memory: pieces of one power-of-two size from 256 bytes
 * to 64 KiB carved out of 2 MiB mmap'd chunks, one free list per chunk, so
 * a buffer costs its own length (posix_memalign(4096, 4096) costs glibc
 * about twice that).  A chunk left empty is kept for any size, up to 16
 * MiB of them, and goes back to the kernel past that or at fs_slab_trim.  A
 * piece is aligned to its size up to 4096 bytes (and to 4096 above it).
 * Other lengths come from posix_memalign(align, len rounded up to align).
 * Thread-safe: one mutex per size.
 */
struct fs_slab;

#define FS_SLAB_CHUNK (2u << 20)   /* bytes of one chunk */

struct fs_slab_stats {
	uint64_t piece_bytes;        /* bytes of pieces handed out now */
	uint64_t large_bytes;        /* bytes allocated outside the chunks now */
	uint64_t chunks;             /* chunks mapped now (2 MiB of address space each), kept empty ones too */
	uint64_t chunk_maps;         /* chunks ever mapped */
};

/* align: the large allocations' alignment (a power of two, at least 4096 is used). */
int fs_slab_create(size_t align, struct fs_slab **out);
/* Unmaps every chunk, whether or not its pieces were freed. */
void fs_slab_destroy(struct fs_slab *s);
/* len bytes (len > 0), or NULL. */
void *fs_slab_alloc(struct fs_slab *s, size_t len);
/* A block from fs_slab_alloc(s, len), with the same len; NULL is ignored. */
void fs_slab_free(struct fs_slab *s, void *p, size_t len);
/*
 * n blocks of len bytes into out[] under one lock of their size (a batch
 * of blocks two workers take at once wait on it once, not once a block):
 * how many were handed out, fewer than n only when memory ran out.
 */
size_t fs_slab_alloc_many(struct fs_slab *s, size_t len, void **out, size_t n);
/* n blocks of len bytes from fs_slab_alloc(_many), under one lock; NULLs are ignored. */
void fs_slab_free_many(struct fs_slab *s, void *const *p, size_t len, size_t n);
/* The empty chunks kept for reuse go back to the kernel. */
void fs_slab_trim(struct fs_slab *s);
void fs_slab_get_stats(struct fs_slab *s, struct fs_slab_stats *st);

#endif
