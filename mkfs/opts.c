// SPDX-License-Identifier: GPL-2.0
/*
 * Command line of xfsx_mkfs, in mkfs.xfs's syntax: option letters with
 * comma-separated name=value suboptions.  Only parsing and range checks of
 * single values live here; rules that join several values are the planner's.
 */
#include "mkfs/opts.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uuid/uuid.h>

const char mkfs_usage[] =
"Usage: xfsx_mkfs [options] DEVICE|FILE\n"
"  -b size=N                        block size (1k..64k, default 4k)\n"
"  -s size=N                        sector size (default: the device's)\n"
"  -i size=N,maxpct=N,sparse=0|1,nrext64=0|1,exchange=0|1\n"
"  -n size=N,parent=0|1             directory block size; parent pointers\n"
"  -d size=N,agcount=N,agsize=N,su=N,sw=N,sunit=N,swidth=N,concurrency=N|nr_cpus\n"
"  -l size=N,su=N,sunit=N,concurrency=N|nr_cpus,logdev=DEV\n"
"                                   logdev=: an external log on DEV (size: whole DEV)\n"
"  -r rtdev=DEV,size=N,extsize=N    a realtime section on DEV (size: whole DEV)\n"
"  -m crc=1,finobt=0|1,rmapbt=0|1,reflink=0|1,inobtcount=0|1,bigtime=0|1,\n"
"     nrext64=0|1,uuid=UUID\n"
"  -p DIR|PROTOFILE                 populate from a directory tree or an mkfs.xfs protofile\n"
"  --progress / --no-progress       -p's progress on stderr (default: on a terminal)\n"
"  --tmpdir=DIR                     where -p keeps the tree it copies (a file, not memory;\n"
"                                   default: $TMPDIR, else /tmp; never on the target)\n"
"  -L label  -f (force)  -N (dry run)  -q (quiet)  -K (no discard)  -V  -h\n"
"  --undo-file=FILE                 save what is overwritten (xfsx_undo restores it;\n"
"                                   mkfs then reads the whole device first)\n"
"  --help  --version\n"
"Sizes take a k/m/g/t/p/e suffix (powers of 1024; KiB and KB mean the same), s\n"
"(512-byte sectors) or b (filesystem blocks).\n"
"Exit: 0 made (or planned, with -N), 1 any error, usage errors included.\n";

