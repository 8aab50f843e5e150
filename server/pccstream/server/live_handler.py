"""A session's live requests: LIVE_INFO, LIVE_INIT and SUBSCRIBE, and its one subscription
to the live channel (docs/live.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pccstream import protocol
from pccstream.protocol import Kind, ProtocolError, Request, Status
from pccstream.server.live import LiveChannel
from pccstream.server.live_subscription import GroupWriter, LiveSubscription

LIVE_KINDS = (Kind.LIVE_INFO, Kind.LIVE_INIT, Kind.SUBSCRIBE)


class LiveHandler:
    """`live` None: a server without a live channel (every live request is UNAVAILABLE).
    `keep_s`: how long a group's unsent data stays worth sending (None: one group)."""

    def __init__(self, *, live: LiveChannel | None, session_id: int, writer: GroupWriter,
                 keep_s: float | None, on_media_bytes: Callable[[int], None]) -> None:
        self.live = live
        self.session_id = session_id
        self.writer = writer
        self.keep_s = keep_s
        self.on_media_bytes = on_media_bytes
        self.subscription: LiveSubscription | None = None

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
            )
            start = wanted
        return json.dumps({"start_group": start, "rendition": request.rendition}).encode()

    def close(self) -> None:
        if self.subscription is not None:
            self.subscription.close()

    def info(self) -> dict[str, Any]:
        """Live counters for /api/sessions (empty without a subscription)."""
        sub = self.subscription
        if sub is None:
            return {}
        c = sub.counters
        return {
            "live_rendition": sub.rendition,
            "live_groups_opened": c.groups_opened,
            "live_groups_completed": c.groups_completed,
            "live_groups_dropped": c.groups_dropped,
            "live_chunks": c.chunks,
            "live_bytes": c.bytes,
        }
