import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pccstream.harness import cpu

BURN = "import time\nwhile time.process_time() < 0.3: pass\n"


def test_process_cpu_seconds_of_this_process():
    assert (cpu.process_cpu_seconds(1 << 30)) is None  # no such process
    spent = cpu.process_cpu_seconds(__import__("os").getpid())
    assert spent is not None and spent > 0


def test_a_tree_keeps_the_time_of_children_that_exited():
    import os

    before = cpu.tree_cpu_seconds(os.getpid())
    subprocess.run([sys.executable, "-c", BURN], check=True)  # reaped: in our cutime
    after = cpu.tree_cpu_seconds(os.getpid())
    assert after - before >= 0.25


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_chromium_trees_are_found_below_this_process(tmp_path: Path):
    # A process whose name starts with "chrom" (comm comes from the executable's file name),
    # with a CPU-burning child: the root is found and the child's time counted.
    fake = tmp_path / "chromium"
    shutil.copy(sys.executable, fake)
    script = (
        "import subprocess, sys, time\n"
        f"subprocess.run([sys.executable, '-c', {BURN!r}])\n"
        "print('ready', flush=True)\n"
        "time.sleep(30)\n"
    )
    proc = subprocess.Popen([str(fake), "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        snapshot = cpu.chromium_cpu()
        assert list(snapshot) == [proc.pid]
        assert snapshot[proc.pid] >= 0.25
        assert cpu.cpu_delta({proc.pid: snapshot[proc.pid] - 1.0}, snapshot) == pytest.approx(1.0)
        assert cpu.cpu_delta({}, snapshot) == snapshot[proc.pid]  # a relaunched browser
    finally:
        proc.kill()
        proc.wait()


def test_descendants_finds_grandchildren_and_is_running_skips_zombies() -> None:
    script = ("import subprocess, sys, time; "
              "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)']); "
              "time.sleep(30)")
    child = subprocess.Popen([sys.executable, "-c", script])
    found: list[int] = []
    try:
        for _ in range(200):
            found = cpu.descendants(child.pid)
            if found:
                break
            time.sleep(0.05)
        assert len(found) == 1  # the grandchild, found through the child
        assert cpu.is_running(child.pid) and all(cpu.is_running(pid) for pid in found)
        child.kill()
        for _ in range(200):  # killed, not yet reaped: a zombie is not alive
            if not cpu.is_running(child.pid):
                break
            time.sleep(0.05)
        assert not cpu.is_running(child.pid)
    finally:
        child.kill()
        child.wait()
        for pid in found:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
