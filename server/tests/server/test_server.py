"""The server end to end over real QUIC on loopback, with the headless WebTransport client."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from pccstream.errors import UserError
from pccstream.protocol import Kind, Request, Status
from pccstream.server.app import ServerConfig, StreamingServer
from pccstream.wt_client import SessionRefused, WebTransportClient

from .conftest import SEGMENTS, make_fake_media, running_server


def test_serves_manifest_init_and_segments(fake_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "state") as server:
            async with WebTransportClient.open("127.0.0.1", server.quic_port) as client:
                manifest = await client.manifest()
                assert manifest.header.status == Status.OK
                assert json.loads(manifest.body)["segment_seconds"] == 2.0
                init = await client.get(Request(Kind.INIT, 1))
                assert init.body == (fake_media / "600k" / "init.mp4").read_bytes()
                segment = await client.get(Request(Kind.SEGMENT, 2, 3))
                assert segment.header.status == Status.OK
                assert segment.header.body_length == len(segment.body) == 200000
                assert segment.body == (fake_media / "900k" / "seg-00003.m4s").read_bytes()
                assert abs(segment.header.server_time_us / 1e6 - time.time()) < 5

    asyncio.run(scenario())


def test_the_manifest_does_not_wait_for_the_rest_of_segment_0(tmp_path: Path) -> None:
    # A player that starts before the manifest asks for segment 0 and then the manifest; it
    # can ask for segment 1 only once the manifest is in, so the manifest must not queue
    # behind the whole of segment 0 (shared/PROTOCOL.md, "Order of responses").
    media = make_fake_media(tmp_path / "media", sizes=(3_000_000,))

    async def scenario() -> None:
        async with running_server(media, tmp_path / "state") as server:
            # A fixed window keeps segment 0's data waiting in its stream (on loopback a
            # growing window drains each chunk before the next is read, and the manifest
            # would slip in between whatever its priority).
            async with WebTransportClient.open("127.0.0.1", server.quic_port,
                                               cc="fixed") as client:
                segment = asyncio.ensure_future(client.get(Request(Kind.SEGMENT, 0, 0)))
                # The manifest is asked for while segment 0 is on its way (the web player
                # has it pushed at session start and asks for the manifest a round trip on).
                while client.response_bytes_received < 200_000:
                    await asyncio.sleep(0.001)
                manifest = await client.manifest()
                first = await segment
                assert manifest.header.status == first.header.status == Status.OK
                assert len(first.body) == 3_000_000
                # Sent after all of segment 0 it arrived with segment 0's last bytes.
                download = first.finished - first.started
                assert manifest.finished - first.started < 0.5 * download

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("payload", "status", "message"),
    [
        (bytes.fromhex("0103000900000000"), Status.UNKNOWN_RENDITION, "rendition 9 does not exist"),
        (bytes.fromhex("01030000000003e7"), Status.UNKNOWN_SEGMENT, "segment 999 is past"),
        (bytes.fromhex("010300"), Status.MALFORMED_REQUEST, "3 bytes"),
        (bytes.fromhex("0109000000000000"), Status.MALFORMED_REQUEST, "unknown request kind 9"),
        (bytes(200), Status.REQUEST_TOO_LARGE, "over 8 bytes"),
        (bytes.fromhex("0203000000000000"), Status.UNSUPPORTED_VERSION, "version 2"),
    ],
)
def test_bad_requests_get_an_error_and_the_session_carries_on(
    fake_media: Path, tmp_path: Path, payload: bytes, status: Status, message: str
) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "state") as server:
            async with WebTransportClient.open("127.0.0.1", server.quic_port) as client:
                response = await client.get_raw(payload)
                assert response.header.status == status
                assert message in response.body.decode()
                again = await client.get(Request(Kind.SEGMENT, 0, SEGMENTS - 1))
                assert again.header.status == Status.OK

    asyncio.run(scenario())


def test_other_sessions_are_unaffected_by_a_bad_one(fake_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "state") as server:
            async with (
                WebTransportClient.open("127.0.0.1", server.quic_port) as good,
                WebTransportClient.open("127.0.0.1", server.quic_port) as bad,
            ):
                bad_answers = await asyncio.gather(*(bad.get_raw(bytes(300)) for _ in range(5)))
                assert {a.header.status for a in bad_answers} == {Status.REQUEST_TOO_LARGE}
                good_answer = await good.get(Request(Kind.SEGMENT, 1, 0))
                assert good_answer.header.status == Status.OK

    asyncio.run(scenario())


def test_unknown_controller_is_refused_with_a_reason(fake_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "state") as server:
            with pytest.raises(SessionRefused) as caught:
                async with WebTransportClient.open("127.0.0.1", server.quic_port, cc="nosuchcc"):
                    pass
            assert caught.value.status == 400
            assert "nosuchcc" in caught.value.reason

    asyncio.run(scenario())


def test_wrong_path_is_404(fake_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "state") as server:
            with pytest.raises(SessionRefused) as caught:
                async with WebTransportClient.open(
                    "127.0.0.1", server.quic_port, path="/../etc/passwd"
                ):
                    pass
            assert caught.value.status == 404

    asyncio.run(scenario())


def test_test_hooks_need_the_server_flag(fake_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "state") as server:
            with pytest.raises(SessionRefused) as caught:
                async with WebTransportClient.open(
                    "127.0.0.1", server.quic_port, params={"test.withhold_at": "1"}
                ):
                    pass
            assert "--enable-test-hooks" in caught.value.reason

    asyncio.run(scenario())


def test_withhold_hook_delays_data_once(fake_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "state", enable_test_hooks=True) as server:
            params = {"test.withhold_at": "2", "test.withhold_s": "0.6"}
            async with WebTransportClient.open(
                "127.0.0.1", server.quic_port, params=params
            ) as client:
                first = await client.get(Request(Kind.SEGMENT, 0, 1))
                assert first.download_s < 0.4
                held = await client.get(Request(Kind.SEGMENT, 0, 2))
                assert held.download_s >= 0.55
                after = await client.get(Request(Kind.SEGMENT, 0, 3))
                assert after.download_s < 0.4

    asyncio.run(scenario())


def test_session_chooses_its_controller_and_gets_telemetry(
    fake_media: Path, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with (
            running_server(fake_media, tmp_path / "state", telemetry_interval_s=0.05) as server,
            WebTransportClient.open(
                "127.0.0.1", server.quic_port, cc="vivace", params={"cc.c": "20"}
            ) as client,
        ):
            for index in range(SEGMENTS):
                await client.get(Request(Kind.SEGMENT, 2, index))
            await asyncio.sleep(0.3)
            hello = client.telemetry[0]
            assert hello["type"] == "hello"
            assert hello["cc"] == "vivace" and hello["cc_params"] == {"c": "20"}
            samples = [r for r in client.telemetry if r["type"] == "sample"]
            assert len(samples) >= 3
            assert samples[-1]["bytes_sent"] > 0
            assert server.sessions[0].cc_name == "vivace"

    asyncio.run(scenario())


def test_each_session_has_its_own_id(fake_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with (
            running_server(fake_media, tmp_path / "state") as server,
            WebTransportClient.open("127.0.0.1", server.quic_port) as first,
            WebTransportClient.open("127.0.0.1", server.quic_port) as second,
        ):
            await first.get(Request(Kind.SEGMENT, 0, 0))
            await second.get(Request(Kind.SEGMENT, 0, 0))
            hello_ids = {client.telemetry[0]["session_id"] for client in (first, second)}
            api_ids = {info["session_id"] for info in server.sessions_info()}
            assert len(hello_ids) == 2 and api_ids == hello_ids

    asyncio.run(scenario())


def test_http_app_serves_config_and_refuses_traversal(fake_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_server(fake_media, tmp_path / "state") as server:
            base = server.page_url

            def fetch(path: str) -> tuple[int, bytes]:
                try:
                    with urllib.request.urlopen(base + path, timeout=5) as answer:
                        return answer.status, answer.read()
                except urllib.error.HTTPError as error:
                    return error.code, error.read()

            status, body = await asyncio.to_thread(fetch, "api/config")
            config = json.loads(body)
            assert status == 200
            assert config["webtransport_url"] == f"https://127.0.0.1:{server.quic_port}/stream"
            assert len(config["certificate_sha256"]) == 64
            assert (await asyncio.to_thread(fetch, ""))[0] == 200
            assert (await asyncio.to_thread(fetch, "%2e%2e/%2e%2e/etc/passwd"))[0] in (403, 404)
            assert (await asyncio.to_thread(fetch, "missing.js"))[0] == 404

    asyncio.run(scenario())


def test_bad_configuration_is_a_user_error(fake_media: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        with pytest.raises(UserError, match="manifest.json"):
            await StreamingServer(
                ServerConfig(media_dir=tmp_path, port=0, http_port=0, state_dir=tmp_path)
            ).start()
        with pytest.raises(UserError, match="nosuchcc"):
            await StreamingServer(
                ServerConfig(
                    media_dir=fake_media, port=0, http_port=0, cc="nosuchcc", state_dir=tmp_path
                )
            ).start()
        async with running_server(fake_media, tmp_path / "a") as first:
            with pytest.raises(UserError, match="already in use"):
                async with running_server(fake_media, tmp_path / "b", port=first.quic_port):
                    pass

    asyncio.run(scenario())
