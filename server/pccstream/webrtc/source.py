"""The WebRTC sender's content over HTTP (`/media/live/...`).

The sender page plays the live channel's media in a loop, as a camera would see it, and
captures it from a canvas. It needs each rendition as one playable file:

    GET /media/live/              -> {"fps", "duration_s", "renditions": [{"id", "width",
                                      "height", "bitrate_bps", "codec", "mime"}]}
    GET /media/live/ID.mp4        -> rendition ID's init segment followed by all its media
                                     segments (a fragmented MP4 a <video> plays as a file)

Files are read when asked for (a rendition of a 30 s loop is a few MB), never cached.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from pathlib import Path

from pccstream.media.manifest import Manifest, Rendition, load_manifest
from pccstream.server.http_app import RouteReply

PREFIX = "/media/live/"
MAX_FILE_BYTES = 256 << 20


class LiveSource:
    """Serves the renditions of `media_dir` (validated once, at start-up)."""

    def __init__(self, media_dir: Path) -> None:
        self.media_dir = media_dir
        self.manifest: Manifest = load_manifest(media_dir)

    def listing(self) -> dict[str, object]:
        m = self.manifest
        return {
            "fps": m.fps,
            "duration_s": m.duration_s,
            "renditions": [
                {
                    "id": r.id,
                    "width": r.width,
                    "height": r.height,
                    "bitrate_bps": r.bitrate_bps,
                    "codec": r.codec,
                    "mime": r.mime,
                }
                for r in m.renditions
            ],
        }

    def rendition(self, rendition_id: str) -> Rendition | None:
        return next((r for r in self.manifest.renditions if r.id == rendition_id), None)

    def file_bytes(self, rendition: Rendition) -> bytes:
        parts = [rendition.init.path.read_bytes()]
        parts += [segment.path.read_bytes() for segment in rendition.segments]
        return b"".join(parts)

    def route(
        self, method: str, path: str, query: dict[str, str], body: bytes | None
    ) -> RouteReply:
        """The `http_app.Route` for PREFIX."""
        del query, body
        if method not in ("GET", "HEAD"):
            return _text(HTTPStatus.METHOD_NOT_ALLOWED, f"{method} not allowed on {PREFIX}")
        if path == "":
            return RouteReply(
                HTTPStatus.OK, "application/json", json.dumps(self.listing()).encode()
            )
        if not path.endswith(".mp4") or "/" in path:
            return _text(HTTPStatus.NOT_FOUND, f"not found: {PREFIX}{path[:120]} (ID.mp4)")
        rendition = self.rendition(path[: -len(".mp4")])
        if rendition is None:
            known = ", ".join(r.id for r in self.manifest.renditions)
            return _text(HTTPStatus.NOT_FOUND, f"no rendition {path[:-4][:80]!r} (known: {known})")
        size = rendition.init.bytes + sum(s.bytes for s in rendition.segments)
        if size > MAX_FILE_BYTES:
            return _text(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"rendition {rendition.id!r} is {size} bytes, more than {MAX_FILE_BYTES}",
            )
        try:
            data = self.file_bytes(rendition)
        except OSError as exc:
            return _text(HTTPStatus.INTERNAL_SERVER_ERROR, f"cannot read media: {exc.strerror}")
        return RouteReply(HTTPStatus.OK, "video/mp4", data)


def _text(status: HTTPStatus, message: str) -> RouteReply:
    return RouteReply(status, "text/plain; charset=utf-8", (message + "\n").encode())
