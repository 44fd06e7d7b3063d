#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""spill_norm.py JSON: an xfsx_check/xfsx_repair --json output, one line per
key, without what a spilling run may differ in from one in memory and
still find the same: the device's name, times, memory, cache and
readahead counters, and what went to the temporary directory
(summary.deferred_spilled, summary.spill).  tests/core/spill.sh and
tests/core/rmap_spill.sh compare runs by it."""
import json
import sys

DROP = {"phase_seconds", "phase_cpu_seconds", "phase_memory", "peak_rss_bytes", "cache", "readahead", "device",
        "deferred_spilled", "spill"}


def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in DROP}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o


print(json.dumps(strip(json.load(open(sys.argv[1]))), sort_keys=True, indent=0))
