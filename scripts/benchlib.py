# SPDX-License-Identifier: GPL-2.0
"""Timing helpers scripts/bench-check and scripts/bench-repair share:
page-cache control, one timed child run, and a cold run's floor (the
device's read rate and the metadata bytes xfsx_check reads)."""
import json
import mmap
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


def run_pair(cmd):
    """wall seconds until two copies of cmd, started together, have both
    exited, the worse exit code, and the CPU seconds (user + system) of
    each copy, averaged: what two CPUs give two independent runs, the
    ceiling of one run's own threads on them"""
    t0 = time.monotonic()
    ps = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
          for _ in range(2)]
    rcs, cpu = [], 0.0
    for p in ps:
        _, status, ru = os.wait4(p.pid, 0)
        rcs.append(os.waitstatus_to_exitcode(status))
        cpu += (ru.ru_utime + ru.ru_stime) / 2
    return time.monotonic() - t0, max(rcs, key=abs), cpu


def check_bytes(chk, img):
    """The metadata bytes xfsx_check (the binary chk) reads from img
    (--json readahead.bytes_read), or 0"""
    if not os.access(chk, os.X_OK):
        return 0
    out = subprocess.run([chk, "-j", img], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    try:
        return json.loads(out)["summary"]["readahead"]["bytes_read"]
    except (ValueError, KeyError):
        return 0


def image_rate(img, size=512 << 20, chunk=2 << 20, runs=3):
    """MB/s of 2 MiB O_DIRECT reads of the image's own data (its first
    `size` bytes of allocated ranges, SEEK_DATA/SEEK_HOLE), its pages
    dropped first, median of `runs`: the rate a cold run of an image
    written long ago reads at.  A file just written beside it is read
    faster (on a virtual disk its blocks are still in the host's cache:
    1087-1878 MB/s against 569-746 for the aged benchmark image, same
    minute, 2026-12-03).  0 when O_DIRECT is refused."""
    rates = []
    for _ in range(runs):
        try:
            drop(img)
            buf = mmap.mmap(-1, chunk)
            fd = os.open(img, os.O_RDONLY | os.O_DIRECT)
            try:
                end, off, done = os.fstat(fd).st_size, 0, 0
                t = time.monotonic()
                while done < size and off < end:
                    try:
                        d = os.lseek(fd, off, os.SEEK_DATA)
                    except OSError:
                        break
                    h = os.lseek(fd, d, os.SEEK_HOLE)
                    d -= d % 4096
                    while d < h and done < size:
                        done += os.preadv(fd, [buf], d)
                        d += chunk
                    off = max(h, d)
                t = time.monotonic() - t
            finally:
                os.close(fd)
            if done and t > 0:
                rates.append(done / t / 1e6)
        except OSError:
            return 0
    rates.sort()
    return rates[len(rates) // 2] if rates else 0


def device_rate(bdir, size=512 << 20, chunk=2 << 20):
    """MB/s of 2 MiB O_DIRECT reads of a file of real (not sparse) data
    in bdir (beside the images), its pages dropped first: what a cold run
    can read at (a sparse image's holes read as zeros without I/O, so the
    images themselves cannot be used).  0 when O_DIRECT is refused."""
    path = os.path.join(bdir, "rate.%d.bin" % os.getpid())
    try:
        with open(path, "wb") as f:
            block = bytes(range(256)) * (chunk // 256)
            for _ in range(size // chunk):
                f.write(block)
            f.flush()
            os.fsync(f.fileno())
        drop(path)
        buf = mmap.mmap(-1, chunk)
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
        t = time.monotonic()
        for off in range(0, size, chunk):
            os.preadv(fd, [buf], off)
        t = time.monotonic() - t
        os.close(fd)
        return size / t / 1e6
    except OSError:
        return 0
    finally:
        if os.path.exists(path):
            os.unlink(path)
