/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XFSX_SPILL_H
#define XFSX_SPILL_H

#include <stddef.h>
#include <stdint.h>

/*
 * Sorted runs of fixed-size records on disk, for structures that outgrow
 * their share of the memory cap (-m): one temporary file in a directory
 * (--tmpdir), unlinked as soon as it is made, so nothing is left behind
 * whatever ends the process.  Writers append runs (any thread); a k-way
 * merge reads runs back in order through small buffers, in several passes
 * when there are more runs than the merge's fan-in.
 *
 * A directory that vanished (checked before every write: its link count
 * drops to 0) and a full one are errors, -ENOENT and -ENOSPC; the first
 * error is kept (fs_spill_error) so a caller that cannot return one still
 * sees the run failed.
 */
struct fs_spill;

struct fs_spill_run {
	uint64_t off;               /* byte offset in the file */
	uint64_t n;                 /* records */
};

/*
 * Open dir for runs of recsize-byte records: it must be a directory the
 * process can write in.  The file itself is made at the first write.
 * 0, -ENOMEM, or the errno of the directory's check.
 */
int fs_spill_open(const char *dir, size_t recsize, struct fs_spill **out);
void fs_spill_close(struct fs_spill *sp);
const char *fs_spill_dir(const struct fs_spill *sp);

/* Append n records as one run (thread-safe). */
int fs_spill_write(struct fs_spill *sp, const void *recs, size_t n, struct fs_spill_run *run);

/*
 * Merge runs (each sorted by cmp) in cmp order, equal records in run
 * order, to emit one record at a time; emit's nonzero return stops it.
 * More than the fan-in's runs are merged in passes through new runs
 * first.  The input runs' space is given back (hole punched) once read
 * in full.  0, an errno, or emit's return.
 */
int fs_spill_merge(struct fs_spill *sp, const struct fs_spill_run *runs, size_t nruns,
		   int (*cmp)(const void *a, const void *b),
		   int (*emit)(void *priv, const void *rec), void *priv);

/* Read a whole run into dst (run->n records). */
int fs_spill_read(struct fs_spill *sp, const struct fs_spill_run *run, void *dst);

/* Read n records of a run from its record first on into dst (-EINVAL past its end). */
int fs_spill_read_part(struct fs_spill *sp, const struct fs_spill_run *run, uint64_t first,
		       size_t n, void *dst);

/* Give a run's space back (its records are not read again). */
void fs_spill_discard(struct fs_spill *sp, const struct fs_spill_run *run);

/* The first error a write or read met (0: none). */
int fs_spill_error(const struct fs_spill *sp);
/* Runs written so far (merge passes included), and bytes. */
uint64_t fs_spill_runs(const struct fs_spill *sp);
uint64_t fs_spill_bytes(const struct fs_spill *sp);

#endif
