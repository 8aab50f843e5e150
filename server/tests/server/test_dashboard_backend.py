"""The dashboard's server side: compact and deflated telemetry, the link side channel, the
sessions API, recordings and qlog serving, and the `pccstream demo` URL."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pccstream.cc.pcc_sender import PccSender
from pccstream.cc.registry import create_controller, list_controllers
from pccstream.emulator.link import LinkStatus
from pccstream.emulator.status import StatusPublisher, status_datagram
from pccstream.errors import UserError
from pccstream.protocol import Kind, Request
from pccstream.server.link_status import LinkStatusProtocol, link_record, route
from pccstream.server.telemetry_publisher import compact_number, compact_record
from pccstream.wt_client import SessionRefused, WebTransportClient

from .conftest import SEGMENTS, running_server


def test_compact_record_shortens_floats_only() -> None:
    record = {
        "type": "mi",
        "t_ms": 12345.6789,
        "target_rate_bps": 1234567.891,
        "rtt_ms": 36.698612,
        "utility": -5.608123456,
        "loss": 0.0,
        "bytes_sent": 123456789,
        "nan": float("nan"),
        "state": "probing",
    }
    out = compact_record(record)
    assert out == {
        "type": "mi",
        "t_ms": 12345.7,
        "target_rate_bps": 1235000,
        "rtt_ms": 36.699,
        "utility": -5.608123,
        "loss": 0,
        "bytes_sent": 123456789,
        "nan": None,
        "state": "probing",
    }
    assert compact_number(float("inf")) is None
    assert isinstance(compact_number(2.0**60), float)  # huge wholes stay floats


class _Session:
    """The slice of ViewerSession that `route` uses."""

    def __init__(self, unique_id: str, peer: tuple[str, int] | None, closed: bool = False):
        self.session_id = 0  # every WebTransport session's CONNECT is stream 0
        self.unique_id = unique_id
        self.peer = peer
        self.closed = closed
        self.published: list[dict[str, Any]] = []
        self.t = 0.0

    def elapsed_ms(self) -> float:
        return self.t

    def publish(self, record: dict[str, Any]) -> None:
        self.published.append(record)


def _status(upstream: list[list[Any]], queue: int = 0) -> dict[str, Any]:
    return {
        "v": 1,
        "capacity_bps": 12_000_000,
        "queue_bytes": queue,
        "queue_packets": queue // 1500,
        "base_rtt_ms": 30.0,
        "loss": 0.0,
        "upstream": upstream,
    }


def test_link_status_goes_to_the_sessions_behind_that_emulator() -> None:
    behind = _Session("1", ("127.0.0.1", 4000))
    other = _Session("2", ("127.0.0.1", 4001))
    closed = _Session("3", ("127.0.0.1", 4000), closed=True)
    sessions: list[Any] = [behind, other, closed]
    assert route(_status([["127.0.0.1", 4000], ["127.0.0.1", 5000]]), sessions) == 1
    assert behind.published == [
        {
            "type": "link",
            "t_ms": 0.0,
            "capacity_bps": 12_000_000,
            "queue_bytes": 0,
            "queue_packets": 0,
            "base_rtt_ms": 30.0,
            "loss": 0.0,
        }
    ]
    assert other.published == [] and closed.published == []
    assert route({"upstream": "nonsense"}, sessions) == 0
    assert link_record({"capacity_bps": None, "queue_bytes": True, "loss": 0.5}, 5.0) == {
        "type": "link",
        "t_ms": 5.0,
        "capacity_bps": None,
        "queue_bytes": None,
        "queue_packets": None,
        "base_rtt_ms": None,
        "loss": 0.5,
    }


def test_an_unchanged_link_is_repeated_once_a_second() -> None:
    s = _Session("1", ("127.0.0.1", 4000))
    last: dict[str, tuple[float, tuple[Any, ...]]] = {}
    up = [["127.0.0.1", 4000]]
    for step in range(25):  # 2.5 s at 10 Hz, queue constant
        s.t = step * 100.0
        route(_status(up), [s], last)  # type: ignore[list-item]
    assert [r["t_ms"] for r in s.published] == [0.0, 1000.0, 2000.0]
    s.t = 2550.0
    route(_status(up, queue=3000), [s], last)  # type: ignore[list-item]
    assert s.published[-1]["queue_bytes"] == 3000


def test_viewers_behind_different_emulators_each_get_their_link_records() -> None:
    viewer_a = _Session("1", ("127.0.0.1", 4000))
    viewer_b = _Session("2", ("127.0.0.1", 4001))
    last: dict[str, tuple[float, tuple[Any, ...]]] = {}
    for step in range(10):  # two emulators reporting the same link at the same moments
        viewer_a.t = viewer_b.t = step * 1000.0
        route(_status([["127.0.0.1", 4000]]), [viewer_a, viewer_b], last)  # type: ignore[list-item]
        route(_status([["127.0.0.1", 4001]]), [viewer_a, viewer_b], last)  # type: ignore[list-item]
    assert len(viewer_a.published) == len(viewer_b.published) == 10


class _FakeEmulator:
    def status(self) -> dict[str, LinkStatus]:
        return {
            "down": LinkStatus("down", 12.0, 3, 4500, 15.0, 0.01),
            "up": LinkStatus("up", 12.0, 0, 0, 15.0, 0.0),
        }

    def upstream_addresses(self) -> list[tuple[str, int]]:
        return [("127.0.0.1", 4242)]


def test_status_datagram_describes_the_downlink() -> None:
    assert status_datagram(_FakeEmulator(), 7) == {
        "v": 1,
        "seq": 7,
        "direction": "down",
        "capacity_bps": 12_000_000,
        "queue_bytes": 4500,
        "queue_packets": 3,
        "base_rtt_ms": 30.0,
        "loss": 0.01,
        "upstream": [["127.0.0.1", 4242]],
    }


def test_status_publisher_sends_datagrams() -> None:
    async def scenario() -> list[dict[str, Any]]:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        sock.setblocking(False)
        publisher = StatusPublisher(_FakeEmulator(), sock.getsockname(), interval_s=0.02)
        publisher.start()
        await asyncio.sleep(0.15)
        publisher.close()
        got = []
        while True:
            try:
                got.append(json.loads(sock.recv(8192)))
            except BlockingIOError:
                break
        sock.close()
        return got

    got = asyncio.run(scenario())
    assert len(got) >= 3
    assert [g["seq"] for g in got] == list(range(len(got)))


def test_deflated_telemetry_link_records_and_sessions_api(fake_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_server(
            fake_media,
            tmp_path / "state",
            telemetry_interval_s=0.05,
            link_status_port=0,
            recordings_dir=tmp_path / "recordings",
        ) as server:
            assert server.link_status is not None
            async with WebTransportClient.open(
                "127.0.0.1", server.quic_port, cc="vivace", params={"telemetry": "deflate"}
            ) as client:
                for index in range(SEGMENTS):
                    await client.get(Request(Kind.SEGMENT, 2, index))
                # The emulator would send this; the server sees the client's socket as peer.
                peer = server.sessions[0].peer
                assert peer is not None
                tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                tx.sendto(
                    json.dumps(_status([list(peer)], queue=1500)).encode(),
                    ("127.0.0.1", server.link_status.port),
                )
                tx.close()
                await asyncio.sleep(0.4)
                types = [r["type"] for r in client.telemetry]
                assert types[0] == "hello" and "sample" in types and "link" in types
                link = next(r for r in client.telemetry if r["type"] == "link")
                assert link["queue_bytes"] == 1500 and link["base_rtt_ms"] == 30
                mi_t = [r["t_ms"] for r in client.telemetry if r["type"] == "mi"]
                sample_t = [r["t_ms"] for r in client.telemetry if r["type"] == "sample"]
                # MI events and samples share the session clock.
                if mi_t:
                    assert 0 <= mi_t[0] <= sample_t[-1] + 100

                port = server.ready_info()["http_port"]
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/sessions") as r:
                    sessions = json.loads(r.read())
                (info,) = sessions
                assert info["cc"] == "vivace" and info["telemetry_encoding"] == "deflate"
                assert info["media_bytes"] == SEGMENTS * 200000
                assert 0 < info["telemetry_bytes"] < info["telemetry_frame_bytes"]
                assert info["telemetry_overhead"] == info["telemetry_bytes"] / info["media_bytes"]

                (tmp_path / "recordings" / "a.jsonl").write_text('{"type":"hello"}\n')
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/recordings/a.jsonl") as r:
                    assert r.read() == b'{"type":"hello"}\n'
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/recordings/") as r:
                    assert json.loads(r.read()) == ["a.jsonl"]
                for bad in ("/recordings/../manifest.json", "/recordings/.hidden"):
                    with pytest.raises(urllib.error.HTTPError):
                        urllib.request.urlopen(f"http://127.0.0.1:{port}{bad}")

    asyncio.run(scenario())


def test_bad_telemetry_encoding_is_refused(fake_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "state") as server:
            with pytest.raises(SessionRefused) as caught:
                async with WebTransportClient.open(
                    "127.0.0.1", server.quic_port, params={"telemetry": "zip"}
                ):
                    pass
            assert caught.value.status == 400 and "telemetry" in caught.value.reason

    asyncio.run(scenario())


def test_qlog_has_pcc_monitor_intervals_and_is_served(fake_media: Path, tmp_path: Path) -> None:
    qlog_dir = tmp_path / "qlog"

    async def scenario() -> str:
        async with running_server(fake_media, tmp_path / "state", qlog_dir=qlog_dir) as server:
            async with WebTransportClient.open("127.0.0.1", server.quic_port, cc="vivace") as c:
                for index in range(SEGMENTS):
                    await c.get(Request(Kind.SEGMENT, 2, index))
                await asyncio.sleep(0.3)
                qlog_url = c.telemetry[0]["qlog_url"]
            for _ in range(50):  # the qlog is written when the connection closes
                if list(qlog_dir.glob("*.qlog")):
                    break
                await asyncio.sleep(0.1)
            port = server.ready_info()["http_port"]
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{qlog_url}") as r:
                return r.read().decode()

    text = asyncio.run(scenario())
    qlog = json.loads(text)
    events = qlog["traces"][0]["events"]
    mis = [e for e in events if e["name"] == "recovery:pcc_monitor_interval"]
    assert mis, "no PCC monitor-interval events in the qlog"
    assert {"target_rate_bps", "utility", "state"} <= set(mis[0]["data"])


def test_demo_urls_and_arms() -> None:
    from pccstream.demo.cli import Arm, page_url, parse_arms

    assert parse_arms("vivace") == ["vivace"]
    assert parse_arms("vivace,cubic") == ["vivace", "cubic"]
    with pytest.raises(UserError, match="one controller or two"):
        parse_arms("vivace,cubic,bbr")
    with pytest.raises(UserError, match="nosuch"):
        parse_arms("vivace,nosuch")
    single = page_url("http://127.0.0.1:8080/", [Arm("vivace", None, 5555)], [("buffer", "4")])
    assert single == (
        "http://127.0.0.1:8080/?cc=vivace&server=https%3A%2F%2F127.0.0.1%3A5555%2Fstream&buffer=4"
    )
    compare = page_url("http://h/", [Arm("vivace", None, 1), Arm("cubic", None, 2)], [])
    assert compare.startswith("http://h/compare.html?a=cc%3Dvivace%26server")
    assert "&b=cc%3Dcubic" in compare


def test_demo_webrtc_arm() -> None:
    from urllib.parse import parse_qs, urlsplit

    from pccstream.demo.cli import Arm, page_url, parse_arms, player_extra

    assert parse_arms("webrtc") == ["webrtc"]
    assert parse_arms("vivace,webrtc") == ["vivace", "webrtc"]
    with pytest.raises(UserError, match="one webrtc arm at most"):
        parse_arms("webrtc,webrtc")
    # A webrtc arm makes the other arm live; a non-live mode for it is refused.
    assert player_extra(["vivace", "webrtc"], False, []) == [("mode", "live")]
    assert player_extra(["vivace", "cubic"], False, []) == []
    assert player_extra(["vivace"], True, [("latency", "500")]) == [
        ("latency", "500"),
        ("mode", "live"),
    ]
    with pytest.raises(UserError, match="mode=abr: the webrtc arm is live"):
        player_extra(["vivace", "webrtc"], False, [("mode", "abr")])
    with pytest.raises(UserError, match="takes no player parameters"):
        player_extra(["webrtc"], False, [("buffer", "4")])

    rtc = Arm("webrtc", None, 6000, turn_port=3478, room="demo-b")
    extra = [("bitrate", "1200"), ("mode", "live")]
    single = urlsplit(page_url("http://h/", [rtc], extra))
    assert single.path == "/webrtc-recv.html"
    q = parse_qs(single.query)
    assert q["mode"] == ["webrtc"] and q["room"] == ["demo-b"]
    assert q["turn"] == ["turn:127.0.0.1:6000?transport=udp"]  # the emulator
    sender = parse_qs(q["sender"][0])
    assert sender == {"turn": ["turn:127.0.0.1:3478?transport=udp"], "bitrate": ["1200000"]}
    compare = urlsplit(page_url("http://h/", [Arm("vivace", None, 1), rtc], extra))
    sides = parse_qs(compare.query)
    assert parse_qs(sides["a"][0])["mode"] == ["live"]
    assert parse_qs(sides["b"][0])["mode"] == ["webrtc"]
    # Without an emulator (--scenario none) the receiver uses coturn directly.
    direct = parse_qs(Arm("webrtc", turn_port=3478).player_query([]))
    assert direct["turn"] == ["turn:127.0.0.1:3478?transport=udp"]


STARTING_STATES = {"vivace": "starting", "bbr": "startup", "cubic": "slow_start",
                   "reno": "slow_start", "fixed-rate": "fixed"}


@pytest.mark.parametrize("name", [info.name for info in list_controllers()])
def test_every_controller_has_a_state_for_the_timeline(name: str) -> None:
    from pccstream.server.webtransport import controller_state

    controller = create_controller(name, {})
    state = controller_state(controller)
    assert isinstance(state, str) and state
    if isinstance(controller, PccSender):
        assert state == "starting"
    elif not controller.is_rate_based:
        # Window-based controllers start below any ssthresh.
        assert state == "slow_start"
    assert state == STARTING_STATES.get(name, state)


def test_hostile_link_status_datagrams_are_dropped_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    receiver = LinkStatusProtocol(lambda: [])
    hostile = [b"[" * 8000, b'{"a":' * 1600, b"\xff\xfe", b"[1, 2]", b'{"upstream": 5}']
    with caplog.at_level(logging.DEBUG, logger="pccstream.link_status"):
        for index in range(1000):
            receiver.datagram_received(hostile[index % len(hostile)], ("127.0.0.1", 9))
    assert receiver.received == 1000
    assert receiver.bad == 800  # all but the well-formed object that matches no session
    assert len(caplog.records) <= 1
