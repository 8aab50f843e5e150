"""Benchmarks that print JSON: bulk transfer through the emulator, and (later) the leaderboard."""
