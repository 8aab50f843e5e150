"""Token-bucket pacing at a `Controller`'s rate, independent of any QUIC stack.

As quiche's pacing_sender wraps any congestion-control algorithm, `ControllerPacing` wraps any
`Controller`: `pacing_rate` for rate-based controllers, cwnd/srtt otherwise, refreshed
whenever the controller's outputs change (its `pacing_version`) rather than only on RTT
samples. `pccstream.cc.aioquic_integration.ControllerPacer` plugs it into aioquic.

The bucket is aioquic's (sizing, refill), but tokens are charged strictly: a packet needs a
whole packet time of credit. aioquic's own pacer lets a packet go on any positive credit and
then zeroes the bucket, so every incoming ACK releases a packet and the actual rate tracks
the ACK clock (about twice the nominal rate in our tests) - harmless under a window, fatal
for a rate-based controller.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from .base import Controller
from .params import param

# As aioquic's recovery: the shortest and longest packet time.
K_MICRO_SECOND = 0.000001
K_SECOND = 1.0

# Packets of credit a pacer timer waits for once the bucket is empty. Each wake-up costs a
# pass through aioquic's timer and send path in Python; a rate-bound sender (PCC) woke once
# per packet. Two back-to-back packets (2.4 kB, 1.6 ms of a 12 Mbit/s link) do not matter to
# the bottleneck; the long-run rate is unchanged (credit accrues continuously). 1 = as aioquic.
PACING_WAKE_QUANTUM = 2


@dataclass(frozen=True)
class PacerParams:
    """The pacer's per-session options after a stall, for the rate-based controllers that
    take them (PCC, `fixed-rate`); both off (docs/cc.md, session 44)."""

    pacing_burst_packets: int = param(
        0, "the pacer releases at most this many packets back to back when it resumes after "
        "the sender could not send: a stall of the host (a virtual machine's CPU descheduled "
        "for several ms) accrues pacing credit, and the pacer's own sizing (a quarter of the "
        "rate's BDP, up to 16 packets) spends it as one burst that queues at the bottleneck "
        "(0: the pacer's sizing)", lo=0, hi=1000)
    pacing_catch_up_gain: float = param(
        0.0, "after the sender could not send (a host stall), the pacer spends the credit it "
        "saved at this multiple of the rate, beyond a first pair back to back, instead of "
        "sending it at once: below capacity the link absorbs a catch-up at 1.1 x the rate "
        "with little queue, where a burst of the same packets queues them all; the rate "
        "over a stall is kept either way (0: back to back; values below 1 act as 1)", lo=0.0,
        hi=100.0)

    def configure_pacer(self, controller: Controller) -> None:
        controller.max_burst_packets = self.pacing_burst_packets
        controller.pacing_catch_up_gain = self.pacing_catch_up_gain


class ControllerPacing:
    """The pacing state of one connection; `smoothed_rtt` reads the connection's estimate."""

    def __init__(self, controller: Controller, *, max_datagram_size: int,
                 smoothed_rtt: Callable[[], float]) -> None:
        self.controller = controller
        self.max_datagram_size = max_datagram_size
        self._smoothed_rtt = smoothed_rtt
        self._version = -1
        self.rate: float | None = None  # bytes/s in force, None while unpaced
        self.packet_time: float | None = None
        self.bucket_max = 0.0
        self.bucket_time = 0.0
        self.evaluation_time = 0.0
        # The controller's `pacing_catch_up_gain`: a second bucket, of PACING_WAKE_QUANTUM
        # packets, refilled at gain x the rate, which a packet must also have credit in. A
        # sender that keeps pace never empties it; after a stall it spreads the credit the
        # first bucket saved at gain x the rate instead of sending it back to back.
        self.catch_up_gain = 0.0
        self.catch_up_time = 0.0  # credit, in time at the rate

    def next_send_time(self, now: float) -> float | None:
        """When the next packet may leave; None: now."""
        self._refresh()
        if self.packet_time is None:
            return None  # unpaced, as aioquic
        self.update_bucket(now)
        missing = self.packet_time - self.bucket_time
        catch_up_wait = 0.0
        if self.catch_up_gain > 0:
            catch_up_wait = max(0.0, self.packet_time - self.catch_up_time) / self.catch_up_gain
        if missing <= 1e-9:
            return None if catch_up_wait <= 1e-9 else now + catch_up_wait
        # Out of credit: sleep until PACING_WAKE_QUANTUM packets' worth has accrued (within
        # the bucket) rather than one, halving the timer wake-ups of a pacing-bound sender.
        quantum = min(PACING_WAKE_QUANTUM * self.packet_time, self.bucket_max)
        return now + max(missing, quantum - self.bucket_time, catch_up_wait)

    def update_after_send(self, now: float) -> None:
        self._refresh()
        if self.packet_time is None:
            return
        self.update_bucket(now)
        # Packets sent without asking (ACKs due, probes) still pay: the bucket may go into
        # debt, by at most one bucket, so the long-run rate holds.
        self.bucket_time = max(self.bucket_time - self.packet_time, -self.bucket_max)
        if self.catch_up_gain > 0:
            self.catch_up_time = max(self.catch_up_time - self.packet_time,
                                     -self._catch_up_max())

    def update_bucket(self, now: float) -> None:
        if now > self.evaluation_time:
            elapsed = now - self.evaluation_time
            self.bucket_time = min(self.bucket_time + elapsed, self.bucket_max)
            if self.catch_up_gain > 0:
                self.catch_up_time = min(self.catch_up_time + self.catch_up_gain * elapsed,
                                         self._catch_up_max())
            self.evaluation_time = now

    def _catch_up_max(self) -> float:
        assert self.packet_time is not None
        return min(PACING_WAKE_QUANTUM * self.packet_time, self.bucket_max)

    def apply_rate(self) -> None:
        """Take the controller's current rate (after RTT samples and losses)."""
        ctrl = self.controller
        self._version = ctrl.pacing_version
        srtt = self._smoothed_rtt()
        rate = ctrl.paced_rate(srtt)
        if rate is None or rate <= 0 or not math.isfinite(rate):
            # As stock aioquic: no pacing before the first RTT sample.
            self.packet_time = None
            self.rate = None
            return
        self.rate = rate
        mss = self.max_datagram_size
        # aioquic's own sizing: bursts up to a quarter of the window (2 to 16 packets),
        # the window being the rate's BDP for rate-based controllers; at least the
        # controller's `burst_packets` when its window holds that many.
        window = rate * max(srtt, K_MICRO_SECOND) if ctrl.is_rate_based else ctrl.congestion_window
        self.packet_time = max(K_MICRO_SECOND, min(mss / rate, K_SECOND))
        burst = max(2 * mss, min(int(window) // 4, 16 * mss),
                    min(ctrl.burst_packets * mss, int(window)))
        if ctrl.max_burst_packets > 0:
            burst = min(burst, ctrl.max_burst_packets * mss)
        self.bucket_max = burst / rate
        if self.bucket_time > self.bucket_max:
            self.bucket_time = self.bucket_max
        gain = ctrl.pacing_catch_up_gain
        self.catch_up_gain = max(1.0, gain) if gain > 0 else 0.0  # never below the rate
        self.catch_up_time = min(self.catch_up_time, self._catch_up_max())

    def _refresh(self) -> None:
        if self.controller.pacing_version != self._version:
            self.apply_rate()
