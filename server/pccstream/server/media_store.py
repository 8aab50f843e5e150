"""Answers requests from a media directory, and only from it.

Paths come from the validated manifest (`load_manifest` checks each one resolves inside the
media directory), never from the request: a request carries only indexes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pccstream.media.manifest import Manifest, load_manifest
from pccstream.media.mp4 import read_chunks
from pccstream.protocol import Kind, ProtocolError, Request, Status
from pccstream.server.vod import Body


@dataclass(frozen=True)
class MediaStore:
    manifest: Manifest

    @classmethod
    def open(cls, media_dir: Path) -> MediaStore:
        return cls(load_manifest(media_dir))

    def body(self, request: Request) -> Body:
        """Manifest and init segments whole; a media segment one CMAF chunk at a time, read
        from the file as the pieces are taken."""
        if request.kind == Kind.MANIFEST:
            return Body.of(self.manifest.json_bytes)
        renditions = self.manifest.renditions
        if request.rendition >= len(renditions):
            raise ProtocolError(
                Status.UNKNOWN_RENDITION,
                f"rendition {request.rendition} does not exist; the manifest has "
                f"{len(renditions)} (0-{len(renditions) - 1})",
            )
        rendition = renditions[request.rendition]
        if request.kind == Kind.INIT:
            return Body.of(rendition.init.path.read_bytes())
        if request.segment >= len(rendition.segments):
            raise ProtocolError(
                Status.UNKNOWN_SEGMENT,
                f"segment {request.segment} is past the last segment "
                f"({len(rendition.segments) - 1}) of rendition {request.rendition}",
            )
        segment = rendition.segments[request.segment]
        return Body(segment.bytes, _chunks_of(segment.path, segment.bytes))


def _chunks_of(path: Path, length: int) -> Iterator[bytes]:
    with path.open("rb") as file:
        yield from read_chunks(file, length)
