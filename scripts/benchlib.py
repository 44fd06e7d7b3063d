# SPDX-License-Identifier: GPL-2.0
"""Timing helpers scripts/bench-check and scripts/bench-repair share:
page-cache control and one timed child run."""
import os
import subprocess
import time


def can_drop():
    """may we drop an image's pages from the page cache (posix_fadvise)?"""
    return hasattr(os, "posix_fadvise")


def drop(img):
    """"cold": the image's pages written back and dropped from the page
    cache (fdatasync, POSIX_FADV_DONTNEED).  Only the image's: a global
    sync and drop_caches wait on every superblock of the machine, and one
    left half-mounted by a failed kernel mount hangs them for good (seen on
    2026-11-27); the dentry and inode caches stay warm either way."""
    fd = os.open(img, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def warm_image(img):
    """read the image's allocated ranges (SEEK_DATA/SEEK_HOLE) into the page cache"""
    fd = os.open(img, os.O_RDONLY)
    size, off = os.fstat(fd).st_size, 0
    while off < size:
        try:
            d = os.lseek(fd, off, os.SEEK_DATA)
        except OSError:
            break
        h = os.lseek(fd, d, os.SEEK_HOLE)
        while d < h:
            n = len(os.pread(fd, min(8 << 20, h - d), d))
            if not n:
                break
            d += n
        off = h
    os.close(fd)


def run_cpu(cmd):
    """wall seconds, peak RSS (KiB) of the child and its waited-for
    descendants (wait4's rusage), exit code, CPU seconds (user + system)"""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    return wall, ru.ru_maxrss, os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime


def run(cmd):
    """wall seconds, peak RSS (KiB), exit code (run_cpu without the CPU time)"""
    return run_cpu(cmd)[:3]