static int perr(char *err, size_t el, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(char *err, size_t el, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, el, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A size with an optional k/m/g/t/p/e (powers of 1024) or s (512 bytes) suffix. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || !*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return -ERANGE;
	if (*end) {
		switch (tolower((unsigned char)*end)) {
		case 's': shift = 9; break;
		case 'k': shift = 10; break;
		case 'm': shift = 20; break;
		case 'g': shift = 30; break;
		case 't': shift = 40; break;
		case 'p': shift = 50; break;
		case 'e': shift = 60; break;
		default: return -EINVAL;
		}
		end++;
		/* accept "KiB"/"MB"-style tails too */
		if (tolower((unsigned char)*end) == 'i')
			end++;
		if (tolower((unsigned char)*end) == 'b')
			end++;
		if (*end)
			return -EINVAL;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

/*
 * Sizes given in blocks ("10b") wait until the block size is known.  The
 * option's name is copied: the caller's buffer is gone by then.
 */
struct pending_size {
	char opt[64];
	const char *val;
	uint64_t *dst;
};

struct parser {
	struct mkfs_opts *o;
	char *err;
	size_t el;
	struct pending_size pend[8];
	unsigned npend;
	/* every "-x name" seen: mkfs.xfs refuses an option given twice */
	char seen[64][64];
	unsigned nseen;
	int internal_log;            /* -l internal=: -1 not given */
};

/* A suboption given a second time, in the same -x or another, is refused. */
static int respecified(struct parser *ps, const char *name)
{
	for (unsigned i = 0; i < ps->nseen; i++)
		if (!strcmp(ps->seen[i], name))
			return perr(ps->err, ps->el, "%s given twice: give each option once", name);
	if (ps->nseen < sizeof(ps->seen) / sizeof(ps->seen[0]))
		snprintf(ps->seen[ps->nseen++], sizeof(ps->seen[0]), "%s", name);
	return 0;
}

/* The largest byte count a file offset (and so any XFS filesystem) can reach. */
#define MAX_BYTES ((uint64_t)INT64_MAX)

static int size_arg(struct parser *ps, const char *opt, const char *val, uint64_t *dst)
{
	size_t n;

	if (!val || !*val)
		return perr(ps->err, ps->el, "%s needs a value, e.g. %s=1g", opt, opt);
	n = strlen(val);
	if (n > 1 && tolower((unsigned char)val[n - 1]) == 'b' && isdigit((unsigned char)val[n - 2])) {
		if (ps->npend >= sizeof(ps->pend) / sizeof(ps->pend[0]))
			return perr(ps->err, ps->el, "too many sizes in blocks");
		snprintf(ps->pend[ps->npend].opt, sizeof(ps->pend[0].opt), "%s", opt);
		ps->pend[ps->npend].val = val;
		ps->pend[ps->npend++].dst = dst;
		return 0;
	}
	if (parse_size(val, dst) < 0)
		return perr(ps->err, ps->el, "%s=%s is not a size: use a number with an optional "
			    "k/m/g/t/p/e, s or b suffix", opt, val);
	/* a zero stripe unit means "no stripe" (mkfs.xfs takes -d su=0,sw=0) */
	if (*dst == 0 && strcmp(opt, "-d su"))
		return perr(ps->err, ps->el, "%s=%s is too small", opt, val);
	if (*dst > MAX_BYTES)
		return perr(ps->err, ps->el, "%s=%s is larger than any file or filesystem can be "
			    "(8 EiB)", opt, val);
	return 0;
}

/* Sizes of blocks, sectors, inodes: bytes with an optional k suffix, never in blocks. */
static int small_size_arg(struct parser *ps, const char *opt, const char *val, uint64_t *dst)
{
	if (!val || parse_size(val, dst) < 0)
		return perr(ps->err, ps->el, "%s=%s is not a size in bytes (e.g. 4096 or 4k)", opt,
			    val ? val : "");
	/* 0 is not "the default": mkfs.xfs calls it too small, so do we */
	if (*dst < 512)
		return perr(ps->err, ps->el, "%s=%s is too small (a power of two, at least 512)",
			    opt, val);
	return 0;
}

static int num_arg(struct parser *ps, const char *opt, const char *val, long long min,
		   long long max, long long *out)
{
	char *end;
	long long v;

	if (!val || !*val)
		return perr(ps->err, ps->el, "%s needs a value between %lld and %lld", opt, min, max);
	errno = 0;
	v = strtoll(val, &end, 0);
	if (errno || *end || v < min || v > max)
		return perr(ps->err, ps->el, "%s=%s: expected a whole number between %lld and %lld",
			    opt, val, min, max);
	*out = v;
	return 0;
}

/* A 0|1 switch; the bare name (or "name=") means 1, as in mkfs.xfs. */
static int bool_arg(struct parser *ps, const char *opt, const char *val, int *out)
{
	long long v = 0;

	if (!val || !*val) {
		*out = 1;
		return 0;
	}
	if (num_arg(ps, opt, val, 0, 1, &v))
		return -EINVAL;
	*out = (int)v;
	return 0;
}

static int concurrency_arg(struct parser *ps, const char *opt, const char *val, int *out)
{
	long long v = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	/* "nr_cpus", "1" or no value: one writer per online CPU (as mkfs.xfs 6.10) */
	if (!val || !strcmp(val, "nr_cpus")) {
		v = 1;
	} else if (num_arg(ps, opt, val, 0, INT_MAX, &v)) {
		return -EINVAL;
	}
	if (v == 1)
		v = cpus > 0 ? (cpus > INT_MAX ? INT_MAX : cpus) : 0;
	*out = (int)v;
	return 0;
}

static int unknown(struct parser *ps, char letter, const char *name, const char *known)
{
	return perr(ps->err, ps->el, "-%c %s is not an option xfsx_mkfs knows; -%c takes %s",
		    letter, name, letter, known);
}

static int parse_sub(struct parser *ps, char letter, char *arg)
{
	struct mkfs_opts *o = ps->o;
	char *save = NULL, *tok;
	long long v = 0;

	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *val = strchr(tok, '=');
		char name[64];
		uint64_t sz;

		if (val)
			*val++ = 0;
		snprintf(name, sizeof(name), "-%c %s", letter,
			 letter == 's' && !strcmp(tok, "sectsize") ? "size" : tok);
		if (respecified(ps, name))
			return -EINVAL;
		switch (letter) {
		case 'b':
			if (strcmp(tok, "size"))
				return unknown(ps, letter, tok, "size=");
			if (small_size_arg(ps, name, val, &sz))
				return -EINVAL;
			if (sz > 65536)
				return perr(ps->err, ps->el, "-b size=%s is larger than 64 KiB", val);
			o->blocksize = (uint32_t)sz;
			break;
		case 's':
			if (strcmp(tok, "size") && strcmp(tok, "sectsize"))
				return unknown(ps, letter, tok, "size=");
			if (small_size_arg(ps, name, val, &sz))
				return -EINVAL;
			if (sz > 32768)
				return perr(ps->err, ps->el, "-s size=%s is larger than 32 KiB", val);
			o->sectsize = (uint32_t)sz;
			break;
		case 'i':
			if (!strcmp(tok, "size")) {
				if (small_size_arg(ps, name, val, &sz))
					return -EINVAL;
				if (sz > 65536)
					return perr(ps->err, ps->el, "-i size=%s is too large", val);
				o->inodesize = (uint32_t)sz;
			} else if (!strcmp(tok, "maxpct")) {
				if (num_arg(ps, name, val, 0, 100, &v))
					return -EINVAL;
				o->imaxpct = (int)v;
			} else if (!strcmp(tok, "sparse")) {
				if (bool_arg(ps, name, val, &o->sparse))
					return -EINVAL;
			} else if (!strcmp(tok, "nrext64")) {
				if (bool_arg(ps, name, val, &o->nrext64))
					return -EINVAL;
			} else if (!strcmp(tok, "exchange")) {
				if (bool_arg(ps, name, val, &o->exchange))
					return -EINVAL;
			} else if (!strcmp(tok, "attr") || !strcmp(tok, "projid32bit")) {
				/* v5 always has attr2 and 32-bit project ids */
				if (!val || strcmp(val, !strcmp(tok, "attr") ? "2" : "1"))
					return perr(ps->err, ps->el, "%s: v5 filesystems always use %s", name,
						    !strcmp(tok, "attr") ? "attr=2" : "projid32bit=1");
			} else {
				return unknown(ps, letter, tok,
					       "size=, maxpct=, sparse=, nrext64=, exchange=");
			}
			break;
		case 'n':
			if (!strcmp(tok, "size")) {
				if (small_size_arg(ps, name, val, &sz))
					return -EINVAL;
				if (sz > 65536)
					return perr(ps->err, ps->el, "-n size=%s is larger than 64 KiB", val);
				o->dirblocksize = (uint32_t)sz;
			} else if (!strcmp(tok, "version")) {
				if (!val || strcmp(val, "2"))
					return perr(ps->err, ps->el, "-n version=%s: only version 2 "
						    "directories are made (ascii-ci is not supported)",
						    val ? val : "");
			} else if (!strcmp(tok, "ftype")) {
				if (val && strcmp(val, "1"))
					return perr(ps->err, ps->el, "-n ftype=%s: v5 filesystems always "
						    "store the file type in directories", val);
			} else if (!strcmp(tok, "parent")) {
				if (bool_arg(ps, name, val, &o->parent))
					return -EINVAL;
			} else {
				return unknown(ps, letter, tok, "size=, version=2, ftype=1, parent=");
			}
			break;
		case 'd':
			if (!strcmp(tok, "size")) {
				if (size_arg(ps, name, val, &o->dsize))
					return -EINVAL;
			} else if (!strcmp(tok, "agcount")) {
				if (num_arg(ps, name, val, 1, XFS_MAX_AGNUMBER, &v))
					return -EINVAL;
				o->agcount = (uint64_t)v;
			} else if (!strcmp(tok, "agsize")) {
				if (size_arg(ps, name, val, &o->agsize))
					return -EINVAL;
			} else if (!strcmp(tok, "su")) {
				if (size_arg(ps, name, val, &o->dsu))
					return -EINVAL;
				o->stripe_given = true;
			} else if (!strcmp(tok, "sw")) {
				if (num_arg(ps, name, val, 0, INT_MAX, &v))
					return -EINVAL;
				o->dsw = (uint64_t)v;
				o->stripe_given = true;
			} else if (!strcmp(tok, "sunit")) {
				if (num_arg(ps, name, val, 0, INT_MAX, &v))
					return -EINVAL;
				o->dsunit = v;
				o->stripe_given = true;
			} else if (!strcmp(tok, "swidth")) {
				if (num_arg(ps, name, val, 0, INT_MAX, &v))
					return -EINVAL;
				o->dswidth = v;
				o->stripe_given = true;
			} else if (!strcmp(tok, "noalign")) {
				o->dsunit = o->dswidth = 0;
				o->stripe_given = true;
			} else if (!strcmp(tok, "concurrency")) {
				if (concurrency_arg(ps, name, val, &o->data_concurrency))
					return -EINVAL;
			} else {
				return unknown(ps, letter, tok,
					       "size=, agcount=, agsize=, su=, sw=, sunit=, swidth=, "
					       "noalign, concurrency=");
			}
			break;
		case 'l':
			if (!strcmp(tok, "size")) {
				if (size_arg(ps, name, val, &o->logsize))
					return -EINVAL;
			} else if (!strcmp(tok, "su")) {
				if (size_arg(ps, name, val, &o->lsu))
					return -EINVAL;
			} else if (!strcmp(tok, "sunit")) {
				if (num_arg(ps, name, val, 0, INT_MAX, &v))
					return -EINVAL;
				o->lsunit = v;
			} else if (!strcmp(tok, "concurrency")) {
				if (concurrency_arg(ps, name, val, &o->log_concurrency))
					return -EINVAL;
			} else if (!strcmp(tok, "logdev")) {
				if (!val || !*val)
					return perr(ps->err, ps->el, "-l logdev needs a device or image "
						    "file, e.g. -l logdev=/dev/sdb1");
				o->logdev = val;
			} else if (!strcmp(tok, "internal")) {
				if (!val || !*val || !strcmp(val, "1")) {
					ps->internal_log = 1;
				} else if (!strcmp(val, "0")) {
					ps->internal_log = 0;
				} else {
					return perr(ps->err, ps->el, "-l internal=%s: expected 0 or 1", val);
				}
			} else if (!strcmp(tok, "version")) {
				if (!val || strcmp(val, "2"))
					return perr(ps->err, ps->el, "-l version=%s: v5 filesystems use "
						    "version 2 logs", val ? val : "");
			} else if (!strcmp(tok, "lazy-count")) {
				if (val && strcmp(val, "1"))
					return perr(ps->err, ps->el, "-l lazy-count=%s: v5 filesystems "
						    "always use lazy counters", val);
			} else {
				return unknown(ps, letter, tok, "size=, su=, sunit=, concurrency=, "
					       "logdev=, internal=");
			}
			break;
		case 'r':
			if (!strcmp(tok, "rtdev")) {
				if (!val || !*val)
					return perr(ps->err, ps->el, "-r rtdev needs a device or image "
						    "file, e.g. -r rtdev=/dev/sdc1");
				o->rtdev = val;
			} else if (!strcmp(tok, "size")) {
				if (size_arg(ps, name, val, &o->rtsize))
					return -EINVAL;
			} else if (!strcmp(tok, "extsize")) {
				if (size_arg(ps, name, val, &o->rtextsize))
					return -EINVAL;
				if (o->rtextsize > XFS_MAX_RTEXTSIZE)
					return perr(ps->err, ps->el, "-r extsize=%s is larger than 1 GiB, "
						    "the largest realtime extent", val);
			} else {
				return unknown(ps, letter, tok, "rtdev=, size=, extsize=");
			}
			break;
		case 'm': {
			int b;

			if (!strcmp(tok, "crc")) {
				if (bool_arg(ps, name, val, &b))
					return -EINVAL;
				if (!b)
					return perr(ps->err, ps->el, "-m crc=0 asks for a v4 filesystem; "
						    "xfsx_mkfs makes only v5 (CRC) filesystems, which "
						    "every kernel since 3.15 mounts. Use mkfs.xfs for v4 "
						    "(deprecated upstream)");
			} else if (!strcmp(tok, "finobt")) {
				if (bool_arg(ps, name, val, &o->finobt))
					return -EINVAL;
			} else if (!strcmp(tok, "rmapbt")) {
				if (bool_arg(ps, name, val, &o->rmapbt))
					return -EINVAL;
			} else if (!strcmp(tok, "reflink")) {
				if (bool_arg(ps, name, val, &o->reflink))
					return -EINVAL;
			} else if (!strcmp(tok, "inobtcount")) {
				if (bool_arg(ps, name, val, &o->inobtcount))
					return -EINVAL;
			} else if (!strcmp(tok, "bigtime")) {
				if (bool_arg(ps, name, val, &o->bigtime))
					return -EINVAL;
			} else if (!strcmp(tok, "nrext64")) {
				if (bool_arg(ps, name, val, &o->nrext64))
					return -EINVAL;
			} else if (!strcmp(tok, "uuid")) {
				uuid_t u;

				if (!val || uuid_parse(val, u))
					return perr(ps->err, ps->el, "-m uuid=%s is not a UUID "
						    "(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", val ? val : "");
				memcpy(o->uuid, u, 16);
				o->uuid_given = true;
			} else {
				return unknown(ps, letter, tok, "crc=1, finobt=, rmapbt=, reflink=, "
					       "inobtcount=, bigtime=, nrext64=, uuid=");
			}
			break;
		}
		}
	}
	return 0;
}

/*
 * "NAME=VALUE" or "NAME VALUE" at argv[i] (getopt must not see either):
 * the value into *out and the words taken out of argv; false when argv[i]
 * is not NAME.  No value: *rc set to MKFS_PARSE_ERROR with msg in err.
 */
static bool long_value(char **argv, int *argc, int i, const char *name, const char **out,
		       const char *msg, char *err, size_t el, enum mkfs_parse_result *rc)
{
	size_t len = strlen(name);
	int n = argv[i][len] ? 1 : 2;

	if (strncmp(argv[i], name, len) || (argv[i][len] != '=' && argv[i][len]))
		return false;
	*out = argv[i][len] ? argv[i] + len + 1 : i + 1 < *argc ? argv[i + 1] : NULL;
	if (!*out || !**out) {
		perr(err, el, "%s", msg);
		*rc = MKFS_PARSE_ERROR;
		return true;
	}
	memmove(&argv[i], &argv[i + n], (size_t)(*argc - i - n + 1) * sizeof(*argv));
	*argc -= n;
	return true;
}

enum mkfs_parse_result mkfs_parse_args(int argc, char **argv, struct mkfs_opts *o,
				       const char **target, char *err, size_t el)
{
	struct parser ps = { .o = o, .err = err, .el = el, .internal_log = -1 };
	enum mkfs_parse_result rc = MKFS_PARSE_OK;
	int c;

	mkfs_opts_init(o);
	err[0] = 0;
	optind = 1;
	opterr = 0;
	/* GNU habit: --help and --version anywhere; any other long option is unknown */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--help"))
			return MKFS_PARSE_HELP;
		if (!strcmp(argv[i], "--version"))
			return MKFS_PARSE_VERSION;
		if (!strcmp(argv[i], "--progress") || !strcmp(argv[i], "--no-progress")) {
			o->progress = argv[i][2] == 'p' ? 1 : 0;
			/* getopt must not see it */
			memmove(&argv[i], &argv[i + 1], (size_t)(argc - i) * sizeof(*argv));
			argc--;
			i--;
			continue;
		}
		if (long_value(argv, &argc, i, "--tmpdir", &o->tmpdir, "--tmpdir needs a directory",
			       err, el, &rc) ||
		    long_value(argv, &argc, i, "--undo-file", &o->undo_file,
			       "--undo-file needs a file name", err, el, &rc)) {
			if (rc)
				return rc;
			i--;
			continue;
		}
		if (!strncmp(argv[i], "--", 2)) {
			perr(err, el, "unknown option '%s'", argv[i]);
			return MKFS_PARSE_ERROR;
		}
	}
	while ((c = getopt(argc, argv, "b:d:fi:l:L:m:n:Np:qr:s:KVh")) != -1) {
		switch (c) {
		case 'b': case 'd': case 'i': case 'l': case 'm': case 'n': case 'r': case 's':
			if (parse_sub(&ps, (char)c, optarg))
				return MKFS_PARSE_ERROR;
			break;
		case 'L':
			if (strlen(optarg) > 12) {
				perr(err, el, "label '%s' is longer than 12 characters", optarg);
				return MKFS_PARSE_ERROR;
			}
			memset(o->label, 0, sizeof(o->label));
			memcpy(o->label, optarg, strlen(optarg));
			o->label_given = true;
			break;
		case 'p': {
			/* mkfs.xfs 6.x spells it -p [file=]PROTO[,atime=0|1]; atime is not ours */
			const char *v = !strncmp(optarg, "file=", 5) ? optarg + 5 : optarg;

			if (o->proto) {
				perr(err, el, "-p given twice");
				return MKFS_PARSE_ERROR;
			}
			if (!*v) {
				perr(err, el, "-p needs a directory or a protofile");
				return MKFS_PARSE_ERROR;
			}
			o->proto = v;
			break;
		}
		case 'f': o->force = true; break;
		case 'N': o->noaction = true; break;
		case 'q': o->quiet = true; break;
		case 'K': o->nodiscard = true; break;
		case 'V': return MKFS_PARSE_VERSION;
		case 'h': return MKFS_PARSE_HELP;
		default:
			if (optopt && strchr("bdilLmnprs", optopt))
				perr(err, el, "-%c needs an argument", optopt);
			else
				perr(err, el, "unknown option -%c", optopt ? optopt : '?');
			return MKFS_PARSE_ERROR;
		}
	}
	if (optind != argc - 1) {
		perr(err, el, optind >= argc ? "no device or image file given" :
		     "only one device or image file can be given (extra: '%s')",
		     optind < argc - 1 ? argv[optind + 1] : "");
		return MKFS_PARSE_ERROR;
	}
	*target = argv[optind];
	/* the log's place, as mkfs.xfs words it */
	if (ps.internal_log == 1 && o->logdev) {
		perr(err, el, "-l internal=1 and logdev= name two places for the log: give one");
		return MKFS_PARSE_ERROR;
	}
	if (ps.internal_log == 0 && !o->logdev) {
		perr(err, el, "-l internal=0 needs the log's device: -l logdev=DEV");
		return MKFS_PARSE_ERROR;
	}
	if ((o->rtsize || o->rtextsize) && !o->rtdev) {
		perr(err, el, "-r size= and extsize= need a realtime device: -r rtdev=DEV");
		return MKFS_PARSE_ERROR;
	}

	/* sizes in blocks, now that the block size is known */
	for (unsigned i = 0; i < ps.npend; i++) {
		char num[64];
		size_t n = strlen(ps.pend[i].val);
		uint64_t v;
		uint32_t bs = o->blocksize ? o->blocksize : 4096;

		if (n >= sizeof(num) || !strcmp(ps.pend[i].opt, "-b size")) {
			perr(err, el, "%s=%s: a size in blocks cannot set the block size",
			     ps.pend[i].opt, ps.pend[i].val);
			return MKFS_PARSE_ERROR;
		}
		memcpy(num, ps.pend[i].val, n - 1);
		num[n - 1] = 0;
		if (parse_size(num, &v) < 0) {
			perr(err, el, "%s=%s is not a number of blocks", ps.pend[i].opt, ps.pend[i].val);
			return MKFS_PARSE_ERROR;
		}
		if (v == 0 && strcmp(ps.pend[i].opt, "-d su")) {
			perr(err, el, "%s=%s is too small", ps.pend[i].opt, ps.pend[i].val);
			return MKFS_PARSE_ERROR;
		}
		if (v > MAX_BYTES / bs) {
			perr(err, el, "%s=%s is larger than any file or filesystem can be (8 EiB)",
			     ps.pend[i].opt, ps.pend[i].val);
			return MKFS_PARSE_ERROR;
		}
		*ps.pend[i].dst = v * bs;
	}
	return MKFS_PARSE_OK;
}
