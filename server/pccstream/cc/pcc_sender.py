"""Monitor-interval plumbing shared by the PCC algorithms (cf. PCC-Uspace's PccSender).

A `PccSender` turns packet events into finished monitor intervals and asks its algorithm
(Vivace, Allegro) two things: which rate the next MI sends at (`plan_next_mi`), and what to
do with each finished MI (`on_mi_finished`). It owns pacing, the safety window, the MI
timeout and the per-MI telemetry event, so the algorithm files contain only their
decisions.

Pipelining: an MI's result arrives about one RTT after it stops sending, while later MIs
are already under way. Every MI therefore carries a tag `(epoch, role, slot)` from the
algorithm; each decision bumps the epoch, and results from older epochs are reported but
not acted on ("stale"), so a decision is only ever based on MIs sent at the rate it chose.
"""

from __future__ import annotations

import abc
import dataclasses
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from .ack_silence import AckSilences
from .base import Controller, SentPacket
from .monitor_interval import (
    PATH_STEP_SIDE_SAMPLES,
    MiResult,
    MonitorInterval,
    MonitorIntervalQueue,
    path_steps,
)
from .pacing import PacerParams
from .params import param
from .receive_rate import ReceiveRate
from .utility import MBIT


@dataclass(frozen=True)
class PccParams(PacerParams):
    initial_rate_mbps: float = param(
        1.0, "rate of the first MI; slow start doubles it (about aioquic's 10-packet window "
        "over the 100 ms initial RTT)", lo=0.01, hi=10_000.0)
    initial_window_packets: float = param(
        10.0, "when the connection already has an RTT sample (the handshake's), the first MI "
        "sends at least this many packets per smoothed RTT, the initial window every QUIC and "
        "TCP sender starts with (RFC 9002 7.2), instead of initial_rate_mbps: at 20 ms that "
        "is 5 Mbit/s, two doublings fewer to climb (0 = off, the thesis)", lo=0.0, hi=1000.0)
    min_rate_mbps: float = param(0.25, "floor of the sending rate", lo=0.001, hi=10_000.0)
    max_rate_mbps: float = param(2_000.0, "ceiling of the sending rate", lo=0.01, hi=100_000.0)
    mi_rtts: float = param(1.0, "MI length in smoothed RTTs", lo=0.1, hi=10.0)
    min_mi_packets: int = param(
        10, "an MI lasts at least this many packets at its rate, and one that sent fewer is "
        "not used for decisions", lo=2, hi=1000)
    app_limited_ratio: float = param(
        0.8, "an MI whose actual send rate is below this fraction of its target was "
        "app-limited and is not used for decisions", lo=0.0, hi=1.0)
    mi_timeout_rtts: float = param(
        5.0, "MI timeout: if an MI's packets are not all acked/lost this many smoothed RTTs "
        "after its last send, halve the rate (thesis 4.4; 0 = off)", lo=0.0, hi=100.0)
    mi_timeout_min_ms: float = param(
        150.0, "the MI timeout is never shorter than this: at a 10 ms RTT five RTTs are 50 ms, "
        "so a path that gets 90 ms longer (the thesis's RTT redrawn between 10 and 100 ms) "
        "times out every MI in flight although nothing was lost (cf. TCP's minimum RTO, "
        "RFC 6298 2.4; 0 = no floor)", lo=0.0, hi=10_000.0)
    cwnd_gain: float = param(
        2.0, "safety window = cwnd_gain x rate x srtt, so the window never limits a PCC "
        "sender in steady state", lo=1.0, hi=20.0)
    min_cwnd_packets: int = param(4, "lower bound of the safety window, in packets", lo=2,
                                  hi=1000)
    min_mi_acks: float = param(
        6.0, "with rtt_per_ack, an MI lasts at least this many ACK intervals (measured), so "
        "its RTT regression has that many samples: at a short RTT one RTT holds only two or "
        "three ACK frames of a receiver that acknowledges every ~10 packets (0 = off)",
        lo=0.0, hi=1000.0)
    max_send_ratio: float = param(
        1.15, "an MI that sent more than this times its target rate is not used: it began "
        "with the pacer's burst after the application had been idle, so its utility would "
        "credit the burst to its rate (0 = off)", lo=0.0, hi=100.0)
    path_step_ms: float = param(
        0.0, "an RTT step of more than this many ms inside an MI, with every later RTT sample "
        "above every earlier one (below, for a step down) and at least two samples on each "
        "side, is the path's delay changing (a new route; the thesis's RTT redrawn every "
        "5 s), not a queue: the MI's RTT gradient is fitted with the step taken out. A queue "
        "fills at the senders' excess rate, one packet time per packet, so it cannot move "
        "every later sample at once; a stall delays a run of ACKs and ends. Vivace also "
        "measures queues above the RTT after a step up larger than a quarter of the min "
        "RTT (more than a pacing burst can queue) until an RTT sample goes below it: its "
        "queue drains and its test of loss behind a queue (loss_pool_queue) (0 = off)",
        lo=0.0, hi=10_000.0)
    timeout_undo: bool = param(
        True, "after an MI timeout, keep following the packets that were outstanding: when "
        "they arrive late but at their send rate and without loss, the path got longer, not "
        "slower (an RTT step such as the thesis's RTT redrawn every 5 s), so the rate from "
        "before the timeout is restored (cf. the Eifel response to a spurious timeout, RFC "
        "4015)")
    ss_mi_rtts: float = param(
        0.5, "MI length in smoothed RTTs during slow start: a doubling waits for one MI at "
        "the new rate plus an RTT for its feedback, so shorter MIs climb faster; slow start "
        "reads only large utility changes, which short MIs still show", lo=0.1, hi=10.0)
    ss_double_now: bool = param(
        True, "in slow start a doubling takes effect with the next packet: the MI still "
        "sending at the old rate is cut short (its result, at a rate already known to be "
        "good, would be ignored anyway), so a doubling takes one MI plus one RTT instead of "
        "up to two MIs plus one RTT; still at most one untested doubling in flight "
        "(off: the thesis)")
    ss_full_pipe_growth: float = param(
        1.25, "slow start ends on a latency-only utility drop only once the pipe is full: "
        "while the failing MI was still delivered this many times faster than the best MI so "
        "far, the RTT rise was not a standing queue at the bottleneck (host or path noise), so "
        "the rate is held and measured again (cf. BBR's full-pipe test; 0 = off, the thesis)",
        lo=0.0, hi=10.0)
    ss_max_delivery_ratio: float = param(
        1.25, "a slow-start MI delivered more than this many times faster than it was sent "
        "measured a burst of held ACKs (a busy host), not the path: its RTT samples fall "
        "through the MI, so its utility looks good; it is held, never doubled on (0 = off)",
        lo=0.0, hi=100.0)
    ss_min_delivery_ratio: float = param(
        0.0, "slow start ends on an MI at a new, higher rate that was sending for most of "
        "its length (ss_min_send_fill) and delivered less than this fraction of its send "
        "rate: the bottleneck took only that much, and the difference is queueing up. The "
        "utility cannot say so yet (the loss comes an MI later, the RTT gradient can hide in "
        "the noise test), so slow start would double once more (0 = off)", lo=0.0, hi=1.0)
    ss_min_send_fill: float = param(
        0.8, "slow start doubles only on an MI that was sending for at least this share of "
        "its length: an MI the application left idle (a live stream's frame, sent as a burst "
        "at the pacing rate) shows that the path took one burst, not that it carries the "
        "rate, so it is held (cf. RFC 7661: a window grows only while it is used; "
        "0 = off)", lo=0.0, hi=1.0)
    bdp_cap_gain: float = param(
        0.0, "the window is also bounded by this many times receive rate x min RTT: when a "
        "cellular link's capacity falls faster than probe pairs can measure, the rate the "
        "receiver takes data at falls within an RTT and the bound stops the queue at "
        "(gain - 1) min RTTs; while it binds, MIs fall short of their target and are not "
        "used, and the rate is kept for the capacity's return (0 = off)", lo=0.0, hi=100.0)
    receive_outage_gap: float = param(
        0.0, "with bdp_cap_gain, an ACK gap longer than this many average ACK intervals (and "
        "than the min RTT) is an outage and stays out of the receive rate: an uplink that "
        "holds ACKs for seconds (cellular) would otherwise put the estimate, and the window, "
        "at a few per cent of the capacity for dozens of RTTs after the ACKs resume "
        "(0 = off)", lo=0.0, hi=1000.0)
    bdp_cap_ack_aggregation: bool = param(
        False, "with bdp_cap_gain, the window bound also allows the largest recent ACK clump "
        "beyond the receive rate (BBR's extra_acked over 10 min RTTs): a cellular uplink "
        "releases ACKs in clumps, and a bound of gain x rate x min RTT alone then shrinks "
        "whenever the ACK path adds more than (gain - 1) min RTTs, down to the minimum "
        "window, with no queue at the bottleneck")
    bdp_cap_standing_queue: bool = param(
        False, "with bdp_cap_ack_aggregation, the ACK-clump allowance lapses while the last "
        "MI's smallest RTT sample stood more than (bdp_cap_gain - 1) min RTTs above the min "
        "RTT: a queue at the bottleneck lifts every sample, ACKs an uplink held leave the "
        "clump's last packets near the min RTT. A bursty downlink clumps ACKs too, and the "
        "allowance then deepens the queue (real stack, T-Mobile-LTE-short: window about "
        "2 x receive rate x min RTT, bound-limited 74 % of the time). On the real stack it "
        "cut p95 signal delay by 8-13 % at 4-12 % less throughput on the three short "
        "traces; but where the uplink clumps ACKs the allowance builds a bottleneck queue of "
        "its own, and the rule drops it with the throughput (link model, AT&T-2016: "
        "-60 %; off, docs/cc.md, session 19)")
    bdp_cap_clump_bdps: float = param(
        0.5, "with bdp_cap_ack_aggregation, the ACK-clump allowance is at most this many "
        "receive rate x min RTT (BBR caps extra_acked too: the clump after an outage is the "
        "whole window, and allowing all of it would ratchet the window up clump by clump). "
        "With bdp_cap_shared_margin the clump alone covers the ACK path's hold, and an "
        "uplink that releases ACKs once per min RTT needs 1 (1 in `vivace-lte`)",
        lo=0.0, hi=10.0)
    bdp_cap_shared_margin: bool = param(
        False, "with bdp_cap_ack_aggregation, the window bound's room above receive rate x "
        "min RTT is the larger of (bdp_cap_gain - 1) min RTTs and the ACK clump, not their "
        "sum: both are room for data delivered that the ACK path has not reported yet, and "
        "added they let the window reach about 2 x receive rate x min RTT on a bursty "
        "downlink, the window of BBR whose delay the profile aims to halve. On in "
        "`vivace-lte` with bdp_cap_gain=1.25 and bdp_cap_clump_bdps=1 (real stack, 3 runs: "
        "p95 signal delay -12 % on Verizon-LTE-short, -13 % on T-Mobile-LTE-short, -5 % on "
        "AT&T-2016, throughput -4 to -5 %; docs/cc.md, session 35; off: the sum)")
    bdp_cap_hold_gain: float = param(
        0.0, "with bdp_cap_gain, while no ACK has come for more than bdp_cap_hold_grace min "
        "RTTs the window bound grows by this share of the receive rate for every second "
        "of the silence: a cellular uplink holds ACKs for up to seconds while the downlink "
        "keeps delivering, and a window-bound sender falls silent with them, which the "
        "signal delay counts in full (link model, AT&T-LTE-driving: a 0.3 Mbit/s pacer "
        "scores 254 ms with an open window and 538 ms bound to 2 RTTs). A share of the "
        "rate keeps packets reaching the receiver through a hold and queues only that "
        "share of an outage that stops both directions (0 = off)", lo=0.0, hi=2.0)
    bdp_cap_hold_grace: float = param(
        1.0, "with bdp_cap_hold_gain, the ACK silence, in min RTTs, before the bound grows: "
        "within it the ACKs of a bursty downlink are only late", lo=0.0, hi=100.0)
    bdp_cap_hold_max_s: float = param(
        4.0, "with bdp_cap_hold_gain, the longest silence the bound grows over, in "
        "seconds: past it the path is out, not only its ACKs", lo=0.0, hi=60.0)
    bdp_cap_hold_learn: float = param(
        0.0, "with bdp_cap_hold_gain, the growth is scaled by the share of past silences "
        "that were held ACKs (an EWMA with this weight per verdict, `ack_silence.py`): "
        "packets sent in a silence come back with the released ACKs if the uplink held "
        "them, and a backlog later after a downlink outage, where the growth only queued "
        "(0 = off: every silence counts as held)", lo=0.0, hi=1.0)
    bdp_cap_hold_queue_rtts: float = param(
        0.0, "with bdp_cap_hold_learn, a silence whose release brought back what was sent "
        "into it counts as held only if the first packet sent after it came back within "
        "this many min RTTs above the min RTT: when the downlink returns from an outage of "
        "both directions before the uplink does, the release looks like a hold, but what "
        "the growth sent into the silence then queues ahead of that packet (if the window "
        "lets it leave before that backlog drained: docs/cc.md, session 48). Half the "
        "silence's own growth (as queueing time) is allowed too. 4 in `vivace-lte`: above "
        "the bound's room of at most a min RTT, with margin for an uplink that jitters "
        "after a hold (link model: T-Mobile-UMTS 1960 -> 1747 ms, AT&T-LTE-driving "
        "333 -> 354 ms; docs/cc.md, session 48; 0 = off)", lo=0.0, hi=100.0)
    bdp_cap_hold_queue_last: bool = param(
        False, "with bdp_cap_hold_queue_rtts, time the last packet sent before the silence "
        "ended instead of the first sent after it: that packet waits behind the whole "
        "backlog an outage queued, even when the backlog holds the window full until it "
        "has drained (where the first packet after finds no queue), and behind nothing "
        "after a hold. Its ACK is due with the release, or a min RTT after it left if it "
        "left later; the silence counts as an outage once it is queue_rtts min RTTs "
        "overdue. Off: the first packet's wait also tells whether the path works after "
        "the release, and this test misses those outages (link model, T-Mobile-UMTS: "
        "1787 against 1744 ms; docs/cc.md, session 49)")
    rtt_per_ack: bool = param(
        True, "one RTT sample per ACK frame (its largest newly acked packet, ACK delay "
        "removed) instead of one per packet: packets acknowledged together share one ACK "
        "time, so per-packet samples turn the receiver's ACK batching into a sawtooth and "
        "overstate how many independent samples the gradient's noise test has")


