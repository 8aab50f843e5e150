"""Sprout and Remy per session: `?cc=sprout`, `?cc=sprout-ewma`, `?cc=remy:table=NAME` (or
`cc=remy&cc.table=NAME`); a bad table name or parameter is refused in one line."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest

from pccstream.cc.registry import create_controller, split_cc_spec
from pccstream.cc.remy import Remy, shipped_table
from pccstream.errors import UserError
from pccstream.protocol import Kind, Request
from pccstream.server.webtransport import EndpointSettings, parse_session_query
from pccstream.wt_client import SessionRefused, WebTransportClient

from .conftest import SEGMENTS, running_server

SETTINGS = EndpointSettings(media=cast(Any, None), default_cc="vivace")


@pytest.mark.parametrize(("query", "cc", "params"), [
    ("cc=sprout", "sprout", {}),
    ("cc=sprout-ewma", "sprout-ewma", {}),
    ("cc=remy", "remy", {}),
    ("cc=remy:table=2014-100x", "remy", {"table": "2014-100x"}),
    ("cc=remy&cc.table=2013-delta10", "remy", {"table": "2013-delta10"}),
    ("cc=remy:table=2014-100x&cc.table=2014-100x", "remy", {"table": "2014-100x"}),
    ("cc=sprout:target_ms=80", "sprout", {"target_ms": "80"}),
])
def test_the_session_query_selects_the_controller(query: str, cc: str,
                                                  params: dict[str, str]) -> None:
    wanted = parse_session_query(query, SETTINGS)
    assert (wanted.cc, wanted.cc_params) == (cc, params)
    controller = create_controller(wanted.cc, wanted.cc_params)
    assert controller.name == cc
    if "table" in params:
        assert isinstance(controller, Remy) and controller.table is shipped_table(params["table"])


@pytest.mark.parametrize(("query", "message"), [
    ("cc=remy:table=nope", "table='nope' is not a shipped RemyCC table; valid tables: "),
    ("cc=remy&cc.table=nope", "table='nope' is not a shipped RemyCC table"),
    ("cc=sprout:target_ms=-5", "target_ms='-5' is out of range"),
    ("cc=sprout-ewma:bogus=1", "controller 'sprout-ewma' has no parameter 'bogus'"),
    ("cc=remy:table", "parameter 'table' is not KEY=VALUE"),
    ("cc=remy:table=a:table=b", "parameter 'table' given twice"),
    ("cc=remy:table=2014-100x&cc.table=2013-delta1", "contradicts"),
    ("vod.first=0", "vod.first='0': expected RENDITION:SEGMENT indices"),
    ("vod.first=-1:0", "expected RENDITION:SEGMENT"),
    ("vod.first=a:b", "expected RENDITION:SEGMENT"),
    ("vod.first=70000:0", "the rendition index must be below 65536"),
    ("vod.start=0:0", "unknown vod parameter 'vod.start' (known: vod.first, vod.manifest)"),
    ("vod.manifest=yes", "vod.manifest='yes': expected 1 (push the manifest)"),
])
def test_bad_tables_and_parameters_are_one_clear_line(query: str, message: str) -> None:
    with pytest.raises(UserError) as caught:
        wanted = parse_session_query(query, SETTINGS)
        create_controller(wanted.cc, wanted.cc_params)
    text = str(caught.value)
    assert message in text and "\n" not in text


def test_vod_first_names_the_pushed_rendition_and_segment() -> None:
    assert parse_session_query("vod.first=2:5", SETTINGS).vod_first == (2, 5)
    assert parse_session_query("cc=cubic", SETTINGS).vod_first is None
    assert parse_session_query("vod.manifest=1", SETTINGS).vod_manifest is True
    assert parse_session_query("cc=cubic", SETTINGS).vod_manifest is False


def test_live_fec_is_a_parity_ratio_or_auto() -> None:
    assert parse_session_query("live.fec=8", SETTINGS).live_fec == 8
    assert parse_session_query("live.fec=auto", SETTINGS).live_fec == "auto"
    assert parse_session_query("cc=cubic", SETTINGS).live_fec is None
    with pytest.raises(UserError, match="or auto"):
        parse_session_query("live.fec=Auto", SETTINGS)


def test_split_cc_spec() -> None:
    assert split_cc_spec("remy:table=2014-100x") == ("remy", {"table": "2014-100x"})
    assert split_cc_spec(" sprout ") == ("sprout", {})


def test_sprout_and_remy_sessions_send_their_telemetry(fake_media: Path, tmp_path: Path) -> None:
    async def session(server: Any, cc: str) -> list[dict[str, Any]]:
        async with WebTransportClient.open("127.0.0.1", server.quic_port, cc=cc) as client:
            for index in range(SEGMENTS):
                await client.get(Request(Kind.SEGMENT, 2, index))
            await asyncio.sleep(0.3)
            return list(client.telemetry)

    async def scenario() -> dict[str, list[dict[str, Any]]]:
        async with running_server(fake_media, tmp_path / "state") as server:
            out = {cc: await session(server, cc)
                   for cc in ("sprout", "sprout-ewma", "remy:table=2014-100x")}
            with pytest.raises(SessionRefused) as caught:
                await session(server, "remy:table=nope")
            assert caught.value.status == 400
            assert "table='nope' is not a shipped RemyCC table" in caught.value.reason
            return out

    telemetry = asyncio.run(scenario())
    for cc, kind in (("sprout", "sprout"), ("sprout-ewma", "sprout"),
                     ("remy:table=2014-100x", "remy")):
        records = telemetry[cc]
        assert records[0]["type"] == "hello"
        assert records[0]["cc"] == cc.split(":")[0]
        assert any(r["type"] == kind for r in records), f"{cc}: no {kind} records"
    assert telemetry["remy:table=2014-100x"][0]["cc_params"] == {"table": "2014-100x"}


def test_demo_arms_take_parameters() -> None:
    from pccstream.demo.cli import parse_arms

    assert parse_arms("sprout,remy:table=2014-100x") == ["sprout", "remy:table=2014-100x"]
    with pytest.raises(UserError, match="table='nope' is not a shipped RemyCC table"):
        parse_arms("sprout,remy:table=nope")
