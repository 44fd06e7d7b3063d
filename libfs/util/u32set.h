/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_U32SET_H
#define XFSX_U32SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A set of 32-bit keys (visited blocks of a walk, inodes on a list): open
 * addressing, grown by doubling, zero-initialised empty.  Any key value
 * may be stored.
 */
struct fs_u32set {
	uint32_t *k;               /* key + 1; 0 = empty */
	size_t cap, n;
	bool has_max;              /* UINT32_MAX, which key + 1 cannot hold */
};

/* 1 added, 0 already there, -ENOMEM. */
int  fs_u32set_add(struct fs_u32set *s, uint32_t key);
bool fs_u32set_has(const struct fs_u32set *s, uint32_t key);
void fs_u32set_free(struct fs_u32set *s);

#endif
