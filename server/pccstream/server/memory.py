"""Keeping the server's resident memory flat under session churn.

glibc gives each thread that allocates its own malloc arena (up to 8 per core); the server's
file-reading and HTTP threads each grow one to the size of the segments they handled and
glibc rarely gives that memory back, so RSS climbed with every new thread even though Python
freed everything (#17 defect 7: tracemalloc flat, RSS +0.13 MB per session). Two arenas cost
nothing measurable at our thread count and make the steady state flat.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os

log = logging.getLogger("pccstream.server")

M_ARENA_MAX = -8  # glibc's mallopt parameter number (malloc.h)
SERVER_MALLOC_ARENAS = 2


def limit_malloc_arenas(arenas: int = SERVER_MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas for threads created from now on; False where there is no
    glibc (musl, macOS) or MALLOC_ARENA_MAX is set (the operator's choice wins)."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    libc = _glibc()
    if libc is None:
        return False
    return bool(libc.mallopt(M_ARENA_MAX, arenas))


def resident_mib() -> float:
    """Current resident set size of this process in MiB (Linux), else 0."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _glibc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.gnu_get_libc_version  # noqa: B018 - only glibc has it
    except (OSError, AttributeError):
        return None
    return libc
