"""WebRTC signalling rooms on the web app's HTTP server (`/api/webrtc/ROOM/...`).

Non-trickle offer/answer exchange between one sender page and one receiver page: each side
waits for ICE gathering to finish, so one offer and one answer carry every candidate.

    POST   /api/webrtc/ROOM/offer            {"type": "offer", "sdp": ..., "meta": {...}}
                                             -> 201 {"offer_id": N}; replaces the room's offer
                                                and clears its answer
    GET    /api/webrtc/ROOM/offer?wait=S     -> 200 {"offer_id", "type", "sdp", "meta"}, or
                                                204 when none came within S seconds
    POST   /api/webrtc/ROOM/answer           {"type": "answer", "sdp": ..., "offer_id": N}
                                             -> 201; 409 if N is not the room's current offer
                                                or it already has an answer
    GET    /api/webrtc/ROOM/answer?offer_id=N&wait=S
                                             -> 200 {"offer_id", "type", "sdp"}, 204 when none
                                                yet, 409 once offer N has been replaced
    DELETE /api/webrtc/ROOM                  -> 204 (hang up: forget the room)

Bounds: room names are 1-64 of `A-Z a-z 0-9 _ -`; a body is at most 64 KiB (the HTTP server
refuses larger ones with 413); `wait` is 0-25 s; at most 64 rooms, the least recently
updated one is forgotten first; a room untouched for 10 minutes expires. Bad input gets a
4xx with a one-line JSON `{"error": ...}`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from pccstream.server.http_app import RouteReply

PREFIX = "/api/webrtc/"
MAX_ROOMS = 64
ROOM_TTL_S = 600.0
MAX_WAIT_S = 25.0
MAX_SDP_CHARS = 60_000
_ROOM_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class SignallingError(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class _Room:
    updated: float
    offer_id: int = 0
    offer: dict[str, Any] | None = None
    answer: dict[str, Any] | None = None
    closed: bool = False


@dataclass
class Rooms:
    """Thread-safe rooms; every HTTP request runs on its own thread and may long-poll."""

    max_rooms: int = MAX_ROOMS
    ttl_s: float = ROOM_TTL_S
    clock: Callable[[], float] = time.monotonic
    _rooms: dict[str, _Room] = field(default_factory=dict)
    _next_offer_id: int = 1
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _closed: bool = False

    # -- operations ---------------------------------------------------------------------------
    def post_offer(self, room: str, body: dict[str, Any]) -> int:
        sdp = _sdp(body, "offer")
        meta = body.get("meta", {})
        if not isinstance(meta, dict):
            raise SignallingError(HTTPStatus.BAD_REQUEST, "'meta' must be a JSON object")
        with self._cond:
            self._expire()
            r = self._rooms.get(room)
            if r is None:
                if len(self._rooms) >= self.max_rooms:
                    oldest = min(self._rooms, key=lambda name: self._rooms[name].updated)
                    self._drop(oldest)
                r = self._rooms[room] = _Room(updated=self.clock())
            r.offer_id = self._next_offer_id
            self._next_offer_id += 1
            r.offer = {"offer_id": r.offer_id, "type": "offer", "sdp": sdp, "meta": meta}
            r.answer = None
            r.updated = self.clock()
            self._cond.notify_all()
            return r.offer_id

    def get_offer(self, room: str, wait_s: float) -> dict[str, Any] | None:
        with self._cond:
            self._cond.wait_for(lambda: self._offer_of(room) is not None or self._closed, wait_s)
            return self._offer_of(room)

    def post_answer(self, room: str, body: dict[str, Any]) -> None:
        sdp = _sdp(body, "answer")
        offer_id = _offer_id(body.get("offer_id"), "'offer_id'")
        with self._cond:
            self._expire()
            r = self._rooms.get(room)
            if r is None or r.offer is None:
                raise SignallingError(HTTPStatus.NOT_FOUND, f"room {room!r} has no offer")
            if offer_id != r.offer_id:
                raise SignallingError(
                    HTTPStatus.CONFLICT,
                    f"offer {offer_id} was replaced by offer {r.offer_id} in room {room!r}",
                )
            if r.answer is not None:
                raise SignallingError(
                    HTTPStatus.CONFLICT, f"offer {offer_id} in room {room!r} is already answered"
                )
            r.answer = {"offer_id": offer_id, "type": "answer", "sdp": sdp}
            r.updated = self.clock()
            self._cond.notify_all()

    def get_answer(self, room: str, offer_id: int, wait_s: float) -> dict[str, Any] | None:
        """The answer to `offer_id`, None if none yet; SignallingError once it was replaced."""

        def settled() -> bool:
            r = self._rooms.get(room)
            return self._closed or r is None or r.offer_id != offer_id or r.answer is not None

        with self._cond:
            self._cond.wait_for(settled, wait_s)
            r = self._rooms.get(room)
            if r is None or r.offer is None:
                if self._closed:
                    return None
                raise SignallingError(HTTPStatus.NOT_FOUND, f"room {room!r} has no offer")
            if r.offer_id != offer_id:
                raise SignallingError(
                    HTTPStatus.CONFLICT,
                    f"offer {offer_id} was replaced by offer {r.offer_id} in room {room!r}",
                )
            return r.answer

    def delete(self, room: str) -> None:
        with self._cond:
            self._drop(room)
            self._cond.notify_all()

    def close(self) -> None:
        """Wake every long poll (the server is stopping)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def __len__(self) -> int:
        with self._cond:
            self._expire()
            return len(self._rooms)

    # -- HTTP ---------------------------------------------------------------------------------
    def route(
        self, method: str, path: str, query: dict[str, str], body: bytes | None
    ) -> RouteReply:
        """The `http_app.Route` for PREFIX."""
        try:
            return self._route(method, path, query, body)
        except SignallingError as exc:
            return _json(exc.status, {"error": str(exc)})

    def _route(
        self, method: str, path: str, query: dict[str, str], body: bytes | None
    ) -> RouteReply:
        room, _, what = path.partition("/")
        if not _ROOM_NAME.fullmatch(room):
            raise SignallingError(
                HTTPStatus.BAD_REQUEST,
                f"bad room name {room[:80]!r}: 1-64 characters of A-Z a-z 0-9 _ -",
            )
        if what == "" and method == "DELETE":
            self.delete(room)
            return RouteReply(HTTPStatus.NO_CONTENT, "application/json", b"")
        if what not in ("offer", "answer"):
            raise SignallingError(
                HTTPStatus.NOT_FOUND, f"unknown path {PREFIX}{path[:120]} (offer or answer)"
            )
        if method == "POST":
            document = _parse_body(body)
            if what == "offer":
                offer_id = self.post_offer(room, document)
                return _json(HTTPStatus.CREATED, {"offer_id": offer_id})
            self.post_answer(room, document)
            return _json(HTTPStatus.CREATED, {"ok": True})
        if method != "GET":
            raise SignallingError(HTTPStatus.METHOD_NOT_ALLOWED, f"{method} not allowed here")
        wait_s = _wait(query.get("wait", "0"))
        if what == "offer":
            found = self.get_offer(room, wait_s)
        else:
            offer_id = _offer_id(query.get("offer_id"), "query parameter offer_id")
            found = self.get_answer(room, offer_id, wait_s)
        if found is None:
            return RouteReply(HTTPStatus.NO_CONTENT, "application/json", b"")
        return _json(HTTPStatus.OK, found)

    # -- internals (hold self._cond) ----------------------------------------------------------
    def _offer_of(self, room: str) -> dict[str, Any] | None:
        r = self._rooms.get(room)
        return None if r is None else r.offer

    def _expire(self) -> None:
        horizon = self.clock() - self.ttl_s
        for name in [n for n, r in self._rooms.items() if r.updated < horizon]:
            self._drop(name)

    def _drop(self, room: str) -> None:
        self._rooms.pop(room, None)


