"""`sprout`: Sprout's stochastic forecast (Winstein, Sivaraman & Balakrishnan, NSDI 2013)
as a window for a QUIC sender.

Model: the link delivers packets as a Poisson process whose rate λ drifts as Brownian
motion (σ = `rate_sigma` packets/s per √s) and, from λ = 0 (an outage), escapes at
`outage_escape_rate` per second. A Bayesian filter over `bins` rates in [0, `max_rate`]
packets/s is advanced every tick (`tick_ms`): evolve the prior by the drift, multiply by the
Poisson likelihood of the tick's arrivals, normalize. The forecast is, for k = 1..`ticks`,
the `quantile` (5 %) of the cumulative deliveries over the next k ticks. For each rate bin
the distribution of those counts is computed once (as in Sprout's ProcessForecastInterval:
evolve the bin forward, add each tick's mixture of Poissons), and a forecast is a mixture of
those tables weighted by the posterior.

Window: the cautious deliveries over `target_ms` (Sprout's 100 ms) plus those over the min
RTT, since packets past the bottleneck are in flight until their ACKs are back. Sprout's
receiver sent the forecast back and the sender subtracted its queue estimate; here the
sender has the whole forecast and its bytes in flight, and the window bounds the latter.
Arrivals come from ACKs (tick_arrivals.py, docs/baselines.md, "sprout").
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .params import param
from .tick_arrivals import ClosedTick, DeliveryClock, TickWindowController

Array = npt.NDArray[np.float64]


@dataclass(frozen=True)
class SproutParams:
    tick_ms: float = param(20.0, "filter and forecast tick (ms)", lo=5.0, hi=200.0)
    target_ms: float = param(100.0, "queueing delay every packet should stay within (ms)",
                             lo=10.0, hi=2000.0)
    ticks: int = param(8, "forecast horizon (ticks)", lo=1, hi=32)
    quantile: float = param(0.05, "forecast quantile (0.05: 95 % sure to deliver)",
                            lo=0.001, hi=0.5)
    max_rate: float = param(1000.0, "largest rate on the grid (packets/s)", lo=10.0,
                            hi=100_000.0)
    bins: int = param(256, "rate grid size", lo=2, hi=1024)
    rate_sigma: float = param(200.0, "Brownian drift of the rate (packets/s per sqrt s)",
                              lo=0.0, hi=100_000.0)
    outage_escape_rate: float = param(1.0, "rate of leaving an outage (per s)", lo=0.0,
                                      hi=1000.0)
    ack_delay_ms: float = param(25.0, "bound on the peer's ACK delay: a tick closes this "
                                "long after its end (ms)", lo=0.0, hi=1000.0)
    min_window: float = param(1.0, "window floor (packets)", lo=1.0, hi=1000.0)
    initial_window: float = param(10.0, "window until the first tick (packets)", lo=1.0,
                                  hi=1000.0)


def _normal_cdf(x: Array, sigma: float) -> Array:
    if sigma <= 0:
        return (x >= 0).astype(np.float64)
    erf = np.vectorize(math.erf, otypes=[np.float64])
    return 0.5 * (1.0 + erf(x / (sigma * math.sqrt(2.0))))


def poisson_pmf(counts: Array, mean: Array) -> Array:
    """P(N = counts) for Poisson(mean), broadcasting; mean 0 puts all mass on 0."""
    counts = np.asarray(counts, dtype=np.float64)
    mean = np.asarray(mean, dtype=np.float64)
    log_fact = np.vectorize(math.lgamma, otypes=[np.float64])(counts + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = counts * np.log(mean) - mean - log_fact
    p = np.exp(log_p)
    return np.where(mean > 0, p, (counts == 0).astype(np.float64))


class RateFilter:
    """The posterior over the link's delivery rate (packets/s) on a discrete grid."""

    def __init__(self, *, max_rate: float, bins: int, rate_sigma: float,
                 outage_escape_rate: float, tick_s: float) -> None:
        self.rates: Array = np.linspace(0.0, max_rate, bins)
        self.tick_s = tick_s
        self.transition = transition_matrix(max_rate, bins, rate_sigma * math.sqrt(tick_s),
                                            1.0 - math.exp(-outage_escape_rate * tick_s))
        self.posterior: Array = np.full(bins, 1.0 / bins)

    def evolve(self) -> None:
        self.posterior = self.posterior @ self.transition

    def observe(self, count: int, *, exact: bool = True) -> None:
        """Bayes' rule with a tick's count: exactly `count` deliveries (the queue never ran
        empty), or at least `count` (it may have: the sender limited the count)."""
        means = self.rates * self.tick_s
        if exact:
            likelihood = poisson_pmf(np.full_like(means, count), means)
        else:
            below = np.arange(count, dtype=np.float64)
            likelihood = np.clip(1.0 - poisson_pmf(below[None, :], means[:, None]).sum(axis=1),
                                 0.0, 1.0)
        posterior = self.posterior * likelihood
        total = posterior.sum()
        # Evidence impossible under every rate on the grid (more than max_rate allows):
        # start over rather than divide by zero.
        self.posterior = posterior / total if total > 0 else np.full_like(posterior,
                                                                          1 / posterior.size)

    def mean_rate(self) -> float:
        return float(self.posterior @ self.rates)


