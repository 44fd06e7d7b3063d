// SPDX-License-Identifier: GPL-2.0
/*
 * The set of 32-bit keys of u32set.h: linear probing over a power-of-two
 * table kept at most half full, keys stored plus one so that zero marks an
 * empty slot and calloc makes an empty table (UINT32_MAX, whose key + 1
 * wraps to zero, is a flag of its own).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/util/u32set.h"

static size_t slot_of(uint32_t stored, size_t cap)
{
	return (stored * 2654435761u) & (cap - 1);
}

static int grow(struct fs_u32set *s)
{
	size_t ncap = s->cap ? s->cap * 2 : 64, i;
	uint32_t *nk = calloc(ncap, sizeof(*nk));

	if (!nk)
		return -ENOMEM;
	for (size_t j = 0; j < s->cap; j++) {
		if (!s->k[j])
			continue;
		for (i = slot_of(s->k[j], ncap); nk[i]; i = (i + 1) & (ncap - 1))
			;
		nk[i] = s->k[j];
	}
	free(s->k);
	s->k = nk;
	s->cap = ncap;
	return 0;
}

int fs_u32set_add(struct fs_u32set *s, uint32_t key)
{
	uint32_t stored = key + 1;
	size_t i;

	if (key == UINT32_MAX) {
		if (s->has_max)
			return 0;
		s->has_max = true;
		return 1;
	}
	if ((s->n + 1) * 2 > s->cap && grow(s))
		return -ENOMEM;
	for (i = slot_of(stored, s->cap); s->k[i]; i = (i + 1) & (s->cap - 1))
		if (s->k[i] == stored)
			return 0;
	s->k[i] = stored;
	s->n++;
	return 1;
}

bool fs_u32set_has(const struct fs_u32set *s, uint32_t key)
{
	uint32_t stored = key + 1;

	if (key == UINT32_MAX)
		return s->has_max;
	if (!s->cap)
		return false;
	for (size_t i = slot_of(stored, s->cap); s->k[i]; i = (i + 1) & (s->cap - 1))
		if (s->k[i] == stored)
			return true;
	return false;
}

void fs_u32set_free(struct fs_u32set *s)
{
	free(s->k);
	memset(s, 0, sizeof(*s));
}
