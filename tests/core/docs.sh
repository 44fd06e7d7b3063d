#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Documentation agrees with the binaries: one version
# (meson's) in every man page and every --version; every long option a
# tool's --help lists is in its man page's synopsis; mkfs --help and its
# man page list the same size suffixes; the README points at a design
# document inside the repository.
. "$XFSX_SRC/tests/lib.sh"

for t in check mkfs bulkstat; do
	bin="$XFSX_BUILD/$t/xfsx_$t"
	page="$XFSX_BUILD/man/xfsx_$t.8"
	if [ ! -f "$page" ]; then not_ok "xfsx_$t.8 built from its .8.in"; continue; fi
	ver=$("$bin" --version | awk '{print $2}')
	th=$(grep '^\.TH' "$page")
	check "xfsx_$t.8: .TH carries the version --version prints ($ver)" grep -q "\"xfsx $ver\"" <<<"$th"
	check "xfsx_$t.8: no version left unsubstituted" bash -c '! grep -q "@VERSION@" "$0"' "$page"
	# the synopsis: from .SH SYNOPSIS to the next .SH
	syn=$(awk '/^\.SH SYNOPSIS/{on=1; next} /^\.SH/{on=0} on' "$page" | sed 's/\\-/-/g; s/\\f[BIRP]//g')
	missing=""
	# each option line of --help: "-t, --threads=N" counts if -t or --threads is there
	while read -r short long; do
		grep -q -- "$long" <<<"$syn" && continue
		[ -n "$short" ] && grep -q -- "\[$short\b" <<<"$syn" && continue
		missing="$missing $long"
	done < <("$bin" --help | sed -nE 's/^ +(-[a-zA-Z]), (--[a-z][a-z-]*).*/\1 \2/p; s/^ +(--[a-z][a-z-]*).*/ \1/p')
	check "xfsx_$t.8: the synopsis has every option of --help${missing:+ (missing:$missing)}" [ -z "$missing" ]
done
# xfsx_check's short options with an argument are in the synopsis too
syn=$(awk '/^\.SH SYNOPSIS/{on=1; next} /^\.SH/{on=0} on' "$XFSX_BUILD/man/xfsx_check.8" | sed 's/\\-/-/g; s/\\f[BIRP]//g')
for o in -m -o -t -q; do
	check "xfsx_check.8: synopsis has $o" grep -q -- "\[$o" <<<"$syn"
done

help=$("$XFSX_MKFS" --help)
page=$(sed 's/\\f[BIRP]//g' "$XFSX_BUILD/man/xfsx_mkfs.8")
for sfx in k m g t p e; do
	check "size suffix $sfx: in mkfs --help and its man page" \
		bash -c 'grep -q "k/m/g/t/p/e" <<<"$0" && grep -Eq "(^| )'"$sfx"'[,) ]" <<<"$1"' "$help" "$page"
done

check "README points at doc/design.md" grep -q "doc/design.md" "$XFSX_SRC/README.md"
check "doc/design.md is in the repository" test -s "$XFSX_SRC/doc/design.md"
check "README no longer points outside the repository" bash -c '! grep -q "shared/DESIGN" "$0"' "$XFSX_SRC/README.md"
tap_done
