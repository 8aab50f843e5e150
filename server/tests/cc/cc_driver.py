"""Synthetic ack/loss/RTT streams for driving one PCC controller MI by MI.

`Driver.mi()` sends one monitor interval's packets at the controller's pacing rate, then
acks them (RTT per packet from a path function) or declares some lost, so each call yields
exactly one finished MI and the controller's decision on it, with no pipelining noise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pccstream.cc.base import Controller
from pccstream.cc.pcc_sender import PccSender
from pccstream.cc.sim import SimPacket

MSS = 1200
# `vivace`'s step rules before session 38 (both directions a share of the rate, a decrease
# moves on and is reversed): tests of mechanisms measured under them keep them.
PROPORTIONAL_STEPS = {"moving_after_decrease": "1", "theta_increase_power": "1", "theta0": "0.3"}
# `vivace`'s slow start and increase boundary before session 56 (no standing-queue test on
# latency exits, no packet floor under the boundary): tests of mechanisms measured without
# them, or on a test path whose queue does not last from one MI to the next, keep them off.
BEFORE_SESSION_56 = {"increase_boundary_floor_packets": "0", "ss_exit_min_queue": "0"}
# `vivace`'s RTT-gradient noise test before session 62 (samples taken as independent):
# tests of mechanisms measured with it keep it.
BEFORE_SESSION_62 = {"rtt_gradient_autocorr": "0"}


@dataclass
class PathSample:
    rtt: float  # RTT of the MI's first packet
    slope: float = 0.0  # dRTT/dt across the MI
    loss: float = 0.0  # fraction of packets lost (evenly spread)


def fluid_path(capacity_mbps: float, base_rtt: float = 0.03,
               loss: float = 0.0) -> Callable[[float], PathSample]:
    """A path where sending above capacity grows the queue: slope = (x - C) / C."""
    def path(rate_mbps: float) -> PathSample:
        over = max(0.0, (rate_mbps - capacity_mbps) / capacity_mbps)
        return PathSample(rtt=base_rtt, slope=over, loss=loss)
    return path


class Driver:
    def __init__(self, ctrl: PccSender, path: Callable[[float], PathSample],
                 *, app_fraction: float = 1.0) -> None:
        self.ctrl = ctrl
        self.path = path
        self.now = 10.0
        self.pn = 0
        self.events: list[dict[str, Any]] = []
        ctrl.bind(max_datagram_size=MSS, now=self.now)
        ctrl.event_sink = self.events.append
        self.app_fraction = app_fraction

    def mi(self, *, app_fraction: float | None = None) -> dict[str, Any]:
        ctrl = self.ctrl
        fraction = self.app_fraction if app_fraction is None else app_fraction
        n_before = len(self.events)
        packets: list[SimPacket] = []
        start = self.now
        self._send(packets)
        mi = ctrl.queue.current
        assert mi is not None
        rate = mi.target_rate
        sample = self.path(rate * 8 / 1e6)
        while True:
            self.now += MSS / rate / fraction
            if self.now >= mi.end_time:
                break
            self._send(packets)
        lost_every = round(1 / sample.loss) if sample.loss > 0 else 0
        acked, lost = [], []
        for i, p in enumerate(packets):
            (lost if lost_every and i % lost_every == lost_every - 1 else acked).append(p)
        last = start
        for p in acked:
            assert p.sent_time is not None
            t = max(p.sent_time + sample.rtt + sample.slope * (p.sent_time - start), last)
            last = t
            ack_frame(ctrl, t, p)
        self.now = max(last, mi.end_time) + 1e-6
        if lost:
            ctrl.on_packets_lost(self.now, lost)
        if ctrl.queue.current is mi:  # make sure the MI is closed and released
            ctrl.on_packets_expired([])
            mi.sending_done = True
            ctrl.on_packets_lost(self.now, [])
        new = self.events[n_before:]
        # One event per MI; two when a decision came early, on part of the MI's ACKs
        # (Vivace's early reverse), and the MI itself then finished stale.
        assert len(new) == 1 or (len(new) == 2 and new[1]["decision"] == "stale"), new
        return new[0]

    def _send(self, packets: list[SimPacket]) -> None:
        p = SimPacket(self.pn, self.now, MSS, 0)
        self.pn += 1
        self.ctrl.on_packet_sent(self.now, p)
        packets.append(p)

    def run(self, n: int) -> list[dict[str, Any]]:
        return [self.mi() for _ in range(n)]


def ack_frame(ctrl: Controller, t: float, *packets: SimPacket) -> None:
    """One ACK frame at `t` acknowledging `packets`, in aioquic's order: every packet, then
    the frame's RTT sample from its largest (last) packet, with no ACK delay."""
    for p in packets:
        ctrl.on_packet_acked(t, p)
    sent = packets[-1].sent_time
    assert sent is not None
    ctrl.rtt_stats.update(t - sent)
    ctrl.on_rtt_sample(t, t - sent)
