#!/usr/bin/env bash
. "$XFSX_SRC/tests/lib.sh"
tap_done
