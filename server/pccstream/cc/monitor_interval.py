"""Monitor intervals (thesis sections 3.2.2 and 4.4): the measurement unit of PCC.

An MI sends at one target rate for a planned duration. Every packet sent in it is
attributed to it (by send time: MIs cover disjoint, increasing time ranges), and the MI is
finished once the fate of each of its packets is known (acked, lost, or expired). Per-packet
RTT samples are folded into running least-squares sums on arrival, so the RTT gradient of
an MI costs O(1) per ack and O(1) at the end, with no rescans.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

# A half of an MI needs this many RTT samples for its smallest one to be a floor.
MINIMA_MIN_SAMPLES = 2
# The residuals' lag-1 autocorrelation needs this many samples: its bias correction
# divides by samples - 4, and fewer leave it noise.
AUTOCORR_MIN_SAMPLES = 8


@dataclass(slots=True)
class MonitorInterval:
    id: int
    target_rate: float  # bytes/s
    tag: object  # what the algorithm issued this MI for; opaque here
    start_time: float  # send time of its first packet
    end_time: float  # planned end of sending
    rtt_at_start: float = 0.0  # smoothed RTT when the MI started (its timeout unit)
    sending_done: bool = False
    closed_at: float = 0.0  # when sending ended: end_time, or earlier if cut short
    window_room: bool = True  # the window had room for another packet after the last send
    last_sent: float = 0.0
    packets_sent: int = 0
    bytes_sent: int = 0
    packets_acked: int = 0
    bytes_acked: int = 0
    packets_lost: int = 0
    bytes_lost: int = 0
    packets_expired: int = 0
    first_ack_time: float = 0.0
    last_ack_time: float = 0.0
    # Running sums for the least-squares fit of RTT (y) against send time (x), with x
    # taken relative to start_time and y relative to the first sample (y_ref) to keep the
    # sums well conditioned.
    n_rtt: int = 0
    y_ref: float = 0.0
    sum_x: float = 0.0
    sum_y: float = 0.0
    sum_xx: float = 0.0
    sum_xy: float = 0.0
    sum_yy: float = 0.0
    rtt_min: float = 0.0  # smallest RTT sample (0 before any)
    # Sums over consecutive samples (in arrival order) for the residuals' lag-1
    # autocorrelation: x_i x_i+1, x_i y_i+1 + y_i x_i+1, y_i y_i+1, and the end points.
    sum_lag_xx: float = 0.0
    sum_lag_xy: float = 0.0
    sum_lag_yy: float = 0.0
    first_x: float = 0.0
    last_x: float = 0.0
    last_y: float = 0.0
    # Smallest RTT sample and sample count of the packets sent in each half of the planned
    # MI (`rtt_gradient_minima`).
    rtt_min_early: float = math.inf
    rtt_min_late: float = math.inf
    n_rtt_early: int = 0
    n_rtt_late: int = 0
    # (send time - start_time, RTT) of every sample, kept only for the path-step test
    # (`result(path_step=...)`); None: not kept.
    samples: list[tuple[float, float]] | None = None

    @property
    def packets_resolved(self) -> int:
        return self.packets_acked + self.packets_lost + self.packets_expired

    @property
    def complete(self) -> bool:
        return self.sending_done and (
            self.packets_acked + self.packets_lost + self.packets_expired >= self.packets_sent)

    def add_rtt_sample(self, sent_time: float, rtt: float) -> None:
        x = sent_time - self.start_time
        if self.n_rtt == 0:
            self.y_ref = rtt
            self.rtt_min = rtt
        elif rtt < self.rtt_min:
            self.rtt_min = rtt
        if 2 * x < self.end_time - self.start_time:
            self.n_rtt_early += 1
            self.rtt_min_early = min(self.rtt_min_early, rtt)
        else:
            self.n_rtt_late += 1
            self.rtt_min_late = min(self.rtt_min_late, rtt)
        if self.samples is not None:
            self.samples.append((x, rtt))
        y = rtt - self.y_ref
        if self.n_rtt == 0:
            self.first_x = x
        else:
            self.sum_lag_xx += self.last_x * x
            self.sum_lag_xy += self.last_x * y + self.last_y * x
            self.sum_lag_yy += self.last_y * y
        self.last_x, self.last_y = x, y
        self.n_rtt += 1
        self.sum_x += x
        self.sum_y += y
        self.sum_xx += x * x
        self.sum_xy += x * y
        self.sum_yy += y * y

    @property
    def rtt_mean(self) -> float:
        return self.y_ref + self.sum_y / self.n_rtt if self.n_rtt else 0.0

    def rtt_gradient(self) -> float:
        """Least-squares slope of RTT against send time (seconds per second)."""
        n = self.n_rtt
        if n < 2:
            return 0.0
        denom = n * self.sum_xx - self.sum_x * self.sum_x
        # All samples sent at (nearly) the same instant: no slope can be measured.
        if denom <= 1e-18:
            return 0.0
        return (n * self.sum_xy - self.sum_x * self.sum_y) / denom

    def rtt_gradient_stderr(self) -> float:
        """Standard error of `rtt_gradient` from the fit's residuals (inf below 3 samples).

        Host scheduling delays on the ACK path add milliseconds of RTT noise that a one-RTT
        regression turns into slopes of +-0.1 and more (docs/cc.md, "Real stack"); comparing
        a slope with its standard error tells such noise from a queue that really grows.
        """
        n = self.n_rtt
        fit = self._centered_fit() if n >= 3 else None
        if fit is None:
            return math.inf
        sxx, _, sse = fit
        return math.sqrt(sse / (n - 2) / sxx)

    def _centered_fit(self) -> tuple[float, float, float] | None:
        """(Sxx, Sxy, sum of squared residuals) of the fit about the means; None when every
        sample was sent at (nearly) the same instant."""
        n = self.n_rtt
        sxx = self.sum_xx - self.sum_x * self.sum_x / n
        if sxx <= 1e-18:
            return None
        sxy = self.sum_xy - self.sum_x * self.sum_y / n
        syy = self.sum_yy - self.sum_y * self.sum_y / n
        return sxx, sxy, max(syy - sxy * sxy / sxx, 0.0)

    def rtt_residual_autocorr(self) -> float | None:
        """Lag-1 autocorrelation of the fit's residuals in arrival order, corrected for
        its small-sample bias (None below AUTOCORR_MIN_SAMPLES or on an exact fit).

        The slope's standard error takes the residuals as independent. A host that stalls
        delays every ACK sent during the stall by about the same amount, so neighbouring
        residuals move together and the standard error is too small by about
        sqrt((1 + rho) / (1 - rho)). The raw estimate is biased low by about
        (2 + 4 rho) / n for a fitted line's residuals (Marriott and Pope's (1 + 4 rho) / n
        for a mean, one more for the slope), which is undone here: white residuals then
        average about 0 at any n.
        """
        n = self.n_rtt
        fit = self._centered_fit() if n >= AUTOCORR_MIN_SAMPLES else None
        if fit is None or fit[2] <= 1e-18:
            return None
        sxx, sxy, sse = fit
        slope = sxy / sxx
        intercept = (self.sum_y - slope * self.sum_x) / n
        # Sums over the n - 1 consecutive pairs of x_i + x_i+1 (and of y; the first y is 0).
        pairs_x = 2 * self.sum_x - self.first_x - self.last_x
        pairs_y = 2 * self.sum_y - self.last_y
        lagged = (self.sum_lag_yy - slope * self.sum_lag_xy + slope * slope * self.sum_lag_xx
                  - intercept * pairs_y + intercept * slope * pairs_x
                  + intercept * intercept * (n - 1))
        raw = lagged / sse
        return max(-1.0, min(1.0, (n * raw + 2) / (n - 4)))

    def ordered_rtts(self) -> list[float]:
        """The kept RTT samples in send order (empty when not kept)."""
        return [y for _, y in sorted(self.samples)] if self.samples else []

    def rtt_gradient_minima(self) -> float | None:
        """Rise of the smallest RTT sample from the MI's first half (by send time) to its
        second, per second of send time (None: a half has too few samples to have a floor).

        A queue delays every packet, so it lifts each half's smallest sample; a receiver or
        host that stalls delays only the ACKs around the stall, which a least-squares slope
        counts in full and a half's minimum does not see.
        """
        half = (self.end_time - self.start_time) / 2
        if min(self.n_rtt_early, self.n_rtt_late) < MINIMA_MIN_SAMPLES or half <= 0:
            return None
        return (self.rtt_min_late - self.rtt_min_early) / half

    def result(self, *, now: float, min_packets: int, app_limited_ratio: float,
               max_send_ratio: float = 0.0, path_step: float = 0.0) -> MiResult:
        """`path_step` (seconds, 0 = off): RTT steps larger than this in the kept samples
        are the path's (see `path_steps`) and are taken out of the RTT gradient."""
        packets = max(self.packets_sent, 1)
        mean_size = self.bytes_sent / packets
        # Like the reference, count the transfer time of the last packet, so an MI of n
        # packets spaced 1/rate apart measures n packets over n/rate seconds.
        send_duration = self.last_sent - self.start_time + mean_size / self.target_rate
        send_rate = self.bytes_sent / send_duration
        # The share of the MI's open time it spent sending before the application ran dry
        # (one video frame's burst): such an MI measured a burst, not its rate sustained.
        # A window that stopped the sending is the controller's limit, not the application's.
        open_duration = (self.closed_at if self.sending_done else now) - self.start_time
        send_fill = 1.0
        if self.window_room and open_duration > 0:
            send_fill = min(1.0, send_duration / open_duration)
        if self.packets_acked >= 2 and self.last_ack_time > self.first_ack_time:
            ack_span = self.last_ack_time - self.first_ack_time + mean_size / self.target_rate
            delivery_rate = self.bytes_acked / ack_span
        else:
            delivery_rate = self.bytes_acked / send_duration
        loss = self.bytes_lost / self.bytes_sent if self.bytes_sent else 0.0
        rtt_mean = self.rtt_mean
        gradient = self.rtt_gradient()
        stderr = self.rtt_gradient_stderr()
        minima = self.rtt_gradient_minima()
        autocorr = self.rtt_residual_autocorr()
        step_total = 0.0
        if path_step > 0 and self.samples:
            fit = _fit_without_steps(self.samples, path_step,
                                     (self.end_time - self.start_time) / 2)
            if fit is not None:
                gradient, stderr, minima, autocorr, step_total = fit
        # An MI is only evidence about its rate if it actually sent at that rate: too few
        # packets, or an application that ran dry, would make a low rate look like a bad
        # choice of the controller.
        if self.packets_sent < min_packets:
            useful, reason = False, "too-few-packets"
        elif send_rate < app_limited_ratio * self.target_rate:
            useful, reason = False, "app-limited"
        elif max_send_ratio > 0 and send_rate > max_send_ratio * self.target_rate:
            useful, reason = False, "burst"
        elif self.n_rtt == 0:
            useful, reason = False, "no-acks"
        else:
            useful, reason = True, ""
        return MiResult(
            id=self.id,
            tag=self.tag,
            target_rate=self.target_rate,
            send_rate=send_rate,
            delivery_rate=delivery_rate,
            loss=loss,
            rtt_mean=rtt_mean,
            rtt_gradient=gradient,
            rtt_gradient_stderr=stderr,
            rtt_samples=self.n_rtt,
            rtt_residual_autocorr=autocorr,
            rtt_min=self.rtt_min,
            rtt_gradient_minima=minima,
            rtt_path_step=step_total,
            packets_sent=self.packets_sent,
            start_time=self.start_time,
            finish_time=now,
            useful=useful,
            reason=reason,
            send_fill=send_fill,
        )


