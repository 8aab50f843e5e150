"""User-space, trace-driven link emulator with mahimahi semantics.

The *model* (`trace`, `queues`, `loss`, `link`) is pure: it is driven by explicit millisecond
timestamps and does no I/O, so tests run it on a virtual clock. The *relay* (`relay`) feeds it
from real UDP sockets and the real monotonic clock. `scenario` turns scenario files into link
settings plus a timeline of changes; `log`, `analyze` and `plot` handle the event log.
"""

from pccstream.emulator.link import Link, LinkStatus
from pccstream.emulator.relay import Emulator, EmulatorProcess
from pccstream.emulator.scenario import Scenario, load_scenario

__all__ = ["Emulator", "EmulatorProcess", "Link", "LinkStatus", "Scenario", "load_scenario"]
