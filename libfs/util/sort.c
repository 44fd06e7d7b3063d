// SPDX-License-Identifier: GPL-2.0
/*
 * Radix sort on a 32-bit key: four byte-wide counting passes (a pass whose
 * byte is the same in every key is skipped), ping-ponging between the
 * array and one scratch copy.  Short arrays get an insertion sort: no
 * allocation, and fewer moves than four passes.  Records of 8, 16 or 32
 * bytes (the common ones) are moved by fixed-size copies the compiler
 * inlines, not by a memcpy call per record.
 */
#include "libfs/util/sort.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t key_at(const unsigned char *rec, size_t key_off)
{
	uint32_t k;

	memcpy(&k, rec + key_off, sizeof(k));
	return k;
}

static void insertion_sort(unsigned char *v, size_t n, size_t size, size_t key_off,
			   unsigned char *tmp)
{
	for (size_t i = 1; i < n; i++) {
		uint32_t k = key_at(v + i * size, key_off);
		size_t j = i;

		if (key_at(v + (i - 1) * size, key_off) <= k)
			continue;
		memcpy(tmp, v + i * size, size);
		while (j > 0 && key_at(v + (j - 1) * size, key_off) > k)
			j--;
		memmove(v + (j + 1) * size, v + j * size, (i - j) * size);
		memcpy(v + j * size, tmp, size);
	}
}

static inline void copy_rec(unsigned char *dst, const unsigned char *src, size_t size)
{
	switch (size) {
	case 8: memcpy(dst, src, 8); break;
	case 16: memcpy(dst, src, 16); break;
	case 32: memcpy(dst, src, 32); break;
	default: memcpy(dst, src, size); break;
	}
}

int fs_sort_u32(void *base, size_t n, size_t size, size_t key_off)
{
	unsigned char *v = base, *src, *dst, *buf;
	size_t count[4][256];

	if (n < 2)
		return 0;
	if (n <= 32) {
		unsigned char one[256];

		if (size <= sizeof(one)) {
			insertion_sort(v, n, size, key_off, one);
			return 0;
		}
	}
	buf = malloc(n * size);
	if (!buf)
		return -ENOMEM;
	memset(count, 0, sizeof(count));
	for (size_t i = 0; i < n; i++) {
		uint32_t k = key_at(v + i * size, key_off);

		for (int p = 0; p < 4; p++)
			count[p][(k >> (8 * p)) & 0xff]++;
	}
	src = v;
	dst = buf;
	for (int p = 0; p < 4; p++) {
		size_t pos[256], sum = 0;
		bool same = false;

		for (int b = 0; b < 256; b++) {
			if (count[p][b] == n)
				same = true;
			pos[b] = sum;
			sum += count[p][b];
		}
		if (same)
			continue;
		for (size_t i = 0; i < n; i++) {
			const unsigned char *r = src + i * size;

			copy_rec(dst + pos[(key_at(r, key_off) >> (8 * p)) & 0xff]++ * size, r, size);
		}
		unsigned char *t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * size);
	free(buf);
	return 0;
}

int fs_sort_u32_cmp(void *base, size_t n, size_t size, size_t key_off,
		    int (*cmp)(const void *, const void *))
{
	unsigned char *v = base, one[256];
	int err = fs_sort_u32(v, n, size, key_off);

	if (err)
		return err;
	for (size_t i = 0; i < n;) {
		uint32_t k = key_at(v + i * size, key_off);
		size_t j = i + 1;

		while (j < n && key_at(v + j * size, key_off) == k)
			j++;
		if (j - i > 16 || size > sizeof(one)) {
			qsort(v + i * size, j - i, size, cmp);
		} else {
			/* stable insertion sort of the run by cmp */
			for (size_t a = i + 1; a < j; a++) {
				size_t b = a;

				if (cmp(v + (a - 1) * size, v + a * size) <= 0)
					continue;
				memcpy(one, v + a * size, size);
				while (b > i && cmp(v + (b - 1) * size, one) > 0)
					b--;
				memmove(v + (b + 1) * size, v + b * size, (a - b) * size);
				memcpy(v + b * size, one, size);
			}
		}
		i = j;
	}
	return 0;
}
