"""Keeping the server's resident memory flat under session churn.

glibc gives each thread that allocates its own malloc arena (up to 8 per core); the server's
file-reading and HTTP threads each grow one to the size of the segments they handled and
glibc rarely gives that memory back, so RSS climbed with every new thread even though Python
freed everything (#17 defect 7: tracemalloc flat, RSS +0.13 MB per session). Two arenas cost
nothing measurable at our thread count. Freed memory inside the arenas still counts as
resident until glibc trims it, which it does only at the top of the main heap: a second after
a connection ends, `malloc_trim` hands the free pages of every arena back (the soak's churn:
RSS +37 % from session 200 to 1,000 with the arena cap alone).

That still left +24 %. A churn run with glibc's own counters (mallinfo2) at session 154 and
404, after the idle sessions had timed out, showed no leak at all: the same number of Python
objects (54,326 both times), malloc's in-use bytes +44 kB (10.59 → 10.64 MB), but its free
bytes 11.6 → 15.8 MB and the main heap's RSS 19.5 → 23.2 MiB. glibc raises its mmap threshold
to the size of every mmapped block freed (up to 32 MB), so after the first large buffer the
segment pieces and packet buffers (64 kB to a few MB) come from the main heap instead of
mmap; freed, they leave holes around small long-lived blocks that no trim can give back, and
the heap's top keeps moving up. A fixed threshold (`fix_mmap_threshold`, which also stops the
adjustment) sends every block from 64 kB up to its own mapping, returned to the system when
freed.

That left a sawtooth (+17 to +22 % settled from session 200 to 1,000): the 64 kB-1 MB
mappings (segment-sized send buffers) alive at a settled sample grew from 0.3 to 28 MiB while
no session was open. Every aioquic `QuicConnection` refers to itself (its frame-handler table
holds bound methods, its loss recovery holds `_send_probe`), so reference counting never frees
an ended connection, and with it every byte its streams still buffered (a cancelled or killed
viewer's whole segment): only Python's cyclic collector does. A connection open for a few
collections is promoted to the oldest generation, which Python collects only when it has grown
by a quarter, every few hundred sessions here: RSS rose until one of those and then dropped.
The delayed trim therefore first runs a full collection, and the server freezes its start-up
objects (`freeze_startup_objects`) so that collection walks only what was made since: 25 ms
for the server's 59,000 start-up objects, about nothing after the freeze.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import functools
import gc
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


M_MMAP_THRESHOLD = -3  # mallopt parameter numbers (malloc.h)
SERVER_MMAP_THRESHOLD = 64 * 1024


def fix_mmap_threshold(threshold: int = SERVER_MMAP_THRESHOLD) -> bool:
    """Serve blocks of `threshold` bytes and more with their own mapping, and keep the
    threshold fixed (glibc otherwise raises it after every large free); False without glibc or
    when MALLOC_MMAP_THRESHOLD_ is set (the operator's choice wins)."""
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    libc = _glibc()
    if libc is None:
        return False
    return bool(libc.mallopt(M_MMAP_THRESHOLD, threshold))


TRIM_DELAY_S = 1.0  # after a connection ends; later ends within it share one collection and trim
# The loop a trim is pending on (a loop closed before its trim fired leaves none pending).
_trim_loop: asyncio.AbstractEventLoop | None = None


def freeze_startup_objects() -> None:
    """Collect start-up garbage, then move every object alive now out of the collector's reach
    (`gc.freeze`): later full collections then walk only what sessions created. For the
    serving process, once started (a process that starts servers in its tests keeps its own)."""
    gc.collect()
    gc.freeze()


def release_ended_connections() -> None:
    """Free what ended connections hold (only reference cycles keep them), then give malloc's
    free pages back to the system."""
    gc.collect()
    trim_freed_memory()


def trim_freed_memory() -> bool:
    """Return the free pages of every malloc arena to the system; False without glibc."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


def schedule_trim() -> None:
    """`release_ended_connections` once, TRIM_DELAY_S from now (the ended connection is
    unreachable by then); outside an event loop, at once."""
    global _trim_loop
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        release_ended_connections()
        return
    if _trim_loop is loop:
        return

    def trim() -> None:
        global _trim_loop
        _trim_loop = None
        release_ended_connections()

    _trim_loop = loop
    loop.call_later(TRIM_DELAY_S, trim)


def resident_mib() -> float:
    """Current resident set size of this process in MiB (Linux), else 0."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


@functools.cache
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
