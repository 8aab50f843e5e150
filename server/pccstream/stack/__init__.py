"""The whole server as `pccstream serve` and `pccstream demo` run it: the streaming server
(`pccstream.server`) with the WebRTC arm's HTTP routes (`pccstream.webrtc`) mounted on its web
app. The server package does not know the WebRTC arm; its routes are passed in here."""

from __future__ import annotations

from pccstream.server.app import ExtraRoutes, ServerConfig, StreamingServer
from pccstream.webrtc.signalling import PREFIX as WEBRTC_PREFIX
from pccstream.webrtc.signalling import Rooms
from pccstream.webrtc.source import PREFIX as LIVE_SOURCE_PREFIX
from pccstream.webrtc.source import LiveSource


def webrtc_routes(config: ServerConfig) -> ExtraRoutes:
    """Signalling rooms and the sender's content (docs/webrtc.md)."""
    rooms = Rooms()
    # The WebRTC sender loops the live channel's media (the VOD media when there is none).
    live_source = LiveSource(config.live_media or config.media_dir)
    return ExtraRoutes({WEBRTC_PREFIX: rooms.route, LIVE_SOURCE_PREFIX: live_source.route},
                       rooms.close)


def streaming_server(config: ServerConfig) -> StreamingServer:
    return StreamingServer(config, extra_routes=webrtc_routes)
