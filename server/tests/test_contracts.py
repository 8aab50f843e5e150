"""The contracts under shared/ that Python and TypeScript share: the pages' URL parameters
and metric fields (shared/contracts/player.json; web/src/contracts.test.ts checks the same
vectors from the TypeScript side) and the manifest schema."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from pccstream import contracts
from pccstream.ab import runner
from pccstream.contracts import CONTRACT, METRIC_FIELDS, metric, page_query
from pccstream.errors import UserError
from pccstream.media.manifest import load_manifest
from pccstream.webrtc import call
from tests.checkout import REPO_ROOT

from .server.conftest import make_fake_media

VECTORS = CONTRACT["vectors"]
MANIFEST_SCHEMA = json.loads(
    (REPO_ROOT / "shared" / "schemas" / "manifest.schema.json").read_text())


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_queries_are_built_as_the_vectors_say(vector: dict) -> None:
    pairs = [(name, value) for name, value in vector["parameters"]]
    assert page_query(vector["page"], pairs) == vector["query"]


def test_an_unknown_parameter_is_refused() -> None:
    with pytest.raises(UserError, match="bitrat: not a URL parameter of the player page"):
        page_query("player", [("bitrat", "750")])
    assert page_query("player", [("cc.t", "0.9"), ("test.withhold_at", "3")])


def test_the_live_keep_limit_is_the_contract_s() -> None:
    assert contracts.MAX_LIVE_KEEP_MS == CONTRACT["limits"]["live_keep_ms_max"] == 60_000


def test_metric_names_outside_the_contract_are_refused() -> None:
    assert metric("bufferingRatio") == "bufferingRatio"
    with pytest.raises(KeyError, match="bufferRatio"):
        metric("bufferRatio")


# JavaScript run in the pages by the harness: `m.NAME` reads a field of metrics().
SNIPPETS = {
    "ab.runner.POLL": (runner.POLL, "player"),
    "webrtc.call.LIGHT_SAMPLE": (call.LIGHT_SAMPLE, "webrtc_receiver"),
    "webrtc.call.SENDER_SAMPLE": (call.SENDER_SAMPLE, "webrtc_sender"),
}


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_page_snippets_read_only_contract_fields(name: str) -> None:
    source, page = SNIPPETS[name]
    read = set(re.findall(r"\bm\.(\w+)", source))
    assert read and read <= METRIC_FIELDS[page], read - METRIC_FIELDS[page]


def test_summaries_read_only_contract_fields() -> None:
    viewer = {field: 1.0 for field in METRIC_FIELDS["player"]}
    summary = runner.summarize_viewers([viewer])
    assert summary["buffering_ratio"] == 1.0 and summary["event_loop_lag_max_ms"] == 1.0


def _valid(document: object) -> None:
    jsonschema.validate(document, MANIFEST_SCHEMA)


def test_manifests_match_the_schema(tmp_path: Path) -> None:
    media = make_fake_media(tmp_path / "media")
    _valid(json.loads((media / "manifest.json").read_text()))
    _valid(load_manifest(media).to_json())
    for made in ("default", "live"):  # what `pccstream media synth` wrote (infra/bootstrap.sh)
        manifest = REPO_ROOT / "media" / made / "manifest.json"
        assert manifest.is_file(), f"{manifest} is missing (infra/bootstrap.sh)"
        _valid(json.loads(manifest.read_text()))


def test_the_schema_refuses_what_the_loader_refuses() -> None:
    with pytest.raises(jsonschema.ValidationError):
        _valid({"version": 1, "duration_s": 30, "segment_seconds": 2, "renditions": []})