# A timeout is taken back when the MIs it dropped were delivered at least this fraction of
# their send rate (the bottleneck kept its rate) with at most this loss rate.
SPURIOUS_TIMEOUT_DELIVERY = 0.9
SPURIOUS_TIMEOUT_MAX_LOSS = 0.05
# path_step_ms: RTT samples of past MIs joined to the next MI's, so that every step has
# PATH_STEP_SIDE_SAMPLES samples before it in some MI's test (and none is found twice).
PATH_STEP_TAIL = 2 * PATH_STEP_SIDE_SAMPLES - 1


class MiTag(NamedTuple):
    epoch: int
    role: str  # "start", "probe", "hold", "move", "adjust"
    slot: int = 0  # position in a probe sequence


class Verdict(NamedTuple):
    """What an algorithm did with a finished MI, for telemetry."""

    decision: str
    step: float = 0.0  # rate change in bytes/s (signed)


class PccSender(Controller):
    is_rate_based = True

    def __init__(self, params: PccParams, rng: random.Random) -> None:
        super().__init__()
        self.params = params
        self.rng = rng
        params.configure_pacer(self)
        self.state = "starting"
        self.epoch = 0
        # `rate` is the algorithm's base rate; `_mi_rate` the rate of the MI sending now
        # (a probe may differ from the base rate). Both in bytes/s.
        self.rate = self.clamp(params.initial_rate_mbps * MBIT / 8)
        self._mi_rate = self.rate
        self.queue = MonitorIntervalQueue(keep_samples=params.path_step_ms > 0)
        self._rtt_tail: list[float] = []  # path_step_ms: the last RTT samples of past MIs
        self.mis_finished = 0
        self.timeouts = 0
        self.last_result: MiResult | None = None
        # No MI can time out before this time (saves the check on most packets).
        self._timeout_check_at = 0.0
        # rtt_per_ack: the ACK time of packets acked since the last RTT sample, whose MIs
        # are settled once that ACK frame's sample has arrived (None: nothing pending).
        self._ack_pending_at: float | None = None
        # rtt_per_ack: smoothed time between ACK frames while data flows, and the last one.
        self.ack_interval = 0.0
        self._last_rtt_sample_at: float | None = None
        # timeout_undo: the MIs outstanding at the last timeout, the rate before it and the
        # time after which their verdict is no longer awaited.
        self._late = MonitorIntervalQueue()
        self._undo_rate = 0.0
        self._undo_deadline = 0.0
        self.timeouts_undone = 0
        self._receive = ReceiveRate(outage_gap=params.receive_outage_gap)
        self.ack_silences = AckSilences(weight=params.bdp_cap_hold_learn,
                                        queue_rtts=params.bdp_cap_hold_queue_rtts,
                                        queue_last=params.bdp_cap_hold_queue_last)
        self.ack_delay = 0.0  # smoothed ACK delay the peer reported (seconds)
        # MI timeouts since the last ACK, and the rate before the first (on_path_returned).
        self.silent_timeouts = 0
        self._rate_before_silence = 0.0
        self.outages = 0
        self._started = False  # the first MI has been planned

    # -- algorithm hooks ------------------------------------------------------------------

    @abc.abstractmethod
    def plan_next_mi(self, now: float) -> tuple[float, MiTag]:
        """Rate (bytes/s) and tag of the MI about to start."""

    @abc.abstractmethod
    def mi_utility(self, result: MiResult) -> tuple[float, float]:
        """(utility, RTT gradient as used by the utility) of a finished MI."""

    @abc.abstractmethod
    def on_mi_finished(self, now: float, result: MiResult, utility: float) -> Verdict:
        """Act on a finished, current-epoch MI."""

    @abc.abstractmethod
    def on_mi_timeout(self, now: float) -> Verdict:
        """An MI's feedback is overdue: the path changed abruptly."""

    @abc.abstractmethod
    def on_timeout_undone(self, now: float, rate: float) -> Verdict:
        """The last timeout was spurious (the path only got longer): resume at `rate`."""

    def on_overload(self, now: float, result: MiResult) -> Verdict | None:
        """Any finished MI, of this epoch or an older one, before the epoch check: a chance to
        act on evidence too strong to wait for the next decision. None: nothing to do."""
        return None

    def on_path_returned(self, now: float, timeouts: int, rate_before: float
                         ) -> Verdict | None:
        """The first ACK after `timeouts` MI timeouts in a row that saw nothing acked (an
        outage, when several); `rate_before` was the rate before the first of them.
        None: nothing to do (the algorithm keeps its rate)."""
        return None

    # -- helpers for algorithms ------------------------------------------------------------

    def clamp(self, rate: float) -> float:
        lo = self.params.min_rate_mbps * MBIT / 8
        hi = self.params.max_rate_mbps * MBIT / 8
        return min(max(rate, lo), hi)

    def new_epoch(self) -> int:
        self.epoch += 1
        return self.epoch

    @staticmethod
    def mbps(rate: float) -> float:
        return rate * 8 / MBIT

    # -- Controller ------------------------------------------------------------------------

    @property
    def pacing_rate(self) -> float:
        return self._mi_rate

    @property
    def congestion_window(self) -> int:
        window, bound = self._window_and_bound()
        return self._window_in_force(window, bound, self._hold_silence_start())

    def _window_in_force(self, window: float, bound: float | None,
                         silence_start: float | None) -> int:
        """The rate's window under the cellular bound, the bound grown through the current
        ACK silence, and the floor."""
        if bound is not None and bound < window:
            window = bound + self._receive.rate * self._hold_credit_s(silence_start)
        return max(int(window), self.params.min_cwnd_packets * self.max_datagram_size)

    def _window_and_bound(self) -> tuple[float, float | None]:
        """The window at the rate, and the cellular bound on it (None: no bound)."""
        srtt = self.rtt_stats.srtt_or_initial()
        window = self.params.cwnd_gain * max(self.rate, self._mi_rate) * srtt
        if self.params.bdp_cap_gain <= 0 or self._receive.rate <= 0:
            return window, None
        min_rtt = self.rtt_stats.min_rtt_or(srtt)
        # Data the receiver holds unacknowledged is delivered yet still in flight: without
        # that allowance a slow sender, whose every other packet waits for the delayed
        # ACK, stays below the rate it measures and never grows.
        p, rate = self.params, self._receive.rate
        bdp = rate * min_rtt
        room = (p.bdp_cap_gain - 1) * bdp
        if p.bdp_cap_ack_aggregation and not self._queue_stands(min_rtt):
            clump = min(self._receive.aggregation, p.bdp_cap_clump_bdps * bdp)
            room = max(room, clump) if p.bdp_cap_shared_margin else room + clump
        return window, bdp + room + rate * self.ack_delay

    def _hold_silence_start(self) -> float | None:
        """bdp_cap_hold_gain: when the bound begins to grow in the current ACK silence
        (None: off, or no ACK yet)."""
        if self.params.bdp_cap_hold_gain <= 0 or self.clock is None:
            return None
        return self.ack_silences.silence_start(self._hold_grace_s())

    def _hold_grace_s(self) -> float:
        min_rtt = self.rtt_stats.min_rtt_or(self.rtt_stats.srtt_or_initial())
        return self.params.bdp_cap_hold_grace * min_rtt

    def _hold_gain(self) -> float:
        """The bound's growth, in receive rate per second of silence."""
        p = self.params
        return p.bdp_cap_hold_gain * (self.ack_silences.hold_share if p.bdp_cap_hold_learn
                                      else 1.0)

    def _hold_credit_s(self, start: float | None, now: float | None = None) -> float:
        """Seconds of receive rate the bound has grown by, at `now` (default: the clock's
        time), in the ACK silence whose growth began at `start`."""
        if now is None:
            if self.clock is None:
                return 0.0
            now = self.clock()
        if start is None:
            return 0.0
        silence = min(now - start, self.params.bdp_cap_hold_max_s)
        return self._hold_gain() * max(0.0, silence)

    def window_opens_at(self) -> float | None:
        start = self._hold_silence_start()
        window, bound = self._window_and_bound()
        if start is None or bound is None or self.clock is None:
            return None
        needed = self.bytes_in_flight + self.max_datagram_size
        # The grown bound may pass the rate's safety window (the 4 s limit bounds it), but
        # the wake stops there: past it only a PTO probe or an ACK sends (as measured in
        # session 47).
        if needed <= self._window_in_force(window, bound, start) or needed > window:
            return None
        # The bound grows at hold_gain x the receive rate; a microsecond more keeps a wake
        # at exactly that time from finding the window a rounding error short.
        rate = self._receive.rate * self._hold_gain()
        if rate <= 0:
            return None
        opens = start + (needed - bound) / rate + 1e-6
        if opens > start + self.params.bdp_cap_hold_max_s:
            return None  # past the credit's limit: only an ACK opens it
        return max(opens, self.clock() + 1e-6)

    def _queue_stands(self, min_rtt: float) -> bool:
        """bdp_cap_standing_queue: the last MI's smallest RTT sample stood above the queue
        the window bound itself allows, (bdp_cap_gain - 1) min RTTs."""
        last = self.last_result
        if not self.params.bdp_cap_standing_queue or last is None or last.rtt_min <= 0:
            return False
        return last.rtt_min - min_rtt > (self.params.bdp_cap_gain - 1) * min_rtt

    def delivery_rate(self) -> float:
        return self.last_result.delivery_rate if self.last_result is not None else 0.0

    def log_data(self) -> dict[str, Any]:
        return {"pacing_rate": int(self._mi_rate * 8), "pcc_state": self.state,
                **self._silence_verdicts()}

    def telemetry_sample(self, now: float) -> dict[str, Any]:
        return {**super().telemetry_sample(now), **self._silence_verdicts()}

    def _silence_verdicts(self) -> dict[str, Any]:
        """bdp_cap_hold_gain: the ACK silences judged so far (empty when off)."""
        if self.params.bdp_cap_hold_gain <= 0:
            return {}
        silences = self.ack_silences
        return {"ack_silences_held": silences.holds, "ack_silences_out": silences.outages,
                "ack_silence_hold_share": round(silences.hold_share, 3)}

    def on_packet_sent(self, now: float, packet: SentPacket) -> None:
        super().on_packet_sent(now, packet)
        sent_time = packet.sent_time if packet.sent_time is not None else now
        if self.params.bdp_cap_hold_gain > 0:
            self.ack_silences.on_sent(sent_time, self._hold_grace_s())
        self._flush_acks()
        # First settle an MI whose time ran out while the application was idle: its packets
        # may all be acked already, and it must not look overdue.
        self._advance(now)
        mi = self.queue.current
        if mi is None or sent_time >= mi.end_time:
            mi = self._start_mi(sent_time)
        room = self.bytes_in_flight + self.max_datagram_size <= self.congestion_window
        self.queue.on_sent(sent_time, packet.sent_bytes, window_room=room)

    def on_packet_acked(self, now: float, packet: SentPacket) -> None:
        super().on_packet_acked(now, packet)
        if self.silent_timeouts:
            self._on_feedback_after_silence(now)
        if self.params.bdp_cap_gain > 0:
            min_rtt = self.rtt_stats.min_rtt_or(0.0)
            silences = self.ack_silences
            # The growth matters only to an ACK that may end a silence: the first at `now`.
            growth_s = (self._hold_credit_s(self._hold_silence_start(), now)
                        if now != silences.last_ack_at else 0.0)
            silences.on_acked(now, packet.sent_time, min_rtt, growth_s=growth_s)
            self._receive.min_gap = min_rtt
            if self._receive.min_gap > 0:
                self._receive.aggregation_window = 10 * self._receive.min_gap
            self._receive.on_acked(now, packet.sent_bytes)
        if self._late and packet.sent_time is not None:
            self._late.on_acked(now, packet.sent_time, packet.sent_bytes)
        if not self.params.rtt_per_ack:
            if packet.sent_time is not None:
                self.queue.on_acked(now, packet.sent_time, packet.sent_bytes)
            self._on_feedback(now)
            return
        # aioquic reports every packet of an ACK frame, then the frame's RTT sample (when its
        # largest packet is newly acked): settle MIs after the sample, so an MI whose last
        # packet this frame acks still gets the frame's sample. A new ACK time means the
        # previous frame brought no sample; settle it now.
        if self._ack_pending_at is not None and now != self._ack_pending_at:
            self._flush_acks()
        if packet.sent_time is not None:
            self.queue.on_acked(now, packet.sent_time, packet.sent_bytes, rtt_sample=False)
        self._ack_pending_at = now

    def on_rtt_sample(self, now: float, latest_rtt: float) -> None:
        super().on_rtt_sample(now, latest_rtt)
        if self.params.bdp_cap_gain > 0:
            # The estimator removed the peer's ACK delay from `latest_rtt` (when plausible).
            delay = max(0.0, latest_rtt - self.rtt_stats.latest_rtt)
            self.ack_delay += 0.125 * (delay - self.ack_delay)
        if not self.params.rtt_per_ack:
            return
        # The sample belongs to the frame's largest packet, sent latest_rtt ago; its value is
        # the estimator's latest RTT, from which the recovery removed the peer's ACK delay.
        self.queue.add_rtt_sample(now - latest_rtt, self.rtt_stats.latest_rtt)
        self._ack_pending_at = None
        last = self._last_rtt_sample_at
        self._last_rtt_sample_at = now
        # Gaps longer than an RTT are the application idling, not the receiver's ACK pace.
        if last is not None and 0 < now - last < self.rtt_stats.srtt_or_initial():
            gap = now - last
            self.ack_interval = gap if self.ack_interval == 0 else (
                0.875 * self.ack_interval + 0.125 * gap)
        self._on_feedback(now)

    def _flush_acks(self) -> None:
        at = self._ack_pending_at
        if at is not None:
            self._ack_pending_at = None
            self._on_feedback(at)

    def _on_feedback(self, now: float) -> None:
        """New ACK information has been recorded: settle MIs (algorithms may look earlier)."""
        self._advance(now)

    def _on_feedback_after_silence(self, now: float) -> None:
        timeouts, self.silent_timeouts = self.silent_timeouts, 0
        state = self.state
        verdict = self.on_path_returned(now, timeouts, self._rate_before_silence)
        if verdict is None:
            return
        self.outages += 1
        self.queue.close_current(now)  # the MI sending now was planned at the collapsed rate
        self.pacing_version += 1
        self._emit(now, {
            "target_rate_bps": self._rate_before_silence * 8, "send_rate_bps": 0.0,
            "delivery_rate_bps": 0.0, "rtt_ms": 0.0, "rtt_min_ms": 0.0, "rtt_gradient_raw": 0.0,
            "rtt_gradient": 0.0, "loss": 0.0, "utility": None,
        }, verdict, state)

    def on_packets_lost(self, now: float, packets: Sequence[SentPacket]) -> None:
        super().on_packets_lost(now, packets)
        self._flush_acks()
        for packet in packets:
            if packet.sent_time is not None:
                self.queue.on_lost(packet.sent_time, packet.sent_bytes)
                if self._late:
                    self._late.on_lost(packet.sent_time, packet.sent_bytes)
        self._advance(now)

    def on_packets_expired(self, packets: Sequence[SentPacket]) -> None:
        # Expired packets (PTO retransmission, key discard) are resolved without telling
        # anything about congestion: they leave the MI neither delivered nor lost.
        super().on_packets_expired(packets)
        for packet in packets:
            if packet.sent_time is not None:
                self.queue.on_expired(packet.sent_time)
                if self._late:
                    self._late.on_expired(packet.sent_time)

    # -- internals -------------------------------------------------------------------------

    def _start_mi(self, now: float) -> MonitorInterval:
        if not self._started:
            self._started = True
            self._apply_initial_window()
        rate, tag = self.plan_next_mi(now)
        rate = self.clamp(rate)
        srtt = self.rtt_stats.srtt_or_initial()
        duration = self.mi_duration(rate)
        if rate != self._mi_rate:
            self._mi_rate = rate
            self.pacing_version += 1
        return self.queue.start(now=now, target_rate=rate, duration=duration, tag=tag,
                                rtt=srtt)

    def mi_duration(self, rate: float) -> float:
        """How long an MI planned now at `rate` (bytes/s) sends."""
        p = self.params
        srtt = self.rtt_stats.srtt_or_initial()
        mi_rtts = p.ss_mi_rtts if self.state == "starting" else p.mi_rtts
        duration = max(mi_rtts * srtt, p.min_mi_packets * self.max_datagram_size / rate)
        # Slow start ignores small gradients anyway and must not double more slowly.
        if p.rtt_per_ack and p.min_mi_acks > 0 and self.state != "starting":
            duration = max(duration, p.min_mi_acks * self.ack_interval)
        return duration

    def initial_window_rate(self) -> float:
        """initial_window_packets per smoothed RTT, bytes/s (0: off or no RTT sample)."""
        packets = self.params.initial_window_packets
        if packets <= 0 or not self.rtt_stats.has_sample:
            return 0.0
        return packets * self.max_datagram_size / self.rtt_stats.smoothed_rtt

    def _apply_initial_window(self) -> None:
        window_rate = self.initial_window_rate()
        if window_rate > 0:
            self.rate = self.clamp(max(self.rate, window_rate))

    def _advance(self, now: float) -> None:
        current = self.queue.current
        # Close an MI whose time is up even if nothing more is sent (idle application),
        # so its result is not held back until the next send.
        if current is not None and now >= current.end_time:
            self.queue.close_current(now)
        if self.queue.has_finished():
            for mi in self.queue.pop_finished():
                self._finish(now, mi)
            self._timeout_check_at = 0.0  # the oldest MI changed
        if self._late:
            self._check_undo(now)
        self._check_timeout(now)

    def _finish(self, now: float, mi: MonitorInterval) -> None:
        p = self.params
        result = mi.result(now=now, min_packets=p.min_mi_packets,
                           app_limited_ratio=p.app_limited_ratio,
                           max_send_ratio=p.max_send_ratio, path_step=p.path_step_ms / 1000)
        if p.path_step_ms > 0:
            result = self._path_steps_into(mi, result)
        self.mis_finished += 1
        if result.packets_sent and mi.packets_acked:
            self.last_result = result
        utility, gradient = self.mi_utility(result)
        tag = result.tag
        state = self.state  # report the state the MI was judged in
        verdict = self.on_overload(now, result)
        if verdict is None:
            if not isinstance(tag, MiTag) or tag.epoch != self.epoch:
                verdict = Verdict("stale")
            else:
                verdict = self.on_mi_finished(now, result, utility)
        current = self.queue.current
        if verdict.decision != "stale" and current is not None and isinstance(
                current.tag, MiTag) and (
                current.tag.epoch != self.epoch
                or (verdict.decision == "double" and p.ss_double_now)):
            # A decision made the MI in progress stale (or, in slow start, one more MI at the
            # rate just outgrown): cut it short so the new rate takes effect with the next
            # packet instead of after the MI's full length.
            self.queue.close_current(now)
        self._emit_mi(now, result, utility, gradient, verdict, state)

    def _check_timeout(self, now: float) -> None:
        if now < self._timeout_check_at or self.params.mi_timeout_rtts == 0:
            return
        mi = self.queue.oldest
        if mi is None:
            return
        # Deadlines count RTTs as they were when the MI started: when a capacity drop fills a
        # deep buffer, the current srtt grows as fast as the delay and a deadline in current
        # RTTs would never arrive. An MI is late when its first feedback has not arrived
        # that long after it started, or its last that long after its last send.
        timeout = max(self.params.mi_timeout_rtts * mi.rtt_at_start,
                      self.params.mi_timeout_min_ms / 1000)
        deadlines = []
        if mi.packets_acked + mi.packets_lost == 0:
            deadlines.append(mi.start_time + timeout)
        still_sending = not mi.sending_done and now < mi.end_time
        if not still_sending:
            deadlines.append(mi.last_sent + timeout)
        if all(now <= d for d in deadlines):
            # Nothing is late before the earliest deadline (or the end of sending, when a
            # new deadline starts to apply).
            self._timeout_check_at = min(deadlines + ([mi.end_time] if still_sending else []))
            return
        # Every MI in the queue was sent at rates chosen before the change: drop them all
        # from the decisions, but (timeout_undo) keep following how they arrive.
        late = self.queue.take_all(now)
        self._late = MonitorIntervalQueue()
        if self.params.timeout_undo:
            self._late.adopt(late)
            self._undo_rate = max(self.rate, self._mi_rate)
            self._undo_deadline = now + 2 * timeout
        self._timeout_check_at = 0.0
        self.timeouts += 1
        if self.silent_timeouts == 0:
            self._rate_before_silence = max(self.rate, self._mi_rate)
        self.silent_timeouts += 1
        state = self.state
        verdict = self.on_mi_timeout(now)
        self.pacing_version += 1
        self._mi_rate = min(self._mi_rate, self.rate)
        self._emit(now, {
            "target_rate_bps": mi.target_rate * 8, "send_rate_bps": 0.0,
            "delivery_rate_bps": 0.0, "rtt_ms": 0.0, "rtt_min_ms": 0.0, "rtt_gradient_raw": 0.0,
            "rtt_gradient": 0.0, "loss": 0.0, "utility": None,
        }, verdict, state)

    def _path_steps_into(self, mi: MonitorInterval, result: MiResult) -> MiResult:
        """path_step_ms: look for path steps in `mi`'s RTT samples and the last ones of the MI
        before it (a step between two MIs, or too near either end of one for its own test,
        is in neither MI's fit), report a net step up to `on_path_step` and return `result`
        with the smallest RTT after the last step."""
        rtts = mi.ordered_rtts()
        if not rtts:
            return result
        tail, self._rtt_tail = self._rtt_tail, (self._rtt_tail + rtts)[-PATH_STEP_TAIL:]
        joined = tail + rtts
        steps = path_steps(joined, self.params.path_step_ms / 1000)
        if not steps:
            return result
        floor = min(joined[max(steps[-1][0], len(tail)):])
        net = sum(size for _, size in steps)
        if net > 0:
            self.on_path_step(net, floor)
        return dataclasses.replace(result, rtt_path_floor=floor)

    def on_path_step(self, rise: float, floor: float) -> None:
        """path_step_ms: the path's RTT stepped up by `rise` seconds to `floor` (the smallest
        RTT sample since); every finished MI reports, decided or stale."""

    def _check_undo(self, now: float) -> None:
        """Decide on the MIs of the last timeout once all their packets are accounted for."""
        if not self._late.all_complete():
            if now > self._undo_deadline:
                self._late = MonitorIntervalQueue()  # too late to tell: the timeout stands
            return
        p = self.params
        results = [mi.result(now=now, min_packets=p.min_mi_packets,
                             app_limited_ratio=p.app_limited_ratio,
                             path_step=p.path_step_ms / 1000) for mi in self._late]
        self._late = MonitorIntervalQueue()
        measured = [r for r in results if r.packets_sent >= p.min_mi_packets and r.useful]
        sent = sum(r.packets_sent for r in results)
        lost = sum(r.loss * r.packets_sent for r in results)
        if not measured or sent <= 0 or lost / sent > SPURIOUS_TIMEOUT_MAX_LOSS:
            return
        # An MI whose ACKs straddle the moment the path grew shows that gap as a low
        # delivery rate; any MI delivered at its send rate shows the bottleneck kept up.
        kept_up = [r for r in measured
                   if r.delivery_rate >= SPURIOUS_TIMEOUT_DELIVERY * r.send_rate]
        if not kept_up:
            return  # delivered slower than sent: the capacity fell, the timeout stands
        best = max(kept_up, key=lambda r: r.delivery_rate)
        restore = min(self._undo_rate, best.delivery_rate)
        if restore <= self.rate:
            return
        self.timeouts_undone += 1
        state = self.state
        verdict = self.on_timeout_undone(now, self.clamp(restore))
        self.queue.close_current(now)  # the MI sending now was planned at the lower rate
        self._emit_mi(now, best, 0.0, 0.0, verdict, state)

    def _emit_mi(self, now: float, r: MiResult, utility: float, gradient: float,
                 verdict: Verdict, state: str) -> None:
        fields: dict[str, Any] = {
            "target_rate_bps": r.target_rate * 8,
            "send_rate_bps": r.send_rate * 8,
            "delivery_rate_bps": r.delivery_rate * 8,
            "rtt_ms": r.rtt_mean * 1000,
            "rtt_min_ms": r.rtt_min * 1000,
            "rtt_gradient_raw": r.rtt_gradient,
            "rtt_gradient": gradient,
            "rtt_gradient_minima": r.rtt_gradient_minima,
            "rtt_samples": r.rtt_samples,
            "rtt_residual_autocorr": r.rtt_residual_autocorr,
            "rtt_gradient_stderr": (r.rtt_gradient_stderr
                                    if math.isfinite(r.rtt_gradient_stderr) else None),
            "loss": r.loss,
            "utility": utility,
            "send_fill": r.send_fill,
        }
        if self.params.path_step_ms > 0:
            fields["rtt_path_step_ms"] = r.rtt_path_step * 1000
        self._emit(now, fields, verdict, state)

    def _emit(self, now: float, fields: dict[str, Any], verdict: Verdict,
              state: str | None = None) -> None:
        if self.event_sink is None:
            return
        t0 = self.t0 if self.t0 is not None else now
        event: dict[str, Any] = {"type": "mi", "t_ms": (now - t0) * 1000}
        event.update(fields)
        event.update({"state": state or self.state, "decision": verdict.decision,
                      "step_bps": verdict.step * 8})
        self.emit(event)


