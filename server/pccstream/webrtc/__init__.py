"""The WebRTC reference arm (docs/webrtc.md): signalling rooms and the sender's content on the
web app's HTTP server, a local coturn relay, and one call driven in headless Chromium."""
