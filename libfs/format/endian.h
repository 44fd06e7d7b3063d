/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Big-endian get/put helpers.  On-disk structures from the xfsprogs headers
 * carry __be fields; be16()/be32()/be64() read them, and the get_/put_ forms
 * read and write unaligned bytes in a buffer.
 */
#ifndef XFSX_ENDIAN_H
#define XFSX_ENDIAN_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t be16(uint16_t v) { return be16toh(v); }
static inline uint32_t be32(uint32_t v) { return be32toh(v); }
static inline uint64_t be64(uint64_t v) { return be64toh(v); }
static inline uint16_t to_be16(uint16_t v) { return htobe16(v); }
static inline uint32_t to_be32(uint32_t v) { return htobe32(v); }
static inline uint64_t to_be64(uint64_t v) { return htobe64(v); }

static inline uint16_t get_be16(const void *p) { uint16_t v; memcpy(&v, p, 2); return be16toh(v); }
static inline uint32_t get_be32(const void *p) { uint32_t v; memcpy(&v, p, 4); return be32toh(v); }
static inline uint64_t get_be64(const void *p) { uint64_t v; memcpy(&v, p, 8); return be64toh(v); }
static inline void put_be16(void *p, uint16_t v) { v = htobe16(v); memcpy(p, &v, 2); }
static inline void put_be32(void *p, uint32_t v) { v = htobe32(v); memcpy(p, &v, 4); }
static inline void put_be64(void *p, uint64_t v) { v = htobe64(v); memcpy(p, &v, 8); }

#endif
