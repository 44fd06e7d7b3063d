#!/usr/bin/env bash
# Every metadata block mkfs writes passes the check repair's writes pass
# (CRC stamped, read verifier run) before the buffer holding it goes out:
# a block made bad on purpose (XFSX_TEST_FAULT) stops mkfs with exit 1 and
# a message naming the block, before it is written; the same run without
# the fault makes a filesystem xfsx_check calls clean.
. "$XFSX_SRC/tests/lib.sh"
# the check's summary line goes to the TAP stream as a comment, not as a stray line
quiet_check() { "$XFSX_CHECK" "$@" 2>&1 | sed 's/^/# /'; return "${PIPESTATUS[0]}"; }

[ -x "$XFSX_MKFS" ] || { not_ok "xfsx_mkfs built at $XFSX_MKFS"; tap_done; exit; }
img="$TMP/v.img"

# mkfs-bad-header: the AGF of the last AG, the first header mkfs writes
truncate -s 1g "$img"
XFSX_TEST_FAULT=mkfs-bad-header "$XFSX_MKFS" -q -f -d agcount=4 "$img" 2>"$TMP/err"; rc=$?
check "bad AGF: exit 1 (got $rc)" [ $rc -eq 1 ]
check "bad AGF: the message names the block (AGF, AG 3, agf.magic)" \
	grep -q 'BUG: an AGF block at daddr [0-9]* (AG 3, .*agf.magic' "$TMP/err"
# the target was cleared by discard before the first header: nothing was written after it
check "bad AGF: no byte of any header reached the image (it reads as zeros)" \
	cmp -s -n "$(stat -c %s "$img")" "$img" /dev/zero
check "without the fault the same options make a filesystem" "$XFSX_MKFS" -q -f -d agcount=4 "$img"
check "... which xfsx_check calls clean" quiet_check "$img"

# mkfs-bad-inode (-p): the root inode of the root chunk, as populate writes it
src="$TMP/src"
mkdir -p "$src/d"
echo hello >"$src/d/f"
ln -s f "$src/d/l"
XFSX_TEST_FAULT=mkfs-bad-inode "$XFSX_MKFS" -q -f -p "$src" "$img" 2>"$TMP/err"; rc=$?
check "-p, bad inode: exit 1 (got $rc)" [ $rc -eq 1 ]
check "-p, bad inode: the message names the inode (inode.magic)" \
	grep -q 'BUG: an inode block at daddr [0-9]* (AG 0, inode [0-9]*) .*inode.magic' "$TMP/err"
check "-p, bad inode: the primary superblock is not there" \
	cmp -s -n 512 "$img" /dev/zero
check "-p without the fault makes a filesystem" "$XFSX_MKFS" -q -f -p "$src" "$img"
check "... which xfsx_check calls clean" quiet_check "$img"
tap_done