# A path step needs this many RTT samples on each side of it (an MI after slow start has
# about six, min_mi_acks): a longer path delays every later packet, a stall a run of ACKs.
PATH_STEP_SIDE_SAMPLES = 2


def path_steps(ys: list[float], threshold: float) -> list[tuple[int, float]]:
    """Steps of the RTT samples `ys` (in send order): (index of the first sample after the
    step, signed size in seconds).

    A step up at k is a rise of every later sample above every earlier one by more than
    `threshold` (down: a fall of every later one below every earlier one). A queue grows
    and shrinks at most at the rate the senders' excess fills it, one packet time per
    packet, so only a change of the path's own delay (a new route, the thesis's RTT redrawn
    every 5 s) moves the whole RTT at once. A stall delays a run of ACKs and ends, which
    the comparison with every later sample rules out. Consecutive steps add up (a path
    change shows once per direction of the path, one one-way delay apart).
    """
    n = len(ys)
    side = PATH_STEP_SIDE_SAMPLES
    if n < 2 * side:
        return []
    # Hand-written prefix/suffix extremes: numpy's ufunc.accumulate would cost more than
    # the loop for the ~10-100 samples of one MI.
    prefix_max, prefix_min = [0.0] * n, [0.0] * n
    hi = lo = ys[0]
    for i, y in enumerate(ys):
        hi, lo = max(hi, y), min(lo, y)
        prefix_max[i], prefix_min[i] = hi, lo
    suffix_max, suffix_min = [0.0] * n, [0.0] * n
    hi = lo = ys[-1]
    for i in range(n - 1, -1, -1):
        hi, lo = max(hi, ys[i]), min(lo, ys[i])
        suffix_max[i], suffix_min[i] = hi, lo
    steps = []
    for k in range(side, n - side + 1):
        up = suffix_min[k] - prefix_max[k - 1]
        down = suffix_max[k] - prefix_min[k - 1]
        if up > threshold:
            steps.append((k, up))
        elif down < -threshold:
            steps.append((k, down))
    return steps


