"""Where pccstream's files are. It runs from its repository (installed editable by
infra/bootstrap.sh), beside web/, infra/ and media/; every module asks here."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent  # server/pccstream
SOURCE_ROOT = PACKAGE_DIR.parent  # server/: what a child Python process needs on its path
REPO_ROOT = SOURCE_ROOT.parent
INFRA_DIR = REPO_ROOT / "infra"


def child_process_env() -> dict[str, str]:
    """This process's environment with the package's source root first on PYTHONPATH, so a
    `python -m pccstream...` child imports the same code."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SOURCE_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env
