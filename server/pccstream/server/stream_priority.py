"""Stream priorities for aioquic: which stream each packet serves first.

aioquic serves streams round-robin: each packet takes data from the streams in its service
queue order and moves the ones it served to the end. It has no priority API, and live
delivery needs one (newer groups first). `enable_priorities` has the queue re-sorted every
time aioquic reads it (once per packet built; `pccstream.aioquic_internals.set_stream_order`):
streams without a priority first (telemetry, requests), then prioritized streams by
priority, highest first. The sort is stable, so equal priorities stay round-robin.
`boost_written` serves what a stream holds so far at another priority until it has been sent
once (a segment's first chunk ahead of the manifest, the rest of the segment after it).
"""

from __future__ import annotations

from typing import Any

from aioquic.quic.connection import QuicConnection

from pccstream import aioquic_internals

_PRIORITIES = "_pcc_stream_priorities"
_BOOSTS = "_pcc_stream_boosts"


def _key(priority: int | None) -> tuple[int, int]:
    return (0, 0) if priority is None else (1, -priority)


def enable_priorities(connection: QuicConnection) -> None:
    """Make `connection` honour `set_priority` and `boost_written` (idempotent)."""
    if _PRIORITIES in connection.__dict__:
        return
    priorities: dict[int, int] = {}
    # stream id -> (priority, offset): the priority while bytes below the offset are unsent
    boosts: dict[int, tuple[int, int]] = {}

    def priority_of(stream: Any) -> int | None:
        boost = boosts.get(stream.stream_id)
        if boost is not None:
            if stream.sender.next_offset < boost[1]:
                return boost[0]
            del boosts[stream.stream_id]  # sent once; a retransmission goes at its own
        return priorities.get(stream.stream_id)

    def order(queue: list[Any]) -> None:
        if priorities or boosts:
            queue.sort(key=lambda s: _key(priority_of(s)))

    connection.__dict__[_PRIORITIES] = priorities
    connection.__dict__[_BOOSTS] = boosts
    aioquic_internals.set_stream_order(connection, order)


def set_priority(connection: QuicConnection, stream_id: int, priority: int | None) -> None:
    """Higher is served first; None: no priority (served before every prioritized stream)."""
    enable_priorities(connection)
    priorities: dict[int, int] = connection.__dict__[_PRIORITIES]
    if priority is None:
        priorities.pop(stream_id, None)
    else:
        priorities[stream_id] = priority
    if len(priorities) > 64:  # forget streams aioquic has discarded
        live = aioquic_internals.open_stream_ids(connection)
        for sid in [sid for sid in priorities if sid not in live]:
            del priorities[sid]


def boost_written(connection: QuicConnection, stream_id: int, priority: int) -> None:
    """Serve the bytes written to the stream so far at `priority` until each has been sent
    once; later bytes go at the stream's own priority."""
    enable_priorities(connection)
    end = aioquic_internals.written_offset(connection, stream_id)
    if end is not None:
        connection.__dict__[_BOOSTS][stream_id] = (priority, end)


has_unsent = aioquic_internals.has_unsent
