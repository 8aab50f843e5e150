"""A progress bar with ETA on stderr (one line per run when stderr is not a terminal)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def format_duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def estimate_eta(
    remaining: int, done_durations: list[float], expected_s: float, elapsed_current: float = 0.0
) -> float:
    """Seconds left: the mean duration of the runs done so far (or `expected_s` before any)
    times the runs remaining, minus what the current run has used."""
    per_run = sum(done_durations) / len(done_durations) if done_durations else expected_s
    return max(0.0, remaining * per_run - elapsed_current)


class Progress:
    WIDTH = 24

    def __init__(
        self, total: int, already_done: int, expected_run_s: float, stream: TextIO | None = None
    ) -> None:
        self.total = total
        self.done = already_done
        self.expected_run_s = expected_run_s
        self.stream = stream if stream is not None else sys.stderr
        self.durations: list[float] = []
        self.started = time.monotonic()
        self._run_started = self.started
        self._label = ""
        self.tty = self.stream.isatty()
        # Runs measured at once (cluster workers): the ETA divides by it; 0 = one at a time here.
        self.parallel = 0

    def _line(self, now: float) -> str:
        filled = round(self.WIDTH * self.done / self.total) if self.total else self.WIDTH
        bar = "#" * filled + "." * (self.WIDTH - filled)
        remaining = self.total - self.done
        if self.parallel:
            eta = estimate_eta(remaining, self.durations, self.expected_run_s) / self.parallel
        else:
            eta = estimate_eta(
                remaining, self.durations, self.expected_run_s, now - self._run_started
            )
        return (
            f"[{bar}] {self.done}/{self.total} runs | {self._label} | elapsed "
            f"{format_duration(now - self.started)} | ETA {format_duration(eta)}"
        )

    def start_run(self, label: str) -> None:
        self._label = label
        self._run_started = time.monotonic()
        self._emit(self._line(self._run_started))

    def tick(self) -> None:
        if self.tty:
            self._emit(self._line(time.monotonic()))

    def finish_run(self, summary: str) -> None:
        now = time.monotonic()
        self.durations.append(now - self._run_started)
        self.done += 1
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(f"  {self._label}: {summary} ({now - self._run_started:.1f} s)\n")
        if self.tty and self.done < self.total:
            self._emit(self._line(now))

    def set_label(self, label: str) -> None:
        self._label = label

    def run_arrived(self, label: str, summary: str, run_s: float) -> None:
        """A run measured elsewhere (a cluster worker, in `run_s` seconds) has been stored."""
        self.durations.append(run_s)
        self.done += 1
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(f"  {label}: {summary} ({run_s:.1f} s)\n")
        self._emit(self._line(time.monotonic()))

    def note(self, text: str) -> None:
        """One line of news between the runs."""
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(text + "\n")
        self.stream.flush()

    def skip_run(self, label: str, reason: str) -> None:
        """A slot this process leaves alone (`reason`: e.g. which process runs it)."""
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(f"  {label}: skipped, {reason}\n")
        self.stream.flush()

    def _emit(self, line: str) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K" + line)
        elif line:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K")
        elapsed = format_duration(time.monotonic() - self.started)
        self.stream.write(f"{self.done}/{self.total} runs done in {elapsed}\n")
        self.stream.flush()
