#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Operational errors and usage: what is not a v5 XFS filesystem is refused
# with exit 8 and a message that says why (not XFS, v4, unknown features,
# cannot open); bad usage is exit 16; a truncated image is checked without
# crashing and reported as corrupt.
. "$XFSX_SRC/tests/lib.sh"

here="$XFSX_SRC/tests/core"
tool() { python3 "$here/coretool.py" "$@"; }

# expect_exit RC PATTERN ARGS...: exit code RC and PATTERN (grep -E) in stderr
expect_exit() {
	local want=$1 pat=$2 rc; shift 2
	"$XFSX_CHECK" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
	if [ "$rc" -ne "$want" ]; then
		diag "exit $rc, wanted $want; stderr: $(head -c 300 "$TMP/err")"
		return 1
	fi
	if [ -n "$pat" ] && ! grep -Eq "$pat" "$TMP/err"; then
		diag "stderr lacks /$pat/: $(head -c 300 "$TMP/err")"
		return 1
	fi
}

# --- usage (exit 16) ---------------------------------------------------------------
check "no device: exit 16 with usage" expect_exit 16 "Usage: xfsx_check"
check "two devices: exit 16" expect_exit 16 "Usage" a b
check "unknown option: exit 16" expect_exit 16 "" --bogus /dev/null
check "--threads=0: exit 16" expect_exit 16 "threads" --threads=0 /dev/null
check "--threads=abc: exit 16" expect_exit 16 "threads" --threads=abc /dev/null
check "--io-engine=bogus: exit 16" expect_exit 16 "unknown I/O engine" --io-engine=bogus /dev/null
check "--help: exit 0, usage on stdout" bash -c '"$0" --help | grep -q "Exit: 0 clean, 4 corruption"' "$XFSX_CHECK"
check "--version: exit 0" bash -c '"$0" --version | grep -q "^xfsx_check "' "$XFSX_CHECK"

# --- cannot open / not XFS (exit 8) ---------------------------------------------------
check "nonexistent path: exit 8, says it cannot open" expect_exit 8 "cannot open.*No such file" "$TMP/nope.img"
mkdir -p "$TMP/adir"
check "a directory: exit 8, not a block device or regular file" expect_exit 8 "is a directory: not a block device or regular file" "$TMP/adir"
: >"$TMP/empty.img"
check "empty file: exit 8, too small" expect_exit 8 "too small" "$TMP/empty.img"
truncate -s 64m "$TMP/zero.img"
check "64 MiB of zeros: exit 8, not XFS" expect_exit 8 "not an XFS filesystem" "$TMP/zero.img"
head -c 4194304 /dev/urandom >"$TMP/random.img"
check "4 MiB of random bytes: exit 8, not XFS" expect_exit 8 "not an XFS filesystem" "$TMP/random.img"
"$XFSX_CHECK" --json "$TMP/zero.img" >"$TMP/zero.json" 2>/dev/null
check "not XFS with --json: a JSON error object" \
	bash -c 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if \"not an XFS\" in d[\"error\"] else 1)" "$0"' "$TMP/zero.json"
if command -v mkfs.ext4 >/dev/null; then
	truncate -s 64m "$TMP/ext4.img" && mkfs.ext4 -q -F "$TMP/ext4.img" >/dev/null 2>&1
	check "an ext4 image: exit 8, not XFS" expect_exit 8 "not an XFS filesystem" "$TMP/ext4.img"
else
	skip "an ext4 image: exit 8" "mkfs.ext4 not installed"
fi

if ! have_xfsprogs; then
	skip "v4, feature and truncation cases" "xfsprogs (mkfs.xfs, xfs_db) not installed"
	tap_done
	exit
fi

# v4: refused, and the message says why (a v4 filesystem, not supported)
truncate -s 1g "$TMP/v4.img"
if mkfs.xfs -f -q -m crc=0 "$TMP/v4.img" >/dev/null 2>&1; then
	check "v4 image: exit 8, 'v4 filesystems are not supported'" \
		expect_exit 8 "v4 filesystems are not supported" "$TMP/v4.img"
	check "v4 image, --geometry: exit 8 too" expect_exit 8 "v4 filesystems are not supported" --geometry "$TMP/v4.img"
	"$XFSX_CHECK" --json "$TMP/v4.img" >"$TMP/v4.json" 2>/dev/null
	check "v4 image with --json: the error and an sb.version finding" tool has "$TMP/v4.json" sb.version 0
