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

#endif
