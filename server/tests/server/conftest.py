"""A fake media directory and an in-process server on ephemeral ports."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from pccstream.server.app import ServerConfig, StreamingServer
from pccstream.stack import streaming_server

SEGMENTS = 4


def make_fake_media(root: Path, sizes: tuple[int, ...] = (1000, 30000, 200000)) -> Path:
    """A manifest whose files hold deterministic bytes: the server never parses media."""
    renditions = []
    for r, size in enumerate(sizes):
        rid = f"{(r + 1) * 300}k"
        (root / rid).mkdir(parents=True)
        init = bytes([r]) * 100
        (root / rid / "init.mp4").write_bytes(init)
        segments = []
        for i in range(SEGMENTS):
            data = bytes((r * 31 + i * 7 + j) % 251 for j in range(size))
            (root / rid / f"seg-{i:05d}.m4s").write_bytes(data)
            segments.append(
                {
                    "file": f"{rid}/seg-{i:05d}.m4s",
                    "start_s": 2.0 * i,
                    "duration_s": 2.0,
                    "bytes": size,
                }
            )
        renditions.append(
            {
                "id": rid,
                "bitrate_bps": (r + 1) * 300_000,
                "width": 320,
                "height": 240,
                "codec": "avc1.64001f",
                "mime": 'video/mp4; codecs="avc1.64001f"',
                "init": {"file": f"{rid}/init.mp4", "bytes": len(init)},
                "segments": segments,
            }
        )
    manifest = {
        "version": 1,
        "duration_s": 2.0 * SEGMENTS,
        "segment_seconds": 2.0,
        "renditions": renditions,
    }
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


@pytest.fixture
def fake_media(tmp_path: Path) -> Path:
    return make_fake_media(tmp_path / "media")


@asynccontextmanager
async def running_server(
    media: Path, state_dir: Path, **overrides: object
) -> AsyncIterator[StreamingServer]:
    web_root = state_dir / "web"
    web_root.mkdir(parents=True, exist_ok=True)
    (web_root / "index.html").write_text("<!doctype html><title>pccstream</title>")
    config = ServerConfig(
        media_dir=media, port=0, http_port=0, web_root=web_root, state_dir=state_dir
    )
    for key, value in overrides.items():
        setattr(config, key, value)
    server = streaming_server(config)
    await server.start()
    try:
        yield server
    finally:
        server.close()
