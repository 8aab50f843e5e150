"""Imports run one way: the layers contract in pyproject.toml, checked by import-linter."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

from pccstream.paths import PACKAGE_DIR
from tests.checkout import REPO_ROOT

PYPROJECT = REPO_ROOT / "pyproject.toml"


def _layers() -> list[str]:
    config = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["type"] == "layers"]
    return contract["layers"]


def test_every_part_of_the_package_has_a_layer() -> None:
    listed = {name.strip() for layer in _layers() for name in layer.split("|")}
    parts = {f"pccstream.{p.stem if p.is_file() else p.name}" for p in PACKAGE_DIR.iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    assert parts == listed


def test_imports_follow_the_layers() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint_imports), "--config", str(PYPROJECT)], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"Contracts: \d+ kept, 0 broken", result.stdout)
