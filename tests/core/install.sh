#!/usr/bin/env bash
# `meson install` into a scratch DESTDIR: the five binaries land in
# DESTDIR/prefix/sbindir (not bindir), the five man pages in
# DESTDIR/prefix/mandir/man8, nothing else; every installed binary runs and
# prints its name and the project version for --version, and `man -l`
# formats every installed page (NAME naming the tool, no macro warnings).
# prefix, sbindir and mandir are read from the build's configuration, so a
# build set up with another --prefix is checked against its own.
. "$XFSX_SRC/tests/lib.sh"

tools=(xfsx_check xfsx_mkfs xfsx_bulkstat xfsx_repair xfsx_undo)
command -v meson >/dev/null || { skip "meson install" "meson not installed"; tap_done; exit; }

opts=$(meson introspect "$XFSX_BUILD" --buildoptions 2>/dev/null | python3 -c '
import json, sys
d = {o["name"]: o["value"] for o in json.load(sys.stdin)}
print(d["prefix"], d["sbindir"], d["mandir"], d["bindir"])') || opts=""
read -r prefix sbindir mandir bindir <<<"$opts"
check "the build's prefix, sbindir, mandir and bindir read (${opts:-nothing})" [ -n "${bindir:-}" ]
version=$(meson introspect "$XFSX_BUILD" --projectinfo 2>/dev/null |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])') || version=""

# a path option may be absolute (then it is not under prefix) or relative to it
under() { case "$1" in /*) echo "$1" ;; *) echo "$prefix/$1" ;; esac; }
D="$TMP/dest"
meson install -C "$XFSX_BUILD" --destdir "$D" --no-rebuild >"$TMP/install.log" 2>&1; rc=$?
check "meson install --destdir exit 0 (got $rc: $(grep -iv '^installing' "$TMP/install.log" | tail -2 | tr '\n' ' '))" \
	[ $rc -eq 0 ]
sb="$D$(under "$sbindir")"
m8="$D$(under "$mandir")/man8"

for t in "${tools[@]}"; do
	if [ -x "$sb/$t" ]; then
		out=$("$sb/$t" --version 2>&1); rc=$?
		[ $rc -eq 0 ] && [ "$out" = "$t $version" ]; st=$?
		check "$t: installed in $(under "$sbindir"), --version exit 0 saying \"$t $version\" (got $rc: $out)" [ $st -eq 0 ]
	else
		not_ok "$t: installed in $(under "$sbindir") (not found at $sb/$t)"
	fi
done
others=$(cd "$D" && find . -type f | sed 's|^\.||' | grep -v -e "^$(under "$sbindir")/xfsx_[a-z]*\$" \
	-e "^$(under "$mandir")/man8/xfsx_[a-z]*\.8\$" | head -5)
check "nothing else installed (bindir $(under "$bindir") included)${others:+: $others}" [ -z "$others" ]
check "five binaries and five man pages installed" \
	[ "$(find "$D" -type f | wc -l)" -eq $(( 2 * ${#tools[@]} )) ]

if ! command -v man >/dev/null; then
	skip "man -l on the installed pages" "man is not installed (scripts/install-deps installs man-db)"
	tap_done
	exit
fi
for t in "${tools[@]}"; do
	if [ ! -f "$m8/$t.8" ]; then
		not_ok "$t.8: installed in $(under "$mandir")/man8"
		continue
	fi
	LC_ALL=C MANPAGER=cat MANWIDTH=80 man --warnings -l "$m8/$t.8" >"$TMP/man.out" 2>"$TMP/man.err"; rc=$?
	[ $rc -eq 0 ] && [ ! -s "$TMP/man.err" ]; st=$?
	check "$t.8: man -l exit 0 with no warnings (got $rc: $(head -2 "$TMP/man.err" | tr '\n' ' '))" [ $st -eq 0 ]
	grep -Eq "^ *$t +- " "$TMP/man.out" && grep -q "xfsx $version" "$TMP/man.out"
	ok_if "$t.8: NAME says $t, the footer the version $version"
done
tap_done
