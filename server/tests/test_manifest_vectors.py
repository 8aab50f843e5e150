"""shared/vectors/manifests.json: the schema (jsonschema), the Python loader and the player
(web/src/watch/manifest.test.ts, with ajv) must give each vector the same verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pccstream.media.manifest import ManifestError, load_manifest
from tests.checkout import REPO_ROOT

SHARED = REPO_ROOT / "shared"
SCHEMA = json.loads((SHARED / "schemas" / "manifest.schema.json").read_text())
VECTORS = json.loads((SHARED / "vectors" / "manifests.json").read_text())["vectors"]


def _files(manifest: dict[str, Any]) -> list[tuple[str, int]]:
    out = []
    for rendition in manifest.get("renditions") or []:
        for item in [rendition.get("init") or {}, *(rendition.get("segments") or [])]:
            size = item.get("bytes")
            if isinstance(item.get("file"), str) and isinstance(size, int) and size >= 0:
                out.append((item["file"], size))
    return out


def test_the_schema_is_a_valid_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_schema_and_loader_agree_with_the_vector(vector: dict[str, Any], tmp_path: Path) -> None:
    errors = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(vector["manifest"]))
    assert (not errors) == vector.get("schema_valid", vector["valid"]), errors
    for name, size in _files(vector["manifest"]):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\0" * size)
    (tmp_path / "manifest.json").write_text(json.dumps(vector["manifest"]))
    if vector["valid"]:
        load_manifest(tmp_path)
    else:
        with pytest.raises(ManifestError, match=vector["error"]):
            load_manifest(tmp_path)


def test_what_the_python_writer_writes_is_a_valid_vector(tmp_path: Path) -> None:
    from .server.conftest import make_fake_media

    media = make_fake_media(tmp_path / "media")
    jsonschema.validate(load_manifest(media).to_json(), SCHEMA)
