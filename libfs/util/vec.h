/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_VEC_H
#define XFSX_VEC_H

#include <stddef.h>

/*
 * Growable arrays: a pointer, a count and a capacity the caller keeps in
 * its own struct; this grows the capacity (doubling, starting at `first`)
 * so the array holds at least `need` elements of `elem` bytes.  vp is the
 * address of the array pointer (any T **).  0, or -ENOMEM with the array
 * and *cap unchanged.
 */
int fs_vec_grow(void *vp, size_t *cap, size_t need, size_t elem, size_t first);

static inline int fs_vec_reserve(void *vp, size_t *cap, size_t need, size_t elem, size_t first)
{
	return need <= *cap ? 0 : fs_vec_grow(vp, cap, need, elem, first);
}

/* Room for one more element after the n in array v (a T * lvalue) of capacity cap. */
#define FS_VEC_ROOM(v, n, cap, first) \
	fs_vec_reserve(&(v), &(cap), (size_t)(n) + 1, sizeof(*(v)), (first))

#endif
