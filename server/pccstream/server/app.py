"""Assembles the server: certificate, media, WebTransport endpoint (QUIC) and web app (HTTP)."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import resource
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aioquic.asyncio.server import QuicServer
from aioquic.h3.connection import H3_ALPN
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.logger import QuicFileLogger

from pccstream import __version__
from pccstream.aioquic_internals import check_aioquic_internals
from pccstream.cc.base import DEFAULT_MAX_DATAGRAM_SIZE
from pccstream.cc.registry import create_controller, list_controllers
from pccstream.errors import UserError
from pccstream.paths import WEB_DIST, data_path, user_cache_dir
from pccstream.server.certs import Certificate, ensure_certificate
from pccstream.server.datagram_size import check_max_datagram_size
from pccstream.server.http_app import Route, WebAppServer
from pccstream.server.link_status import LinkStatusReceiver
from pccstream.server.live import LiveChannel
from pccstream.server.media_store import MediaStore
from pccstream.server.memory import (
    fix_mmap_threshold,
    freeze_startup_objects,
    limit_malloc_arenas,
)
from pccstream.server.session import ViewerSession
from pccstream.server.webtransport import SESSION_PATH, EndpointSettings, protocol_factory

log = logging.getLogger("pccstream.server")

def default_web_root() -> Path:
    env = os.environ.get("PCCSTREAM_WEB_ROOT")
    return Path(env) if env else data_path(WEB_DIST)


def default_state_dir() -> Path:
    return user_cache_dir()


@dataclass
class ServerConfig:
    media_dir: Path
    host: str = "127.0.0.1"
    port: int = 4433
    http_port: int = 8080
    cc: str = "cubic"
    web_root: Path = field(default_factory=default_web_root)
    state_dir: Path = field(default_factory=default_state_dir)
    enable_test_hooks: bool = False
    qlog_dir: Path | None = None
    telemetry_interval_s: float = 0.1
    # Largest UDP payload sent (pccstream.server.datagram_size); the peer may lower it.
    max_datagram_size: int = DEFAULT_MAX_DATAGRAM_SIZE
    # UDP port on 127.0.0.1 for emulator link-status datagrams (0: any; None: off).
    link_status_port: int | None = None
    # Served read-only under /recordings/ (telemetry recordings for `?replay=`).
    recordings_dir: Path | None = None
    # Media directory played in a loop as the live channel (None: no live channel).
    live_media: Path | None = None


@dataclass
class ExtraRoutes:
    """HTTP routes another package mounts on the web app, by URL prefix (the WebRTC arm's
    signalling and sender content: pccstream.stack), and what to close with the server."""

    routes: dict[str, Route]
    close: Callable[[], None] = lambda: None


QLOG_URL_PREFIX = "/qlog/"
RECORDINGS_URL_PREFIX = "/recordings/"


class StreamingServer:
    """Runs until `close()`; `start()` raises `UserError` for bad configuration."""

    def __init__(self, config: ServerConfig,
                 extra_routes: Callable[[ServerConfig], ExtraRoutes] | None = None) -> None:
        """`extra_routes` is called at start, after the media is checked."""
        self.config = config
        self._make_extra_routes = extra_routes
        self._extra_routes: ExtraRoutes | None = None
        self.quic_port = config.port
        self.certificate: Certificate | None = None
        self.sessions: list[ViewerSession] = []
        self._quic_servers: list[QuicServer] = []
        self._web: WebAppServer | None = None
        self.link_status: LinkStatusReceiver | None = None
        self.live: LiveChannel | None = None

    @property
    def webtransport_url(self) -> str:
        host = f"[{self.config.host}]" if ":" in self.config.host else self.config.host
        return f"https://{host}:{self.quic_port}{SESSION_PATH}"

    @property
    def page_url(self) -> str:
        assert self._web is not None
        return f"http://127.0.0.1:{self._web.port}/"

    def api_config(self) -> dict[str, Any]:
        assert self.certificate is not None
        return {
            "webtransport_url": self.webtransport_url,
            "certificate_sha256": self.certificate.sha256_hex,
            "default_cc": self.config.cc,
            "server_version": __version__,
            "controllers": [info.name for info in list_controllers()],
            "live": self.live is not None,
        }

    def sessions_info(self) -> list[dict[str, Any]]:
        """`GET /api/sessions`: per-session byte counters (telemetry overhead)."""
        out = []
        for session in list(self.sessions):
            c = session.counters
            out.append(
                {
                    "session_id": session.unique_id,
                    "cc": session.cc_name,
                    "peer": list(session.peer) if session.peer else None,
                    "opened_at": session.opened_at,
                    "closed": session.closed,
                    "requests": c.requests,
                    "media_bytes": c.media_bytes,
                    "telemetry_bytes": c.telemetry_bytes,
                    "telemetry_records": c.telemetry_records,
                    "telemetry_frame_bytes": c.telemetry_frame_bytes,
                    "telemetry_encoding": session.telemetry_encoding,
                    "telemetry_overhead": c.telemetry_overhead,
                    **session.live_info(),
                }
            )
        return out

    async def start(self) -> None:
        config = self.config
        limit_malloc_arenas()  # before the first reader or HTTP thread allocates
        fix_mmap_threshold()  # large buffers in their own mappings: no heap fragmentation
        check_aioquic_internals()
        create_controller(config.cc, {})  # refuse an unknown default before binding anything
        media = MediaStore.open(config.media_dir)
        if config.live_media is not None:
            self.live = LiveChannel.open(config.live_media)
        self.certificate = ensure_certificate(config.state_dir)
        quic_config = QuicConfiguration(
            is_client=False,
            alpn_protocols=H3_ALPN,
            max_datagram_frame_size=65536,
            congestion_control_algorithm="cubic",  # only until a session installs its own
            idle_timeout=30.0,
            max_datagram_size=check_max_datagram_size(config.max_datagram_size),
        )
        quic_config.load_cert_chain(self.certificate.cert_path, self.certificate.key_path)
        if config.qlog_dir is not None:
            config.qlog_dir.mkdir(parents=True, exist_ok=True)
            quic_config.quic_logger = QuicFileLogger(str(config.qlog_dir))
        settings = EndpointSettings(
            media=media,
            default_cc=config.cc,
            enable_test_hooks=config.enable_test_hooks,
            telemetry_interval_s=config.telemetry_interval_s,
            on_session=self._on_session,
            qlog_url_prefix=QLOG_URL_PREFIX if config.qlog_dir is not None else None,
            live=self.live,
        )
        await self._bind_quic(quic_config, settings)
        if config.link_status_port is not None:
            self.link_status = LinkStatusReceiver(lambda: self.sessions)
            try:
                await self.link_status.start(config.link_status_port)
            except OSError as exc:
                raise UserError(
                    _bind_error("link status", "127.0.0.1", config.link_status_port, exc)
                ) from exc
        if not (config.web_root / "index.html").is_file():
            log.warning(
                "web app not built at %s: run the bootstrap (infra/bootstrap.sh)", config.web_root
            )
        directories: dict[str, Path] = {}
        if config.qlog_dir is not None:
            directories[QLOG_URL_PREFIX] = config.qlog_dir
        if config.recordings_dir is not None:
            config.recordings_dir.mkdir(parents=True, exist_ok=True)
            directories[RECORDINGS_URL_PREFIX] = config.recordings_dir
        routes: dict[str, Route] = {}
        if self._make_extra_routes is not None:
            self._extra_routes = self._make_extra_routes(config)
            routes.update(self._extra_routes.routes)
        try:
            self._web = WebAppServer(
                config.web_root,
                config.http_port,
                self.api_config,
                sessions=self.sessions_info,
                directories=directories,
                routes=routes,
            )
        except OSError as exc:
            raise UserError(_bind_error("HTTP", "127.0.0.1", config.http_port, exc)) from exc
        self._web.start()
        if self.live is not None:
            self.live.start()
            log.info("live channel from %s: %d groups of %d frames",
                     self.live.source, self.live.loop_groups, self.live.frames_per_group)

    async def _bind_quic(self, quic_config: QuicConfiguration, settings: EndpointSettings) -> None:
        hosts = [self.config.host]
        if self.config.host == "127.0.0.1" and socket.has_ipv6:
            hosts.append("::1")  # Chromium resolves localhost to ::1 first
        factory = protocol_factory(settings)
        for index, host in enumerate(hosts):
            try:
                # As aioquic's `serve`, keeping the transport to learn the bound port.
                transport, server = await asyncio.get_running_loop().create_datagram_endpoint(
                    lambda: QuicServer(configuration=quic_config, create_protocol=factory),
                    local_addr=(host, self.quic_port),
                )
            except OSError as exc:
                if index > 0 and exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
                    continue  # no IPv6 loopback on this machine
                raise UserError(_bind_error("QUIC", host, self.quic_port, exc)) from exc
            if index == 0:
                self.quic_port = transport.get_extra_info("sockname")[1]
            self._quic_servers.append(server)

    def _on_session(self, session: ViewerSession) -> None:
        # Bounded: a long-running server keeps the last 64 sessions (open ones first).
        if len(self.sessions) >= 64:
            open_ = [s for s in self.sessions if not s.closed]
            closed = [s for s in self.sessions if s.closed]
            self.sessions[:] = (closed + open_)[-63:]
        self.sessions.append(session)

    def ready_info(self) -> dict[str, Any]:
        assert self._web is not None and self.certificate is not None
        return {
            "pid": os.getpid(),
            "quic_port": self.quic_port,
            "http_port": self._web.port,
            "webtransport_url": self.webtransport_url,
            "page_url": self.page_url,
            "certificate_sha256": self.certificate.sha256_hex,
            "link_status_port": self.link_status.port if self.link_status else None,
        }

    def close(self) -> None:
        for session in self.sessions:
            session.close()
        if self.live is not None:
            self.live.close()
        if self._extra_routes is not None:
            self._extra_routes.close()
        for server in self._quic_servers:
            server.close()
        if self.link_status is not None:
            self.link_status.close()
        if self._web is not None:
            self._web.close()


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _bind_error(what: str, host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return f"{what} port {port} on {host} is already in use (choose another port)"
    return f"cannot bind {what} on {host}:{port}: {exc.strerror}"


async def run_forever(server: StreamingServer, ready_file: Path | None = None) -> None:
    config = server.config
    await server.start()
    freeze_startup_objects()  # the collections that free ended connections skip these
    info = server.ready_info()
    if ready_file is not None:
        # Atomically: whoever waits for the file to exist must never read it half-written.
        partial = ready_file.with_name(ready_file.name + ".partial")
        partial.write_text(json.dumps(info))
        partial.replace(ready_file)
    print(
        f"pccstream: WebTransport on {server.webtransport_url} (cc default: {config.cc})",
        flush=True,
    )
    print(f"pccstream: open {server.page_url} in Chromium to watch", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        server.close()
        print(f"pccstream: stopped; peak RSS {peak_rss_mib():.1f} MiB", flush=True)
