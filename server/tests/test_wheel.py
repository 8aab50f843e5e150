"""The wheel works outside the checkout: built from this tree, installed into a fresh virtual
environment in a temporary directory, it makes media and serves the player from there.

Real: the wheel build (setup.py copies the web build, scenarios, traces, contracts, schemas and
media recipes into the package), its installation into a new venv outside the repository, and
`pccstream media synth` / `pccstream serve` run from a directory that is not the checkout, with
the installed package (not the editable one) imported. Shortcut, to stay offline and fast: the
new venv reaches its third-party dependencies through a .pth line to this checkout's venv
instead of downloading them (the by-hand check in docs/install.md installs them from PyPI).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import time
import urllib.request
import venv
from pathlib import Path

from tests.checkout import REPO_ROOT


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout: float = 180) -> str:
    result = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, f"{command}: {result.stdout}\n{result.stderr}"
    return result.stdout


def test_the_wheel_installs_and_serves_outside_the_checkout(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PCCSTREAM_CACHE")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    wheels = tmp_path / "wheels"
    _run(
        [sys.executable, "-m", "pip", "wheel", str(REPO_ROOT), "--no-deps",
         "--no-build-isolation", "-q", "-w", str(wheels)],
        cwd=tmp_path, env=env,
    )  # fmt: skip
    (wheel,) = wheels.glob("pccstream-*.whl")

    root = tmp_path / "venv"
    venv.create(root, with_pip=True)
    python = root / "bin" / "python"
    site = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
             cwd=tmp_path, env=env).strip()
    )  # fmt: skip
    # Dependencies from the dev venv; its editable pccstream is not seen (its .pth files are
    # only read in its own site directory).
    (site / "dev-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
         cwd=tmp_path, env=env)  # fmt: skip

    work = tmp_path / "elsewhere"
    work.mkdir()
    where = _run(
        [str(python), "-c",
         "import pccstream.paths as p; print(p.PACKAGE_DIR, p.checkout_root())"],
        cwd=work, env=env,
    ).split()  # fmt: skip
    assert Path(where[0]).is_relative_to(root) and where[1] == "None", where

    pccstream = str(root / "bin" / "pccstream")
    _run([pccstream, "media", "synth", "--out", "m", "--duration", "4", "--ladder", "300k"],
         cwd=work, env=env)  # fmt: skip
    assert (work / "m" / "manifest.json").is_file()
    ready = work / "ready.json"
    server = subprocess.Popen(
        [pccstream, "serve", "--media", "m", "--http-port", "0", "--port", "0",
         "--ready-file", str(ready)],
        cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not ready.is_file() and server.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert ready.is_file(), f"not ready: {server.poll()}"
        info = json.loads(ready.read_text())
        with urllib.request.urlopen(info["page_url"], timeout=10) as page:
            assert b"<html" in page.read().lower()  # the packaged web build
        api = f"http://127.0.0.1:{info['http_port']}/api/config"
        with urllib.request.urlopen(api, timeout=10) as response:
            assert json.loads(response.read())
    finally:
        server.terminate()
        server.wait(timeout=20)
