/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_CRC_H
#define XFSX_CRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Plain CRC32c (Castagnoli) of a buffer, continuing from crc (start with ~0). */
uint32_t fs_crc32c(uint32_t crc, const void *buf, size_t len);

/*
 * XFS stores a structure's CRC as the inverted CRC32c of the whole
 * structure computed with the 4 CRC bytes taken as zero, little-endian.
 */
uint32_t fs_crc_compute(const void *buf, size_t len, size_t crc_off);
bool fs_crc_ok(const void *buf, size_t len, size_t crc_off);
void fs_crc_update(void *buf, size_t len, size_t crc_off);
/* The CRC as stored (for messages). */
uint32_t fs_crc_stored(const void *buf, size_t crc_off);

#endif
