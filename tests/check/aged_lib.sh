# SPDX-License-Identifier: GPL-2.0
# Helpers for tests that need kernel-aged images (source after tests/lib.sh):
#   age_image IMG SIZE "MKFS OPTS" [age.py options...]
#       Debian mkfs.xfs, loop mount, tests/check/age.py, unmount.
#       Returns 1 (and says why on stderr) when mkfs or mount fail.
#   imgsum IMG      sha256 over the image's data extents and offsets
#   format_report IMG MNT_INOS_FILE   (see aged.sh)

age_image() {
	local img=$1 size=$2 opts=$3; shift 3
	rm -f "$img"
	truncate -s "$size" "$img"
	# shellcheck disable=SC2086
	mkfs.xfs -q -f $opts "$img" >/dev/null 2>"$TMP/age.err" || { cat "$TMP/age.err" >&2; return 1; }
	mount_img "$img" "$TMP/agemnt" || return 1
	if ! python3 "$XFSX_SRC/tests/check/age.py" "$TMP/agemnt" "$@" >"$TMP/age.out" 2>&1; then
		cat "$TMP/age.out" >&2
		unmount_dir "$TMP/agemnt"
		return 1
	fi
	# inode numbers of the objects whose formats the test asserts
	: >"$TMP/age.inos"
	local p
	for p in dirs/short0 dirs/block0 dirs/leaf0 dirs/node0 data/sparse0 data/extents \
		 xattrs/short xattrs/leaf xattrs/node xattrs/remote2 links/short1 links/long9 \
		 special/chr0 special/fifo0; do
		{ [ -e "$TMP/agemnt/$p" ] || [ -L "$TMP/agemnt/$p" ]; } && echo "$p $(stat -c %i "$TMP/agemnt/$p")" >>"$TMP/age.inos"
	done
	unmount_dir "$TMP/agemnt"
}

# sha256 of the image's content, holes read as zeroes (imgsum.py beside
# this file: every 1 MiB-aligned chunk that is not all zero, with its
# offset; independent of the host filesystem's extent layout).
imgsum() {
	sync -f "$1" 2>/dev/null
	python3 "$(dirname "${BASH_SOURCE[0]}")/imgsum.py" "$1"
}

# format_report IMG: which on-disk formats the aged image really holds,
# read with xfs_db (the oracle), one word per format found:
#   dir.short dir.block dir.leaf dir.node bmap.btree bmap.extents attr.short
#   attr.leaf attr.node attr.remote symlink.inline symlink.remote dev fifo
#   inode.sparse_chunk
format_report() {
	local img=$1 args=() p i
	while read -r p i; do
		args+=(-c "echo @@ $p" -c "inode $i" -c "p core.format core.aformat core.size core.naextents"
		       -c "bmap" -c "bmap -a")
	done <"$TMP/age.inos"
	local agc; agc=$(xfs_db -r -c "sb 0" -c "p agcount" "$img" | awk '{print $3}')
	for ((i = 0; i < agc; i++)); do
		args+=(-c "echo @@ agi$i" -c "agi $i" -c "p level" -c "addr root" -c "p recs")
	done
	xfs_db -r -c "sb 0" -c "p blocksize dirblklog" "${args[@]}" "$img" 2>/dev/null | python3 -c '
import re, sys
found = set(); cur = None; info = {}; bsize = 4096
for line in sys.stdin:
    line = line.strip()
    m = re.match(r"blocksize = (\d+)", line)
    if m: bsize = int(m.group(1))
    if line.startswith("@@ "):
        cur = line[3:]; info[cur] = {"fmt": None, "afmt": None, "offs": [], "aoffs": []}
        continue
    if cur is None: continue
    d = info[cur]
    m = re.match(r"core.format = (\d+)", line)
    if m: d["fmt"] = int(m.group(1))
    m = re.match(r"core.aformat = (\d+)", line)
    if m: d["afmt"] = int(m.group(1))
    m = re.match(r"(data|attr) offset (\d+) startblock \d+ \(\S+\) count (\d+)", line)
    if m: d["offs" if m.group(1) == "data" else "aoffs"].append((int(m.group(2)), int(m.group(3))))
    if cur.startswith("agi") and re.match(r"\d+:\[\d+,(?!0,)", line):
        found.add("inode.sparse_chunk")
leaf_off = (1 << 35) // bsize; free_off = (1 << 36) // bsize
for p, d in info.items():
    if p.startswith("dirs/"):
        if d["fmt"] == 1: found.add("dir.short")
        elif any(o >= free_off for o, _ in d["offs"]): found.add("dir.node")
        elif any(o >= leaf_off for o, _ in d["offs"]): found.add("dir.leaf")
        elif d["offs"]: found.add("dir.block")
    if p.startswith("data/"):
        if d["fmt"] == 3: found.add("bmap.btree")
        if d["fmt"] == 2: found.add("bmap.extents")
    if p.startswith("xattrs/"):
        if d["afmt"] == 1: found.add("attr.short")
        ao = d["aoffs"]
        if d["afmt"] in (2, 3) and p != "xattrs/remote2":
            found.add("attr.leaf" if len({o for o, _ in ao}) == 1 and ao[0][1] == 1 else "attr.node")
        if p == "xattrs/remote2" and sum(c for _, c in ao) > 1: found.add("attr.remote")
    if p.startswith("links/short") and d["fmt"] == 1: found.add("symlink.inline")
    if p.startswith("links/long") and d["fmt"] == 2: found.add("symlink.remote")
    if p.startswith("special/chr") and d["fmt"] == 0: found.add("dev")
    if p.startswith("special/fifo") and d["fmt"] == 0: found.add("fifo")
print(" ".join(sorted(found)))
'
}
