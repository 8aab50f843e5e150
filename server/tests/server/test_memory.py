"""The server's glibc arena cap (#17 defect 7)."""

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
