"""Plain-HTTP server for the built web app and its `/api/config`.

Pages served from http://127.0.0.1 are a secure context, so WebTransport works without a
trusted TLS certificate on this side; the page learns the WebTransport URL and the
certificate hash from `/api/config`. Runs in threads: it must never stall the QUIC loop.
"""

from __future__ import annotations

import contextlib
import errno
import json
import mimetypes
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qsl, unquote, urlsplit

ConfigProvider = Callable[[], dict[str, Any]]
SessionsProvider = Callable[[], list[dict[str, Any]]]

# Request bodies (POST) larger than this are refused with 413 before they are read.
MAX_BODY_BYTES = 65536
# A connection that sends nothing for this long is closed (slowloris). Long polls wait on the
# server side, not on the socket, so they are not cut short by it.
READ_TIMEOUT_S = 10.0
# Connections served at once (one thread each); more get 503 and are closed at once. Long polls
# hold a thread for up to 25 s: a WebRTC call holds two.
MAX_CONNECTIONS = 64
_BUSY_BODY = json.dumps({"error": "too many connections: try again shortly"}).encode()
_BUSY_REPLY = (
    b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY)
)


# Where web/index.html takes the configuration written into it (`null` until the server does).
INLINE_CONFIG_MARKER = b"/*pccstream:config*/ null"


def inline_config(page: bytes, config: dict[str, Any]) -> bytes:
    """`page` with /api/config's answer in place of INLINE_CONFIG_MARKER, so the player page
    needs no request for it before opening its WebTransport session (a page without the
    marker is returned as it is). `</` is escaped: the JSON sits inside a <script>."""
    if INLINE_CONFIG_MARKER not in page:
        return page
    literal = json.dumps(config).replace("</", "<\\/").encode()
    return page.replace(INLINE_CONFIG_MARKER, literal, 1)


@dataclass(frozen=True)
class RouteReply:
    status: HTTPStatus
    content_type: str
    body: bytes


# A dynamic route under a URL prefix: (method, path after the prefix, query, body) -> reply.
# It runs on the request's own thread, so it may block (long polls), never on the QUIC loop.
Route = Callable[[str, str, dict[str, str], bytes | None], RouteReply]

