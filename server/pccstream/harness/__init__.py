"""Helpers for driving processes and browsers, shared by the features that run experiments
(`ab`, `bench`, `webrtc`, `demo`): headless Chromium (`browser`), the server as a child
process (`processes`), and per-process CPU accounting (`cpu`). It depends on no feature."""
