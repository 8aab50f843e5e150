"""The checkout the tests run from (they read its web/, shared/ and media/ directly)."""

from __future__ import annotations

from pathlib import Path

from pccstream.paths import checkout_root

_root = checkout_root()
assert _root is not None, "the tests run from a pccstream checkout (editable install)"
REPO_ROOT: Path = _root
