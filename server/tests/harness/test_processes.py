"""Children started through the harness die with their parent, even when it is SIGKILLed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pccstream.paths import child_process_env

# A parent that starts the server and an emulator the way `ab` does, prints their pids, waits.
PARENT = """
import asyncio, json, sys
from pathlib import Path
from pccstream.emulator.relay import EmulatorProcess
from pccstream.harness.processes import ServerProcess, make_bulk_media

async def main() -> None:
    server = ServerProcess(make_bulk_media(Path(sys.argv[1])))
    info = await server.start()
    emulator = EmulatorProcess(upstream=f"127.0.0.1:{info['quic_port']}")
    await emulator.start()
    assert emulator.proc is not None
    print(json.dumps([server.pid, emulator.proc.pid]), flush=True)
    await asyncio.sleep(60)

asyncio.run(main())
"""


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for PID 1 to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_children_die_when_the_parent_is_killed(tmp_path: Path) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(tmp_path / "media")],
        stdout=subprocess.PIPE, env=child_process_env(), text=True,
    )
    children: list[int] = []
    try:
        assert parent.stdout is not None
        children = json.loads(parent.stdout.readline())
        assert len(children) == 2 and all(_alive(pid) for pid in children)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 3.0
        while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [pid for pid in children if _alive(pid)] == []
    finally:
        parent.kill()
        for pid in children:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