def _fit_without_steps(samples: list[tuple[float, float]], threshold: float, half: float
                       ) -> tuple[float, float, float | None, float | None, float] | None:
    """(gradient, its standard error, minima gradient, residual autocorrelation, net step)
    of `samples` with their path steps taken out; None when there is no step."""
    ordered = sorted(samples)
    ys = [y for _, y in ordered]
    steps = path_steps(ys, threshold)
    if not steps:
        return None
    starts = dict(steps)
    fit = MonitorInterval(id=-1, target_rate=1.0, tag=None, start_time=0.0, end_time=2 * half)
    shift = 0.0
    for i, (x, y) in enumerate(ordered):
        shift += starts.get(i, 0.0)
        fit.add_rtt_sample(x, y - shift)
    return (fit.rtt_gradient(), fit.rtt_gradient_stderr(), fit.rtt_gradient_minima(),
            fit.rtt_residual_autocorr(), sum(size for _, size in steps))


@dataclass(frozen=True, slots=True)
class MiResult:
    """The measured outcome of a finished MI. Rates in bytes/s, times in seconds."""

    id: int
    tag: object
    target_rate: float
    send_rate: float
    delivery_rate: float
    loss: float
    rtt_mean: float
    rtt_gradient: float  # raw least-squares slope, dimensionless (s/s)
    packets_sent: int
    start_time: float
    finish_time: float
    useful: bool
    reason: str = ""
    rtt_gradient_stderr: float = 0.0  # standard error of rtt_gradient (inf: unknown)
    rtt_samples: int = 0  # RTT samples in the regression (0: unknown, no small-sample test)
    # Lag-1 autocorrelation of the regression's residuals (see
    # MonitorInterval.rtt_residual_autocorr; None: too few samples).
    rtt_residual_autocorr: float | None = None
    rtt_min: float = 0.0  # smallest RTT sample of the MI (0: none)
    rtt_gradient_minima: float | None = None  # see MonitorInterval.rtt_gradient_minima
    send_fill: float = 1.0  # share of the MI's open time spent sending before the app ran dry
    # Net RTT step of the path inside the MI, taken out of rtt_gradient (s; 0: none found
    # or not looked for).
    rtt_path_step: float = 0.0
    # The smallest RTT sample of the MI after the last path step up to its end, this MI's
    # or one its predecessor ended with (s; 0: no step); set by the sender.
    rtt_path_floor: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)