else
	skip "v4 image" "mkfs.xfs -m crc=0 refused here"
fi

# unknown feature bits in every superblock: refused, naming the bits (in
# the primary alone they are damage the secondaries outvote: exit 4)
truncate -s 1g "$TMP/base.img" && mkfs.xfs -f -q "$TMP/base.img" >/dev/null 2>&1
incompat=$(xfs_db -r -c 'sb 0' -c 'print features_incompat' "$TMP/base.img" | awk '{print $3}')
ro_compat=$(xfs_db -r -c 'sb 0' -c 'print features_ro_compat' "$TMP/base.img" | awk '{print $3}')
nag=$(xfs_db -r -c 'sb 0' -c 'print agcount' "$TMP/base.img" | awk '{print $3}')
# every_sb IMG FIELD VALUE: the same write in every superblock
every_sb() {
	local a cmds=()
	for ((a = 0; a < nag; a++)); do cmds+=(-c "sb $a" -c "write -d $2 $3"); done
	xfs_db -x "${cmds[@]}" "$1" >/dev/null 2>&1
}
cp --sparse=always "$TMP/base.img" "$TMP/feat.img"
every_sb "$TMP/feat.img" features_incompat $((incompat | 0x40000000))
check "unknown incompat bit: exit 8, names the bit" \
	expect_exit 8 "unsupported filesystem features \(incompat 0x40000000" "$TMP/feat.img"
cp --sparse=always "$TMP/base.img" "$TMP/feat.img"
xfs_db -x -c 'sb 0' -c "write -d features_incompat $((incompat | 0x40000000))" "$TMP/feat.img" >/dev/null 2>&1
check "unknown incompat bit in the primary alone: exit 4 (damage)" expect_exit 4 "" "$TMP/feat.img"
cp --sparse=always "$TMP/base.img" "$TMP/feat.img"
every_sb "$TMP/feat.img" features_ro_compat $((ro_compat | 0x10000000))
check "unknown ro_compat bit: exit 8, names the bit" \
	expect_exit 8 "ro_compat 0x10000000" "$TMP/feat.img"
"$XFSX_CHECK" --json "$TMP/feat.img" >"$TMP/feat.json" 2>/dev/null
check "unknown ro_compat bit with --json: sb.feature finding on features_ro_compat" \
	bash -c 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if any(f[\"code\"]==\"sb.feature\" and f[\"field\"]==\"features_ro_compat\" for f in d[\"findings\"]) else 1)" "$0"' "$TMP/feat.json"

# a truncated image: no crash, corruption reported for what is missing
agblocks=$(xfs_db -r -c 'sb 0' -c 'print agblocks' "$TMP/base.img" | awk '{print $3}')
bsize=$(xfs_db -r -c 'sb 0' -c 'print blocksize' "$TMP/base.img" | awk '{print $3}')
for cut in "700m|whole AG 3 gone" "$((3 * agblocks * bsize + 1024))|AG 3 headers cut mid-sector" \
	   "$((agblocks * bsize + 512))|only AG 0 and AG 1's superblock left" "40960|only AG 0's headers left"; do
	size=${cut%%|*}; what=${cut#*|}
	cp --sparse=always "$TMP/base.img" "$TMP/trunc.img" && truncate -s "$size" "$TMP/trunc.img"
	"$XFSX_CHECK" --json "$TMP/trunc.img" >"$TMP/trunc.json" 2>"$TMP/trunc.err"; rc=$?
	if [ $rc -eq 4 ] && tool has "$TMP/trunc.json" sb.geometry >/dev/null; then
		ok "truncated image ($what): exit 4, sb.geometry says the device is too small"
	else
		not_ok "truncated image ($what): exit 4, sb.geometry says the device is too small (exit $rc)"
		head -c 300 "$TMP/trunc.err" | sed 's/^/# /'
	fi
	for e in uring aio pread; do
		# an engine this kernel refuses is not compared
		XFSX_IO_ENGINE=$e "$XFSX_CHECK" --geometry "$TMP/base.img" >/dev/null 2>&1 || continue
		XFSX_IO_ENGINE=$e "$XFSX_CHECK" "$TMP/trunc.img" >/dev/null 2>&1; rc2=$?
		[ $rc2 -eq $rc ] || { not_ok "truncated image ($what): engine $e exits $rc2 like the default ($rc)"; continue 2; }
	done
	ok "truncated image ($what): every available engine gives the same exit code"
done

tap_done