# The ACK-burst test needs a delivery rate measured over at least two gaps between frames.
MIN_BURST_ACK_FRAMES = 3
# SlowStart.on_result actions that keep the rate and report why (decision `hold:<action>`).
SLOW_START_HOLDS = ("pipe-growing", "ack-burst", "app-idle", "no-queue")
# A latency-only drop without a standing queue is held at most this many times in a row: a
# rate past capacity builds one within an MI or two, so more holds would only overshoot.
MAX_NO_QUEUE_HOLDS = 2


class SlowStart:
    """The starting state shared by Vivace and Allegro: double until utility first falls.

    Doubling is driven by results: the base rate doubles when the MI sent at the current
    base rate reports a higher utility than every lower rate, so at most one untested
    doubling is in flight and the overshoot past capacity is a single doubling.
    Results of lower rates than the best so far carry no new information and are ignored.
    """

    def __init__(self, full_pipe_growth: float = 0.0, *, max_delivery_ratio: float = 0.0,
                 min_send_fill: float = 0.0, min_delivery_ratio: float = 0.0,
                 exit_on_congested_hold: bool = False) -> None:
        self.full_pipe_growth = full_pipe_growth
        self.exit_on_congested_hold = exit_on_congested_hold
        self.max_delivery_ratio = max_delivery_ratio
        self.min_delivery_ratio = min_delivery_ratio
        self.min_send_fill = min_send_fill
        self.best_rate = 0.0
        self.best_utility = float("-inf")
        self.best_delivery = 0.0  # bytes/s
        self.no_queue_holds = 0

    @classmethod
    def from_params(cls, p: PccParams, *, full_pipe: bool = True,
                    exit_on_congested_hold: bool = False) -> SlowStart:
        return cls(p.ss_full_pipe_growth if full_pipe else 0.0,
                   max_delivery_ratio=p.ss_max_delivery_ratio,
                   min_send_fill=p.ss_min_send_fill,
                   min_delivery_ratio=p.ss_min_delivery_ratio,
                   exit_on_congested_hold=exit_on_congested_hold)

    def on_result(self, rate: float, utility: float, base_rate: float, *,
                  delivery: float = 0.0, send: float = 0.0, ack_frames: int = 0,
                  latency_only: bool = False, send_fill: float = 1.0,
                  congested: bool = False, standing_queue: bool = True) -> str:
        """'double', 'hold', 'pipe-growing', 'ack-burst', 'app-idle' or 'no-queue' (all hold), or
        'exit' (then continue from `best_rate`) or 'exit-hold' (from below it).

        `latency_only`: the utility fell through its latency term alone. Such a drop ends slow
        start only once the pipe is full: an MI still delivered `full_pipe_growth` times
        faster than the best so far shows the link had room, so the RTT rise came from the
        host or the path, not a standing queue (cf. BBR's full-pipe test).
        `send`: the MI's actual send rate; `ack_frames`: the ACK frames that acked it. An MI
        acked by n frames measures its delivery over n - 1 gaps, n/(n - 1) too fast, which
        the ACK-burst test takes out; with fewer than 3 frames it cannot tell and is skipped.
        `send_fill`: the share of the MI's length it was sending. An MI that would double
        but was left idle by the application is held and does not become the best: the
        next MI at its rate is judged again. With `min_delivery_ratio`, an MI at a new rate
        that was sending and delivered under that share of its send rate ends slow start
        whatever its utility says. `congested`: the MI's loss or RTT gradient counts in
        slow start; with `exit_on_congested_hold`, such an MI at the best rate that scored
        lower ends slow start ('exit-hold': the best rate itself overflowed).
        `standing_queue`: the MI's RTT stood above the path's minimum by the caller's
        threshold; a latency-only drop without it is held ('no-queue') and measured again,
        up to MAX_NO_QUEUE_HOLDS times in a row.
        """
        if (send > 0 and self.max_delivery_ratio > 0 and ack_frames >= MIN_BURST_ACK_FRAMES
                and delivery * (ack_frames - 1) / ack_frames > self.max_delivery_ratio * send):
            return "ack-burst"
        if rate <= self.best_rate:
            if (self.exit_on_congested_hold and congested and rate >= self.best_rate
                    and utility < self.best_utility):
                return "exit-hold"
            return "hold"
        if (self.min_delivery_ratio > 0 and send > 0 and send_fill >= self.min_send_fill
                and ack_frames >= MIN_BURST_ACK_FRAMES
                and delivery < self.min_delivery_ratio * send):
            return "exit"
        if utility > self.best_utility:
            if rate >= base_rate and send_fill < self.min_send_fill:
                return "app-idle"
            self.best_rate, self.best_utility = rate, utility
            self.best_delivery = max(self.best_delivery, delivery)
            self.no_queue_holds = 0
            return "double" if rate >= base_rate else "hold"
        if latency_only and not standing_queue and self.no_queue_holds < MAX_NO_QUEUE_HOLDS:
            self.no_queue_holds += 1
            return "no-queue"
        growth = self.full_pipe_growth
        if (latency_only and growth > 0 and self.best_delivery > 0
                and delivery >= growth * self.best_delivery):
            self.best_delivery = delivery
            return "pipe-growing"
        return "exit"