def _json(status: HTTPStatus, document: dict[str, Any]) -> RouteReply:
    return RouteReply(status, "application/json", json.dumps(document).encode())


def _parse_body(body: bytes | None) -> dict[str, Any]:
    if not body:
        raise SignallingError(HTTPStatus.BAD_REQUEST, "empty body: expected a JSON object")
    try:
        document = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SignallingError(HTTPStatus.BAD_REQUEST, f"body is not JSON: {exc}") from None
    except RecursionError:
        raise SignallingError(HTTPStatus.BAD_REQUEST, "body is nested too deeply") from None
    if not isinstance(document, dict):
        raise SignallingError(HTTPStatus.BAD_REQUEST, "body must be a JSON object")
    return document


def _sdp(body: dict[str, Any], kind: str) -> str:
    if body.get("type") != kind:
        raise SignallingError(HTTPStatus.BAD_REQUEST, f"'type' must be {kind!r}")
    sdp = body.get("sdp")
    if not isinstance(sdp, str) or not sdp.startswith("v=0"):
        raise SignallingError(HTTPStatus.BAD_REQUEST, "'sdp' must be an SDP string (v=0 ...)")
    if len(sdp) > MAX_SDP_CHARS:
        raise SignallingError(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"'sdp' of {len(sdp)} characters > {MAX_SDP_CHARS}"
        )
    return sdp


def _offer_id(value: Any, where: str) -> int:
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise SignallingError(HTTPStatus.BAD_REQUEST, f"{where} must be a positive integer")
    return value


def _wait(text: str) -> float:
    try:
        wait_s = float(text)
    except ValueError:
        raise SignallingError(
            HTTPStatus.BAD_REQUEST, f"wait={text[:40]!r} is not a number"
        ) from None
    if not 0 <= wait_s <= MAX_WAIT_S:
        raise SignallingError(
            HTTPStatus.BAD_REQUEST, f"wait={text[:40]} must be within 0-{MAX_WAIT_S:g} seconds"
        )
    return wait_s
