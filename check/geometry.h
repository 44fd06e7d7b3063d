/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_CHECK_GEOMETRY_H
#define XFSX_CHECK_GEOMETRY_H

/* xfsx_check's geometry report (-g); the scan it runs is scan/scan.h. */
#include <stdio.h>

#include "scan/scan.h"

/* Geometry reports (geometry.c). */
void check_print_geometry_text(const struct fs *fs, const char *path, FILE *out);
void check_print_geometry_json(const struct fs *fs, FILE *out);

#endif
