"""BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00), with Linux tcp_bbr's constants.

BBR models the path by two numbers: the bottleneck bandwidth (BtlBw, the max delivery rate
over the last 10 round trips) and the round-trip propagation time (RTprop, the min RTT over
the last 10 s). It paces at gain x BtlBw and caps the data in flight at cwnd_gain x BDP, so
it ignores random loss by design. States:

- Startup: pacing gain 2/ln 2 = 2.885 (doubles the delivery rate each round) until BtlBw
  grows by less than 25 % over 3 rounds (the pipe is full);
- Drain: pacing gain 1/2.885 until the data in flight falls to one BDP (empties the queue
  Startup built);
- ProbeBW: pacing gain cycling through {1.25, 0.75, 1, 1, 1, 1, 1, 1}, one phase per
  RTprop, entered at a random phase other than 0.75 (so flows desynchronize);
- ProbeRTT: when RTprop has not been refreshed for 10 s, cap cwnd at 4 packets for 200 ms
  and one round, so the queue drains and the true RTprop can be seen again.

Under loss, cwnd follows Linux's recovery: packet conservation for the first round of a
recovery episode, then growth, and the pre-recovery cwnd back when the episode ends.

aioquic specifics. Each acked packet is its own ACK event (aioquic has no end-of-ACK
callback; see delivery_rate.py for why the samples stay valid). RTprop is fed from
aioquic's latest RTT (ACK delay removed) in `on_rtt_sample`, which aioquic calls after the
ACK frame's packets; the ProbeRTT entry check runs there too, so it sees the expiry before
the refreshed sample clears it. App-limited periods are inferred with
`delivery_rate.IdleDetector`. Packets the recovery abandons on PTO (`on_packets_expired`)
are neither delivered nor a congestion signal.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .base import Controller, SentPacket
from .delivery_rate import DeliveryRateSampler, IdleDetector, RateSample
from .params import param
from .windowed_filter import MaxFilter

HIGH_GAIN = 2 / math.log(2)  # 2.885: the smallest gain that doubles delivery per round
PACING_GAIN_CYCLE = (1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
# Send-quantum thresholds of the draft (1.2 and 24 Mbit/s), in bytes/s.
LOW_QUANTUM_RATE = 1.2e6 / 8
HIGH_QUANTUM_RATE = 24e6 / 8


class BbrState(Enum):
    STARTUP = "startup"
    DRAIN = "drain"
    PROBE_BW = "probe_bw"
    PROBE_RTT = "probe_rtt"


@dataclass(frozen=True)
class BbrParams:
    high_gain: float = param(HIGH_GAIN, "Startup pacing and cwnd gain (2/ln 2)", lo=1.0, hi=4.0)
    cwnd_gain: float = param(2.0, "ProbeBW cwnd gain (x BDP)", lo=1.0, hi=4.0)
    startup_growth: float = param(1.25, "Startup continues while BtlBw grows by this factor",
                                  lo=1.0, hi=2.0)
    startup_rounds: int = param(3, "rounds without that growth before the pipe is full",
                                lo=1, hi=10)
    bw_window_rounds: int = param(10, "max-bandwidth filter window (round trips)", lo=2,
                                  hi=100)
    min_rtt_window_s: float = param(10.0, "RTprop filter window (s)", lo=0.5, hi=60.0)
    probe_rtt_s: float = param(0.2, "ProbeRTT duration (s)", lo=0.01, hi=2.0)
    min_cwnd_packets: int = param(4, "minimum cwnd and ProbeRTT cwnd (packets)", lo=1, hi=64)
    initial_cwnd_packets: int = param(10, "initial cwnd (packets)", lo=2, hi=100)
    pacing_margin: float = param(0.01, "pace this fraction below the estimate (Linux: 1 %)",
                                 lo=0.0, hi=0.2)


def _key(packet: SentPacket) -> Hashable:
    # QUIC packet numbers restart in each packet-number space (aioquic's `epoch`).
    return (getattr(packet, "epoch", None), packet.packet_number)


class Bbr(Controller):
    name = "bbr"
    is_rate_based = True

    def __init__(self, params: BbrParams | None = None,
                 rng: random.Random | None = None) -> None:
        super().__init__()
        self.params = params or BbrParams()
        self._rng = rng or random.Random()
        self.sampler = DeliveryRateSampler()
        self.idle = IdleDetector()
        self.btlbw_filter = MaxFilter(self.params.bw_window_rounds)
        self.rtprop = math.inf
        self.rtprop_stamp = 0.0
        self.state = BbrState.STARTUP
        self.pacing_gain = self.params.high_gain
        self.cwnd_gain = self.params.high_gain
        self.round_count = 0
        self.round_start = False
        self._next_round_delivered = 0
        self.filled_pipe = False
        self._full_bw = 0.0
        self._full_bw_count = 0
        self.cycle_index = 0
        self._cycle_stamp = 0.0
        self._probe_rtt_done_stamp: float | None = None
        self._probe_rtt_round_done = False
        self.idle_restart = False
        self.prior_cwnd = 0
        self.in_recovery = False
        self._recovery_start = 0.0
        self.packet_conservation = False
        self._loss_since_cycle_check = False
        self._has_seen_rtt = False
        self._last_sent_time = 0.0
        self._cwnd = self.params.initial_cwnd_packets * self.max_datagram_size
        self._pacing_rate = self._initial_pacing_rate()
        self._last_outputs = (self._cwnd, self._pacing_rate)

    # -- lifecycle ----------------------------------------------------------------------

    def bind(self, *, max_datagram_size: int, now: float | None = None) -> None:
        super().bind(max_datagram_size=max_datagram_size, now=now)
        if self.bytes_sent == 0:
            self._cwnd = self.params.initial_cwnd_packets * max_datagram_size
            self._pacing_rate = self._initial_pacing_rate()
            self._outputs_changed()

    # -- outputs --------------------------------------------------------------------------

    @property
    def congestion_window(self) -> int:
        return int(self._cwnd)

    @property
    def pacing_rate(self) -> float:
        return self._pacing_rate

    @property
    def btlbw(self) -> float:
        """Bottleneck-bandwidth estimate, bytes/s (0 before the first sample)."""
        return self.btlbw_filter.best()

    def delivery_rate(self) -> float:
        return self.btlbw

    def log_data(self) -> dict[str, Any]:
        return {
            "bbr_state": self.state.value,
            "btlbw_bps": round(self.btlbw * 8),
            "rtprop_ms": round(self.rtprop * 1000, 3) if math.isfinite(self.rtprop) else None,
            "pacing_gain": self.pacing_gain,
            "cwnd_gain": self.cwnd_gain,
            "app_limited": self.sampler.is_app_limited,
        }

    # -- events ---------------------------------------------------------------------------

    def on_packet_sent(self, now: float, packet: SentPacket) -> None:
        mss = self.max_datagram_size
        if self.bytes_sent == 0:
            self.rtprop_stamp = now
        if self.idle.before_send(now):
            self.sampler.on_app_limited()
        # Restarting from idle: pace at exactly the estimate, not a probing gain, so the
        # first flight after a pause does not build a queue (draft 4.3.4.4).
        if self.bytes_in_flight == 0 and self.sampler.is_app_limited:
            self.idle_restart = True
            if self.state is BbrState.PROBE_BW:
                self._set_pacing_rate(1.0)
        super().on_packet_sent(now, packet)
        self._last_sent_time = now
        self.sampler.on_packet_sent(now, _key(packet), packet.sent_bytes)
        room = self.bytes_in_flight + mss <= self._cwnd
        self.idle.after_send(now, room=room, pacing_interval=mss / self._pacing_rate)
        self._outputs_changed()

    def on_packet_acked(self, now: float, packet: SentPacket) -> None:
        prior_inflight = self.bytes_in_flight
        super().on_packet_acked(now, packet)
        acked = self.sampler.on_packet_acked(now, _key(packet))
        if acked is None:
            return  # sent before this controller was installed
        rs = self.sampler.generate(self.rtprop if math.isfinite(self.rtprop) else 0.0)
        # The packet's own send-time state drives round counting and recovery exit, even
        # when its rate sample is discarded.
        if self.in_recovery and acked.sent_time > self._recovery_start:
            self._exit_recovery()
        self._update_round(acked.delivered)
        self._update_btlbw(rs)
        self._check_cycle_phase(now, prior_inflight)
        self._check_full_pipe(acked.is_app_limited)
        self._check_drain(now)
        self._handle_probe_rtt(now)
        if rs is not None and rs.delivered > 0:
            self.idle_restart = False
        self._set_pacing_rate(self.pacing_gain)
        self._set_cwnd(packet.sent_bytes)
        self.idle.on_window_change(now, room=self._room())
        self._outputs_changed()

    def on_rtt_sample(self, now: float, latest_rtt: float) -> None:
        # aioquic's latest RTT has the peer's ACK delay removed; the raw one does not.
        rtt = self.rtt_stats.latest_rtt if self.rtt_stats.latest_rtt > 0 else latest_rtt
        expired = (math.isfinite(self.rtprop)
                   and now > self.rtprop_stamp + self.params.min_rtt_window_s)
        if rtt <= self.rtprop or expired:
            self.rtprop = rtt
            self.rtprop_stamp = now
        if expired and self.state is not BbrState.PROBE_RTT and not self.idle_restart:
            self._enter_probe_rtt()
        if not self._has_seen_rtt and self.rtt_stats.smoothed_rtt > 0:
            # The first RTT: re-base the nominal rate on it instead of 1 ms (as Linux does),
            # or Startup would stay unpaced until the bandwidth estimate caught up.
            self._has_seen_rtt = True
            self._pacing_rate = self._initial_pacing_rate()
        self._outputs_changed()

    def on_packets_lost(self, now: float, packets: Sequence[SentPacket]) -> None:
        super().on_packets_lost(now, packets)
        lost = 0
        newest_sent = -math.inf
        for packet in packets:
            self.sampler.on_packet_lost(_key(packet))
            lost += packet.sent_bytes
            if packet.sent_time is not None:
                newest_sent = max(newest_sent, packet.sent_time)
        if not lost:
            return
        self._loss_since_cycle_check = True
        mss = self.max_datagram_size
        if not self.in_recovery or newest_sent > self._recovery_start:
            # A new episode (a loss of a packet sent after the last one began): packet
            # conservation for one round, starting from what is in flight now.
            self.prior_cwnd = self._saved_cwnd()
            self.in_recovery = True
            self._recovery_start = now
            self.packet_conservation = True
            self._next_round_delivered = self.sampler.delivered
            self._cwnd = max(self.bytes_in_flight, self._min_cwnd())
        else:
            self._cwnd = max(self._cwnd - lost, mss)
        self.idle.on_window_change(now, room=self._room())
        self._outputs_changed()

    def on_packets_expired(self, packets: Sequence[SentPacket]) -> None:
        super().on_packets_expired(packets)
        for packet in packets:
            self.sampler.on_packet_lost(_key(packet))

    def on_persistent_congestion(self) -> None:
        # Like Linux after an RTO: remember the window, restart from the minimum and
        # rebuild through recovery (the model itself is kept).
        self.prior_cwnd = self._saved_cwnd()
        self.in_recovery = True
        # No `now` here: the episode covers everything sent so far.
        self._recovery_start = self._last_sent_time
        self.packet_conservation = True
        self._next_round_delivered = self.sampler.delivered
        self._cwnd = self._min_cwnd()
        self._outputs_changed()

    # -- model ----------------------------------------------------------------------------

    def _update_round(self, prior_delivered: int) -> None:
        if prior_delivered >= self._next_round_delivered:
            self._next_round_delivered = self.sampler.delivered
            self.round_count += 1
            self.round_start = True
            self.packet_conservation = False
        else:
            self.round_start = False

    def _update_btlbw(self, rs: RateSample | None) -> None:
        if rs is None:
            return
        # App-limited samples may only raise the estimate: they measure the application.
        if rs.delivery_rate >= self.btlbw or not rs.is_app_limited:
            self.btlbw_filter.update(rs.delivery_rate, self.round_count)

    def _bdp(self, gain: float) -> float:
        """gain x BDP plus 3 send quanta (room for pacing bursts and delayed ACKs)."""
        if not math.isfinite(self.rtprop) or self.btlbw == 0:
            return self.params.initial_cwnd_packets * self.max_datagram_size
        return gain * self.btlbw * self.rtprop + 3 * self._send_quantum()

    def _send_quantum(self) -> float:
        mss = self.max_datagram_size
        rate = self._pacing_rate
        if rate < LOW_QUANTUM_RATE:
            return mss
        if rate < HIGH_QUANTUM_RATE:
            return 2 * mss
        return min(rate * 0.001, 64 * 1024)

    # -- state machine --------------------------------------------------------------------

    def _check_full_pipe(self, app_limited: bool) -> None:
        if self.filled_pipe or not self.round_start or app_limited:
            return
        if self.btlbw >= self._full_bw * self.params.startup_growth:
            self._full_bw = self.btlbw
            self._full_bw_count = 0
            return
        self._full_bw_count += 1
        if self._full_bw_count >= self.params.startup_rounds:
            self.filled_pipe = True

    def _check_drain(self, now: float) -> None:
        if self.state is BbrState.STARTUP and self.filled_pipe:
            self.state = BbrState.DRAIN
            self.pacing_gain = 1 / self.params.high_gain
            self.cwnd_gain = self.params.high_gain
        if self.state is BbrState.DRAIN and self.bytes_in_flight <= self._bdp(1.0):
            self._enter_probe_bw(now)

    def _enter_startup(self) -> None:
        self.state = BbrState.STARTUP
        self.pacing_gain = self.params.high_gain
        self.cwnd_gain = self.params.high_gain

    def _enter_probe_bw(self, now: float) -> None:
        self.state = BbrState.PROBE_BW
        self.pacing_gain = 1.0
        self.cwnd_gain = self.params.cwnd_gain
        # A random phase, never the 0.75 one: index n-1-r with r in [0, n-2], then advanced.
        n = len(PACING_GAIN_CYCLE)
        self.cycle_index = n - 1 - self._rng.randrange(n - 1)
        self._advance_cycle_phase(now)

    def _advance_cycle_phase(self, now: float) -> None:
        self._cycle_stamp = now
        self.cycle_index = (self.cycle_index + 1) % len(PACING_GAIN_CYCLE)
        self.pacing_gain = PACING_GAIN_CYCLE[self.cycle_index]

    def _check_cycle_phase(self, now: float, prior_inflight: int) -> None:
        if self.state is not BbrState.PROBE_BW:
            return
        lost, self._loss_since_cycle_check = self._loss_since_cycle_check, False
        full_length = now - self._cycle_stamp > self.rtprop
        gain = self.pacing_gain
        if gain == 1.0:
            advance = full_length
        elif gain > 1.0:
            # Probe until the extra data is in flight (or loss says the pipe is full).
            advance = full_length and (lost or prior_inflight >= self._bdp(gain))
        else:
            # Drain the probe's queue: done once in flight is back to one BDP.
            advance = full_length or prior_inflight <= self._bdp(1.0)
        if advance:
            self._advance_cycle_phase(now)

    def _enter_probe_rtt(self) -> None:
        self.state = BbrState.PROBE_RTT
        self.pacing_gain = 1.0
        self.cwnd_gain = 1.0
        self.prior_cwnd = self._saved_cwnd()
        self._probe_rtt_done_stamp = None
        # The cap applies at once (the draft sets cwnd in the same ACK's processing).
        self._cwnd = min(self._cwnd, self._min_cwnd())

    def _handle_probe_rtt(self, now: float) -> None:
        if self.state is not BbrState.PROBE_RTT:
            return
        # The low in-flight of ProbeRTT says nothing about the path's bandwidth.
        self.sampler.on_app_limited()
        if (self._probe_rtt_done_stamp is None
                and self.bytes_in_flight <= self._min_cwnd()):
            self._probe_rtt_done_stamp = now + self.params.probe_rtt_s
            self._probe_rtt_round_done = False
            self._next_round_delivered = self.sampler.delivered
        elif self._probe_rtt_done_stamp is not None:
            if self.round_start:
                self._probe_rtt_round_done = True
            if self._probe_rtt_round_done and now > self._probe_rtt_done_stamp:
                self.rtprop_stamp = now
                self._cwnd = max(self._cwnd, self.prior_cwnd)
                if self.filled_pipe:
                    self._enter_probe_bw(now)
                else:
                    self._enter_startup()

    # -- pacing and cwnd ------------------------------------------------------------------

    def _initial_pacing_rate(self) -> float:
        # The draft's nominal rate: the window per SRTT, or per 1 ms with no RTT yet (the
        # window, not the pacer, limits that first flight).
        srtt = self.rtt_stats.smoothed_rtt if self.rtt_stats.smoothed_rtt > 0 else 0.001
        return self.params.high_gain * self._cwnd / srtt

    def _set_pacing_rate(self, gain: float) -> None:
        bw = self.btlbw
        if bw <= 0:
            return
        rate = gain * bw * (1 - self.params.pacing_margin)
        # Before the pipe is full, never slow down: a low early sample is not the path.
        if self.filled_pipe or rate > self._pacing_rate:
            self._pacing_rate = rate

    def _set_cwnd(self, acked: int) -> None:
        target = self._bdp(self.cwnd_gain)
        if self.packet_conservation:
            self._cwnd = max(self._cwnd, self.bytes_in_flight + acked)
        elif self.filled_pipe:
            self._cwnd = min(self._cwnd + acked, target)
        elif (self._cwnd < target
              or self.sampler.delivered < self.params.initial_cwnd_packets
              * self.max_datagram_size):
            self._cwnd += acked
        self._cwnd = max(self._cwnd, self._min_cwnd())
        if self.state is BbrState.PROBE_RTT:
            self._cwnd = min(self._cwnd, self._min_cwnd())

    def _exit_recovery(self) -> None:
        self.in_recovery = False
        self.packet_conservation = False
        self._cwnd = max(self._cwnd, self.prior_cwnd)

    def _saved_cwnd(self) -> int:
        if not self.in_recovery and self.state is not BbrState.PROBE_RTT:
            return int(self._cwnd)
        return int(max(self.prior_cwnd, self._cwnd))

    def _min_cwnd(self) -> int:
        return self.params.min_cwnd_packets * self.max_datagram_size

    def _room(self) -> bool:
        return self.bytes_in_flight + self.max_datagram_size <= self._cwnd

    def _outputs_changed(self) -> None:
        outputs = (self._cwnd, self._pacing_rate)
        if outputs != self._last_outputs:
            self._last_outputs = outputs
            self.pacing_version += 1
