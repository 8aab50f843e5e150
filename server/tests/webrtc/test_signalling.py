"""Signalling rooms: the offer/answer state machine, its bounds, and the HTTP routes."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
import urllib.request
from http import HTTPStatus
from pathlib import Path
from typing import Any

import pytest

from pccstream.webrtc.signalling import Rooms, SignallingError

from ..server.conftest import running_server

SDP = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\n"


def offer(meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "offer", "sdp": SDP, "meta": meta or {"epochMs": 1.0, "fps": 30}}


def test_offer_answer_exchange() -> None:
    rooms = Rooms()
    assert rooms.get_offer("a", 0) is None
    offer_id = rooms.post_offer("a", offer())
    got = rooms.get_offer("a", 0)
    assert got is not None and got["offer_id"] == offer_id and got["meta"]["fps"] == 30
    assert rooms.get_answer("a", offer_id, 0) is None
    rooms.post_answer("a", {"type": "answer", "sdp": SDP, "offer_id": offer_id})
    answer = rooms.get_answer("a", offer_id, 0)
    assert answer is not None and answer["sdp"] == SDP
    with pytest.raises(SignallingError, match="already answered"):
        rooms.post_answer("a", {"type": "answer", "sdp": SDP, "offer_id": offer_id})


def test_a_new_offer_replaces_the_old_one_and_its_answer() -> None:
    rooms = Rooms()
    first = rooms.post_offer("a", offer())
    rooms.post_answer("a", {"type": "answer", "sdp": SDP, "offer_id": first})
    second = rooms.post_offer("a", offer())
    with pytest.raises(SignallingError, match="replaced") as err:
        rooms.get_answer("a", first, 0)
    assert err.value.status == HTTPStatus.CONFLICT
    with pytest.raises(SignallingError, match="replaced"):
        rooms.post_answer("a", {"type": "answer", "sdp": SDP, "offer_id": first})
    assert rooms.get_answer("a", second, 0) is None


def test_long_poll_wakes_when_the_offer_arrives() -> None:
    rooms = Rooms()
    timer = threading.Timer(0.1, rooms.post_offer, ("a", offer()))
    timer.start()
    started = time.monotonic()
    got = rooms.get_offer("a", 5)
    assert got is not None and time.monotonic() - started < 2
    timer.join()


def test_rooms_are_bounded_and_expire() -> None:
    now = [0.0]
    rooms = Rooms(max_rooms=3, ttl_s=10, clock=lambda: now[0])
    for i in range(3):
        now[0] += 1
        rooms.post_offer(f"r{i}", offer())
    rooms.post_offer("r3", offer())  # evicts r0, the least recently updated
    assert rooms.get_offer("r0", 0) is None and len(rooms) == 3
    now[0] += 20
    assert len(rooms) == 0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"type": "answer", "sdp": SDP}, "'type' must be 'offer'"),
        ({"type": "offer", "sdp": "hello"}, "SDP string"),
        ({"type": "offer", "sdp": SDP, "meta": [1]}, "'meta' must be a JSON object"),
        ({"type": "offer", "sdp": "v=0" + "x" * 70_000}, "characters >"),
    ],
)
def test_bad_offers_are_refused(body: dict[str, Any], message: str) -> None:
    with pytest.raises(SignallingError, match=message):
        Rooms().post_offer("a", body)


def _request(base: str, method: str, path: str, body: bytes | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(base + path, data=body, method=method)
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            raw = answer.read()
            return answer.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as error:
        raw = error.read()
        try:
            return error.code, json.loads(raw)
        except json.JSONDecodeError:
            return error.code, raw.decode()


def test_webrtc_signalling_over_http(fake_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "state") as server:
            base = server.page_url.rstrip("/")

            def http(method: str, path: str, document: Any = None) -> tuple[int, Any]:
                body = None if document is None else json.dumps(document).encode()
                return _request(base, method, path, body)

            # The receiver waits; the sender's offer wakes it.
            waiting = asyncio.create_task(
                asyncio.to_thread(http, "GET", "/api/webrtc/call-1/offer?wait=5")
            )
            await asyncio.sleep(0.2)
            status, posted = await asyncio.to_thread(
                http, "POST", "/api/webrtc/call-1/offer", offer()
            )
            assert status == 201
            status, got = await waiting
            assert status == 200 and got["offer_id"] == posted["offer_id"]
            oid = got["offer_id"]
            assert (
                await asyncio.to_thread(http, "GET", f"/api/webrtc/call-1/answer?offer_id={oid}")
            )[0] == 204
            answer = {"type": "answer", "sdp": SDP, "offer_id": oid}
            assert (await asyncio.to_thread(http, "POST", "/api/webrtc/call-1/answer", answer))[
                0
            ] == 201
            status, got = await asyncio.to_thread(
                http, "GET", f"/api/webrtc/call-1/answer?offer_id={oid}&wait=1"
            )
            assert status == 200 and got["sdp"] == SDP
            # Bad input: one clear 4xx each.
            bad = [
                ("GET", "/api/webrtc/a%20b/offer", None, 400, "bad room name"),
                ("GET", "/api/webrtc/call-1/offer?wait=99", None, 400, "0-25"),
                ("GET", "/api/webrtc/call-1/answer", None, 400, "offer_id"),
                ("GET", "/api/webrtc/call-1/nosuch", None, 404, "unknown path"),
                ("POST", "/api/webrtc/call-2/answer", answer, 404, "has no offer"),
                ("POST", "/api/webrtc/call-1/offer", [1], 400, "JSON object"),
            ]
            for method, path, document, code, message in bad:
                status, body = await asyncio.to_thread(http, method, path, document)
                assert status == code, (path, body)
                assert message in body["error"], (path, body)
            status, body = await asyncio.to_thread(
                _request, base, "POST", "/api/webrtc/call-1/offer", b"x" * 70_000
            )
            assert status == 413
            assert (await asyncio.to_thread(http, "POST", "/api/config", {}))[0] == 405
            assert (await asyncio.to_thread(http, "DELETE", "/api/webrtc/call-1"))[0] == 204
            assert (await asyncio.to_thread(http, "GET", "/api/webrtc/call-1/offer"))[0] == 204

    asyncio.run(scenario())


def test_live_media_route_serves_whole_renditions(fake_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "state") as server:
            base = server.page_url.rstrip("/")

            def get(path: str) -> tuple[int, bytes]:
                try:
                    with urllib.request.urlopen(base + path, timeout=5) as answer:
                        return answer.status, answer.read()
                except urllib.error.HTTPError as error:
                    return error.code, error.read()

            status, body = await asyncio.to_thread(get, "/media/live/")
            listing = json.loads(body)
            assert status == 200
            assert [r["id"] for r in listing["renditions"]] == ["300k", "600k", "900k"]
            status, body = await asyncio.to_thread(get, "/media/live/600k.mp4")
            rendition = fake_media / "600k"
            expected = (rendition / "init.mp4").read_bytes() + b"".join(
                p.read_bytes() for p in sorted(rendition.glob("seg-*.m4s"))
            )
            assert status == 200 and body == expected
            status, body = await asyncio.to_thread(get, "/media/live/nosuch.mp4")
            assert status == 404 and b"known: 300k, 600k, 900k" in body
            assert (await asyncio.to_thread(get, "/media/live/600k/init.mp4"))[0] == 404

    asyncio.run(scenario())
