"""The telemetry records' contract (shared/schemas/telemetry.schema.json): the shared vectors
conform or fail where they say (web/src/dashboard/telemetry-contract.test.ts checks the same
vectors from the TypeScript side), and the controllers' real events, compacted as the
publisher sends them, conform."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from pccstream.cc.registry import create_controller
from pccstream.cc.sim import Link, Simulator
from pccstream.server.telemetry_publisher import compact_record
from tests.checkout import REPO_ROOT

SCHEMA = json.loads((REPO_ROOT / "shared" / "schemas" / "telemetry.schema.json").read_text())
VECTORS = json.loads((REPO_ROOT / "shared" / "vectors" / "telemetry.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def test_the_schema_is_valid() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("vector", VECTORS["valid"], ids=lambda v: v["name"])
def test_valid_vectors_conform(vector: dict[str, Any]) -> None:
    VALIDATOR.validate(vector["record"])


@pytest.mark.parametrize("vector", VECTORS["invalid"], ids=lambda v: v["name"])
def test_invalid_vectors_fail_at_their_field(vector: dict[str, Any]) -> None:
    errors = list(VALIDATOR.iter_errors(vector["record"]))
    assert errors
    named = {str(p) for e in errors for p in e.path} | {
        m for e in errors if e.validator == "required" for m in e.validator_value
        if m not in e.instance}
    assert vector["field"] in named


def _events(name: str, params: dict[str, str] | None = None) -> list[dict[str, Any]]:
    sim = Simulator(Link(12.0, 0.040, 150_000), seed=3)
    controller = create_controller(name, params, seed=3)
    events: list[dict[str, Any]] = []
    controller.event_sink = events.append
    sim.add_flow(controller)
    sim.run(2.0)
    return events


@pytest.mark.parametrize(("name", "params", "kind"), [
    ("sprout", None, "sprout"),
    ("sprout-ewma", None, "sprout"),
    ("remy", None, "remy"),
    ("remy", {"table": "2014-100x"}, "remy"),
])
def test_controller_events_conform(name: str, params: dict[str, str] | None, kind: str) -> None:
    events = _events(name, params)
    assert len(events) > 20
    for event in events:
        assert event["type"] == kind
        VALIDATOR.validate(compact_record(event))
    if name == "sprout":
        forecast = events[-1]["forecast_packets"]
        assert forecast == sorted(forecast)  # cumulative
    if kind == "remy":
        assert {e["rule"] for e in events}  # a rule fired
