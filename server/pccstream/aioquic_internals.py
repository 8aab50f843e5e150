"""Every access to aioquic's private attributes (aioquic 1.7.x), and the check that they exist.

aioquic has no public API for what pccstream needs: replacing a connection's congestion
control and pacer, ordering its stream service queue, reading a stream's unsent data, putting
DATAGRAM frames ahead of (or taking them out of) its datagram queue, and telling its H3 layer
that a client-opened bidirectional stream is a WebTransport stream.
This module is the only one touching those attributes (`tests/test_aioquic_internals.py`
fails on a private aioquic access anywhere else). `check_aioquic_internals` looks for every
one of them on freshly made aioquic objects; the server runs it once at start and refuses to
start, naming what is missing, rather than failing session by session.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import aioquic
from aioquic.h3.connection import FrameType, H3Connection, H3Stream
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.congestion.base import QuicCongestionControl
from aioquic.quic.connection import QuicConnection
from aioquic.quic.logger import QuicLoggerTrace
from aioquic.quic.recovery import QuicPacketPacer, QuicPacketRecovery
from aioquic.quic.stream import QuicStreamSender

from pccstream.errors import UserError

# Every private attribute used below, by the aioquic class that owns it.
PRIVATE_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "QuicConnection": ("_loss", "_quic_logger", "_max_datagram_size", "_streams",
                       "_streams_queue", "_datagrams_pending"),
    "QuicPacketRecovery": ("_cc", "_pacer", "_rtt_smoothed", "_rtt_latest", "_rtt_min",
                           "_rtt_variance", "_rtt_initial"),
    "QuicStreamSender": ("_pending", "_pending_eof", "_buffer_stop"),
    "H3Connection": ("_stream",),
}

_QUEUE = "_pcc_streams_queue"
_ORDER = "_pcc_stream_order"
_ORDERED_CLASSES: dict[type, type] = {}


class AioquicInternalsChanged(UserError):
    """aioquic no longer has the private attributes pccstream relies on."""


def _probe_objects() -> dict[str, object]:
    """One fresh instance of each class in PRIVATE_ATTRIBUTES (no network needed)."""
    connection = QuicConnection(configuration=QuicConfiguration(is_client=True))
    return {
        "QuicConnection": connection,
        "QuicPacketRecovery": getattr(connection, "_loss", None),
        "QuicStreamSender": QuicStreamSender(stream_id=0, writable=True),
        "H3Connection": H3Connection(connection, enable_webtransport=True),
    }


def missing_internals(objects: dict[str, object] | None = None) -> list[str]:
    """`Class._attribute` for every private attribute absent from `objects` (default: fresh
    aioquic objects), plus the types the replacements must match."""
    probes = _probe_objects() if objects is None else objects
    missing = [f"{owner}.{name}" for owner, names in PRIVATE_ATTRIBUTES.items()
               for name in names if not hasattr(probes.get(owner), name)]
    recovery = probes.get("QuicPacketRecovery")
    if recovery is not None and not isinstance(recovery, QuicPacketRecovery):
        missing.append("QuicConnection._loss: QuicPacketRecovery")
    if not isinstance(getattr(recovery, "_cc", None), QuicCongestionControl):
        missing.append("QuicPacketRecovery._cc: QuicCongestionControl")
    return list(dict.fromkeys(missing))


def check_aioquic_internals(objects: dict[str, object] | None = None) -> None:
    """Raise AioquicInternalsChanged, in one line naming what is missing, unless this aioquic
    has every private attribute pccstream uses."""
    missing = missing_internals(objects)
    if missing:
        raise AioquicInternalsChanged(
            f"aioquic {aioquic.__version__} is not compatible with pccstream "
            f"(it needs aioquic 1.7.x): missing {', '.join(missing)}")


# --- congestion control and pacing ------------------------------------------------------


def recovery_of(connection: QuicConnection) -> QuicPacketRecovery:
    return connection._loss


def max_datagram_size(connection: QuicConnection) -> int:
    return connection._max_datagram_size


def limit_max_datagram_size(connection: QuicConnection, limit: int) -> None:
    """Build no datagram larger than `limit` from now on (aioquic never lowers its size)."""
    connection._max_datagram_size = min(connection._max_datagram_size, limit)


def quic_logger(connection: QuicConnection) -> QuicLoggerTrace | None:
    """The connection's qlog trace; None without qlog or once the connection is closed."""
    return connection._quic_logger


def congestion_control(connection: QuicConnection) -> QuicCongestionControl:
    return connection._loss._cc


