"""A session's live requests: LIVE_INFO, LIVE_INIT and SUBSCRIBE, and its one subscription
to the live channel (docs/live.md)."""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable
from typing import Any

from pccstream import live_datagrams, protocol
from pccstream.protocol import Kind, ProtocolError, Request, Status
from pccstream.server.live import LiveChannel
from pccstream.server.live_parity import LiveFec, LossCounts
from pccstream.server.live_subscription import (
    NACK_LOG_INTERVAL_S,
    GroupWriter,
    LiveSubscription,
)

log = logging.getLogger("pccstream.live")

LIVE_KINDS = (Kind.LIVE_INFO, Kind.LIVE_INIT, Kind.SUBSCRIBE)


class LiveHandler:
    """`live` None: a server without a live channel (every live request is UNAVAILABLE).
    `keep_s`: how long a group's unsent data stays worth sending (None: one group).
    `fec`: live.fec=K or "auto", groups as datagrams (None: on streams); `loss_counts`: the
    connection's (bytes sent, bytes lost), which "auto" follows."""

    def __init__(self, *, live: LiveChannel | None, session_id: int, writer: GroupWriter,
                 keep_s: float | None, on_media_bytes: Callable[[int], None],
                 fec: LiveFec | None = None, loss_counts: LossCounts | None = None) -> None:
        self.live = live
        self.session_id = session_id
        self.writer = writer
        self.keep_s = keep_s
        self.fec: LiveFec | None = fec
        self.loss_counts = loss_counts
        self.on_media_bytes = on_media_bytes
        self.subscription: LiveSubscription | None = None
        # Datagrams from the viewer that are no NACK for a datagram subscription.
        self.datagrams_dropped = 0
        self._drop_logged_at = -math.inf

    def body(self, request: Request) -> bytes:
        """The answer's body, or raise `ProtocolError`."""
        live = self.live
        if live is None:
            raise ProtocolError(
                Status.UNAVAILABLE, "this server has no live channel (start it with --live-media)"
            )
        if request.kind == Kind.LIVE_INFO:
            return live.info_json()
        if request.rendition >= len(live.renditions):
            raise ProtocolError(
                Status.UNKNOWN_RENDITION,
                f"live rendition {request.rendition} does not exist; the channel has "
                f"{len(live.renditions)} (0-{len(live.renditions) - 1})",
            )
        if request.kind == Kind.LIVE_INIT:
            return live.renditions[request.rendition].init
        return self._subscribe(live, request)

    def answered(self, request: Request) -> None:
        """The answer to `request` is queued: a SUBSCRIBE's group streams may start (after
        the answer, so the viewer knows the start group before group streams come)."""
        if request.kind == Kind.SUBSCRIBE and self.subscription is not None:
            self.subscription.start()

    def _subscribe(self, live: LiveChannel, request: Request) -> bytes:
        edge = live.live_edge_group()
        wanted = edge if request.segment == protocol.LIVE_EDGE else request.segment
        if wanted < edge - 1:
            raise ProtocolError(
                Status.UNAVAILABLE,
                f"group {wanted} is gone: the live edge is group {edge} (ask for {edge - 1} or "
                f"later, or {protocol.LIVE_EDGE:#x} for the live edge)",
            )
        if self.subscription is not None:
            start = self.subscription.switch(request.rendition)
        else:
            keep = self.keep_s if self.keep_s is not None else live.group_duration_s
            self.subscription = LiveSubscription(
                channel=live,
                session_id=self.session_id,
                writer=self.writer,
                rendition=request.rendition,
                start_group=wanted,
                keep_s=keep,
                on_media_bytes=self.on_media_bytes,
                fec=self.fec,
                loss_counts=self.loss_counts,
            )
            start = wanted
        return json.dumps({"start_group": start, "rendition": request.rendition}).encode()

    def on_datagram(self, payload: bytes) -> None:
        """A WebTransport datagram from the viewer: a LIVE_NACK goes to the subscription,
        anything else is counted and dropped (never raised: it comes from the network)."""
        sub = self.subscription
        if sub is None or sub.fec is None:
            self._drop_datagram(payload, "the session has no live.fec subscription")
        elif payload[:1] != bytes((live_datagrams.LiveDatagramType.LIVE_NACK,)):
            self._drop_datagram(payload, "not a LIVE_NACK")
        else:
            sub.on_nack(payload)

    def _drop_datagram(self, payload: bytes, reason: str) -> None:
        self.datagrams_dropped += 1
        now = time.monotonic()
        if now - self._drop_logged_at >= NACK_LOG_INTERVAL_S:
            self._drop_logged_at = now
            log.info("session %d: %d datagram(s) dropped so far; the latest (%d bytes, type "
                     "%s): %s", self.session_id, self.datagrams_dropped, len(payload),
                     payload[0] if payload else "none", reason)

    def close(self) -> None:
        if self.subscription is not None:
            self.subscription.close()

    def info(self) -> dict[str, Any]:
        """Live counters for /api/sessions (empty without a subscription)."""
        sub = self.subscription
        if sub is None:
            return {}
        c = sub.counters
        info: dict[str, Any] = {
            "live_rendition": sub.rendition,
            "live_groups_opened": c.groups_opened,
            "live_groups_completed": c.groups_completed,
            "live_groups_dropped": c.groups_dropped,
            "live_chunks": c.chunks,
            "live_bytes": c.bytes,
        }
        if sub.fec is not None:
            info.update({
                "live_fec": sub.fec,
                "live_parity_k": c.parity_k,
                "live_parity_changes": c.parity_changes,
                "live_datagrams_sent": c.datagrams_sent,
                "live_parity_sent": c.parity_sent,
                "live_nacks_received": c.nacks_received,
                "live_fragments_retransmitted": c.fragments_retransmitted,
                "live_nacks_ignored": c.nacks_ignored,
                "live_gones_sent": c.gones_sent,
                "live_fragments_dropped_unsent": c.fragments_dropped_unsent,
                "live_datagrams_dropped": self.datagrams_dropped,
            })
        return info
