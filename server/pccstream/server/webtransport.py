"""HTTP/3 + WebTransport endpoint: routes CONNECT requests to `ViewerSession`s.

One `StreamingProtocol` per QUIC connection. The session's congestion controller is chosen
by its CONNECT URL (`?cc=NAME&cc.PARAM=VALUE`) and plugged in through
`pccstream.cc.aioquic_integration.install_controller`, the single integration point.
"""

from __future__ import annotations

import enum
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.buffer import encode_uint_var
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import (
    DatagramReceived,
    H3Event,
    HeadersReceived,
    WebTransportStreamDataReceived,
)
from aioquic.quic.events import ConnectionTerminated, ProtocolNegotiated, QuicEvent

from pccstream import aioquic_internals
from pccstream.cc.aioquic_integration import controller_telemetry, install_controller
from pccstream.cc.registry import create_controller, split_cc_spec
from pccstream.contracts import MAX_LIVE_FEC, MAX_LIVE_KEEP_MS
from pccstream.errors import UserError
from pccstream.server import stream_priority
from pccstream.server.datagram_size import honour_peer_limit
from pccstream.server.live import LiveChannel
from pccstream.server.live_parity import LiveFec
from pccstream.server.memory import schedule_trim
from pccstream.server.session import ViewerSession
from pccstream.server.telemetry_publisher import TELEMETRY_ENCODINGS
from pccstream.server.vod import MediaLookup, WithholdHook

log = logging.getLogger("pccstream.webtransport")

SESSION_PATH = "/stream"


@dataclass(frozen=True)
class EndpointSettings:
    media: MediaLookup
    default_cc: str
    enable_test_hooks: bool = False
    telemetry_interval_s: float = 0.1
    on_session: Callable[[ViewerSession], None] | None = None
    # URL path prefix under which the web app serves --qlog-dir (None: no qlog).
    qlog_url_prefix: str | None = None
    live: LiveChannel | None = None


@dataclass(frozen=True)
class SessionRequest:
    """What a CONNECT URL asks for, validated."""

    cc: str
    cc_params: dict[str, str]
    withhold: WithholdHook | None
    telemetry_encoding: str = "json"
    # live.keep_ms: how long a group's unsent data stays useful (None: one group duration).
    live_keep_s: float | None = None
    # live.fec=K: live groups as datagrams, one parity per K data fragments, or "auto" (K
    # from the loss); None: streams.
    live_fec: LiveFec | None = None
    # vod.first=R:S: rendition R's init segment and its segment S are pushed at session start.
    vod_first: tuple[int, int] | None = None
    # vod.manifest=1: the manifest is pushed at session start.
    vod_manifest: bool = False



def parse_session_query(query: str, settings: EndpointSettings) -> SessionRequest:
    """Parse `cc`, `cc.*` and `test.*` parameters; raise UserError naming a bad one."""
    cc = settings.default_cc
    cc_params: dict[str, str] = {}
    spec_params: dict[str, str] = {}
    test: dict[str, str] = {}
    encoding = "json"
    keep_s: float | None = None
    fec: LiveFec | None = None
    vod_first: tuple[int, int] | None = None
    vod_manifest = False
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key == "vod.first":
            vod_first = parse_vod_first(value)
            continue
        if key == "vod.manifest":
            if value != "1":
                raise UserError(f"vod.manifest={value[:40]!r}: expected 1 (push the manifest)")
            vod_manifest = True
            continue
        if key.startswith("vod."):
            raise UserError(f"unknown vod parameter {key!r} (known: vod.first, vod.manifest)")
        if key == "live.keep_ms":
            try:
                keep_ms = float(value)
            except ValueError:
                keep_ms = -1.0
            if not 0 <= keep_ms <= MAX_LIVE_KEEP_MS:
                raise UserError(
                    f"live.keep_ms={value!r}: expected milliseconds from 0 to {MAX_LIVE_KEEP_MS}"
                )
            keep_s = keep_ms / 1000
        elif key == "live.fec" and value == "auto":
            fec = "auto"
        elif key == "live.fec":
            digits = value.isascii() and value.isdigit() and len(value) <= 6
            if not (digits and int(value) <= MAX_LIVE_FEC):
                raise UserError(
                    f"live.fec={value[:40]!r}: expected an integer from 0 (no parity) to "
                    f"{MAX_LIVE_FEC} (data fragments per parity fragment), or auto (parity "
                    f"that follows the loss)"
                )
            fec = int(value)
        elif key.startswith("live."):
            raise UserError(f"unknown live parameter {key!r} (known: live.keep_ms, live.fec)")
        elif key == "telemetry":
            if value not in TELEMETRY_ENCODINGS:
                raise UserError(
                    f"telemetry={value!r}: expected one of {', '.join(TELEMETRY_ENCODINGS)}"
                )
            encoding = value
        elif key == "cc":
            # `cc=NAME:KEY=VALUE` is the same as `cc=NAME&cc.KEY=VALUE`.
            cc, spec_params = split_cc_spec(value) if value else (settings.default_cc, {})
        elif key.startswith("cc."):
            cc_params[key[3:]] = value
        elif key.startswith("test."):
            test[key[5:]] = value
    for key, value in spec_params.items():
        if cc_params.setdefault(key, value) != value:
            raise UserError(f"cc.{key}={cc_params[key]!r} contradicts cc={cc}:{key}={value}")
    withhold = None
    if test:
        if not settings.enable_test_hooks:
            raise UserError("test.* parameters need a server started with --enable-test-hooks")
        unknown = set(test) - {"withhold_at", "withhold_s"}
        if unknown:
            raise UserError(f"unknown test parameter(s): {', '.join(sorted(unknown))}")
        try:
            withhold = WithholdHook(
                int(test.get("withhold_at", "3")), float(test.get("withhold_s", "3"))
            )
        except ValueError:
            raise UserError(
                "test.withhold_at must be an integer and test.withhold_s a number"
            ) from None
        if withhold.at_segment < 0 or not 0 < withhold.seconds <= 600:
            raise UserError("test.withhold_at must be >= 0 and test.withhold_s in (0, 600]")
    return SessionRequest(cc, cc_params, withhold, encoding, keep_s, fec, vod_first,
                          vod_manifest)