class MonitorIntervalQueue:
    """MIs in send order; the last one may still be sending.

    Finished MIs are released strictly in order (`pop_finished`), as the algorithms reason
    about sequences (probe pairs). Only a handful of MIs are ever outstanding (about the
    timeout divided by the MI length), so locating a packet's MI by scanning from the
    newest is constant work per packet.
    """

    def __init__(self, *, keep_samples: bool = False) -> None:
        self._mis: deque[MonitorInterval] = deque()
        self._next_id = 0
        self._keep_samples = keep_samples  # for MonitorInterval.result(path_step=...)

    def __len__(self) -> int:
        return len(self._mis)

    @property
    def current(self) -> MonitorInterval | None:
        """The MI still sending, if any."""
        if self._mis and not self._mis[-1].sending_done:
            return self._mis[-1]
        return None

    @property
    def oldest(self) -> MonitorInterval | None:
        return self._mis[0] if self._mis else None

    def start(self, *, now: float, target_rate: float, duration: float, tag: object,
              rtt: float = 0.0) -> MonitorInterval:
        self.close_current(now)
        mi = MonitorInterval(
            id=self._next_id,
            target_rate=target_rate,
            tag=tag,
            start_time=now,
            end_time=now + duration,
            rtt_at_start=rtt,
            samples=[] if self._keep_samples else None,
        )
        self._next_id += 1
        self._mis.append(mi)
        return mi

    def close_current(self, now: float) -> None:
        """End the sending MI at `now`, or at its planned end if that came first."""
        mi = self.current
        if mi is not None:
            mi.sending_done = True
            mi.closed_at = max(mi.start_time, min(now, mi.end_time))

    def take_all(self, now: float) -> list[MonitorInterval]:
        """Remove and return every MI (the one sending is closed at `now`)."""
        self.close_current(now)
        mis = list(self._mis)
        self._mis.clear()
        return mis

    def adopt(self, mis: list[MonitorInterval]) -> None:
        """Track MIs taken from another queue (they keep their ids)."""
        self._mis.extend(mis)

    def all_complete(self) -> bool:
        return all(mi.complete for mi in self._mis)

    def __iter__(self) -> Iterator[MonitorInterval]:
        return iter(self._mis)

    def on_sent(self, sent_time: float, size: int, *, window_room: bool = True) -> None:
        """`window_room`: the window allows another packet after this one."""
        mi = self.current
        assert mi is not None, "start an MI before sending in it"
        mi.packets_sent += 1
        mi.bytes_sent += size
        mi.last_sent = sent_time
        mi.window_room = window_room

    def find(self, sent_time: float) -> MonitorInterval | None:
        for mi in reversed(self._mis):
            if sent_time >= mi.start_time:
                # Packets after the MI's last send belong to no MI (sent in a gap
                # between MIs is impossible: a new MI starts with the first send).
                return mi if sent_time <= mi.last_sent else None
        return None

    def on_acked(self, now: float, sent_time: float, size: int, *,
                 rtt_sample: bool = True) -> None:
        """A packet was acked; `rtt_sample`: also use now - sent_time as its RTT sample."""
        mi = self.find(sent_time)
        if mi is None:
            return
        if mi.packets_acked == 0:
            mi.first_ack_time = now
        mi.last_ack_time = now
        mi.packets_acked += 1
        mi.bytes_acked += size
        if rtt_sample:
            mi.add_rtt_sample(sent_time, now - sent_time)

    def add_rtt_sample(self, sent_time: float, rtt: float) -> None:
        """An RTT sample of the packet sent at `sent_time` (one per ACK frame)."""
        mi = self.find(sent_time)
        if mi is not None:
            mi.add_rtt_sample(sent_time, rtt)

    def on_lost(self, sent_time: float, size: int) -> None:
        mi = self.find(sent_time)
        if mi is not None:
            mi.packets_lost += 1
            mi.bytes_lost += size

    def on_expired(self, sent_time: float) -> None:
        mi = self.find(sent_time)
        if mi is not None:
            mi.packets_expired += 1

    def has_finished(self) -> bool:
        """Whether `pop_finished` would yield anything (cheap enough for every ACK)."""
        return bool(self._mis) and self._mis[0].complete

    def pop_finished(self) -> Iterator[MonitorInterval]:
        while self._mis and self._mis[0].complete:
            yield self._mis.popleft()
