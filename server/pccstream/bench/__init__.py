"""Benchmarks that print JSON: bulk transfer through the emulator, the leaderboard of every
controller, and the sustained-bitrate check in headless Chromium."""
