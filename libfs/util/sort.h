/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_SORT_H
#define XFSX_SORT_H

#include <stddef.h>

/*
 * Stable sort of n records of `size` bytes by the uint32_t (host order) at
 * key_off in each: an LSD radix sort, linear in n, for the hot sorts of a
 * check (directory entries by address or hash, graph edges by parent)
 * where qsort's comparator calls dominated.  Records with equal keys keep
 * their order.  0, or -ENOMEM (v is then unchanged).
 */
int fs_sort_u32(void *v, size_t n, size_t size, size_t key_off);

/*
 * The same sort, then each run of records with equal keys put in cmp's
 * order (cmp must order by the key first, as qsort's would): the result is
 * a stable sort by cmp.  For the model's extents and inode chunks, where the
 * key decides almost every comparison and runs of equal keys are short; a
 * long run (blocks shared many times) gets qsort.  0, or -ENOMEM (v is then
 * unchanged).
 */
int fs_sort_u32_cmp(void *v, size_t n, size_t size, size_t key_off,
		    int (*cmp)(const void *, const void *));

#endif
