/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_ARENA_H
#define XFSX_ARENA_H

#include <stddef.h>
#include <stdint.h>

/*
 * Memory that does not stay resident: allocations from one temporary file
 * in a directory (unlinked as soon as it is made, so nothing is left
 * behind whatever ends the process), mapped MAP_SHARED into one virtual
 * reservation, so a pointer never moves.  Each region of the file grows by
 * steps (FS_ARENA_MIN doubling up to FS_ARENA_STEP), each allocated on
 * disk (fallocate) before it is mapped: a full directory is an error at
 * the allocation, -ENOSPC, never a SIGBUS at a later store.
 *
 * The reservation is cut into nregions regions of region_bytes each (a
 * bump allocator per region): a region holding one growing array grows it
 * in place (fs_arena_grow).  Fresh memory reads as zeros.
 *
 * fs_arena_trim drops the mapping's resident pages from the process (the
 * data stays in the file and faults back in when touched); fs_arena_tick
 * trims once the arena's resident pages pass FS_ARENA_RESIDENT.  So the
 * process's resident set stays bounded however large the arena grows.
 *
 * Not thread-safe: one thread allocates and trims.
 */
#define FS_ARENA_MIN ((size_t)1 << 20)
#define FS_ARENA_STEP ((size_t)64 << 20)
#define FS_ARENA_RESIDENT ((size_t)32 << 20)
#define FS_ARENA_TICKS 64

struct fs_arena {
	char *dir;
	int fd, statm;              /* the file; /proc/self/statm (opened at the first check) */
	unsigned char *base;
	unsigned nregions;
	size_t region_bytes;
	size_t used[8], mapped[8];  /* per region: bytes allocated, bytes mapped */
	size_t since_trim;          /* bytes allocated since the last trim */
	unsigned ticks;
	int err;                    /* the first error (a negative errno) */
};

/*
 * Make the file in dir (it must exist and be writable) and reserve
 * nregions (at most 8) regions of region_bytes.  0 or a negative errno.
 */
int fs_arena_open(struct fs_arena *a, const char *dir, unsigned nregions, size_t region_bytes);
/* Unmap, close, forget; an arena never opened (zeroed) is left alone. */
void fs_arena_close(struct fs_arena *a);

/* len zeroed bytes in region r, aligned to align (a power of two); NULL with a->err set. */
void *fs_arena_alloc(struct fs_arena *a, unsigned r, size_t len, size_t align);
/*
 * A copy of old[0..oldlen) in newlen bytes (the rest zeroed): in place
 * when old is region r's last allocation, else a new one (the old bytes
 * stay in the file, unused).  NULL with a->err set.
 */
void *fs_arena_realloc(struct fs_arena *a, unsigned r, void *old, size_t oldlen, size_t newlen,
		       size_t align);
/* Region r's bump pointer, and back to it: what was allocated since is zeroed (and dropped). */
size_t fs_arena_mark(const struct fs_arena *a, unsigned r);
void fs_arena_release(struct fs_arena *a, unsigned r, size_t mark);
/* Have bytes more of region r on disk now (so later allocations cannot run out of space). */
int fs_arena_reserve(struct fs_arena *a, unsigned r, size_t bytes);

/* Drop every resident page of the mapping from the process. */
void fs_arena_trim(struct fs_arena *a);
/* Called per unit of work: every FS_ARENA_TICKS calls, trim when too many pages are resident. */
void fs_arena_tick(struct fs_arena *a);
/* Bytes the file holds (allocated, all regions). */
size_t fs_arena_bytes(const struct fs_arena *a);

#endif