def replace_congestion_control(connection: QuicConnection, cc: QuicCongestionControl,
                               pacer: QuicPacketPacer) -> None:
    recovery = connection._loss
    recovery._cc = cc
    recovery._pacer = pacer


def smoothed_rtt(recovery: QuicPacketRecovery) -> float:
    return recovery._rtt_smoothed


def rtt_estimates(recovery: QuicPacketRecovery) -> tuple[float, float, float, float, float]:
    """(initial, latest, smoothed, variance, minimum) RTT in seconds."""
    return (recovery._rtt_initial, recovery._rtt_latest, recovery._rtt_smoothed,
            recovery._rtt_variance, recovery._rtt_min)


# --- stream service order -----------------------------------------------------------------


class _OrderedQueue:
    """Data descriptor standing in for the instance attribute `_streams_queue`: aioquic
    reads it once per packet built and serves streams in its order."""

    def __get__(self, obj: Any, objtype: type | None = None) -> list[Any]:
        queue: list[Any] = obj.__dict__[_QUEUE]
        order: Callable[[list[Any]], None] | None = obj.__dict__[_ORDER]
        if order is not None and len(queue) > 1:
            order(queue)
        return queue

    def __set__(self, obj: Any, value: list[Any]) -> None:
        obj.__dict__[_QUEUE] = value


def has_stream_order(connection: QuicConnection) -> bool:
    return _ORDER in connection.__dict__


def set_stream_order(connection: QuicConnection,
                     order: Callable[[list[Any]], None] | None) -> None:
    """Make aioquic call `order(queue)` (sorting its list of QuicStreams in place) before
    each read of the stream service queue; None restores round-robin service."""
    if not has_stream_order(connection):
        base = type(connection)
        cls = _ORDERED_CLASSES.get(base)
        if cls is None:
            cls = type(f"Ordered{base.__name__}", (base,), {"_streams_queue": _OrderedQueue()})
            _ORDERED_CLASSES[base] = cls
        connection.__dict__[_QUEUE] = connection.__dict__.pop("_streams_queue")
        connection.__class__ = cls
    connection.__dict__[_ORDER] = order


def open_stream_ids(connection: QuicConnection) -> set[int]:
    """Streams aioquic still keeps (it forgets a stream once both sides are done)."""
    return set(connection._streams)


def has_unsent(connection: QuicConnection, stream_id: int) -> bool:
    """True if some of the stream's data (or its FIN) has never been sent or awaits
    retransmission."""
    stream = connection._streams.get(stream_id)
    if stream is None:
        return False
    sender = stream.sender
    return len(sender._pending) > 0 or bool(sender._pending_eof)


def written_offset(connection: QuicConnection, stream_id: int) -> int | None:
    """The stream offset just past the last byte written to it (None: no such stream)."""
    stream = connection._streams.get(stream_id)
    return None if stream is None else int(stream.sender._buffer_stop)


# --- DATAGRAM frames -----------------------------------------------------------------------
# aioquic queues each DATAGRAM frame's payload (for H3: quarter stream id varint + datagram)
# in a deque and sends from its head, ahead of stream data, as the congestion window allows.


def queue_datagrams_first(connection: QuicConnection, frames: Sequence[bytes]) -> None:
    """Queue `frames` (in this order) ahead of every DATAGRAM frame not yet sent."""
    pending: deque[bytes] = connection._datagrams_pending
    pending.extendleft(reversed(frames))


def remove_queued_datagrams(connection: QuicConnection,
                            doomed: Callable[[bytes], bool]) -> int:
    """Take every queued DATAGRAM frame for which `doomed(frame)` is true out of the queue,
    unsent; returns how many were removed."""
    pending: deque[bytes] = connection._datagrams_pending
    kept = [frame for frame in pending if not doomed(frame)]
    removed = len(pending) - len(kept)
    if removed:
        pending.clear()
        pending.extend(kept)
    return removed


def queued_datagrams(connection: QuicConnection) -> list[bytes]:
    """The DATAGRAM frames not yet sent, next first (for tests and diagnostics)."""
    return list(connection._datagrams_pending)


# --- HTTP/3 ---------------------------------------------------------------------------------


def register_webtransport_stream(http: H3Connection, stream_id: int, session_id: int) -> None:
    """Tell the H3 layer that our bidirectional `stream_id` belongs to WebTransport session
    `session_id`. aioquic 1.7 does not do it for a client-opened stream, so the server's answer
    would be parsed as HTTP/3 frames; this is what the server side does when it reads the
    stream preamble."""
    stream = H3Stream(stream_id)
    stream.frame_type = FrameType.WEBTRANSPORT_STREAM
    stream.session_id = session_id
    stream.sending_ended = True
    http._stream[stream_id] = stream