mimetypes.add_type("text/javascript", ".js")
mimetypes.add_type("application/wasm", ".wasm")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        web_root: Path,
        config: ConfigProvider,
        sessions: SessionsProvider | None = None,
        directories: dict[str, Path] | None = None,
        routes: dict[str, Route] | None = None,
        read_timeout_s: float = READ_TIMEOUT_S,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.web_root = web_root.resolve()
        self.config_provider = config
        self.sessions_provider = sessions
        # URL prefix ("/qlog/") -> directory served read-only, flat (no sub-directories).
        self.directories = {prefix: d.resolve() for prefix, d in (directories or {}).items()}
        self.routes = dict(routes or {})
        self.read_timeout_s = read_timeout_s
        self._connection_slots = threading.BoundedSemaphore(max_connections)
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread per connection, at most `max_connections` at once."""
        if not self._connection_slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.settimeout(1.0)
                request.sendall(_BUSY_REPLY)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._connection_slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._connection_slots.release()


class _Handler(BaseHTTPRequestHandler):
    server_version = "pccstream"

    def setup(self) -> None:
        self.request.settimeout(self._app.read_timeout_s)  # a stalled read ends the connection
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # the QUIC side logs what matters; static file hits are noise

    @property
    def _app(self) -> _Server:
        return cast(_Server, self.server)

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        path = unquote(urlsplit(self.path).path)
        if path == "/api/config":
            self._send(
                HTTPStatus.OK,
                "application/json",
                json.dumps(self._app.config_provider()).encode(),
            )
            return
        if path == "/api/sessions" and self._app.sessions_provider is not None:
            body = json.dumps(self._app.sessions_provider()).encode()
            self._send(HTTPStatus.OK, "application/json", body)
            return
        if self._dispatch(path, None):
            return
        try:
            for prefix, directory in self._app.directories.items():
                if path.startswith(prefix):
                    self._send_from(directory, path[len(prefix) :], path)
                    return
            self._send_static(path)
        except ValueError:  # "embedded null byte" (GET /%00)
            self._send_error(HTTPStatus.BAD_REQUEST, "the path contains a NUL byte")
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                self._send_error(HTTPStatus.REQUEST_URI_TOO_LONG, "a path component is too long")
            else:
                self._send_error(HTTPStatus.NOT_FOUND, f"cannot read {path[:200]}: {exc.strerror}")

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        path = unquote(urlsplit(self.path).path)
        if not any(path.startswith(prefix) for prefix in self._app.routes):
            self._send_error(HTTPStatus.METHOD_NOT_ALLOWED, "POST not allowed here")
            return
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self._send_error(HTTPStatus.LENGTH_REQUIRED, "Content-Length required")
            return
        if int(length) > MAX_BODY_BYTES:
            self.close_connection = True  # the unread body must not be parsed as a request
            message = f"request body of {length} bytes exceeds {MAX_BODY_BYTES}"
            self._send_error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, message)
            return
        self._dispatch(path, self.rfile.read(int(length)))

    def do_DELETE(self) -> None:  # noqa: N802 - stdlib naming
        path = unquote(urlsplit(self.path).path)
        if not self._dispatch(path, b""):
            self._send_error(HTTPStatus.METHOD_NOT_ALLOWED, "DELETE not allowed here")

    def _dispatch(self, path: str, body: bytes | None) -> bool:
        """Answer from the route whose prefix `path` starts with; False if none matches."""
        for prefix, route in self._app.routes.items():
            if path.startswith(prefix):
                query = dict(parse_qsl(urlsplit(self.path).query))
                reply = route(self.command, path[len(prefix) :], query, body)
                self._send(reply.status, reply.content_type, reply.body)
                return True
        return False

    def _send_from(self, directory: Path, name: str, path: str) -> None:
        if name == "":
            names = sorted(p.name for p in directory.iterdir() if p.is_file())
            self._send(HTTPStatus.OK, "application/json", json.dumps(names).encode())
            return
        if "/" in name or name.startswith("."):
            self._send_error(HTTPStatus.FORBIDDEN, "flat file names only")
            return
        target = directory / name
        if not target.is_file():
            self._send_error(HTTPStatus.NOT_FOUND, f"not found: {path}")
            return
        content_type = "application/json" if name.endswith(".qlog") else "application/x-ndjson"
        self._send(HTTPStatus.OK, content_type, target.read_bytes(), attachment=name)

    def do_HEAD(self) -> None:  # noqa: N802 - stdlib naming
        self.do_GET()

    def _send_static(self, path: str) -> None:
        relative = path.lstrip("/") or "index.html"
        target = (self._app.web_root / relative).resolve()
        if not target.is_relative_to(self._app.web_root):
            self._send_error(HTTPStatus.FORBIDDEN, "path outside the web app")
            return
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            self._send_error(HTTPStatus.NOT_FOUND, f"not found: {path}")
            return
        content_type = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        body = target.read_bytes()
        if target.name == "index.html":
            body = inline_config(body, self._app.config_provider())
        self._send(HTTPStatus.OK, content_type, body)

    def _send_error(self, status: HTTPStatus, message: str) -> None:
        """Every error answer: a one-line JSON `{"error": ...}` (shared/PROTOCOL.md)."""
        self._send(status, "application/json", json.dumps({"error": message}).encode())

    def _send(
        self, status: HTTPStatus, content_type: str, body: bytes, attachment: str | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        # qvis (https://qvis.quictools.info) loads a qlog by URL: allow it to fetch ours.
        self.send_header("Access-Control-Allow-Origin", "*")
        if attachment is not None:
            self.send_header("Content-Disposition", f'inline; filename="{attachment}"')
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class WebAppServer:
    """Serves `web_root` and `/api/config` on 127.0.0.1 (and ::1 when available)."""

    def __init__(
        self,
        web_root: Path,
        port: int,
        config: ConfigProvider,
        *,
        sessions: SessionsProvider | None = None,
        directories: dict[str, Path] | None = None,
        routes: dict[str, Route] | None = None,
        read_timeout_s: float = READ_TIMEOUT_S,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        def bind(host: str, port: int) -> _Server:
            return _Server((host, port), web_root, config, sessions, directories, routes,
                           read_timeout_s, max_connections)

        self._servers = [bind("127.0.0.1", port)]
        self.port = self._servers[0].server_address[1]
        # No IPv6 loopback here is fine: 127.0.0.1 is the address the server prints.
        with contextlib.suppress(OSError):
            self._servers.append(bind("::1", self.port))
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for server in self._servers:
            thread = threading.Thread(target=server.serve_forever, name="http", daemon=True)
            thread.start()
            self._threads.append(thread)

    def close(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
