"""PCC utility functions. Rates in Mbit/s (10^6 bit/s), loss as a fraction.

* Vivace (thesis 4.3, Table 4.1):  u = x^t - b*x*dRTT/dt - c*x*L
* Allegro (thesis 2.3):            u = T*S_a(L - l0) - x*L,   T = x*(1 - L)
* Allegro latency (thesis 3.3):    u = (T*S_a(L - l0)*S_b(RTT_n/RTT_{n-1} - 1) - x*L) / RTT_n
with S_k(y) = 1 / (1 + e^{k*y}).
"""

from __future__ import annotations

import math

MBIT = 1e6


def sigmoid(y: float, steepness: float) -> float:
    """1 / (1 + e^(steepness*y)), safe for large arguments."""
    z = steepness * y
    if z > 700.0:
        return 0.0
    if z < -700.0:
        return 1.0
    return 1.0 / (1.0 + math.exp(z))


def filter_rtt_gradient(gradient: float, threshold: float) -> float:
    """The low-pass filter of thesis 4.4: slopes below `threshold` are noise."""
    return 0.0 if abs(gradient) < threshold else gradient


# Student's t, two-sided 95 % (0.975 quantile), for 1..10 degrees of freedom; beyond, the
# Cornish-Fisher expansion around the normal 1.96 is within 0.1 %.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)
_Z975 = 1.959964


def small_sample_factor(samples: int) -> float:
    """How much wider a slope's 95 % interval is with `samples` points than with many: the
    t quantile for samples - 2 degrees of freedom over the normal one (inf below 3 points).

    An MI at a short RTT gets a handful of ACK frames, and a standard error estimated from
    two or three residuals is itself noise: a fixed number of standard errors then passes
    noise as a rising queue (docs/cc.md, "Small samples")."""
    dof = samples - 2
    if dof < 1:
        return math.inf
    if dof <= len(_T975):
        return _T975[dof - 1] / _Z975
    z = _Z975
    t = z + (z**3 + z) / (4 * dof) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * dof**2)
    return t / z


def vivace_utility(
    rate_mbps: float, rtt_gradient: float, loss: float, *, t: float, b: float, c: float
) -> float:
    x = max(rate_mbps, 0.0)
    return x**t - b * x * rtt_gradient - c * x * loss


def allegro_utility(
    rate_mbps: float, loss: float, *, alpha: float = 100.0, loss_threshold: float = 0.05
) -> float:
    x = max(rate_mbps, 0.0)
    throughput = x * (1.0 - loss)
    return throughput * sigmoid(loss - loss_threshold, alpha) - x * loss


def allegro_latency_utility(
    rate_mbps: float,
    loss: float,
    rtt: float,
    prev_rtt: float,
    *,
    alpha: float = 100.0,
    beta: float = 100.0,
    loss_threshold: float = 0.05,
    rtt_tolerance: float = 0.05,
) -> float:
    x = max(rate_mbps, 0.0)
    throughput = x * (1.0 - loss)
    ratio = rtt / prev_rtt if prev_rtt > 0 and rtt > 0 else 1.0
    # RTT means of consecutive MIs jitter by a few percent with no congestion at all;
    # inside the tolerance band they count as equal (as PCC-Uspace does).
    if abs(ratio - 1.0) < rtt_tolerance:
        ratio = 1.0
    value = throughput * sigmoid(loss - loss_threshold, alpha) * sigmoid(ratio - 1.0, beta)
    value -= x * loss
    return value / rtt if rtt > 0 else value
