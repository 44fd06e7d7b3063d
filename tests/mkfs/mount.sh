#!/usr/bin/env bash
# The kernel's judgement: mount each xfsx_mkfs image through a loop device
# (no log recovery may run), create directories, files, hard links,
# symlinks and xattrs, write a 20 MiB file, unmount, and xfs_repair -n must
# stay clean.  Needs root, loop devices and XFS in the kernel; skips saying
# which is missing otherwise.
. "$XFSX_SRC/tests/lib.sh"

have_xfsprogs || { skip "mkfs mount" "xfsprogs not installed"; tap_done; exit; }
if ! have_loop_xfs; then
	skip "mkfs mount" "needs root, a free loop device and XFS in /proc/filesystems"
	tap_done; exit
fi

img="$TMP/m.img"; mnt="$TMP/mnt"
populate() {
	python3 - "$1" <<'PY'
import os, sys
root = sys.argv[1]
os.makedirs(os.path.join(root, "a/b/c"))
for i in range(200):
    with open(os.path.join(root, "a", f"f{i:03d}"), "w") as f:
        f.write("x" * i)
os.link(os.path.join(root, "a/f001"), os.path.join(root, "a/b/hardlink"))
os.symlink("../f002", os.path.join(root, "a/b/symlink"))
os.symlink("t" * 300, os.path.join(root, "a/b/longsymlink"))
os.setxattr(os.path.join(root, "a/f003"), "user.small", b"v")
os.setxattr(os.path.join(root, "a/f003"), "user.big", b"y" * 3000)
with open(os.path.join(root, "big"), "wb") as f:
    f.write(os.urandom(20 << 20))
    f.flush(); os.fsync(f.fileno())
assert os.stat(os.path.join(root, "a/f001")).st_nlink == 2
assert os.getxattr(os.path.join(root, "a/f003"), "user.big") == b"y" * 3000
PY
}

cases=(
	"1g|"
	"300m|"
	"16g|-b size=1024"
	"4g|-b size=65536"
	"4g|-i size=1024 -m reflink=0"
	"4g|-s size=4096"
	"4g|-d su=64k,sw=4"
	"4g|-m rmapbt=0,finobt=0,inobtcount=0 -i sparse=0,nrext64=0 -m bigtime=0"
	"100g|-d agcount=33"
)
for c in "${cases[@]}"; do
	sz=${c%%|*}; opts=${c#*|}; label="$sz ${opts:-(defaults)}"
	rm -f "$img"; truncate -s "$sz" "$img"
	# shellcheck disable=SC2086
	if ! "$XFSX_MKFS" -q $opts "$img" 2>"$TMP/err"; then
		not_ok "$label: xfsx_mkfs failed: $(head -1 "$TMP/err")"; continue
	fi
	dev=$(loop_attach "$img") || { not_ok "$label: losetup"; continue; }
	dmesg_mark="xfsx-mkfs-test-$RANDOM$RANDOM"
	echo "$dmesg_mark" >/dev/kmsg 2>/dev/null || true
	if ! mount_img "$dev" "$mnt"; then
		not_ok "$label: mount failed: $(dmesg | tail -3 | tr '\n' ' ')"
		losetup -d "$dev"; continue
	fi
	if dmesg | sed -n "/$dmesg_mark/,\$p" | grep -q "Starting recovery"; then
		not_ok "$label: the kernel ran log recovery on a fresh filesystem"
	else
		ok "$label: mounted clean (no log recovery)"
	fi
	check "$label: populate (dirs, files, links, symlinks, xattrs, 20 MiB file)" populate "$mnt"
	df_free=$(stat -f -c '%f' "$mnt")
	umount "$mnt" || not_ok "$label: umount"
	losetup -d "$dev"
	[ "$df_free" -gt 0 ] || not_ok "$label: no free space reported"
	if xfs_repair -n "$img" >"$TMP/repair" 2>&1; then ok "$label: xfs_repair -n clean after use"
	else not_ok "$label: xfs_repair -n after use: $(grep -i -e error -e wrong -e bad "$TMP/repair" | head -3 | tr '\n' ' ')"; fi
done
# a block device as the target: BLKDISCARD/BLKZEROOUT, libblkid topology,
# O_EXCL, with and without -K over a previous filesystem
rm -f "$img"; truncate -s 2g "$img"
if dev=$(loop_attach "$img"); then
	for opts in "" "-f -K"; do
		label="loop device ${opts:-(defaults)}"
		# shellcheck disable=SC2086
		if ! "$XFSX_MKFS" -q $opts "$dev" 2>"$TMP/err"; then
			not_ok "$label: xfsx_mkfs failed: $(head -1 "$TMP/err")"; continue
		fi
		if mount_img "$dev" "$mnt"; then
			check "$label: populate after mounting" populate "$mnt"
			umount "$mnt"
			rm -rf "$mnt"
		else
			not_ok "$label: mount failed: $(dmesg | tail -2 | tr '\n' ' ')"
		fi
		if xfs_repair -n "$dev" >"$TMP/repair" 2>&1; then ok "$label: xfs_repair -n clean after use"
		else not_ok "$label: xfs_repair -n after use"; fi
	done
	losetup -d "$dev"
else
	not_ok "losetup for the block device case"
fi
rm -f "$img"
tap_done
