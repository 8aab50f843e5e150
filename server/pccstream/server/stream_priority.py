"""Stream priorities for aioquic: the one place that reorders its stream service queue.

aioquic serves streams round-robin: each packet takes data from the streams in
`QuicConnection._streams_queue` order and moves the ones it served to the end. It has no
priority API, and live delivery needs one (newer groups first). `enable_priorities` gives a
connection a subclass whose `_streams_queue` is re-sorted every time aioquic reads it (once
per packet built): streams without a priority first (telemetry, requests), then prioritized
streams by priority, highest first. The sort is stable, so equal priorities stay
round-robin. `has_unsent` reads a stream's send state for the "still unsent?" test.

Private aioquic attributes used: `QuicConnection._streams_queue`, `QuicConnection._streams`,
`QuicStreamSender._pending`, `QuicStreamSender._pending_eof` (checked by
`check_stream_internals`; a test fails loudly if aioquic changes them).
"""

from __future__ import annotations

from typing import Any

from aioquic.quic.connection import QuicConnection

_QUEUE = "_pcc_streams_queue"
_PRIORITIES = "_pcc_stream_priorities"
_CLASSES: dict[type, type] = {}


class StreamInternalsChanged(RuntimeError):
    """aioquic no longer has the private attributes this module relies on."""


def check_stream_internals(connection: QuicConnection) -> None:
    missing = [a for a in ("_streams_queue", "_streams") if not hasattr(connection, a)]
    if missing:
        raise StreamInternalsChanged(
            "pccstream.server.stream_priority does not match this aioquic version; missing: "
            + ", ".join(f"QuicConnection.{a}" for a in missing)
        )


class _PrioritizedQueue:
    """Data descriptor standing in for the instance attribute `_streams_queue`."""

    def __get__(self, obj: Any, objtype: type | None = None) -> list[Any]:
        queue: list[Any] = obj.__dict__[_QUEUE]
        priorities: dict[int, int] = obj.__dict__[_PRIORITIES]
        if priorities and len(queue) > 1:
            queue.sort(key=lambda s: _key(priorities.get(s.stream_id)))
        return queue

    def __set__(self, obj: Any, value: list[Any]) -> None:
        obj.__dict__[_QUEUE] = value


def _key(priority: int | None) -> tuple[int, int]:
    return (0, 0) if priority is None else (1, -priority)


def enable_priorities(connection: QuicConnection) -> None:
    """Make `connection` honour `set_priority` (idempotent)."""
    if _PRIORITIES in connection.__dict__:
        return
    check_stream_internals(connection)
    base = type(connection)
    cls = _CLASSES.get(base)
    if cls is None:
        cls = type(f"Prioritized{base.__name__}", (base,), {"_streams_queue": _PrioritizedQueue()})
        _CLASSES[base] = cls
    connection.__dict__[_QUEUE] = connection.__dict__.pop("_streams_queue")
    connection.__dict__[_PRIORITIES] = {}
    connection.__class__ = cls


def set_priority(connection: QuicConnection, stream_id: int, priority: int | None) -> None:
    """Higher is served first; None: no priority (served before every prioritized stream)."""
    enable_priorities(connection)
    priorities: dict[int, int] = connection.__dict__[_PRIORITIES]
    if priority is None:
        priorities.pop(stream_id, None)
    else:
        priorities[stream_id] = priority
    if len(priorities) > 64:  # forget streams aioquic has discarded
        live = connection._streams
        for sid in [sid for sid in priorities if sid not in live]:
            del priorities[sid]


def has_unsent(connection: QuicConnection, stream_id: int) -> bool:
    """True if some of the stream's data (or its FIN) has never been sent or awaits
    retransmission."""
    stream = connection._streams.get(stream_id)
    if stream is None:
        return False
    sender = stream.sender
    return len(sender._pending) > 0 or bool(sender._pending_eof)
