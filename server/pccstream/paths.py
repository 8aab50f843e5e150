"""Where pccstream's files are: the one place that resolves them; every module asks here.

Two ways to run, one lookup:
- installed (`pip install .` or a wheel): the web build, scenarios, traces, contracts, schemas
  and media recipes ship inside the package, under `pccstream/_data/` (setup.py copies them
  there when the wheel is built), and are found with importlib.resources;
- from a checkout (the editable install of infra/bootstrap.sh): the package has no `_data/`,
  and the same relative paths are read from the checkout, found by walking up from the package
  to the directory that holds `pyproject.toml` and `infra/bootstrap.sh`.

Media and caches are not package data: `media_root()` and `cache_dir()` say where they go.
"""

from __future__ import annotations

import os
from functools import cache
from importlib import resources
from pathlib import Path

from pccstream.errors import UserError

PACKAGE_DIR = Path(__file__).resolve().parent
# The directory on sys.path that holds the package: what a child Python process needs.
SOURCE_ROOT = PACKAGE_DIR.parent
DATA_PACKAGE_DIR = "_data"

# Package data: checkout-relative paths, shipped under the same names in pccstream/_data/.
WEB_DIST = "web/dist"
SCENARIOS = "infra/scenarios"
TRACES = "infra/traces"
MEDIA_RECIPES = "infra/media/recipes.toml"
CONTRACTS = "shared/contracts"
SCHEMAS = "shared/schemas"
PACKAGE_DATA = (WEB_DIST, SCENARIOS, TRACES, "infra/media", CONTRACTS, SCHEMAS)


@cache
def checkout_root() -> Path | None:
    """The git checkout this package runs from (an editable install), else None."""
    for directory in PACKAGE_DIR.parents:
        if (directory / "pyproject.toml").is_file() and (
            directory / "infra" / "bootstrap.sh"
        ).is_file():
            return directory
    return None


# What the web build is made from, in a checkout (tests excluded: not in the bundle).
WEB_SOURCES = ("web/src", "web/index.html", "web/vite.config.ts", "shared/contracts")


def stale_web_build(root: Path | None = None) -> str | None:
    """In a checkout, one line when a web source changed after web/dist was built (a run
    would measure the old player), else None. Installed packages ship a matching build."""
    root = root if root is not None else checkout_root()
    if root is None:
        return None
    built = root / WEB_DIST / "index.html"
    if not built.is_file():
        return None  # no build at all: data_path's own error says so when it is needed
    built_at = built.stat().st_mtime
    newest: tuple[float, Path] | None = None
    for source in WEB_SOURCES:
        path = root / source
        files = [path] if path.is_file() else (
            sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [])
        for file in files:
            if ".test." in file.name:
                continue
            mtime = file.stat().st_mtime
            if newest is None or mtime > newest[0]:
                newest = (mtime, file)
    if newest is None or newest[0] <= built_at:
        return None
    return (f"{WEB_DIST} is older than {newest[1].relative_to(root)}: rebuild it "
            "(npm --prefix web run build, or ./infra/bootstrap.sh) so the runs measure this "
            "player, not the one built before")


def _packaged(relative: str) -> Path | None:
    root = resources.files("pccstream").joinpath(DATA_PACKAGE_DIR)
    if not isinstance(root, Path):  # e.g. a zip import: no files to hand to ffmpeg or aiohttp
        return None
    path = root.joinpath(*relative.split("/"))
    return path if path.exists() else None


def data_path(relative: str) -> Path:
    """A shipped file or directory (one of PACKAGE_DATA, or below one): the installed
    package's copy, else the checkout's. A missing one is one clear line."""
    packaged = _packaged(relative)
    if packaged is not None:
        return packaged
    root = checkout_root()
    if root is not None:
        return root / relative
    raise UserError(
        f"{relative}: not in the installed package ({PACKAGE_DIR / DATA_PACKAGE_DIR}) and not "
        "running from a checkout; reinstall pccstream from a wheel built with the web app"
    )


def user_cache_dir() -> Path:
    """Per-user cache (certificate, recordings, media made on first use)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pccstream"


def cache_dir() -> Path:
    """Work files (encoded media, …): $PCCSTREAM_CACHE, else the checkout's .cache/, else the
    per-user cache."""
    env = os.environ.get("PCCSTREAM_CACHE")
    if env:
        return Path(env)
    root = checkout_root()
    return root / ".cache" if root is not None else user_cache_dir()


def media_root() -> Path:
    """Where the named media (`default`, `live`; see pccstream.media.recipes) live: the
    checkout's media/ (made by the bootstrap), else `media/` in the per-user cache."""
    root = checkout_root()
    return root / "media" if root is not None else user_cache_dir() / "media"


def child_process_env() -> dict[str, str]:
    """This process's environment with the package's source root first on PYTHONPATH, so a
    `python -m pccstream...` child imports the same code."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SOURCE_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env