@functools.lru_cache(maxsize=8)
def transition_matrix(max_rate: float, bins: int, step_sigma: float,
                      escape_probability: float) -> Array:
    """T[i, j]: probability that a rate in bin i is in bin j one tick later. Each bin holds
    the rates nearest its grid point; the drift's tails pile up in the end bins. From the
    outage bin (rate 0) the rate stays with probability 1 - escape, else drifts as usual."""
    rates = np.linspace(0.0, max_rate, bins)
    edges = np.concatenate(([-np.inf], (rates[:-1] + rates[1:]) / 2, [np.inf]))
    cdf = _normal_cdf(edges[None, :] - rates[:, None], step_sigma)
    t = np.diff(cdf, axis=1)
    leaving = t[0, 1:].sum()
    t[0, 0] = 1.0 - escape_probability
    if leaving > 0:
        t[0, 1:] *= escape_probability / leaving
    elif bins > 1:
        t[0, 1] = escape_probability  # no drift: escape to the smallest rate
    return t


@functools.lru_cache(maxsize=8)
def forecast_tables(max_rate: float, bins: int, step_sigma: float, escape_probability: float,
                    tick_s: float, ticks: int) -> list[Array]:
    """tables[k][i, n]: P(n packets delivered in the next k + 1 ticks | rate now in bin i),
    treating each tick's count as independent given the bin's distribution that tick (as
    Sprout does)."""
    rates = np.linspace(0.0, max_rate, bins)
    transition = transition_matrix(max_rate, bins, step_sigma, escape_probability)
    mean = max_rate * tick_s
    per_tick = int(math.ceil(mean + 6 * math.sqrt(mean) + 2))
    counts = np.arange(per_tick, dtype=np.float64)
    count_given_rate = poisson_pmf(counts[None, :], rates[:, None] * tick_s)
    count_given_rate[:, -1] += 1.0 - count_given_rate.sum(axis=1)  # the tail in the last
    state: Array = np.eye(bins)
    cumulative: Array = np.ones((bins, 1))
    tables: list[Array] = []
    for _ in range(ticks):
        this_tick = state @ count_given_rate
        total = np.zeros((bins, cumulative.shape[1] + per_tick - 1))
        for n in range(per_tick):
            total[:, n:n + cumulative.shape[1]] += cumulative * this_tick[:, n:n + 1]
        cumulative = total
        tables.append(cumulative)
        state = state @ transition
    return tables


class SproutForecaster:
    """The filter plus its forecast tables."""

    def __init__(self, params: SproutParams) -> None:
        tick_s = params.tick_ms / 1000
        self.filter = RateFilter(max_rate=params.max_rate, bins=params.bins,
                                 rate_sigma=params.rate_sigma,
                                 outage_escape_rate=params.outage_escape_rate, tick_s=tick_s)
        self.quantile = params.quantile
        self._cdfs = [np.cumsum(t, axis=1) for t in forecast_tables(
            params.max_rate, params.bins, params.rate_sigma * math.sqrt(tick_s),
            1.0 - math.exp(-params.outage_escape_rate * tick_s), tick_s, params.ticks)]

    def tick(self, count: int, *, busy: bool) -> None:
        """Advance one tick with `count` arrivals; `busy`: the link, not the sender, set it."""
        self.filter.evolve()
        if busy or count > 0:
            self.filter.observe(count, exact=busy)

    def forecast(self) -> list[int]:
        """Cautious cumulative deliveries (packets) over the next 1..ticks ticks."""
        cautious: list[int] = []
        for cdf in self._cdfs:
            mixture = self.filter.posterior @ cdf
            cautious.append(int(np.searchsorted(mixture, self.quantile - 1e-12)))
        return cautious


def cumulative_over(forecast: list[int], ticks: int) -> float:
    """Deliveries over `ticks` ticks from a forecast, extended at its last tick's average
    rate beyond its horizon."""
    if ticks <= 0:
        return 0.0
    if ticks <= len(forecast):
        return float(forecast[ticks - 1])
    return forecast[-1] * ticks / len(forecast)


class Sprout(TickWindowController):
    name = "sprout"

    def __init__(self, params: SproutParams | None = None, *,
                 clock: DeliveryClock | None = None) -> None:
        self.params = params or SproutParams()
        super().__init__(self.params, clock)
        self.forecaster = SproutForecaster(self.params)
        self.last_forecast: list[int] = []

    def on_tick(self, now: float, tick: ClosedTick) -> float:
        mss = self.max_datagram_size
        packets = tick.bytes / mss
        # Sprout's rounding: a partial packet counts as one.
        count = max(1, round(packets)) if packets > 0 else 0
        self.forecaster.tick(count, busy=tick.busy)
        forecast = self.forecaster.forecast()
        self.last_forecast = forecast
        pipe = self.pipe_ticks()
        window = cumulative_over(forecast, self.target_ticks + pipe) * mss
        if self.t0 is not None:
            allowed = max(window, self.min_window_packets * mss)
            self.emit({"type": "sprout", "t_ms": (now - self.t0) * 1000,
                       "tick_end_ms": (tick.end - self.t0) * 1000, "arrived_packets": count,
                       "busy": tick.busy,
                       "rate_mean_pps": round(self.forecaster.filter.mean_rate(), 1),
                       "forecast_packets": forecast,
                       "window_bytes": allowed,
                       "allowed_rate_bps": allowed * 8 / self.horizon_s(),
                       "queue_estimate_packets": self.queue_estimate_packets(
                           cumulative_over(forecast, pipe))})
        return window

    def log_data(self) -> dict[str, Any]:
        return {"rate_mean_pps": round(self.forecaster.filter.mean_rate(), 1),
                "forecast_packets": self.last_forecast[self.target_ticks - 1]
                if len(self.last_forecast) >= self.target_ticks else 0}
