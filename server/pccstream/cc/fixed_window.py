"""`fixed`: a constant window, the contest's starting point (datagrump's default, 15 packets
in the contest's exercise A). It never reacts to anything: a reference point, not a
contender."""

from __future__ import annotations

from dataclasses import dataclass

from .packet_window import PacketWindowController
from .params import param


@dataclass(frozen=True)
class FixedWindowParams:
    window: float = param(15.0, "window (packets)", lo=1.0, hi=10_000.0)


class FixedWindow(PacketWindowController):
    name = "fixed"

    def __init__(self, params: FixedWindowParams | None = None) -> None:
        self.params = params or FixedWindowParams()
        super().__init__(self.params.window)
