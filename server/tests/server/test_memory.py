"""The server's glibc malloc settings: arena cap, fixed mmap threshold, trims (#17 defect 7)."""

from __future__ import annotations

import platform

import pytest

from pccstream.server import memory
from pccstream.server.memory import limit_malloc_arenas, resident_mib


def test_the_operators_malloc_arena_max_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    assert limit_malloc_arenas() is False


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_arenas_are_capped_on_glibc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert limit_malloc_arenas() is True


def test_resident_memory_is_read() -> None:
    assert resident_mib() > 1


def test_connection_ends_share_one_delayed_trim(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    trims: list[int] = []
    monkeypatch.setattr(memory, "TRIM_DELAY_S", 0.01)
    # A trim left pending by a loop that closed first (another test's server) must not
    # block this loop's.
    stale = asyncio.new_event_loop()
    stale.close()
    monkeypatch.setattr(memory, "_trim_loop", stale)
    monkeypatch.setattr(memory, "trim_freed_memory", lambda: trims.append(1) or True)

    async def scenario() -> None:
        for _ in range(5):
            memory.schedule_trim()
        await asyncio.sleep(0.05)
        memory.schedule_trim()
        await asyncio.sleep(0.05)

    asyncio.run(scenario())
    assert trims == [1, 1]


def test_freed_memory_is_trimmed_on_glibc() -> None:
    assert memory.trim_freed_memory() is (memory._glibc() is not None)


_MMAPPED_AFTER_A_LARGE_FREE = """
import ctypes, sys
from pccstream.server import memory
class Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Mallinfo2
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
if sys.argv[1] == "fixed":
    assert memory.fix_mmap_threshold()
# malloc itself, not Python objects: what the interpreter allocates around them varies.
big = libc.malloc(8 * 2**20)  # mmapped; freeing it raises glibc's dynamic threshold to 8 MiB
libc.free(big)
before = libc.mallinfo2().hblks
pieces = [libc.malloc(256 * 1024) for _ in range(20)]  # segment-piece sized
print(libc.mallinfo2().hblks - before)
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc only")
@pytest.mark.parametrize("mode", ["default", "fixed"])
def test_large_buffers_keep_their_own_mappings_after_a_large_free(
        mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's RSS growth under churn (#17): with glibc's dynamic threshold, buffers of a
    few hundred kB land in the main heap after one large free and fragment it; with the fixed
    threshold each keeps its own mapping, which free() returns to the system."""
    import subprocess
    import sys

    from pccstream.paths import child_process_env

    env = child_process_env()
    for key in [k for k in env if k.startswith("MALLOC_") or k == "GLIBC_TUNABLES"]:
        del env[key]  # any malloc setting from the environment turns the dynamic threshold off
    out = subprocess.run([sys.executable, "-c", _MMAPPED_AFTER_A_LARGE_FREE, mode], env=env,
                         capture_output=True, text=True, check=True).stdout
    mmapped = int(out.split()[-1])
    if mode == "fixed":
        assert mmapped >= 20
    else:  # glibc's default behaviour, which the fix exists for
        assert mmapped < 10


def test_the_operators_mmap_threshold_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "131072")
    assert memory.fix_mmap_threshold() is False


def test_startup_objects_are_frozen_out_of_later_collections() -> None:
    import gc

    try:
        memory.freeze_startup_objects()
        assert gc.get_freeze_count() > 1000
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0


def test_delayed_trim_first_collects_cycles(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    steps: list[str] = []
    monkeypatch.setattr(gc, "collect", lambda: steps.append("collect") or 0)
    monkeypatch.setattr(memory, "trim_freed_memory", lambda: steps.append("trim") or True)
    memory.schedule_trim()  # outside an event loop: at once
    assert steps == ["collect", "trim"]
