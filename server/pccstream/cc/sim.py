"""A small discrete-event model of one bottleneck link, to drive controllers in tests.

Model: each flow's sender sits at the bottleneck's ingress. A packet is dropped at random
with probability `loss`, or tail-dropped when the FIFO queue (bytes) is full; otherwise it
leaves the bottleneck after queueing plus serialization at the link rate, and its ACK is
back at the sender `base_rtt` later (one ACK per packet, no ACK delay). The sender applies
the controller's window and pacing like aioquic (rate = pacing_rate, or cwnd/srtt for
window-based controllers), detects loss like RFC 9002 (3 packets or 9/8 RTT), and fires a
simple PTO that expires the oldest packet and sends a probe when ACKs stop.

Optional, for the effects of a real host (all off by default): a receiver that acknowledges
every `ack_every` packets or `max_ack_delay` after the first unacknowledged one, reporting
its ACK delay as QUIC does; host stalls (`Receiver.stall_rate` per second, each
`stall_s` long) during which arriving packets wait unread, so their RTT grows by up to a
stall and no ACK delay accounts for it (a busy browser or server on a shared CPU); and a
path whose base RTT steps at given times (`Link.rtt_schedule`, the thesis's RTT redrawn every
5 s), never reordering packets; and a bottleneck that serves a mahimahi delivery schedule
(`Link.trace`, a cellular recording) instead of a constant rate: each opportunity carries
1504 bytes, a packet may span opportunities and leave the rest of one to the packet queued
behind it, and an opportunity with nothing queued is wasted, as in mahimahi's LinkQueue.
The return path is unshaped unless `Link.up_trace` is set: then every ACK frame (one
`ACK_FRAME_BYTES` packet) waits for the uplink's next delivery opportunity, as mahimahi's
uplink queue holds it, so an uplink outage holds every ACK and releases them in a burst.
`Link.outages` loses every packet entering the bottleneck and every ACK frame sent during
them; the receiver acknowledges the packets of a lost frame again in its next one (QUIC's
ACK ranges). `Simulator(pacing_quantum=n)` paces like `pacing.ControllerPacer` with its
wake quantum: once out of credit the sender sleeps until n packets' worth has accrued and
sends them back to back.

Time is virtual and every random draw comes from seeded generators: runs are exactly
reproducible. All figures it produces are simulation figures, not measurements.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..stats import percentile95_mahimahi, signal_delays
from .base import Controller

K_PACKET_THRESHOLD = 3
K_TIME_THRESHOLD = 9 / 8


@dataclass(slots=True)
class SimPacket:
    packet_number: int
    sent_time: float | None
    sent_bytes: int
    flow: int
    # When it left the bottleneck (the receiver's view of the link, for measurements
    # against what ACKs reveal); None until enqueued, and for packets the link dropped.
    delivered_time: float | None = None


@dataclass
class Link:
    rate_mbps: float
    base_rtt: float
    queue_bytes: int
    loss: float = 0.0
    # Step changes of capacity: (time, rate_mbps), applied to packets enqueued after `time`.
    schedule: list[tuple[float, float]] = field(default_factory=list)
    # Step changes of the base RTT: (time, seconds), for packets leaving after `time`.
    rtt_schedule: list[tuple[float, float]] = field(default_factory=list)
    # A looping delivery schedule (replaces `rate_mbps` for the bottleneck when set).
    trace: TraceSchedule | None = None
    # The return path's delivery schedule (None: ACKs are never held).
    up_trace: TraceSchedule | None = None
    # Outages [start, end): every packet both ways is lost (the emulator's `outage-2s`).
    outages: list[tuple[float, float]] = field(default_factory=list)

    def in_outage(self, now: float) -> bool:
        return any(start <= now < end for start, end in self.outages)

    def rate_at(self, now: float) -> float:
        rate = self.rate_mbps
        for t, r in self.schedule:
            if now >= t:
                rate = r
        return rate

    def rtt_at(self, now: float) -> float:
        rtt = self.base_rtt
        for t, r in self.rtt_schedule:
            if now >= t:
                rtt = r
        return rtt


TRACE_OPPORTUNITY_BYTES = 1504  # mahimahi's PACKET_SIZE
ACK_FRAME_BYTES = 60  # a QUIC packet carrying one ACK frame, on the shaped return path


@dataclass(frozen=True)
class TraceSchedule:
    """A mahimahi trace as (millisecond, opportunities at that millisecond), looping with
    period `times_ms[-1]` (parse files with pccstream.emulator.trace.load_trace)."""

    times_ms: tuple[int, ...]
    counts: tuple[int, ...]

    @property
    def period_s(self) -> float:
        return self.times_ms[-1] / 1000

    def average_mbps(self) -> float:
        return sum(self.counts) * TRACE_OPPORTUNITY_BYTES * 8 / self.period_s / 1e6


class _TraceCursor:
    """Walks a TraceSchedule's opportunities in time order, skipping idle loops whole."""

    def __init__(self, trace: TraceSchedule) -> None:
        self.trace = trace
        self._idx = 0
        self._base_ms = 0
        self.time = trace.times_ms[0] / 1000  # the current opportunity
        self.budget = trace.counts[0] * TRACE_OPPORTUNITY_BYTES  # bytes it has left

    def step(self) -> None:
        times = self.trace.times_ms
        self._idx += 1
        if self._idx == len(times):
            self._idx = 0
            self._base_ms += times[-1]
        self.time = (self._base_ms + times[self._idx]) / 1000
        self.budget = self.trace.counts[self._idx] * TRACE_OPPORTUNITY_BYTES

    def first_after(self, t: float) -> None:
        """Move to the first opportunity strictly after `t` (earlier ones went unused)."""
        period_ms = self.trace.times_ms[-1]
        if t - self.time > period_ms / 1000:
            loops = int((t - self.time) * 1000 // period_ms) - 1
            if loops > 0:
                self._base_ms += loops * period_ms
                self.time += loops * period_ms / 1000
        while self.time <= t:
            self.step()

    def serve(self, size: int) -> float:
        """Carry `size` bytes from the current opportunity on; returns when the last byte
        leaves. The current opportunity's rest stays for the next packet."""
        while size > self.budget:
            size -= self.budget
            self.step()
        self.budget -= size
        return self.time


@dataclass(frozen=True)
class Receiver:
    """How the far end acknowledges (defaults: every packet at once, as before)."""

    ack_every: int = 1
    max_ack_delay: float = 0.025
    stall_rate: float = 0.0  # host stalls per second (Poisson)
    stall_s: float = 0.0  # length of each stall


@dataclass
class FlowStats:
    delivered: list[tuple[float, int]] = field(default_factory=list)  # (ack time, bytes)
    rtts: list[tuple[float, float]] = field(default_factory=list)  # (ack time, rtt)
    queue_delays: list[tuple[float, float]] = field(default_factory=list)
    sent_packets: int = 0
    lost_packets: int = 0
    delivered_total: int = 0

    def delivered_bytes(self, t1: float, t2: float) -> int:
        return sum(b for t, b in self.delivered if t1 <= t < t2)

    def rtt_samples(self, t1: float, t2: float) -> list[float]:
        return [r for t, r in self.rtts if t1 <= t < t2]


class Flow:
    def __init__(self, index: int, controller: Controller, *, start: float, stop: float | None,
                 mss: int, app: Callable[[float], bool] | None) -> None:
        self.index = index
        self.controller = controller
        self.start = start
        self.stop = stop
        self.mss = mss
        self.app = app  # None: always has data; else says whether data is ready at `now`
        self.next_pn = 0
        self.outstanding: OrderedDict[int, SimPacket] = OrderedDict()
        self.bytes_in_flight = 0
        self.largest_acked = -1
        self.next_send_at = 0.0
        self.send_pending: float | None = None
        self.last_progress = 0.0
        self.pto_count = 0
        self.probe_allowed = False
        self.stats = FlowStats()
        # Receiver: packets read but not yet acknowledged, with their read times, and
        # whether an ACK frame was lost since (the next packet is then acknowledged at once).
        self.unacked: list[tuple[SimPacket, float]] = []
        self.ack_lost = False
        self.last_arrival = 0.0
        controller.bind(max_datagram_size=mss, now=start)


class Simulator:
    def __init__(self, link: Link, *, seed: int = 0, tick: float = 0.005,
                 receiver: Receiver | None = None, pacing_quantum: int = 1) -> None:
        self.link = link
        self.pacing_quantum = max(1, pacing_quantum)
        self.receiver = receiver or Receiver()
        self.rng = random.Random(seed)
        # Host stalls draw from their own generator, so switching them on does not shift
        # the link's loss draws.
        self._stall_rng = random.Random(seed + 7919)
        self._stall = (0.0, 0.0)  # the latest stall drawn: [start, end)
        self._next_stall = self._draw_stall(0.0)
        self.now = 0.0
        self.flows: list[Flow] = []
        self._events: list[tuple[float, int, str, int, SimPacket | None]] = []
        self._seq = itertools.count()
        self._link_free_at = 0.0
        self._tick = tick
        self._trace = _TraceCursor(link.trace) if link.trace is not None else None
        self._trace_queue: deque[tuple[float, int]] = deque()  # (departure, bytes) in order
        self._trace_queued_bytes = 0
        self._up = _TraceCursor(link.up_trace) if link.up_trace is not None else None
        self._up_free_at = 0.0
        # ACK frames held by the uplink, by event sequence number: (frame, ACK delay).
        self._held_acks: dict[int, tuple[list[tuple[SimPacket, float]], float]] = {}

    def add_flow(self, controller: Controller, *, start: float = 0.0, stop: float | None = None,
                 mss: int = 1200, app: Callable[[float], bool] | None = None) -> Flow:
        flow = Flow(len(self.flows), controller, start=start, stop=stop, mss=mss, app=app)
        controller.clock = lambda: self.now
        self.flows.append(flow)
        self._schedule(start, "send", flow.index)
        self._schedule(start + self._tick, "tick", flow.index)
        return flow

    def run(self, until: float) -> None:
        while self._events and self._events[0][0] <= until:
            t, seq, kind, fi, packet = heapq.heappop(self._events)
            self.now = t
            flow = self.flows[fi]
            if kind == "send":
                if flow.send_pending is not None and flow.send_pending <= t:
                    flow.send_pending = None
                self._try_send(flow)
            elif kind == "ack":
                assert packet is not None
                self._on_arrival(flow, packet)
            elif kind == "ack-timer":
                if flow.unacked and t >= flow.unacked[0][1] + self.receiver.max_ack_delay - 1e-12:
                    self._ack_frame(flow)
            elif kind == "ack-frame":
                self._process_ack_frame(flow, *self._held_acks.pop(seq))
            elif kind == "tick":
                self._on_tick(flow)
                self._schedule(t + self._tick, "tick", fi)
        self.now = until

    # -- sender --------------------------------------------------------------------------

    def _schedule(self, t: float, kind: str, fi: int, packet: SimPacket | None = None) -> None:
        heapq.heappush(self._events, (t, next(self._seq), kind, fi, packet))

    def _pacing_interval(self, flow: Flow) -> float:
        ctrl = flow.controller
        rate = ctrl.pacing_rate
        if rate is None:
            srtt = ctrl.rtt_stats.smoothed_rtt
            if srtt <= 0:
                return 0.0  # like aioquic: no pacing before the first RTT sample
            rate = ctrl.congestion_window / srtt
        return flow.mss / rate if rate > 0 else 0.0

    def _try_send(self, flow: Flow) -> None:
        now = self.now
        if now < flow.start or (flow.stop is not None and now >= flow.stop):
            return
        ctrl = flow.controller
        while True:
            if flow.app is not None and not flow.app(now):
                # Poll the application again shortly (models a player fetching segments).
                self._wake(flow, now + 0.01)
                return
            probe = flow.probe_allowed
            if not probe and flow.bytes_in_flight + flow.mss > ctrl.congestion_window:
                opens = ctrl.window_opens_at()
                if opens is not None:
                    self._wake(flow, opens)
                return  # otherwise an ACK or loss will call us again
            interval = self._pacing_interval(flow)
            quantum = self.pacing_quantum
            if not probe and now < flow.next_send_at - 1e-12:
                self._wake(flow, flow.next_send_at + (quantum - 1) * interval)
                return
            flow.probe_allowed = False
            # Allow at most one wake quantum of catch-up so pacing cannot drift behind.
            flow.next_send_at = max(flow.next_send_at, now - quantum * interval) + interval
            self._send_one(flow)

    def _wake(self, flow: Flow, t: float) -> None:
        if flow.send_pending is None or t < flow.send_pending:
            flow.send_pending = t
            self._schedule(t, "send", flow.index)

    def _send_one(self, flow: Flow) -> None:
        now = self.now
        packet = SimPacket(flow.next_pn, now, flow.mss, flow.index)
        flow.next_pn += 1
        flow.outstanding[packet.packet_number] = packet
        flow.bytes_in_flight += packet.sent_bytes
        flow.stats.sent_packets += 1
        if not flow.outstanding or len(flow.outstanding) == 1:
            flow.last_progress = now
        flow.controller.on_packet_sent(now, packet)
        self._enqueue(flow, packet)

    # -- bottleneck ----------------------------------------------------------------------

    def _enqueue(self, flow: Flow, packet: SimPacket) -> None:
        now = self.now
        link = self.link
        if link.loss > 0 and self.rng.random() < link.loss:
            return  # random loss: never acked
        if link.outages and link.in_outage(now):
            return
        if self._trace is not None:
            depart = self._trace_depart(packet)
            if depart is None:
                return  # tail drop
        else:
            rate_bytes = link.rate_at(now) * 1e6 / 8
            backlog = max(0.0, self._link_free_at - now) * rate_bytes
            if backlog + packet.sent_bytes > link.queue_bytes + 1e-9:
                return  # tail drop
            flow.stats.queue_delays.append((now, max(0.0, self._link_free_at - now)))
            depart = max(now, self._link_free_at) + packet.sent_bytes / rate_bytes
        self._link_free_at = depart
        packet.delivered_time = depart
        arrival = depart + (link.rtt_at(depart) if link.rtt_schedule else link.base_rtt)
        if link.rtt_schedule:
            arrival = max(arrival, flow.last_arrival)  # a shorter path never reorders
            flow.last_arrival = arrival
        self._schedule(self._after_stalls(arrival), "ack", flow.index, packet)

    def _trace_depart(self, packet: SimPacket) -> float | None:
        """When `packet`, arriving now, leaves a trace-driven bottleneck (None: tail drop)."""
        assert self._trace is not None
        now = self.now
        queued = self._trace_queue
        while queued and queued[0][0] <= now:
            self._trace_queued_bytes -= queued.popleft()[1]
        if self._trace_queued_bytes + packet.sent_bytes > self.link.queue_bytes + 1e-9:
            return None
        flow = self.flows[packet.flow]
        if self._link_free_at <= now:
            self._trace.first_after(now)  # an empty queue wastes the opportunities until now
        elif self._trace.budget == 0:
            self._trace.step()
        depart = self._trace.serve(packet.sent_bytes)
        flow.stats.queue_delays.append((now, depart - now))
        queued.append((depart, packet.sent_bytes))
        self._trace_queued_bytes += packet.sent_bytes
        return depart

    # -- receiver and host -----------------------------------------------------------------

    def _draw_stall(self, after: float) -> float:
        rate = self.receiver.stall_rate
        return after + self._stall_rng.expovariate(rate) if rate > 0 else float("inf")

    def _after_stalls(self, t: float) -> float:
        """When a packet arriving at `t` is read: at the end of a host stall covering `t`."""
        while self._next_stall <= t:
            self._stall = (self._next_stall, self._next_stall + self.receiver.stall_s)
            self._next_stall = self._draw_stall(self._stall[1])
        start, end = self._stall
        return end if start <= t < end else t

    def _on_arrival(self, flow: Flow, packet: SimPacket) -> None:
        rx = self.receiver
        flow.unacked.append((packet, self.now))
        if len(flow.unacked) >= rx.ack_every or flow.ack_lost:
            self._ack_frame(flow)
        elif len(flow.unacked) == 1:
            self._schedule(self.now + rx.max_ack_delay, "ack-timer", flow.index)

    # -- ACKs, loss detection, PTO ---------------------------------------------------------

    def _ack_frame(self, flow: Flow) -> None:
        """The sender processes one ACK frame for every packet the receiver has read."""
        now = self.now
        if self.link.outages and self.link.in_outage(now):
            flow.ack_lost = True  # lost on the way back: the next frame acknowledges these
            return
        flow.ack_lost = False
        frame, flow.unacked = flow.unacked, []
        ack_delay = now - frame[-1][1]
        if self._up is not None:
            arrival = self._uplink_depart(ACK_FRAME_BYTES)
            if arrival > now:
                seq = next(self._seq)
                self._held_acks[seq] = (frame, ack_delay)
                heapq.heappush(self._events, (arrival, seq, "ack-frame", flow.index, None))
                return
        self._process_ack_frame(flow, frame, ack_delay)

    def _uplink_depart(self, size: int) -> float:
        """When an ACK frame sent now leaves the shaped return path (FIFO, no drops)."""
        assert self._up is not None
        now = self.now
        if self._up_free_at <= now:
            self._up.first_after(now - 1e-9)  # an idle uplink wastes its opportunities
        elif self._up.budget == 0:
            self._up.step()
        self._up_free_at = max(now, self._up.serve(size))
        return self._up_free_at

    def _process_ack_frame(self, flow: Flow, frame: list[tuple[SimPacket, float]],
                           ack_delay: float) -> None:
        now = self.now
        ctrl = flow.controller
        acked = [p for p, _ in frame if flow.outstanding.pop(p.packet_number, None) is not None]
        if not acked:
            return  # already declared lost or expired
        flow.last_progress = now
        flow.pto_count = 0
        for packet in acked:
            assert packet.sent_time is not None
            flow.bytes_in_flight -= packet.sent_bytes
            ctrl.on_packet_acked(now, packet)
            flow.stats.delivered.append((now, packet.sent_bytes))
            flow.stats.delivered_total += packet.sent_bytes
            flow.stats.rtts.append((now, now - packet.sent_time - ack_delay))
        largest = acked[-1]
        assert largest.sent_time is not None
        if largest.packet_number > flow.largest_acked:
            flow.largest_acked = largest.packet_number
            rtt = now - largest.sent_time
            ctrl.rtt_stats.update(rtt, ack_delay)
            ctrl.on_rtt_sample(now, rtt)
        self._detect_loss(flow)
        self._try_send(flow)

    def _detect_loss(self, flow: Flow) -> None:
        now = self.now
        ctrl = flow.controller
        stats = ctrl.rtt_stats
        loss_delay = K_TIME_THRESHOLD * max(stats.latest_rtt, stats.srtt_or_initial())
        lost: list[SimPacket] = []
        for pn, packet in flow.outstanding.items():
            if pn >= flow.largest_acked:
                break
            assert packet.sent_time is not None
            if (pn <= flow.largest_acked - K_PACKET_THRESHOLD
                    or packet.sent_time <= now - loss_delay):
                lost.append(packet)
            else:
                break  # later packets were sent later: not lost either
        if lost:
            for packet in lost:
                del flow.outstanding[packet.packet_number]
                flow.bytes_in_flight -= packet.sent_bytes
            flow.stats.lost_packets += len(lost)
            ctrl.on_packets_lost(now, lost)

    def _on_tick(self, flow: Flow) -> None:
        now = self.now
        self._detect_loss(flow)
        stats = flow.controller.rtt_stats
        pto = (stats.srtt_or_initial() + max(4 * stats.rtt_variance, 0.001)) * 2**flow.pto_count
        if flow.outstanding and now - flow.last_progress > pto:
            # PTO: like aioquic, retransmit (expire) the oldest packet and send a probe.
            _, oldest = flow.outstanding.popitem(last=False)
            flow.bytes_in_flight -= oldest.sent_bytes
            flow.controller.on_packets_expired([oldest])
            flow.pto_count += 1
            flow.last_progress = now
            flow.probe_allowed = True
        self._try_send(flow)


# -- metrics -------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def jain_index(throughputs: list[float]) -> float:
    total = sum(throughputs)
    squares = sum(x * x for x in throughputs)
    return total * total / (len(throughputs) * squares) if squares > 0 else 0.0


class VideoPlayer:
    """A fixed-bitrate video viewer as the application of one flow (thesis Fig. 5.1).

    The server has data while a requested segment is not all sent; the player requests the
    next segment when the previous one arrived, while less than `buffer_s` of video is
    buffered ahead, and the request reaches the server one RTT later; playback starts with
    the first whole segment and stalls when the buffer runs dry (Puffer-style accounting,
    startup excluded from the ratio). With `prefetch` (the browser player's `prefetch=1`, on
    in its fixed-bitrate mode) every request carries the next segment's along, so the server
    always holds the next segment and the link does not idle a round trip per segment.
    A segment takes 1 / `payload_share` of its size in delivered packet bytes: the rest of
    each packet is headers (WIRE_PAYLOAD_SHARE).
    """

    def __init__(self, bitrate_mbps: float, *, segment_s: float = 2.0, buffer_s: float = 10.0,
                 request_rtt: float = 0.05, prefetch: bool = True,
                 payload_share: float = 1.0) -> None:
        self.segment_bytes = bitrate_mbps * 1e6 / 8 * segment_s / payload_share
        self.segment_s = segment_s
        self.buffer_s = buffer_s
        self.request_rtt = request_rtt
        self.prefetch = prefetch
        self.flow: Flow | None = None
        self.requested = 1  # segments requested so far
        self.ready_at = 0.0  # when the latest request reaches the server
        self.downloaded_s = 0.0
        self.startup_at: float | None = None
        self.played_s = 0.0
        self.stall_s = 0.0
        self._clock = 0.0

    def __call__(self, now: float) -> bool:
        flow = self.flow
        assert flow is not None, "attach the player to its flow"
        self._update(now)
        if now < self.ready_at:
            return False
        wanted = self.requested * self.segment_bytes
        return flow.stats.delivered_total + flow.bytes_in_flight < wanted

    def _update(self, now: float) -> None:
        flow = self.flow
        assert flow is not None
        done = int(flow.stats.delivered_total // self.segment_bytes)
        if done * self.segment_s > self.downloaded_s:
            self.downloaded_s = done * self.segment_s
            if self.startup_at is None:
                self.startup_at = now
        if self.startup_at is not None:
            elapsed = now - max(self._clock, self.startup_at)
            if elapsed > 0:
                ahead = self.downloaded_s - self.played_s
                played = min(elapsed, ahead)
                self.played_s += played
                self.stall_s += elapsed - played
        self._clock = now
        below_target = self.downloaded_s - self.played_s < self.buffer_s
        if done >= self.requested and below_target:
            self.requested += 1
            self.ready_at = now + self.request_rtt
        if self.prefetch and done >= self.requested - 1 and below_target:
            self.requested += 1  # already at the server when the one before it is sent

    @property
    def buffering_ratio(self) -> float:
        total = self.played_s + self.stall_s
        return self.stall_s / total if total > 0 else 0.0


class LiveSource:
    """A live encoder as the application of one flow: a frame every 1 / `fps` s and a
    keyframe `keyframe_ratio` times a delta frame's size every `gop_s`, averaging
    `bitrate_mbps`. The server has data while the frames captured so far are not all sent
    (the live path sends each frame as it is encoded, so the sender idles between frames)."""

    def __init__(self, bitrate_mbps: float, *, fps: float = 30.0, gop_s: float = 2.0,
                 keyframe_ratio: float = 8.0) -> None:
        frames = round(fps * gop_s)
        self.fps = fps
        self.frames_per_gop = frames
        self.delta_bytes = bitrate_mbps * 1e6 / 8 * gop_s / (frames - 1 + keyframe_ratio)
        self.keyframe_bytes = keyframe_ratio * self.delta_bytes
        self.flow: Flow | None = None

    def captured_bytes(self, now: float) -> float:
        frames = int(now * self.fps) + 1
        keyframes = -(-frames // self.frames_per_gop)
        return keyframes * self.keyframe_bytes + (frames - keyframes) * self.delta_bytes

    def __call__(self, now: float) -> bool:
        flow = self.flow
        assert flow is not None, "attach the source to its flow"
        return flow.stats.sent_packets * flow.mss < self.captured_bytes(now)


@dataclass
class LinkReport:
    utilization: float
    throughputs_mbps: list[float]
    jain: float
    p95_rtt_inflation_ms: float
    mean_queue_delay_ms: float
    loss_rate: float
    p95_queue_delay_ms: float = 0.0  # the bottleneck's, per packet entering it


def report(sim: Simulator, t1: float, t2: float) -> LinkReport:
    """Figures over [t1, t2) of a finished run."""
    duration = t2 - t1
    throughputs = [f.stats.delivered_bytes(t1, t2) * 8 / duration / 1e6 for f in sim.flows]
    capacity = (sim.link.trace.average_mbps() if sim.link.trace is not None
                else sim.link.rate_mbps)
    rtts = [r for f in sim.flows for r in f.stats.rtt_samples(t1, t2)]
    queue = [d for f in sim.flows for t, d in f.stats.queue_delays if t1 <= t < t2]
    sent = sum(f.stats.sent_packets for f in sim.flows)
    lost = sum(f.stats.lost_packets for f in sim.flows)
    return LinkReport(
        p95_queue_delay_ms=percentile(queue, 95) * 1000,
        utilization=sum(throughputs) / capacity,
        throughputs_mbps=throughputs,
        jain=jain_index(throughputs),
        p95_rtt_inflation_ms=max(0.0, percentile(rtts, 95) - sim.link.base_rtt) * 1000,
        mean_queue_delay_ms=(sum(queue) / len(queue) * 1000) if queue else 0.0,
        loss_rate=lost / sent if sent else 0.0,
    )


# -- the benchmark scenarios of the issue, on the link model (for docs and sanity checks) --


def scenario_single(name: str, *, loss: float = 0.0, seed: int = 1, duration: float = 30.0,
                    params: dict[str, str] | None = None, receiver: Receiver | None = None,
                    pacing_quantum: int = 1) -> LinkReport:
    """One flow on 12 Mbit/s, 30 ms, 45 KB queue; figures over the whole run."""
    from .registry import create_controller

    sim = Simulator(Link(12.0, 0.030, 45_000, loss=loss), seed=seed, receiver=receiver,
                    pacing_quantum=pacing_quantum)
    sim.add_flow(create_controller(name, params or {}, seed=seed))
    sim.run(duration)
    return report(sim, 0.0, duration)


def scenario_two_flows(name: str, *, seed: int = 1, params: dict[str, str] | None = None,
                       receiver: Receiver | None = None, pacing_quantum: int = 1
                       ) -> LinkReport:
    """Two flows (the second starting 0.5 s later) on the same link; last 20 s of 40 s."""
    from .registry import create_controller

    sim = Simulator(Link(12.0, 0.030, 45_000), seed=seed, receiver=receiver,
                    pacing_quantum=pacing_quantum)
    for i in range(2):
        sim.add_flow(create_controller(name, params or {}, seed=seed * 10 + i), start=0.5 * i)
    sim.run(40.0)
    return report(sim, 20.0, 40.0)


@dataclass
class OutageReport:
    rate_before_mbps: float
    recovery_s: float | None  # from the link's return to 80 % of the rate before
    rate_after_mbps: list[tuple[float, float]]  # (s since the return, Mbit/s), every 0.5 s


def scenario_outage(name: str, *, seed: int = 1, outage_at: float = 6.0, outage_s: float = 2.0,
                    watch_s: float = 8.0, params: dict[str, str] | None = None,
                    receiver: Receiver | None = None) -> OutageReport:
    """`bench soak`'s outage on the link model: one bulk flow on 12 Mbit/s, 30 ms, 45 KB;
    every packet both ways lost for `outage_s` from `outage_at`. Rates over 0.5 s windows
    every 0.1 s, as the soak measures them: the rate before is the median window from 2 s to
    the outage, recovery the first window after the return at 80 % of it."""
    from .registry import create_controller

    end = outage_at + outage_s
    link = Link(12.0, 0.030, 45_000, outages=[(outage_at, end)])
    sim = Simulator(link, seed=seed, receiver=receiver)
    flow = sim.add_flow(create_controller(name, params or {}, seed=seed))
    sim.run(end + watch_s)
    delivered = [0] * (round((end + watch_s) / 0.1) + 1)
    for t, size in flow.stats.delivered:
        delivered[min(len(delivered) - 1, int(t / 0.1))] += size
    rates = [((i + 5) * 0.1, sum(delivered[i:i + 5]) * 8 / 0.5 / 1e6)
             for i in range(len(delivered) - 5)]
    before = sorted(r for t, r in rates if 2.0 <= t <= outage_at)
    before_mbps = before[len(before) // 2] if before else 0.0
    recovered = next((t - end for t, r in rates if t > end + 1e-9
                      and r >= 0.8 * before_mbps), None)
    return OutageReport(
        rate_before_mbps=before_mbps,
        recovery_s=None if recovered is None else round(recovered, 2),
        rate_after_mbps=[(round(t - end, 1), round(r, 2)) for t, r in rates[::5] if t > end])


@dataclass
class VideoReport:
    utilization: float
    throughput_mbps: float
    buffering_ratio: float
    startup_s: float
    p95_rtt_inflation_ms: float
    loss_rate: float = 0.0
    p95_queue_delay_ms: float = 0.0


# The share of a packet's wire bytes (what the emulator's schedule counts) that carries
# media: a 1200-byte QUIC datagram holds about 35 bytes of short header, AEAD tag and STREAM
# frame header, and IPv4 + UDP add 28 on the wire, so 1165 of 1228 bytes. Without it the
# model's video had 10 % headroom where the browser's has 4 % (a 15 Mbit/s video on the
# 16.5 Mbit/s link needs 15.9 Mbit/s on the wire).
WIRE_PAYLOAD_SHARE = 1165 / 1228

# A host like the one the browser runs on: Chromium acknowledges every 10 packets or after
# 25 ms, and a busy CPU holds arriving packets unread now and then.
BROWSER_HOST = Receiver(ack_every=10, max_ack_delay=0.025, stall_rate=20.0, stall_s=0.004)


def scenario_video(name: str, *, bitrate_mbps: float = 50.0, seed: int = 1,
                   duration: float = 40.0, receiver: Receiver | None = BROWSER_HOST,
                   params: dict[str, str] | None = None, prefetch: bool = True,
                   payload_share: float = WIRE_PAYLOAD_SHARE) -> VideoReport:
    """Thesis Fig. 5.1 on the link model: capacity 1.1 x bitrate, RTT redrawn in 10-100 ms
    every 5 s, 300 kB queue, 0.01 % loss, one fixed-bitrate viewer (`VideoPlayer`)."""
    from .registry import create_controller

    rtt_rng = random.Random(seed * 31 + 5)
    schedule = [(float(t), rtt_rng.uniform(0.010, 0.100)) for t in range(5, int(duration), 5)]
    link = Link(1.1 * bitrate_mbps, rtt_rng.uniform(0.010, 0.100), 300_000, loss=0.0001,
                rtt_schedule=schedule)
    sim = Simulator(link, seed=seed, receiver=receiver)
    player = VideoPlayer(bitrate_mbps, request_rtt=link.base_rtt, prefetch=prefetch,
                         payload_share=payload_share)
    controller = create_controller(name, params or {}, seed=seed)
    # The server installs the session's controller after the handshake, whose RTT it copies.
    controller.rtt_stats.update(link.base_rtt)
    player.flow = sim.add_flow(controller, app=player)
    sim.run(duration)
    player(duration)
    r = report(sim, 0.0, duration)
    startup = player.startup_at if player.startup_at is not None else duration
    return VideoReport(utilization=r.utilization, throughput_mbps=r.throughputs_mbps[0],
                       buffering_ratio=player.buffering_ratio, startup_s=startup,
                       p95_rtt_inflation_ms=r.p95_rtt_inflation_ms, loss_rate=r.loss_rate,
                       p95_queue_delay_ms=r.p95_queue_delay_ms)


# The A/B harness opens the viewers' pages one after another: their sessions started a
# median 0.07 s apart (quartiles 0.004-0.10 s, at most 0.27 s; 100 gaps in the sessions 19-20
# Fig. 5.2 runs, from each session's telemetry origin).
VIEWER_STAGGER_S = 0.07


@dataclass
class ViewersReport:
    utilization: float
    throughputs_mbps: list[float]  # per viewer, over the whole run
    buffering_ratios: list[float]  # per viewer, startup excluded
    startups_s: list[float]
    loss_rate: float
    p95_queue_delay_ms: float

    @property
    def buffering_ratio(self) -> float:
        """The mean over viewers, as the A/B harness reports a multi-viewer run."""
        return sum(self.buffering_ratios) / len(self.buffering_ratios)


def scenario_viewers(name: str, *, viewers: int = 3, bitrate_mbps: float = 8.0,
                     seed: int = 1, duration: float = 60.0,
                     stagger_s: float = VIEWER_STAGGER_S,
                     start_jitter_s: float = 0.0,
                     receiver: Receiver | None = BROWSER_HOST,
                     params: dict[str, str] | None = None,
                     prefetch: bool = True,
                     payload_share: float = WIRE_PAYLOAD_SHARE) -> ViewersReport:
    """Thesis Fig. 5.2 on the link model: `viewers` fixed-bitrate viewers share 1.1 x their
    total bitrate through a 75 kB queue, 100 ms RTT, 0.01 % loss; viewer i starts
    i x `stagger_s` after the first (the harness opens its pages one after another), plus a
    uniform 0..`start_jitter_s` drawn per seed: on a fast host the browser's sessions open
    within about 25 ms of each other in no fixed order, so the MI phases differ by chance."""
    from .registry import create_controller

    link = Link(1.1 * viewers * bitrate_mbps, 0.100, 75_000, loss=0.0001)
    sim = Simulator(link, seed=seed, receiver=receiver)
    players = []
    jitter = random.Random(f"viewer-starts:{seed}")
    for i in range(viewers):
        player = VideoPlayer(bitrate_mbps, request_rtt=link.base_rtt, prefetch=prefetch,
                             payload_share=payload_share)
        controller = create_controller(name, params or {}, seed=seed * 10 + i)
        controller.rtt_stats.update(link.base_rtt)
        start = i * stagger_s + jitter.uniform(0.0, start_jitter_s)  # its own stream
        player.flow = sim.add_flow(controller, app=player, start=start)
        players.append(player)
    sim.run(duration)
    for player in players:
        player(duration)
    r = report(sim, 0.0, duration)
    return ViewersReport(
        utilization=r.utilization, throughputs_mbps=r.throughputs_mbps,
        buffering_ratios=[p.buffering_ratio for p in players],
        startups_s=[p.startup_at if p.startup_at is not None else duration for p in players],
        loss_rate=r.loss_rate, p95_queue_delay_ms=r.p95_queue_delay_ms)


@dataclass
class CellularReport:
    throughput_mbps: float
    capacity_mbps: float
    p95_signal_delay_ms: float  # time in the bottleneck's queue, propagation excluded
    power: float  # Mbit/s x 1000 / p95 signal delay in ms, the contest's figure of merit
    # mm-throughput-graph's signal delay (every ms, outages included), as the emulator reports
    # it on the real stack; the per-packet queue time above misses the ms no packet waited in.
    p95_mm_signal_delay_ms: float = 0.0


def scenario_cellular(name: str, trace: TraceSchedule, *, seed: int = 1,
                      duration: float | None = None, one_way_s: float = 0.020,
                      up_trace: TraceSchedule | None = None,
                      params: dict[str, str] | None = None,
                      controller: Controller | None = None) -> CellularReport:
    """The contest's setup on the link model: one bulk flow through a cellular trace,
    `one_way_s` each way, infinite queue; `duration` defaults to one pass of the trace;
    `up_trace` shapes the ACKs' return path (mahimahi's uplink trace).
    `controller`, when given, runs instead of a fresh `name` from the registry."""
    from .registry import create_controller

    duration = duration if duration is not None else trace.period_s
    link = Link(0.0, 2 * one_way_s, 10**12, trace=trace, up_trace=up_trace)
    sim = Simulator(link, seed=seed, receiver=Receiver(ack_every=2))
    flow = sim.add_flow(controller or create_controller(name, params or {}, seed=seed))
    sim.run(duration)
    throughput = flow.stats.delivered_bytes(0.0, duration) * 8 / duration / 1e6
    delays = [d for _, d in flow.stats.queue_delays]
    p95_ms = (percentile(delays, 95) if delays else 0.0) * 1000
    arrival_ms = np.array([t for t, _ in flow.stats.queue_delays]) * 1000
    departure_ms = arrival_ms + np.array(delays) * 1000
    mm = signal_delays(arrival_ms, departure_ms)
    return CellularReport(throughput_mbps=throughput, capacity_mbps=trace.average_mbps(),
                          p95_signal_delay_ms=p95_ms,
                          power=throughput * 1000 / p95_ms if p95_ms > 0 else 0.0,
                          p95_mm_signal_delay_ms=percentile95_mahimahi(mm) if len(mm) else 0.0)


def main() -> None:
    """python -m pccstream.cc.sim: print the link-model figures quoted in docs/cc.md."""
    for seed in (1, 2, 3):
        a = scenario_single("vivace", seed=seed)
        b = scenario_single("vivace-loss", loss=0.02, seed=seed)
        c = scenario_two_flows("vivace", seed=seed)
        print(f"seed {seed}: vivace util {a.utilization:.3f} p95 RTT inflation "
              f"{a.p95_rtt_inflation_ms:.1f} ms mean queue {a.mean_queue_delay_ms:.1f} ms | "
              f"vivace-loss @2% util {b.utilization:.3f} | two vivace Jain {c.jain:.3f} "
              f"util {c.utilization:.3f}")
    # The real stack's pacer (pairs) under a busy host's ACK path (docs/cc.md, "Session 7").
    for seed in (1, 2, 3):
        a = scenario_single("vivace", seed=seed, receiver=BROWSER_HOST, pacing_quantum=2)
        c = scenario_two_flows("vivace", seed=seed, receiver=BROWSER_HOST, pacing_quantum=2)
        o = scenario_outage("vivace", seed=seed)
        print(f"seed {seed}, busy host, paced in pairs: vivace util {a.utilization:.3f} p95 "
              f"queue {a.p95_queue_delay_ms:.1f} ms | two vivace Jain {c.jain:.3f} p95 queue "
              f"{c.p95_queue_delay_ms:.1f} ms | 2 s outage: back to 80 % of "
              f"{o.rate_before_mbps:.1f} Mbit/s after {o.recovery_s} s")


if __name__ == "__main__":
    main()
