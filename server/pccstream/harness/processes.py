"""The real server as a child process, so its CPU time is measurable and it has its own core."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pccstream.child_process import die_with_parent
from pccstream.emulator.relay import request_realtime
from pccstream.errors import UserError

# Below the emulator's real-time priority (10): the link must keep its timing first.
ENDPOINT_RT_PRIORITY = 5

BULK_SEGMENT_BYTES = 1_000_000
BULK_SEGMENTS = 8


def make_bulk_media(root: Path) -> Path:
    """A media directory of opaque 1 MB 'segments': bulk transfer needs bytes, not video."""
    root.mkdir(parents=True, exist_ok=True)
    rendition = root / "bulk"
    rendition.mkdir(exist_ok=True)
    (rendition / "init.mp4").write_bytes(b"\0" * 64)
    segments = []
    block = os.urandom(4096)
    payload = (block * (BULK_SEGMENT_BYTES // len(block) + 1))[:BULK_SEGMENT_BYTES]
    for index in range(BULK_SEGMENTS):
        name = f"bulk/seg-{index:05d}.m4s"
        (root / name).write_bytes(payload)
        segments.append(
            {"file": name, "start_s": 2.0 * index, "duration_s": 2.0, "bytes": len(payload)}
        )
    manifest = {
        "version": 1,
        "source": "bulk transfer benchmark",
        "duration_s": 2.0 * BULK_SEGMENTS,
        "segment_seconds": 2.0,
        "renditions": [
            {
                "id": "bulk",
                "bitrate_bps": 4_000_000,
                "width": 16,
                "height": 16,
                "codec": "avc1.64001f",
                "mime": 'video/mp4; codecs="avc1.64001f"',
                "init": {"file": "bulk/init.mp4", "bytes": 64},
                "segments": segments,
            }
        ],
    }
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


class ServerProcess:
    """`pccstream serve` in a child process on free ports."""

    def __init__(
        self, media: Path, *, cc: str = "cubic", extra_args: list[str] | None = None
    ) -> None:
        self.media = media
        self.cc = cc
        self.extra_args = extra_args or []
        self.info: dict[str, Any] = {}
        self._process: asyncio.subprocess.Process | None = None
        self._workdir = tempfile.TemporaryDirectory(prefix="pccstream-server-")

    async def start(self, timeout: float = 20.0) -> dict[str, Any]:
        ready = Path(self._workdir.name) / "ready.json"
        self._process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "pccstream.cli",
            "serve",
            "--media",
            str(self.media),
            "--port",
            "0",
            "--http-port",
            "0",
            "--cc",
            self.cc,
            "--ready-file",
            str(ready),
            "--state-dir",
            str(Path(self._workdir.name) / "state"),
            *self.extra_args,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            preexec_fn=die_with_parent,
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not ready.exists():
            if self._process.returncode is not None:
                error = await self._process.stderr.read() if self._process.stderr else b""
                raise UserError(f"server failed to start: {error.decode(errors='replace').strip()}")
            if loop.time() > deadline:
                await self.close()
                raise UserError(f"server did not start within {timeout:.0f} s")
            await asyncio.sleep(0.05)
        self.info = json.loads(ready.read_text())
        return self.info

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    def cpu_seconds(self) -> float:
        """User + system CPU seconds the server has used so far."""
        assert self._process is not None
        fields = Path(f"/proc/{self._process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks

    async def close(self) -> None:
        if self._process is not None and self._process.returncode is None:
            self._process.terminate()
            try:
                await asyncio.wait_for(self._process.wait(), 10)
            except TimeoutError:
                self._process.kill()
                await self._process.wait()
        self._workdir.cleanup()


@contextlib.contextmanager
def endpoint_priority(enabled: bool = True) -> Iterator[None]:
    """Run the block at SCHED_RR `ENDPOINT_RT_PRIORITY` (when permitted), then restore.

    Scheduler pauses of 10-300 ms on a loaded 2-core machine land on the ACK path and look
    like RTT changes to delay-based controllers (docs/cc.md, "Real stack"); a child process
    started inside the block inherits the policy.
    """
    if not enabled or not hasattr(os, "sched_getscheduler"):
        yield
        return
    policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    request_realtime(ENDPOINT_RT_PRIORITY)  # falls back to normal priority when refused
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, policy, param)
