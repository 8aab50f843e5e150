"""Answers requests from a media directory, and only from it.

Paths come from the validated manifest (`load_manifest` checks each one resolves inside the
media directory), never from the request: a request carries only indexes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pccstream.media.manifest import Manifest, load_manifest
from pccstream.protocol import Kind, ProtocolError, Request, Status


@dataclass(frozen=True)
class MediaStore:
    manifest: Manifest

    @classmethod
    def open(cls, media_dir: Path) -> MediaStore:
        return cls(load_manifest(media_dir))

    def read(self, request: Request) -> bytes:
        if request.kind == Kind.MANIFEST:
            return self.manifest.json_bytes
        renditions = self.manifest.renditions
        if request.rendition >= len(renditions):
            raise ProtocolError(
                Status.UNKNOWN_RENDITION,
                f"rendition {request.rendition} does not exist; the manifest has "
                f"{len(renditions)} (0-{len(renditions) - 1})",
            )
        rendition = renditions[request.rendition]
        if request.kind == Kind.INIT:
            return rendition.init.path.read_bytes()
        if request.segment >= len(rendition.segments):
            raise ProtocolError(
                Status.UNKNOWN_SEGMENT,
                f"segment {request.segment} is past the last segment "
                f"({len(rendition.segments) - 1}) of rendition {request.rendition}",
            )
        return rendition.segments[request.segment].path.read_bytes()
