"""The web app's HTTP server under hostile input: every bad request gets a JSON 4xx, slow
clients are timed out, and connections beyond the cap are turned away."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import time
from collections.abc import Iterator
from http import HTTPStatus
from pathlib import Path

import pytest

from pccstream.server.http_app import WebAppServer, inline_config
from pccstream.webrtc.signalling import PREFIX, Rooms


@contextlib.contextmanager
def _web_app(tmp_path: Path, **limits: float) -> Iterator[WebAppServer]:
    (tmp_path / "index.html").write_text("<!doctype html>")
    server = WebAppServer(
        tmp_path, 0, lambda: {}, routes={PREFIX: Rooms().route}, **limits  # type: ignore[arg-type]
    )
    server.start()
    try:
        yield server
    finally:
        server.close()


def _request(port: int, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request(method, path, body=body)
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("GET", "/%00", None, HTTPStatus.BAD_REQUEST),
        ("GET", "/a%00b.js", None, HTTPStatus.BAD_REQUEST),
        ("GET", "/" + "a" * 300, None, HTTPStatus.REQUEST_URI_TOO_LONG),
        ("POST", "/api/webrtc/room/offer", b"[" * 60000, HTTPStatus.BAD_REQUEST),
        ("GET", "/missing.js", None, HTTPStatus.NOT_FOUND),
        ("POST", "/index.html", b"{}", HTTPStatus.METHOD_NOT_ALLOWED),
    ],
)
def test_bad_requests_get_a_json_error(
    tmp_path: Path, method: str, path: str, body: bytes | None, status: HTTPStatus
) -> None:
    with _web_app(tmp_path) as server:
        got, answer = _request(server.port, method, path, body)
        assert got == status
        assert isinstance(json.loads(answer)["error"], str)
        assert _request(server.port, "GET", "/")[0] == HTTPStatus.OK  # still serving


def _slow_client(port: int) -> socket.socket:
    """A slowloris: half a request line, then nothing."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(b"GET / HTTP/1.1\r\n")
    return sock


def test_slow_clients_time_out_and_excess_connections_get_503(tmp_path: Path) -> None:
    with _web_app(tmp_path, read_timeout_s=0.5, max_connections=2) as server:
        slow = [_slow_client(server.port) for _ in range(2)]
        time.sleep(0.1)  # both are being served (and stalled) now
        turned_away = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        with turned_away:
            assert turned_away.recv(4096).startswith(b"HTTP/1.0 503")
        started = time.monotonic()
        for sock in slow:  # the server closes a stalled connection after its read timeout
            with sock:
                assert sock.recv(4096) == b""
        assert time.monotonic() - started < 2.0
        assert _request(server.port, "GET", "/")[0] == HTTPStatus.OK


def test_the_player_page_carries_the_configuration_inline(tmp_path: Path) -> None:
    config = {"webtransport_url": "https://127.0.0.1:4433/stream", "certificate_sha256": "ab" * 32,
              "note": "</script><script>alert(1)</script>"}
    page = "<script>var c = /*pccstream:config*/ null;</script>"
    (tmp_path / "index.html").write_text(page)
    (tmp_path / "other.html").write_text(page)
    server = WebAppServer(tmp_path, 0, lambda: config)
    server.start()
    try:
        status, body = _request(server.port, "GET", "/")
        assert status == HTTPStatus.OK
        literal = body.decode().removeprefix("<script>var c = ").removesuffix(";</script>")
        assert json.loads(literal) == config  # `<\/` is the same string in JSON
        assert "</script><script>" not in literal
        # Only the player page: other pages are served as they are.
        assert _request(server.port, "GET", "/other.html")[1].decode() == page
    finally:
        server.close()


def test_a_page_without_the_marker_is_served_as_it_is() -> None:
    assert inline_config(b"<!doctype html>", {"a": 1}) == b"<!doctype html>"