_VOD_FIRST = re.compile(r"(\d{1,5}):(\d{1,9})")


def parse_vod_first(value: str) -> tuple[int, int]:
    """`vod.first=R:S` (rendition and segment indices) → (R, S); UserError if malformed."""
    match = _VOD_FIRST.fullmatch(value)
    if match is None:
        raise UserError(
            f"vod.first={value[:40]!r}: expected RENDITION:SEGMENT indices, e.g. vod.first=0:0"
        )
    rendition, segment = int(match[1]), int(match[2])
    if rendition > 0xFFFF:
        raise UserError(f"vod.first={value!r}: the rendition index must be below 65536")
    return rendition, segment


class StreamingProtocol(QuicConnectionProtocol):
    """aioquic connection protocol speaking HTTP/3 with WebTransport sessions."""

    settings: EndpointSettings  # set by `protocol_factory`

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._http: H3Connection | None = None
        self._sessions: dict[int, ViewerSession] = {}
        # WebTransport datagrams for no session of this connection (dropped).
        self.datagrams_dropped = 0

    # --- StreamWriter for sessions ------------------------------------------------------

    def send(self, stream_id: int, data: bytes, end_stream: bool) -> None:
        self._quic.send_stream_data(stream_id, data, end_stream)

    def open_uni_stream(self, session_id: int) -> int:
        assert self._http is not None
        return self._http.create_webtransport_stream(session_id, is_unidirectional=True)

    def flush(self) -> None:
        self.transmit()

    def reset_stream(self, stream_id: int, error_code: int) -> None:
        self._quic.reset_stream(stream_id, error_code)

    def has_unsent(self, stream_id: int) -> bool:
        return stream_priority.has_unsent(self._quic, stream_id)

    def set_stream_priority(self, stream_id: int, priority: int | None) -> None:
        stream_priority.set_priority(self._quic, stream_id, priority)

    def boost_written(self, stream_id: int, priority: int) -> None:
        stream_priority.boost_written(self._quic, stream_id, priority)

    def send_datagram(self, session_id: int, payload: bytes) -> None:
        assert self._http is not None
        self._http.send_datagram(session_id, payload)

    def send_datagrams_first(self, session_id: int, payloads: Sequence[bytes]) -> None:
        prefix = encode_uint_var(session_id // 4)  # what H3Connection.send_datagram adds
        aioquic_internals.queue_datagrams_first(self._quic, [prefix + p for p in payloads])

    def drop_queued_datagrams(self, session_id: int, doomed: Callable[[bytes], bool]) -> int:
        # Quarter stream ids are varints, so one session's prefix never starts another's.
        prefix = encode_uint_var(session_id // 4)
        return aioquic_internals.remove_queued_datagrams(
            self._quic, lambda frame: frame.startswith(prefix) and doomed(frame[len(prefix):]))

    # --- events -------------------------------------------------------------------------

    def quic_event_received(self, event: QuicEvent) -> None:
        if isinstance(event, ProtocolNegotiated) and event.alpn_protocol in H3_ALPN:
            honour_peer_limit(self._quic)  # before any datagram of ours is sized
            self._http = H3Connection(self._quic, enable_webtransport=True)
        elif isinstance(event, ConnectionTerminated):
            for session in self._sessions.values():
                session.close()
            self._sessions.clear()
            schedule_trim()
        if self._http is None:
            return
        try:
            for http_event in self._http.handle_event(event):
                self._on_http_event(http_event)
        except Exception:  # never let one connection's bug reach the server loop
            log.exception("error handling %s", type(event).__name__)

    def _on_http_event(self, event: H3Event) -> None:
        if isinstance(event, HeadersReceived):
            self._on_headers(event)
        elif isinstance(event, WebTransportStreamDataReceived):
            session = self._sessions.get(event.session_id)
            if session is not None:
                session.on_stream_data(event.stream_id, event.data, event.stream_ended)
        elif isinstance(event, DatagramReceived):
            # stream_id: the CONNECT stream of the session the datagram belongs to.
            session = self._sessions.get(event.stream_id)
            if session is None:
                self.datagrams_dropped += 1
            else:
                session.on_datagram(event.data)

    def _on_headers(self, event: HeadersReceived) -> None:
        headers = dict(event.headers)
        method = headers.get(b":method")
        protocol_name = headers.get(b":protocol")
        url = urlsplit(headers.get(b":path", b"/").decode(errors="replace"))
        if method != b"CONNECT" or protocol_name != b"webtransport":
            self._respond(
                event.stream_id, 405, "only WebTransport CONNECT is served here", end=True
            )
            return
        if url.path != SESSION_PATH:
            self._respond(event.stream_id, 404, f"no WebTransport endpoint at {url.path}", end=True)
            return
        try:
            wanted = parse_session_query(url.query, self.settings)
            controller = create_controller(wanted.cc, wanted.cc_params, seed=event.stream_id)
        except UserError as exc:
            self._respond(event.stream_id, 400, str(exc), end=True)
            return
        quic = self._quic
        session = ViewerSession(
            session_id=event.stream_id,
            media=self.settings.media,
            writer=self,
            cc_name=wanted.cc,
            cc_params=wanted.cc_params,
            telemetry_source=lambda: _sample(quic, controller, self._loop.time()),
            telemetry_interval_s=self.settings.telemetry_interval_s,
            withhold=wanted.withhold,
            telemetry_encoding=wanted.telemetry_encoding,
            peer=self.peer_address(),
            hello_extra=self._hello_extra(),
            live=self.settings.live,
            live_keep_s=wanted.live_keep_s,
            live_fec=wanted.live_fec,
            loss_counts=lambda: (controller.bytes_sent, controller.bytes_lost),
            vod_first=wanted.vod_first,
            vod_manifest=wanted.vod_manifest,
        )
        # MI events and samples share the session's clock: t_ms = 0 at session start.
        install_controller(quic, controller, on_event=session.publish, t0=session.t0,
                           clock=self._loop.time)
        self._sessions[event.stream_id] = session
        self._respond(event.stream_id, 200, None, end=False)
        session.start()
        if self.settings.on_session is not None:
            self.settings.on_session(session)
        log.info(
            "session %s opened: cc=%s params=%s", session.unique_id, wanted.cc, wanted.cc_params
        )

    def peer_address(self) -> tuple[str, int] | None:
        """The peer's current (host, port)."""
        addr = self._quic.get_peer_address()
        if addr is None:
            return None
        return (str(addr[0]), int(addr[1]))

    def _hello_extra(self) -> dict[str, Any]:
        extra: dict[str, Any] = {
            "max_datagram_size": aioquic_internals.max_datagram_size(self._quic)
        }
        prefix = self.settings.qlog_url_prefix
        if prefix is not None:
            odcid = self._quic.original_destination_connection_id.hex()
            extra["qlog_url"] = f"{prefix}{odcid}.qlog"
        return extra

    def _respond(self, stream_id: int, status: int, reason: str | None, *, end: bool) -> None:
        assert self._http is not None
        headers = [(b":status", str(status).encode())]
        if status == 200:
            headers.append((b"sec-webtransport-http3-draft", b"draft02"))
        else:
            headers.append((b"content-type", b"text/plain; charset=utf-8"))
        self._http.send_headers(stream_id, headers, end_stream=end and reason is None)
        if reason is not None and end:
            self._http.send_data(stream_id, reason.encode(), end_stream=True)
        self.transmit()


def controller_state(controller: Any) -> str | None:
    """The controller's state for the dashboard's state timeline: its own `state` (PCC's
    starting/probing/moving, BBR's startup/drain/probe_bw/probe_rtt), else for window-based
    controllers slow_start / congestion_avoidance from cwnd vs ssthresh."""
    state = getattr(controller, "state", None)
    if isinstance(state, enum.Enum):
        state = state.value
    if isinstance(state, str):
        return state
    if getattr(controller, "is_rate_based", False):
        return None
    ssthresh = getattr(controller, "ssthresh", None)
    cwnd = getattr(controller, "congestion_window", 0)
    return "slow_start" if ssthresh is None or cwnd < ssthresh else "congestion_avoidance"


def _sample(quic: Any, controller: Any, now: float) -> dict[str, Any] | None:
    sample = controller_telemetry(quic, now)
    if sample is not None:
        state = controller_state(controller)
        if state is not None:
            sample["state"] = state
    return sample


def protocol_factory(settings: EndpointSettings) -> Callable[..., StreamingProtocol]:
    def create(*args: Any, **kwargs: Any) -> StreamingProtocol:
        protocol = StreamingProtocol(*args, **kwargs)
        protocol.settings = settings
        return protocol

    return create
