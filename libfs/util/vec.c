// SPDX-License-Identifier: GPL-2.0
/*
 * The slow path of vec.h: the one realloc-and-double loop the scan's
 * record arrays (btree records, readahead lists, deferred inodes, graph
 * edges, model extents) share.  The array pointer is read and written
 * through memcpy, so any T ** may be passed without type punning.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libfs/util/vec.h"

int fs_vec_grow(void *vp, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t ncap = *cap ? *cap : (first ? first : 1);
	void *v, *nv;

	if (!elem)
		return -EINVAL;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	memcpy(&v, vp, sizeof(v));
	nv = realloc(v, ncap * elem);
	if (!nv)
		return -ENOMEM;
	memcpy(vp, &nv, sizeof(nv));
	*cap = ncap;
	return 0;
}
