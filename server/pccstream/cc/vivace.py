"""PCC Vivace (thesis chapter 4; Dong et al., NSDI 2018): online gradient ascent on a
latency-aware utility, one decision per probe pair.

States:
* starting - double the rate per improving MI until utility first falls (SlowStart).
* probing  - send r(1+eps) and r(1-eps) in random order; gradient
             gamma = (u+ - u-) / (2 eps r); "double check": if the higher rate saw *less*
             loss than the lower one, the pair is noise-dominated and is run once more.
* moving   - step theta0 * m(tau) * gamma, bounded by omega*r, and keep stepping while the
             gradient between consecutive rates keeps its sign; when it flips, return to the
             last better rate and probe again.

Confidence amplifier m(tau) = tau for tau <= 3, 2*tau - 3 beyond; tau counts consecutive
decisions in one direction and resets when the direction changes. Dynamic change boundary
omega = omega0 + k*delta: k grows by one each time a step is clipped, otherwise drops to the
smallest value whose boundary covers the step, and resets on a direction change.
An MI timeout halves the rate and probes afresh. Rates in Mbit/s inside the utility.
"""

from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass

from .monitor_interval import MiResult
from .params import param
from .pcc_sender import SLOW_START_HOLDS, MiTag, PccParams, PccSender, SlowStart, Verdict
from .utility import MBIT, filter_rtt_gradient, small_sample_factor, vivace_utility
from .windowed_filter import MinFilter

# m(tau) is linear up to this many consecutive same-direction decisions, then grows 2x.
AMPLIFIER_LINEAR_UNTIL = 3
# queue_drain waits at most this many times its interval after drains that found no queue.
QUEUE_DRAIN_MAX_BACKOFF = 64
# queue_drain_rebase: a drain that removed less than this share of the queue it was sized to
# remove found the path longer (a queue of ours shrinks by about all of it).
REBASE_MAX_REMOVED_SHARE = 0.25
# ... and it takes this many such drains in a row.
REBASE_FUTILE_DRAINS = 2
# queue_drain_delivery_test judges only drains at least this far below the rate: a shallower
# one leaves the bottleneck's rate within the delivery rate's noise of the rate sent.
DELIVERY_TEST_MIN_DEPTH = 0.25
# path_step_ms: a step up moves the queue's floor only when larger than this share of the
# min RTT; the pacer's largest burst (a quarter of the rate's BDP) queues less than that.
PATH_STEP_REBASE_MIN_RTTS = 0.25
# HyStart's delay-increase threshold, clamp(min RTT / 8, 4 ms, 16 ms) (RFC 9406, 4.2).
HYSTART_MIN_RTT_THRESH = 0.004
HYSTART_MAX_RTT_THRESH = 0.016
# rtt_gradient_autocorr: the smoothing gain of the residuals' autocorrelation (one MI's
# estimate from 8-30 samples has a spread of 0.2-0.5), and its cap: at 0.9 the standard
# error is already widened 4.4 times.
AUTOCORR_GAIN = 0.125
AUTOCORR_MAX = 0.9


@dataclass(frozen=True)
class VivaceParams(PccParams):
    t: float = param(0.9, "throughput exponent of the utility (0 < t < 1)", lo=0.01, hi=0.99)
    b: float = param(900.0, "latency coefficient: penalty per Mbit/s per unit dRTT/dt "
                     "(0 = vivace-loss)", lo=0.0, hi=1e6)
    c: float = param(11.35, "loss coefficient: penalty per Mbit/s per unit loss rate; a flow "
                     "with a larger c settles at a smaller share (thesis 4.3.6)", lo=0.0, hi=1e6)
    epsilon: float = param(0.05, "probing step: probes send at r(1+eps) and r(1-eps)",
                           lo=0.001, hi=0.5)
    theta0: float = param(0.3, "conversion of utility gradient (per Mbit/s) into a rate step "
                          "(Mbit/s); tuned on the link model, see docs/cc.md",
                          lo=0.0001, hi=100.0)
    omega0: float = param(0.05, "initial change boundary, as a fraction of the rate",
                          lo=0.001, hi=1.0)
    delta: float = param(0.1, "change-boundary increment per consecutive clipped step",
                         lo=0.0, hi=1.0)
    rtt_gradient_filter: float = param(
        0.01, "|dRTT/dt| below this is measurement noise and counts as 0", lo=0.0, hi=1.0)
    rtt_gradient_confidence: float = param(
        2.0, "dRTT/dt counts only when it exceeds this many standard errors of the MI's "
        "regression slope, else it is noise and counts as 0 (0 = off; see docs/cc.md, "
        "real stack)", lo=0.0, hi=100.0)
    rtt_gradient_small_sample: bool = param(
        True, "the noise test uses Student's t for the MI's RTT samples minus 2 degrees of "
        "freedom, scaled to rtt_gradient_confidence: with a few ACK frames per MI a standard "
        "error from two or three residuals is noise itself (off: the normal quantile)")
    rtt_gradient_max_samples: int = param(
        0, "the noise test counts at most this many of an MI's RTT samples as independent "
        "(the slope's standard error is widened by sqrt(samples / this) above it): a host "
        "stall delays every ACK sent during it by about the same amount, so samples within "
        "it are not independent and a millisecond of jitter passes as a slope the standard "
        "error calls certain. Link model at 55 Mbit/s behind the browser's ACK host, 30: "
        "bulk utilization 0.90-0.94 -> 0.95-0.96, 1-BDP and two flows unchanged. On the "
        "real stack at 50 Mbit/s the default's loss-free MIs below capacity pass the test "
        "13 % of the time (17 % on paths over 70 ms, 31 samples), where it should pass "
        "about 2 %; at 8 they pass 3-6 % on every path and the video did not stall in five "
        "blocks (utilization 0.959), but on the 1-BDP link p95 RTT inflation rose from 4.4 "
        "to 6.3 ms: its clean ACK path gives an estimated 15-30 samples per MI, and the "
        "probes' real gradient is discounted with the jitter (docs/cc.md, sessions 60-61; "
        "0 = off)", lo=0, hi=100000)
    rtt_gradient_autocorr: bool = param(
        False, "the noise test widens the slope's standard error by sqrt((1 + rho) / "
        "(1 - rho)), rho the lag-1 autocorrelation of the regression's residuals smoothed "
        "over the connection's MIs (clamped to 0-0.9), and counts the samples as "
        "n (1 - rho) / (1 + rho) for Student's t: a host stall delays a run of ACKs "
        "together, so the residuals move together and the plain standard error is too "
        "small, while a clean ACK path (rho near 0) keeps the plain test. Measures what "
        "rtt_gradient_max_samples fixes as a count. On in `vivace` (session 62): the "
        "browser's smoothed rho was 0.19 at 50 Mbit/s and 0.06 in Fig. 5.2; 0.00 % "
        "and 0.52 % buffering at 50 Mbit/s against 1.77 and 0.95 %, Fig. 5.2 -1.54 "
        "points, and on issue 4's 1-BDP link 4.30 ms against 4.39 over six runs (docs/cc.md; "
        "off: residuals taken as independent)")
    rtt_gradient_minima: bool = param(
        False, "dRTT/dt counts only as far as the rise of the MI's smallest RTT sample from "
        "its first half to its second confirms it (the smaller of the two; the regression's "
        "alone when a half has under two samples): a queue delays every packet and lifts "
        "both halves' floors, while a receiver that stalls delays the ACKs around the stall, "
        "which the regression counts in full. In the browser at 50 Mbit/s 12-16 % of MIs sent "
        "below capacity passed the noise test, and each decides a probe pair, so the rate "
        "random-walks below capacity; on: 6 %, utilization 0.924 against 0.880, buffering "
        "-3.54 points (Fig. 5.1, session 39). Off because two bulk flows on one BDP shared "
        "less evenly with it, Jain 0.926 against 0.999 (docs/cc.md; off: the regression "
        "alone)")
    rtt_gradient_minima_veto: bool = param(
        False, "the minima only veto: dRTT/dt counts as 0 when the MI's smallest RTT sample "
        "rose by less than rtt_gradient_filter from its first half to its second, else the "
        "regression's gradient counts in full (the regression's alone when a half has under "
        "two samples). A stall's gradient is dropped as with rtt_gradient_minima, but a queue "
        "that both halves confirm is charged at the regression's full slope, so a flow above "
        "its share backs off as fast as without the minima: two bulk flows on one BDP keep "
        "Jain 0.985 (10 runs). Off because Fig. 5.2 was worse with it, +2.22 points, and the "
        "1-BDP p95 RTT inflation rose to 4.99 ms against 4.31 (session 40, docs/cc.md; off: "
        "the regression alone)")
    rtt_gradient_min_queue_ms: float = param(
        0.0, "outside slow start, dRTT/dt counts only when the MI's mean RTT stood at least "
        "this many ms above the floor queues are measured from (the min RTT, the path's "
        "floor after a step up, or rtt_gradient_min_queue_window_s's recent floor); a loss "
        "still counts. At 50 Mbit/s in the browser 97 % of the default's steps down came "
        "without loss, two thirds on MIs within 2 ms of their smallest RTT, and the probes "
        "below capacity idled the link (utilization 0.80-0.88); the queue this lets stand "
        "keeps it busy. Fig. 5.1 at 50 Mbit/s, 3 ms over the last 2 s's floor: -5.73 points "
        "against the default, utilization 0.854 against 0.803, still not below BBR. Off "
        "because that queue is latency: on issue 4's 1-BDP link p95 RTT inflation 7.5 ms "
        "at 3 ms and 5.5 ms at 1.5 ms, against 5.2 (docs/cc.md, session 60; 0 = off)",
        lo=0.0, hi=100.0)
    rtt_gradient_min_queue_window_s: float = param(
        0.0, "rtt_gradient_min_queue_ms measures the queue above the smallest RTT sample of "
        "the MIs finished in the last this many seconds (and of the MI itself) instead of "
        "the min RTT: the min RTT never forgets a shorter path (the thesis's RTT is redrawn "
        "every 5 s between 10 and 100 ms), so on a longer path every MI looks queued. The "
        "drains of queue_drain_every_mi, a few RTTs apart, refresh the floor; a queue that "
        "stood through the whole window reads as the path (0 = the min RTT)",
        lo=0.0, hi=60.0)
    ss_loss_ignore: float = param(
        0.1, "slow start ignores loss rates below this (random loss must not end it)",
        lo=0.0, hi=1.0)
    ss_rtt_gradient_ignore: float = param(
        0.05, "slow start ignores |dRTT/dt| below this (ack-clock jitter of small early MIs)",
        lo=0.0, hi=10.0)
    theta_rate_ref_mbps: float = param(
        12.0, "above this rate theta0 grows in proportion to the rate, so a step stays the "
        "same fraction of the rate as the probes (eps*r) and the 'too small to measure' "
        "test (eps*r/2) it is judged by; below it, steps are theta0 * m * gamma as in the "
        "thesis (0 = off)", lo=0.0, hi=10_000.0)
    theta_increase_power: float = param(
        1.0, "above theta_rate_ref_mbps an increase's theta0 grows as (rate / ref) to this "
        "power, a decrease's in proportion: below 1 a flow's increases grow slower than its "
        "rate while its decreases stay a share of it, so flows sharing a queue (which see "
        "the same gradients) move toward equal rates, as AIMD does (Chiu and Jain); at 1 "
        "both are a share of the rate and the ratio between flows stays (1: as "
        "theta_rate_ref_mbps alone; 0: increases as in the thesis, as in `vivace`; "
        "measured on Fig. 5.2 in docs/cc.md, sessions 32, 33 and 38)", lo=0.0, hi=1.0)
    ss_exit_on_congested_hold: bool = param(
        False, "slow start ends when a later MI at the best rate so far (sent while the next "
        "doubling is still untested) scored lower with a loss or RTT gradient that slow "
        "start counts (at least ss_loss_ignore, ss_rtt_gradient_ignore): the queue "
        "overflowed at that rate, and the doubling in flight would send twice it for a "
        "whole MI. Flows that start together reach a shared overflow at different points "
        "of their doublings; one that doubled on the first MI at its rate, before the "
        "overflow reached it, sent at twice that into a full queue, and the flows that had "
        "already left slow start lost its excess and cut to their share of the overflow, "
        "so the rates they went on from were uneven. The exit rate is the delivery rate "
        "less eps, at least half the best rate (off: the thesis, later MIs at a rate "
        "already known to be good are ignored). The gradient also ends it on a burst of held "
        "ACKs, which the full-pipe test catches only on new rates (docs/cc.md, session 32)")
    ss_exit_min_queue: bool = param(
        False, "a latency-only utility drop ends slow start only if the MI's mean RTT stood "
        "above the min RTT by HyStart's delay threshold, min RTT / 8 within 4-16 ms (RFC "
        "9406, 4.2); below it the rise was ACK-timing or host noise, not a queue, and the "
        "rate is held and measured again. On the real stack's Fig. 5.2 at 3 x 10 Mbit/s a "
        "viewer left slow start at 2 Mbit/s on an MI 1.6 ms above the 101.7 ms min RTT "
        "(gradient 0.067), while the link was a quarter used, then stalled 14 s climbing "
        "back (docs/cc.md, session 56; off: any significant gradient ends it)")
    increase_floor_packets: float = param(
        0.0, "an increase (from a probe pair or a moving step) raises the rate by at least "
        "this many packets per smoothed RTT, within the change boundary omega x rate: "
        "above theta_rate_ref_mbps both increases and decreases are a share of the flow's "
        "own rate, so flows sharing a queue keep the ratio between their rates (MIMD); "
        "an increase floor that is the same for every flow on the path makes the smaller "
        "ones gain faster in proportion, and with decreases a share of the rate the rates "
        "converge, as under AIMD (Chiu and Jain 1989; 0 = off)", lo=0.0, hi=1000.0)
    ss_exit_on_delivery: bool = param(
        True, "leave slow start at the failed doubling's delivery rate less eps (when above "
        "the last good rate) instead of at the last good rate")
    ss_drain: bool = param(
        True, "after slow start one MI drains the queue the failed doubling built: it sends "
        "the exit rate less that queue (RTT above the minimum, times the rate) spread over "
        "the MI, at least half the exit rate (cf. BBR's DRAIN); probes only eps below "
        "capacity would take about 1/eps MIs to drain it, which is most of the p95 delay "
        "on a 1-BDP link (off: the thesis)")
    queue_drain: float = param(
        0.1, "a probe pair whose lower-rate MI still saw its mean RTT this fraction of the "
        "min RTT (and at least queue_drain_floor_ms) above the min RTT stands on a queue that "
        "no gradient can see (a standing queue has none, and probes eps either side of "
        "capacity keep it): one MI then sends the rate less that queue spread over the MI, "
        "as ss_drain does after slow start. A drain that did not lower the queue (another "
        "flow's queue, a longer path) doubles the wait before the next, up to 64 x 8 RTTs "
        "(0 = off, the thesis)", lo=0.0, hi=10.0)
    queue_drain_floor_ms: float = param(
        2.0, "the smallest standing queue queue_drain acts on, ms", lo=0.0, hi=1000.0)
    queue_drain_min_rtt: bool = param(
        False, "queue_drain measures the standing queue by the MI's smallest RTT sample above "
        "the min RTT (the queue that lasted through the whole MI, cf. Copa's standing RTT) "
        "and spreads the drain over the drain MI's actual length; the mean RTT (off, "
        "session 6) also holds the probe's own transient and the host's jitter, which only "
        "add delay, so a small standing queue had to grow past the threshold plus that "
        "noise before a drain, and the drain then took out more than stood")
    queue_drain_every_mi: bool = param(
        True, "queue_drain looks for a standing queue on every MI decided after slow start "
        "(probes, holds, moving steps), not only on the lower probe of a pair (off, session "
        "6): the moving state runs for many MIs between pairs, each adding a sliver of queue "
        "too small for the gradient test, and then nothing looked")
    queue_drain_interval_rtts: float = param(
        4.0, "at least this many smoothed RTTs between two queue drains (doubled after each "
        "drain that did not lower the queue, up to 64 x)", lo=0.0, hi=1000.0)
    queue_drain_rebase: bool = param(
        False, "two queue drains in a row that each removed less than a quarter of what they "
        "should have (depth x the MI's length) found the path longer, not a queue of ours: "
        "later drains measure the queue above the smallest RTT seen since then instead of "
        "the connection's min RTT, which still holds the shorter path. Two failed drains per "
        "path change instead of a drain at up to half the rate every 4, 8, 16 ... RTTs; a "
        "queue we build on the longer path is still drained. Another flow's queue looks "
        "the same, so with competing flows it lets more queue stand")
    queue_drain_delivery_test: bool = param(
        False, "a queue drain that sent at least a quarter below the rate judges itself by "
        "its delivery rate: a queue of ours keeps the bottleneck busy while the drain MI "
        "runs, so its packets leave at capacity, faster than they were sent (1 / (1 - depth) "
        "x, or 1 + depth x share with other flows); delivered slower than 1 + depth / 4 x, "
        "the RTT above the minimum was the path's (a longer route, another flow's queue) and "
        "the next drain waits the longest backoff at once instead of doubling its way there "
        "through drains sent at up to half the rate. An MI back at the min RTT ends any "
        "drain's wait (off: session 6, judged by the RTT after it)")
    outage_timeouts: int = param(
        2, "an outage is this many MI timeouts in a row with nothing acked between them "
        "(every packet lost, not a slower path, which still delivers). The timeouts halve "
        "the rate each time, down to the floor; when ACKs return, slow start restarts from "
        "the initial window, capped at the rate before the first timeout, and resumes "
        "probing there once an MI at that rate did not lower the utility (cf. TCP's "
        "ssthresh after a retransmission timeout; 0 = off: climb back from the collapsed "
        "rate by gradient steps)", lo=0, hi=1000)
    moving_queue_trend: bool = param(
        False, "a moving step whose smallest RTT sample stands above the reference MI's by "
        "more than queue_drain's threshold grew the queue across MIs: the utility charges "
        "that rise over the time between the two MIs as its RTT gradient, when larger than "
        "the MI's own. Within one MI a busy host's ACK path hides slopes of 0.05-0.1 in the "
        "noise test, so steps kept climbing to 8 % above capacity; between MIs the baseline "
        "is longer and the minimum ignores the host's jitter (off: session 6)")
    epsilon_noise: float = param(
        0.0, "probes spread at least this many times the RTT-gradient noise bound of recent "
        "MIs (their filter and noise test), up to epsilon_noise_max: a higher probe at "
        "r(1+eps) on a link of capacity C shows a gradient of r(1+eps)/C - 1, so with eps "
        "below the bound g the rate climbs to C(1 + g - eps), above capacity, and the queue "
        "grows by g - eps per RTT with no gradient to see (0 = off: eps as set)",
        lo=0.0, hi=100.0)
    epsilon_noise_max: float = param(
        0.05, "the largest probe spread epsilon_noise may set (the thesis's eps)",
        lo=0.001, hi=0.5)
    reward_rtt_decrease: bool = param(
        False, "let a falling RTT (dRTT/dt < 0) raise utility as the thesis formula does; "
        "off clamps the gradient at 0 like PCC-Uspace")
    double_check: bool = param(True, "re-run a probe pair whose higher rate saw less loss")
    loss_confidence: float = param(
        1.0, "two MIs compared (a probe pair, or a moving step and its reference) are "
        "charged their pooled loss rate unless their loss rates differ by more than this "
        "many standard errors of a difference of two proportions; random loss then costs "
        "what it costs on average instead of deciding by which MI drew one more loss "
        "(0 = off, the thesis)", lo=0.0, hi=100.0)
    loss_pool_queue: bool = param(
        False, "loss_confidence pools two MIs' loss rates, and double_check re-runs a pair "
        "whose higher rate lost less, only when one of the two ran without a queue (its mean "
        "RTT within queue_drain's threshold of the min RTT): loss behind a queue that "
        "stood through the MI is the bottleneck's overflow, which a shared drop-tail queue "
        "deals out in proportion to each sender's rate, so the difference between the two "
        "loss rates is the sender's own share of the overflow, the term that makes a larger "
        "flow yield more than a smaller one. Pooling removed it, and three viewers on a "
        "75 kB queue (Fig. 5.2) kept for tens of seconds the unequal rates they left slow "
        "start at. Random loss on a path without a queue is still pooled. On in `vivace` "
        "(real stack, Fig. 5.2, 10 blocks: buffering -0.94 [-2.71, +0.94] points, loss "
        "-0.89, p95 queue -1.1 ms); off as the parameter's default, so in `vivace-lte`, and "
        "in `vivace-loss`, whose b = 0 stands on its own queue, where random loss looks "
        "the same (off: pool whenever the rates are within loss_confidence standard "
        "errors; docs/cc.md, session 20)")
    moving: bool = param(
        True, "after a decision, keep stepping on the gradient between consecutive MIs "
        "(PCC-Uspace's DECISION_MADE state) instead of probing before every step")
    moving_after_decrease: bool = param(
        True, "enter the moving state after a decrease too; off: a decrease is followed "
        "by a new probe pair at the lower rate. Moving down from a pair whose lower probe "
        "ran without a queue always does worse (less rate, no less latency), so the step "
        "is reversed to that probe: a flow falls back by eps at most per congestion "
        "signal, which every flow on a shared queue sees alike, and unequal rates stay "
        "unequal (Fig. 5.2). Off in `vivace`, with theta_increase_power=0 and theta0=0.45: "
        "the viewers of Fig. 5.2 converge (browser, 5 blocks: -5.54 [-7.77, -2.44] points), "
        "but one flow climbing back after an RTT step is slower (Fig. 5.1 at 50 Mbit/s: "
        "+2.10 points at theta0 0.6 without the hold, +0.30 [-2.67, +2.81] in `vivace`). "
        "decrease_to_capacity removes that cost, but raises the p95 RTT inflation on issue "
        "4's 1-BDP link over its 5 ms target (docs/cc.md, sessions 33, 34 and 38)")
    hold_untested_increase: bool = param(
        False, "in the moving state, only the first MI after a step up sends at the new "
        "rate; the MIs sent before its result arrives go out at the reference rate (the "
        "rate the step was taken from), as the MIs after a probe pair send at its "
        "centre. An MI lasts about an RTT and its result arrives about an RTT after it "
        "ends, so without this two or three MIs send at an untested rate, and a step past "
        "capacity queues that many MIs' excess before it can be undone. On in `vivace`: "
        "on issue 4's 1-BDP link the p95 RTT inflation fell from 4.92 to 4.34 ms (9 runs) "
        "at the same utilization; Fig. 5.2 in the browser, 10 paired blocks: +0.69 "
        "[-3.42, +5.25] points, no difference it can see (off: every MI of the step sends at "
        "the new rate; docs/cc.md, sessions 36-37)")
    early_reverse: bool = param(
        True, "in the moving state, undo a step as soon as half of its MI's packets are "
        "acked and they already show a significant RTT gradient and a worse utility, "
        "instead of waiting for the whole MI (cf. PCC-Uspace's QUIC port, early "
        "termination on RTT inflation)")
    continue_from_reference: bool = param(
        True, "a step that fell short of the reference (the probe on the side moved to) "
        "and did worse than it agrees with the direction: continue from the reference with "
        "the amplifier growing, instead of resetting it and probing (which made every climb "
        "advance by one probe width, eps, per probe cycle)")
    reuse_overshoot: bool = param(
        True, "when a step is undone because its MI saw the queue grow, that MI stands in "
        "for the higher probe of the next pair and only the lower one is sent: re-sending "
        "at about the rate that just overshot would grow the queue again")
    overshoot_step_floor: bool = param(
        False, "a decrease decided on a reused overshoot and the lower probe lands no lower "
        "than the centre less eps: the centre is the last rate that grew no queue, so "
        "capacity is at least about there, and a step clipped at omega (the overshoot's "
        "latency penalty makes the utility gradient steep) went 5 % below it, to be climbed "
        "again at eps per probe cycle; on the real stack that sawtooth held the mean rate "
        "at 0.92-0.94 of capacity (off: the step as the gradient sets it)")
    clean_probe_step_floor: bool = param(
        False, "a decrease decided on a pair whose lower probe saw neither an RTT gradient "
        "nor a loss lands no lower than that probe's rate: the pair brackets the utility's "
        "peak (a concave utility that fell from the lower probe to the higher peaks between "
        "them), so a step clipped at omega below the centre leaves the bracket for a rate "
        "the pair has no evidence for; on the real stack such decreases (about 5 % each, "
        "against increases of about 2 %) held the mean pacing rate at 0.92-0.94 of "
        "capacity (off: the step as the gradient sets it)")
    clean_probe_climb: float = param(
        0.0, "an increase decided on a pair whose higher probe saw neither an RTT gradient "
        "(beyond the noise test) nor a loss lands no lower than that probe's rate times 1 + "
        "(this - 1) x eps (1: at the probe; 2: a probe width above it): the probe delivered "
        "that rate without a queue, so capacity is at least there, yet a gradient step of "
        "theta0 x gamma on a concave utility is 1-2 % of the rate, short of the probe, and "
        "the moving state then finds itself behind its reference and probes again, so a "
        "climb advanced about 1.5 % per four MIs (0 = off: the step as the gradient sets "
        "it)", lo=0.0, hi=10.0)
    overload_loss: float = param(
        0.0, "an MI sent after slow start (and after the last such cut) that lost at least this "
        "share of its packets and delivered less than 1 - this / 2 of its send rate ran "
        "far above the bottleneck: the rate drops at once to that delivery rate less eps "
        "(at most halving) and probing restarts there. So far above capacity a full queue "
        "drops 1 - C/x of what arrives, a pair eps apart differs by about 2 eps C/x in loss, "
        "and the MI-to-MI spread of the loss rate decides the pair instead: on the real "
        "stack senders that left slow start at 1.2-1.9 x capacity stayed far above it for "
        "seconds, one at 3 x with 45 % loss for 43 s, its steps clipped at omega in either "
        "direction (0 = off)",
        lo=0.0, hi=1.0)
    overload_after_exit: bool = param(
        False, "overload_loss judges only MIs sent after slow start ended, as it does MIs "
        "sent after its own last cut: the exit already cut the rate for the overflow those "
        "MIs met (off: MIs still in flight from slow start can cut the exit rate again, "
        "by up to half)")
    overload_never_raises: bool = param(
        False, "an overload_loss cut never raises the rate: an MI still in flight from slow "
        "start, sent at the doubling that failed, can have delivered more than the rate "
        "the exit already set (its delivery less eps, or the last good rate), and the cut "
        "to that delivery then went up, by up to 14 Mbit/s for the flow that left slow "
        "start last among three viewers, while the queue they shared still overflowed "
        "(off: the rate is set to the delivery rate less eps, at least half the rate; "
        "measured with the two above in docs/cc.md, session 32)")
    decrease_to_capacity: float = param(
        0.0, "a decrease decided on a pair whose higher probe saw the RTT grow and whose "
        "lower probe did not lands no lower than the capacity that growth implies divided "
        "by 1 + this x eps (1: the next higher probe sends at about capacity): a queue of "
        "ours grows at dRTT/dt = s/C - 1, so C = s / (1 + dRTT/dt). A barely significant "
        "gradient says the higher probe was a percent or two above capacity, yet the "
        "latency penalty (b = 900) makes the gradient steep and the step is clipped at "
        "omega, 5 % below the centre; on the real stack at 50 Mbit/s such decreases "
        "averaged 4.8 % of capacity against 2.3 % for increases and held the mean pacing "
        "rate at 0.90 of capacity. It holds the rate nearer capacity everywhere, so on a "
        "1-BDP link the p95 RTT inflation rose by 0.6-0.8 ms, over issue 4's 5 ms (0 = "
        "off: the step as the gradient sets it; see docs/cc.md, session 18)",
        lo=0.0, hi=100.0)
    decrease_to_capacity_window_s: float = param(
        0.0, "decrease_to_capacity applies only to a pair whose lower probe's smallest RTT "
        "sample stood within queue_drain's threshold of the smallest RTT sample of the MIs "
        "finished in the last this many seconds (BBR's windowed min filter): a pair that "
        "stands on a queue steps down the full omega and drains it. The min RTT cannot be "
        "the floor, as it never forgets a shorter path (the thesis's RTT is redrawn every "
        "5 s), so the floor is recent; a "
        "queue that stood for the whole window reads as the path. On the real stack's "
        "1-BDP link it moved the floor's p95 RTT inflation by 0.06 ms (5.13 against 5.19 ms, "
        "the default 4.48): that queue does not stand under the lower probe (0 = no such "
        "test; see docs/cc.md, session 30)",
        lo=0.0, hi=60.0)
    increase_boundary_max: float = param(
        0.0, "a step up (a probe pair's increase or a moving step) is at most this share of "
        "the rate, however far the change boundary has grown: within one MI a queue of ours "
        "stays inside the RTT gradient's noise bound until the rate is 5-10 % above "
        "capacity on the real stack, so the moving state's amplified steps kept climbing "
        "and its last step before the gradient showed went up to 16 % past capacity. At "
        "0.05 the 1-BDP p95 RTT inflation fell by a median 0.67 ms at the same utilization "
        "(six paired runs), but Fig. 5.1's utilization did not rise: the decreases after an "
        "overshoot, which land at 0.88-0.90 of capacity, hold the mean down; with "
        "decrease_to_capacity it kept 0.955-0.959 of the link (docs/cc.md, session 45; 0 = "
        "off: omega as the thesis grows it)", lo=0.0, hi=1.0)
    decrease_boundary_max: float = param(
        0.0, "a step down (a probe pair's decrease, or a moving step when moving_after_decrease) "
        "is at most this share of the rate, however far the change boundary has grown "
        "over decreases in a row: with b = 900 almost every "
        "gradient past the noise test is clipped, so the boundary grows by delta at each "
        "decrease in a row (5, 15, 25 %), and one path change or a few noisy MIs cut the "
        "rate by a third. Fig. 5.1 on the real stack: an RTT step from 18 to 94 ms cut "
        "15 Mbit/s video's rate from 14.6 to 9.4 Mbit/s in 0.35 s (decreases of 15 and 25 "
        "%) and it stalled; at 50 Mbit/s, 23-48 of a run's 71-91 pair decreases went past "
        "omega0 and took 43-70 % of the rate decreases took. A standing queue is still "
        "drained by queue_drain, and an overflow by overload_loss (docs/cc.md, session 57; "
        "0 = off: the thesis's boundary)", lo=0.0, hi=1.0)
    decrease_boundary_max_latency_only: bool = param(
        False, "decrease_boundary_max caps only a decrease decided on the RTT gradient "
        "alone, where neither probe of the pair (or the moving step's MI) lost a packet: a "
        "loss says the queue was full, and flows sharing it converge by the larger one's "
        "decreases in a row growing. Fig. 5.2 on the real stack with every decrease "
        "capped: one viewer held 16-18 Mbit/s for 30 s, its decreases after 0.6-10 % loss "
        "each held to 5 %, while the other two sat at 6-9 Mbit/s under their 10 Mbit/s "
        "video and stalled; at 50 Mbit/s 68-89 of 71-91 pair decreases saw no loss "
        "(docs/cc.md, session 58; off: every decrease is capped)")
    increase_boundary_floor_packets: float = param(
        0.0, "a step up (a probe pair's increase or a moving step) may always be as large "
        "as this many packets per smoothed RTT, however small omega x rate is: the "
        "boundary keeps one noisy decision from moving the rate far, and a step that adds "
        "a few packets per round trip to a queue is small at any rate, while omega x rate "
        "at 1-2 Mbit/s is under one packet per 100 ms round trip. With it, a flow left far "
        "below its share climbs by the gradient's step (theta0 x m x gamma Mbit/s), as "
        "under AIMD, instead of by 5 % a decision: in Fig. 5.2 at 3 x 10 Mbit/s a viewer "
        "cut to 1-2 Mbit/s while the three slow starts overflowed the 75 kB queue took "
        "20 s to reach its share (docs/cc.md, session 55; 0 = off)", lo=0.0, hi=1000.0)
    external_rtt_rise: float = param(
        0.0, "an RTT gradient more than this many times what the MI's own excess could "
        "build is not our queue (a path that got longer, a host stall) and decides "
        "nothing: the MI's excess is its send rate over a capacity the sender has seen "
        "delivered (a reference or lower probe that saw no RTT growth delivered at least "
        "that much), at least eps. The pair is re-run, or the moving step is probed "
        "around; a queue that keeps growing shows in the next MIs too. Against an RTT "
        "step from 20 to 72 ms the real stack at 50 Mbit/s read a gradient of 1.5 and "
        "fell to 0.68 of capacity, then climbed for the rest of the 5 s. Another flow's "
        "queue looks the same, so with competing flows more queue stands (real stack, two "
        "flows on 1 BDP: p95 queue 10.7 against 8.6 ms); no effect when b = 0, where the "
        "gradient decides nothing (0 = off)",
        lo=0.0, hi=1000.0)


class Vivace(PccSender):
    name = "vivace"

    def __init__(self, params: VivaceParams | None = None,
                 rng: random.Random | None = None) -> None:
        self.p = params or VivaceParams()
        super().__init__(self.p, rng or random.Random(0))
        self.slow_start = self._new_slow_start()
        self.overloads = 0  # overload_loss cuts
        self._overload_epoch = 0  # MIs of earlier epochs were sent before the last cut
        # probing
        self._probe_rates: list[float] = []  # bytes/s, in send order
        self._drain_rate: float | None = None  # the next MI drains a queue (ss_drain, queue_drain)
        # queue_drain: the queue a drain was sent for (to judge it), the earliest time of the
        # next drain, and the backoff multiplier of its wait.
        self._drained_queue: float | None = None
        self._drain_sent_at = math.inf  # when the last drain MI started (inf: not yet)
        self._next_drain_at = 0.0
        # outage_timeouts: slow start after an outage stops at the rate before it.
        self._ss_cap: float | None = None
        self._drain_backoff = 1
        self.queue_drains = 0
        self._drain_depth = 0.0  # how far below the rate the planned queue drain sends
        # queue_drain_rebase: the RTT floor of a path that got longer (None: the min RTT),
        # and how much queue the last planned drain should remove.
        self._path_rtt_base: float | None = None
        self._drain_expected = 0.0
        self._futile_drains = 0  # drains in a row that removed almost none of their queue
        self.path_rebases = 0
        self.path_steps = 0  # steps up that moved the queue's floor (path_step_ms)
        self.path_queue_drains = 0  # drains that found the queue was the path's
        # epsilon_noise: smoothed noise bound of the RTT gradient of decided MIs.
        self.gradient_noise = 0.0
        # rtt_gradient_autocorr: smoothed lag-1 autocorrelation of the MIs' RTT residuals
        # (None before the first MI with enough samples).
        self.residual_autocorr: float | None = None
        self._probes_issued = 0
        self._probe_results: dict[int, tuple[MiResult, float]] = {}
        # The higher side of the pair when it is already measured (reuse_overshoot).
        self._known_high: tuple[MiResult, float] | None = None
        self._double_checked = False
        self._first_run: tuple[float, float] | None = None  # (u_hi, u_lo) before a re-run
        self.double_checks = 0
        # moving and learning
        self.direction = 0  # +1 up, -1 down, 0 none yet
        self.tau = 0  # consecutive decisions in `direction`
        self.k = 0  # change-boundary level
        # The moving state's reference: the last MI with a known utility, and that utility.
        self._ref: tuple[MiResult, float] | None = None
        # hold_untested_increase: the epoch whose step up already has its MI in flight.
        self._step_sent_epoch: int | None = None
        # decrease_to_capacity_window_s: the smallest RTT sample of the MIs finished lately.
        window = self.p.decrease_to_capacity_window_s
        self._recent_rtt_floor = MinFilter(window) if window > 0 else None
        gate = self.p.rtt_gradient_min_queue_window_s
        self._gate_rtt_floor = MinFilter(gate) if gate > 0 else None

    # -- utility ---------------------------------------------------------------------------

    def mi_utility(self, result: MiResult) -> tuple[float, float]:
        p = self.p
        gradient = filter_rtt_gradient(result.rtt_gradient, p.rtt_gradient_filter)
        if abs(gradient) <= self._noise_bound(result.rtt_gradient_stderr, result.rtt_samples):
            gradient = 0.0  # not distinguishable from ACK-path noise
        minima = result.rtt_gradient_minima
        if gradient > 0 and minima is not None:
            if p.rtt_gradient_minima_veto and minima < p.rtt_gradient_filter:
                gradient = 0.0  # the halves' floors did not rise: no queue confirms it
            if p.rtt_gradient_minima:
                gradient = filter_rtt_gradient(min(gradient, max(minima, 0.0)),
                                               p.rtt_gradient_filter)
        if not p.reward_rtt_decrease:
            gradient = max(gradient, 0.0)
        starting = isinstance(result.tag, MiTag) and result.tag.role == "start"
        if gradient > 0 and not starting and not self._above_queue_floor(result):
            gradient = 0.0
        loss = result.loss
        if starting:
            if abs(gradient) < p.ss_rtt_gradient_ignore:
                gradient = 0.0
            if loss < p.ss_loss_ignore:
                loss = 0.0
        x = self.mbps(result.send_rate)
        return vivace_utility(x, gradient, loss, t=p.t, b=p.b, c=p.c), gradient

    def _above_queue_floor(self, result: MiResult) -> bool:
        """rtt_gradient_min_queue_ms: `result`'s mean RTT stood that far above the queue
        floor (always true when off or before any RTT sample)."""
        threshold = self.p.rtt_gradient_min_queue_ms / 1000
        if threshold <= 0 or not self.rtt_stats.has_sample:
            return True
        floor = self._queue_floor()
        recent = self._gate_rtt_floor
        if recent is not None:
            floor = recent.best() if not recent.empty else math.inf
            if result.rtt_min > 0:
                floor = min(floor, result.rtt_min)
            if not math.isfinite(floor):
                return True
        return result.rtt_mean - floor >= threshold

    @property
    def epsilon(self) -> float:
        """The probes' spread: epsilon, widened to the gradient noise (epsilon_noise)."""
        p = self.p
        if p.epsilon_noise <= 0 or self.gradient_noise <= 0:
            return p.epsilon
        return max(p.epsilon, min(p.epsilon_noise * self.gradient_noise, p.epsilon_noise_max))

    def _track_gradient_noise(self, result: MiResult) -> None:
        if self.p.epsilon_noise <= 0 or result.rtt_samples < 3:
            return
        bound = max(self.p.rtt_gradient_filter,
                    self._noise_bound(result.rtt_gradient_stderr, result.rtt_samples))
        if math.isfinite(bound):
            self.gradient_noise = bound if self.gradient_noise == 0 else (
                0.875 * self.gradient_noise + 0.125 * bound)

    def _track_residual_autocorr(self, result: MiResult) -> None:
        rho = result.rtt_residual_autocorr
        if not self.p.rtt_gradient_autocorr or rho is None:
            return
        self.residual_autocorr = rho if self.residual_autocorr is None else (
            (1 - AUTOCORR_GAIN) * self.residual_autocorr + AUTOCORR_GAIN * rho)

    def _noise_bound(self, stderr: float, samples: int) -> float:
        """The largest |dRTT/dt| that is still ACK-path noise for this regression."""
        bound = self.p.rtt_gradient_confidence * stderr
        rho = self.residual_autocorr
        if self.p.rtt_gradient_autocorr and rho is not None and rho > 0 and bound > 0:
            rho = min(rho, AUTOCORR_MAX)
            bound *= math.sqrt((1 + rho) / (1 - rho))
            samples = max(3, round(samples * (1 - rho) / (1 + rho))) if samples > 0 else 0
        if self.p.rtt_gradient_small_sample and samples > 0 and bound > 0:
            bound *= small_sample_factor(samples)
        independent = self.p.rtt_gradient_max_samples
        if 0 < independent < samples:
            bound *= math.sqrt(samples / independent)
        return bound

    def _pooled(self, a: MiResult, u_a: float, b: MiResult, u_b: float
                ) -> tuple[float, float, bool]:
        """Utilities of two MIs to compare, and whether their loss rates were pooled.

        With ~40 packets per MI, one random loss more or less moves c·x·L by several times
        the utility difference between the two rates (docs/cc.md, "Session 3").
        """
        k = self.p.loss_confidence
        na, nb = a.packets_sent, b.packets_sent
        if k <= 0 or na <= 0 or nb <= 0 or self._overflow_loss(a, b):
            return u_a, u_b, False
        pooled = (a.loss * na + b.loss * nb) / (na + nb)
        stderr = math.sqrt(pooled * (1 - pooled) * (1 / na + 1 / nb))
        if abs(a.loss - b.loss) > k * stderr:
            return u_a, u_b, False
        if a.loss != pooled:
            u_a = self.mi_utility(dataclasses.replace(a, loss=pooled))[0]
        if b.loss != pooled:
            u_b = self.mi_utility(dataclasses.replace(b, loss=pooled))[0]
        return u_a, u_b, True

    def _overflow_loss(self, *mis: MiResult) -> bool:
        """loss_pool_queue: some of `mis` lost packets, and every one of them ran on a queue
        (its mean RTT above the min RTT by queue_drain's threshold). The mean, not the
        smallest sample: a drop-tail queue that overflows in bursts drains between them, and
        the loss happens while it is full."""
        if not self.p.loss_pool_queue or not any(mi.loss > 0 for mi in mis):
            return False
        stats = self.rtt_stats
        if not stats.has_sample:
            return False
        if self.p.path_step_ms > 0:
            base = self._queue_floor()
            floor = base + self._queue_threshold(base)
        else:
            floor = stats.min_rtt_or(stats.latest_rtt) + self._queue_threshold()
        return all(mi.rtt_mean > floor for mi in mis)

    # -- early verdicts ---------------------------------------------------------------------

    def _on_feedback(self, now: float) -> None:
        super()._on_feedback(now)
        if self.state == "moving" and self.p.early_reverse and self.p.b > 0:
            self._early_reverse(now)

    def _early_reverse(self, now: float) -> None:
        """Undo the last step on a half-acked MI that already shows the queue growing.

        By the time an MI's last ACK arrives, the next MI has sent one more RTT at the
        same rate; deciding on half the ACKs saves about half of that queue.
        """
        mi = self.queue.oldest
        tag = mi.tag if mi is not None else None
        if (mi is None or not isinstance(tag, MiTag) or tag.epoch != self.epoch
                or tag.role != "move" or mi.complete
                or 2 * mi.packets_acked < mi.packets_sent
                or mi.packets_acked < self.p.min_mi_packets or mi.n_rtt < 3):
            return
        # Cheap test first: most ACKs end here.
        gradient = mi.rtt_gradient()
        if gradient <= max(self.p.rtt_gradient_filter,
                           self._noise_bound(mi.rtt_gradient_stderr(), mi.n_rtt)):
            return
        partial = mi.result(now=now, min_packets=self.p.min_mi_packets,
                            app_limited_ratio=self.p.app_limited_ratio,
                            path_step=self.p.path_step_ms / 1000)
        if not partial.useful:
            return
        utility, counted = self.mi_utility(partial)
        if utility >= self._ref_utility or (
                self._ref is not None and self._rise_is_external(partial, self._ref[0])):
            return
        state = self.state
        verdict = self._reverse(overshoot=(partial, utility) if counted > 0.0 else None,
                                decision="early-reverse")
        self.queue.close_current(now)
        self._emit_mi(now, partial, utility, counted, verdict, state)

    # -- rates of new MIs ------------------------------------------------------------------

    def plan_next_mi(self, now: float) -> tuple[float, MiTag]:
        if self._drain_rate is not None and self.state != "starting":
            rate, self._drain_rate = self._drain_rate, None
            self._drain_sent_at = now
            return rate, MiTag(self.epoch, "drain")
        if self.state == "probing":
            if self._probes_issued < len(self._probe_rates):
                i = self._probes_issued
                self._probes_issued += 1
                return self._probe_rates[i], MiTag(self.epoch, "probe", i)
            return self.rate, MiTag(self.epoch, "hold")
        if self.state == "starting":
            return self.rate, MiTag(self.epoch, "start")
        if self.p.hold_untested_increase and self.direction > 0:
            if self._step_sent_epoch == self.epoch:
                held = self._ref_rate
                return (held if 0 < held < self.rate else self.rate), MiTag(self.epoch, "hold")
            self._step_sent_epoch = self.epoch
        return self.rate, MiTag(self.epoch, "move")

    # -- decisions -------------------------------------------------------------------------

    def on_mi_finished(self, now: float, result: MiResult, utility: float) -> Verdict:
        assert isinstance(result.tag, MiTag)
        role = result.tag.role
        self._note_rtt_min(result)
        if role == "drain":
            self._update_path_floor(result)  # the drain's own samples show how low the RTT goes
            self._judge_drain_delivery(result, now=now)
            return Verdict("drained")  # sent below capacity on purpose: no evidence
        if not result.useful:
            if role == "probe":
                # A probe that did not send at its rate proves nothing: run the pair again.
                self._enter_probing()
                return Verdict("reprobe:" + result.reason)
            if role == "move":
                self._step_sent_epoch = None  # the step is still untested: send it again
            return Verdict("ignored:" + result.reason)
        self._track_residual_autocorr(result)
        if self.state == "starting":
            return self._starting(result, utility)
        if self.p.queue_drain_every_mi:
            self._drain_standing_queue(result, now=now)
        self._track_gradient_noise(result)
        if self.state == "probing":
            if role != "probe":
                return Verdict("wait")
            self._probe_results[result.tag.slot] = (result, utility)
            if len(self._probe_results) < len(self._probe_rates):
                return Verdict("wait")
            return self._decide_from_probes()
        if role == "hold":
            return Verdict("wait")  # sent at the reference while the step was untested
        return self._moving(result, utility)

    def on_overload(self, now: float, result: MiResult) -> Verdict | None:
        """overload_loss: an MI far above the bottleneck's rate cuts the rate to what it
        delivered."""
        limit = self.p.overload_loss
        if (limit <= 0 or self.state == "starting" or not result.useful
                or result.delivery_rate <= 0 or result.loss < limit
                or result.delivery_rate >= (1 - limit / 2) * result.send_rate
                or not isinstance(result.tag, MiTag) or result.tag.epoch < self._overload_epoch):
            return None  # the last condition: sent before the last cut, which acted on it
        old = self.rate
        cut = self.clamp(max(result.delivery_rate * (1 - self.p.epsilon), old / 2))
        if self.p.overload_never_raises and cut >= old:
            return None  # the rate is already below what that MI delivered
        self.rate = cut
        self.direction, self.tau, self.k = 0, 0, 0
        self._drain_rate = self._drained_queue = None
        self._enter_probing()
        self._overload_epoch = self.epoch
        self.overloads += 1
        return Verdict("overload", self.rate - old)

    def on_mi_timeout(self, now: float) -> Verdict:
        old = self.rate
        self.rate = self.clamp(self.rate / 2)
        self.direction, self.tau, self.k = 0, 0, 0
        if self._drain_rate is not None:
            self._drain_rate = self._drained_queue = None  # planned, never sent
        self._ss_cap = None
        self._enter_probing()
        return Verdict("timeout", self.rate - old)

    def on_path_returned(self, now: float, timeouts: int, rate_before: float
                         ) -> Verdict | None:
        """Feedback is back after an outage: climb back to the rate before it at slow
        start's pace. The timeouts halved the rate on no evidence about capacity (nothing
        came back at all), and gradient steps from the floor are bounded by omega x rate,
        so they take seconds; doubling from the initial window takes a few RTTs, and a
        capacity that fell meanwhile still ends slow start on the utility."""
        p = self.p
        if p.outage_timeouts <= 0 or timeouts < p.outage_timeouts or rate_before <= self.rate:
            return None
        old = self.rate
        self.rate = self.clamp(min(max(self.rate, self.initial_window_rate()), rate_before))
        self.state = "starting"
        self.slow_start = self._new_slow_start()
        self._ss_cap = rate_before
        self.direction, self.tau, self.k = 0, 0, 0
        self._drain_rate = None
        self._drained_queue = None
        self._probe_rates, self._probes_issued, self._probe_results = [], 0, {}
        self._known_high, self._double_checked, self._first_run = None, False, None
        self.new_epoch()
        return Verdict("path-returned", self.rate - old)

    def on_timeout_undone(self, now: float, rate: float) -> Verdict:
        old = self.rate
        self.rate = rate
        self.direction, self.tau, self.k = 0, 0, 0
        self._enter_probing()
        return Verdict("timeout-undone", self.rate - old)

    def _new_slow_start(self) -> SlowStart:
        return SlowStart.from_params(
            self.p, exit_on_congested_hold=self.p.ss_exit_on_congested_hold)

    def _starting(self, result: MiResult, utility: float) -> Verdict:
        p = self.p
        # Only the congested-hold exit reads this; the utility is not recomputed otherwise.
        congested = p.ss_exit_on_congested_hold and (
            result.loss >= p.ss_loss_ignore or self.mi_utility(result)[1] > 0.0)
        action = self.slow_start.on_result(
            result.target_rate, utility, self.rate, delivery=result.delivery_rate,
            send=result.send_rate, ack_frames=result.rtt_samples,
            latency_only=result.loss < p.ss_loss_ignore, send_fill=result.send_fill,
            congested=congested, standing_queue=self._stood_on_queue(result))
        if action in SLOW_START_HOLDS:
            return Verdict("hold:" + action)
        if action == "double":
            old = self.rate
            cap = self._ss_cap
            if cap is not None and self.rate >= cap:
                # Back at the rate from before the outage and it still pays: probe there.
                self._ss_cap = None
                self._enter_probing()
                return Verdict("resume")
            self.rate = self.clamp(2 * self.rate if cap is None else min(2 * self.rate, cap))
            return Verdict("double", self.rate - old)
        if action == "hold":
            return Verdict("hold")
        old = self.rate
        self._ss_cap = None
        # The doubling that failed overran the bottleneck, so its MI was delivered at about
        # the bottleneck's rate: continue from just under that rather than from the last
        # good rate, which can be half of it (cf. PCC-Uspace's QUIC port, exit of STARTING
        # on the sampled bandwidth).
        exit_rate = self.slow_start.best_rate
        if action == "exit-hold":
            exit_rate /= 2  # the best rate overflowed; the one before it did not
        if self.p.ss_exit_on_delivery:
            delivered = min(result.target_rate, result.delivery_rate) * (1 - self.p.epsilon)
            exit_rate = max(exit_rate, delivered)
        self.rate = self.clamp(exit_rate)
        self._enter_probing()
        if self.p.overload_after_exit:
            self._overload_epoch = self.epoch
        if self.p.ss_drain:
            self._drain_rate = self._drain_after(result)
        return Verdict("exit-slow-start", self.rate - old)

    def _stood_on_queue(self, result: MiResult) -> bool:
        """ss_exit_min_queue: the MI's mean RTT exceeded the min RTT by HyStart's threshold."""
        stats = self.rtt_stats
        if not self.p.ss_exit_min_queue or not stats.has_sample:
            return True
        min_rtt = stats.min_rtt_or(stats.latest_rtt)
        threshold = min(max(min_rtt / 8, HYSTART_MIN_RTT_THRESH), HYSTART_MAX_RTT_THRESH)
        return result.rtt_mean - min_rtt > threshold

    def _drain_after(self, result: MiResult) -> float | None:
        """The rate of one MI that empties the queue standing at slow start's exit."""
        stats = self.rtt_stats
        if not stats.has_sample:
            return None
        queue_s = max(stats.latest_rtt, result.rtt_mean) - stats.min_rtt_or(stats.latest_rtt)
        mi_s = self.p.mi_rtts * stats.smoothed_rtt
        if queue_s <= 0 or mi_s <= 0:
            return None
        return self.clamp(self.rate * max(0.5, 1 - queue_s / mi_s))

    def _drain_standing_queue(self, mi: MiResult, *, now: float) -> None:
        """Plan a drain MI when `mi` (the lower probe of a pair, or with queue_drain_every_mi
        any MI after slow start) ran on a standing queue (queue_drain)."""
        p, stats = self.p, self.rtt_stats
        if (p.queue_drain <= 0 or not stats.has_sample or mi.rtt_samples == 0
                or self._drain_rate is not None):
            return
        if self._drained_queue is not None and mi.start_time < self._drain_sent_at:
            return  # sent before the drain: it can neither judge it nor ask for another
        min_rtt = self._update_path_floor(mi)
        level = mi.rtt_min if p.queue_drain_min_rtt and mi.rtt_min > 0 else mi.rtt_mean
        queue_s = level - min_rtt
        threshold = self._queue_threshold(min_rtt)
        if self._drained_queue is not None:
            # The first MI sent after a drain judges it: a queue that came back at once (or
            # never left) is not ours to drain, so wait longer before the next attempt.
            failed = queue_s > max(threshold, 0.5 * self._drained_queue)
            self._drain_backoff = (min(QUEUE_DRAIN_MAX_BACKOFF, 2 * self._drain_backoff)
                                   if failed else 1)
            if p.queue_drain_rebase and self._is_rebased_by(mi, failed, queue_s):
                queue_s = level - mi.rtt_min
                threshold = self._queue_threshold(mi.rtt_min)
            self._drained_queue = None
            self._drain_sent_at = math.inf
        if queue_s <= threshold:
            # The path's RTT is back at its minimum: a queue from now on is new.
            if p.queue_drain_delivery_test:
                self._next_drain_at = min(self._next_drain_at, self._drain_wait_until(now, 1))
            self._drain_backoff = 1
            return
        if now < self._next_drain_at:
            return
        mi_s = (self.mi_duration(self.rate) if p.queue_drain_min_rtt
                else p.mi_rtts * stats.smoothed_rtt)
        if mi_s <= 0:
            return
        self._drain_rate = self.clamp(self.rate * max(0.5, 1 - queue_s / mi_s))
        self._drained_queue = queue_s
        self._drain_depth = 1 - self._drain_rate / self.rate if self.rate > 0 else 0.0
        self._drain_expected = min(queue_s, self._drain_depth * mi_s)
        self._next_drain_at = self._drain_wait_until(now, self._drain_backoff)
        self.queue_drains += 1

    def _is_rebased_by(self, mi: MiResult, failed: bool, queue_s: float) -> bool:
        """queue_drain_rebase: `mi`, the first MI after a drain, moves the queue's floor to
        its smallest RTT when this drain and the one before removed almost none of theirs."""
        removed = (self._drained_queue or 0.0) - queue_s
        futile = (failed and mi.rtt_min > 0
                  and removed < REBASE_MAX_REMOVED_SHARE * self._drain_expected)
        self._futile_drains = self._futile_drains + 1 if futile else 0
        if self._futile_drains < REBASE_FUTILE_DRAINS:
            return False
        # Sending below the rate did not lower the RTT, twice in a row (a host stall can
        # spoil one drain): the path is longer.
        self._futile_drains = 0
        self._path_rtt_base = mi.rtt_min
        self.path_rebases += 1
        return True

    def on_path_step(self, rise: float, floor: float) -> None:
        """path_step_ms: a step up of the path by more than a pacing burst can queue moves
        the floor queues are measured above to the RTT after the step."""
        if not self.rtt_stats.has_sample:
            return
        if rise <= PATH_STEP_REBASE_MIN_RTTS * self.rtt_stats.min_rtt_or(floor):
            return
        if floor > self._queue_floor():
            self._path_rtt_base = floor
            self.path_steps += 1

    def _queue_floor(self) -> float:
        """The RTT a queue is measured above, as `_update_path_floor` last left it."""
        stats = self.rtt_stats
        min_rtt = stats.min_rtt_or(stats.latest_rtt)
        base = self._path_rtt_base
        return base if base is not None and base > min_rtt else min_rtt

    def _update_path_floor(self, mi: MiResult) -> float:
        """The RTT a queue is measured above: the min RTT, or (queue_drain_rebase) the
        smallest RTT since a drain found the path longer; `mi`'s lower samples pull it back
        down."""
        stats = self.rtt_stats
        min_rtt = stats.min_rtt_or(stats.latest_rtt)
        base = self._path_rtt_base
        if base is None:
            return min_rtt
        # After a step inside `mi`, its samples before the step are the old path's.
        lowest = mi.rtt_path_floor if mi.rtt_path_floor > 0 else mi.rtt_min
        if 0 < lowest < base:
            base = self._path_rtt_base = lowest
        if base <= min_rtt:
            self._path_rtt_base = None
            return min_rtt
        return base

    def _drain_wait_until(self, now: float, backoff: int) -> float:
        """The earliest time of the next queue drain, `backoff` intervals from `now`."""
        return now + self.p.queue_drain_interval_rtts * backoff * self.rtt_stats.smoothed_rtt

    def _judge_drain_delivery(self, drain: MiResult, *, now: float) -> None:
        """queue_drain_delivery_test: a deep drain delivered no faster than it sent found no
        queue of ours to drain, so the next drain waits the longest backoff."""
        depth, self._drain_depth = self._drain_depth, 0.0
        if (not self.p.queue_drain_delivery_test or self._drained_queue is None
                or depth < DELIVERY_TEST_MIN_DEPTH or not drain.useful):
            return
        if drain.delivery_rate >= drain.send_rate * (1 + depth / 4):
            return  # the bottleneck ran at capacity under the drain: the queue was ours
        self._drain_backoff = QUEUE_DRAIN_MAX_BACKOFF
        self._next_drain_at = self._drain_wait_until(now, self._drain_backoff)
        self.path_queue_drains += 1

    def _enter_probing(self, known_high: tuple[MiResult, float] | None = None) -> None:
        self.state = "probing"
        self.new_epoch()
        eps = self.epsilon
        hi, lo = self.rate * (1 + eps), self.rate * (1 - eps)
        # Draw even when the order does not matter, so one choice does not shift every
        # later one.
        hi_first = self.rng.random() < 0.5
        self._known_high = known_high
        if known_high is not None:
            # The overshoot grew the queue by about its RTT gradient times its length;
            # the lower probe sends that much less again so the queue drains while it
            # runs (the gradient is measured either way, over both probes' rates).
            grew = self.mi_utility(known_high[0])[1]
            lo = max(self.rate * (1 - eps - min(grew, self.p.omega0 * 4)), self.clamp(0.0))
            self._probe_rates = [lo]
        else:
            self._probe_rates = [hi, lo] if hi_first else [lo, hi]
        self._probes_issued = 0
        self._probe_results = {}

    def _decide_from_probes(self) -> Verdict:
        pairs = [self._probe_results[i] for i in range(len(self._probe_rates))]
        if self._known_high is not None:
            pairs.append(self._known_high)
        (hi, u_hi), (lo, u_lo) = sorted(pairs, key=lambda ru: -ru[0].target_rate)
        if self._rise_is_external(hi, lo):
            self._enter_probing()
            return Verdict("external-rise")
        u_hi, u_lo, pooled = self._pooled(hi, u_hi, lo, u_lo)
        if (self.p.double_check and not pooled and not self._double_checked
                and hi.loss < lo.loss and not self._overflow_loss(hi, lo)):
            # More rate yet less loss: random loss or noise dominated this pair. Run it
            # again and decide on both runs together.
            self._double_checked = True
            self._first_run = (u_hi, u_lo)
            self.double_checks += 1
            self._enter_probing()
            return Verdict("double-check")
        if self._first_run is not None:
            u_hi, u_lo = (u_hi + self._first_run[0]) / 2, (u_lo + self._first_run[1]) / 2
        if not self.p.queue_drain_every_mi:
            self._drain_standing_queue(lo, now=max(hi.finish_time, lo.finish_time))
        self._double_checked = False
        self._first_run = None
        spread = self.mbps(hi.target_rate) - self.mbps(lo.target_rate)
        # Probes clamped to the same rate (at a rate bound) carry no gradient.
        gamma = (u_hi - u_lo) / spread if spread > 0 else 0.0
        center = self.rate
        if gamma == 0.0:
            self._enter_probing()
            return Verdict("inconclusive")
        direction = 1 if gamma > 0 else -1
        # Reference point for the moving state: the probe on the side we move to.
        best, u_best = (hi, u_hi) if direction > 0 else (lo, u_lo)
        self._set_ref(best, u_best)
        if direction == self.direction:
            self.tau += 1
        else:
            self.direction, self.tau, self.k = direction, 1, 0
        step = self._step(gamma, lost=hi.loss > 0 or lo.loss > 0)
        if self.p.overshoot_step_floor and self._known_high is not None and direction < 0:
            step = max(step, -self.epsilon * center)
        if self.p.clean_probe_step_floor and direction < 0 and self._clean(lo):
            step = max(step, min(lo.target_rate - center, 0.0))
        if self.p.clean_probe_climb > 0 and direction > 0 and self._clean(hi):
            floor = hi.target_rate * (1 + (self.p.clean_probe_climb - 1) * self.epsilon)
            step = max(step, floor - center)
        if self.p.decrease_to_capacity > 0 and direction < 0:
            step = max(step, self._capacity_step_floor(hi, lo, center))
        if direction > 0:
            step = max(step, self._increase_floor(center))
        self.rate = self.clamp(center + step)
        if self.p.moving and (direction > 0 or self.p.moving_after_decrease):
            self.state = "moving"
            self.new_epoch()
        else:
            self._enter_probing()
        return Verdict("increase" if direction > 0 else "decrease", self.rate - center)

    def _capacity_step_floor(self, hi: MiResult, lo: MiResult, center: float) -> float:
        """decrease_to_capacity: the smallest step down (bytes/s, <= 0) after a pair whose
        higher probe alone grew the queue, to the capacity that growth implies less about
        decrease_to_capacity x eps."""
        grew = self.mi_utility(hi)[1]
        if grew <= 0 or self.mi_utility(lo)[1] > 0 or self._stands_on_queue(lo):
            return -math.inf
        capacity = hi.send_rate / (1 + grew)
        return min(capacity / (1 + self.p.decrease_to_capacity * self.epsilon) - center, 0.0)

    def _note_rtt_min(self, result: MiResult) -> None:
        if result.rtt_min <= 0:
            return
        for floor in (self._recent_rtt_floor, self._gate_rtt_floor):
            if floor is not None:
                floor.update(result.rtt_min, result.finish_time)

    def _stands_on_queue(self, lo: MiResult) -> bool:
        """decrease_to_capacity_window_s: `lo`'s smallest RTT sample stood more than
        queue_drain's threshold above the recent floor (`lo` itself is in the filter)."""
        recent = self._recent_rtt_floor
        if recent is None or recent.empty or lo.rtt_min <= 0:
            return False
        floor = recent.best()
        return lo.rtt_min - floor > self._queue_threshold(floor)

    def _rise_is_external(self, mi: MiResult, seen: MiResult) -> bool:
        """external_rtt_rise: `mi`'s RTT grew faster than its excess over the rate `seen`
        delivered without RTT growth can explain (a queue of ours grows at s/C - 1)."""
        k = self.p.external_rtt_rise
        if k <= 0 or self.p.b <= 0:
            return False
        grew = self.mi_utility(mi)[1]
        if grew <= 0 or self.mi_utility(seen)[1] > 0:
            return False
        capacity = min(seen.send_rate, seen.delivery_rate)
        if capacity <= 0:
            return False
        return grew > k * max(mi.send_rate / capacity - 1, self.epsilon)

    def _clean(self, result: MiResult) -> bool:
        """`result` saw no congestion: no RTT gradient beyond the noise and no loss."""
        return result.loss == 0 and self.mi_utility(result)[1] == 0

    def _set_ref(self, result: MiResult, utility: float) -> None:
        self._ref = (result, utility)

    @property
    def _ref_rate(self) -> float:
        """Rate of the reference MI, bytes/s (0 before any)."""
        return self._ref[0].target_rate if self._ref is not None else 0.0

    @property
    def _ref_utility(self) -> float:
        return self._ref[1] if self._ref is not None else 0.0

    def _queue_threshold(self, min_rtt: float | None = None) -> float:
        """The smallest rise above the path's RTT floor (`min_rtt`, by default the min RTT)
        that is queue, not the sender's own burst."""
        p, stats = self.p, self.rtt_stats
        if min_rtt is None:
            min_rtt = stats.min_rtt_or(stats.latest_rtt)
        threshold = max(p.queue_drain * min_rtt, p.queue_drain_floor_ms / 1000)
        if p.queue_drain_min_rtt and self.rate > 0:
            # The pacer releases packets in pairs (pacing.PACING_WAKE_QUANTUM): at a
            # bottleneck of about the sending rate the second waits one packet time behind
            # the first, in every MI. That is the sender's own burst, not a standing queue.
            threshold = max(threshold, self.max_datagram_size / self.rate)
        return threshold

    def _trend_charged(self, result: MiResult, utility: float) -> tuple[float, bool]:
        """(utility, grew): `result` charged the queue it added since the reference MI."""
        ref = self._ref[0] if self._ref is not None else None
        if (not self.p.moving_queue_trend or self.p.b <= 0 or ref is None
                or result.rtt_min <= 0 or ref.rtt_min <= 0):
            return utility, False
        rise = result.rtt_min - ref.rtt_min
        elapsed = result.start_time - ref.start_time
        if rise <= self._queue_threshold() or elapsed <= 0:
            return utility, False
        trend = rise / elapsed
        counted = self.mi_utility(result)[1]
        if trend <= counted:
            return utility, counted > 0
        x = self.mbps(result.send_rate)
        p = self.p
        return vivace_utility(x, trend, result.loss, t=p.t, b=p.b, c=p.c), True

    def _moving(self, result: MiResult, utility: float) -> Verdict:
        if self._ref is not None and self._rise_is_external(result, self._ref[0]):
            self._enter_probing()
            return Verdict("external-rise")
        rate = result.target_rate
        utility, trend_grew = self._trend_charged(result, utility)
        raw_utility = utility
        ref_utility = self._ref_utility
        if self._ref is not None:
            utility, ref_utility, _ = self._pooled(result, utility, *self._ref)
        # The step made the queue grow, and the utility counts it (b > 0).
        queue_grew = self.p.b > 0 and (trend_grew or self.mi_utility(result)[1] > 0.0)
        # Too small a move to measure a gradient over: do not divide noise by a tiny rate
        # difference; probe around the new rate. Unless the step made the queue grow (a
        # significant RTT gradient) and so did worse: then undo it below. A small step's
        # loss is not evidence enough, random loss dominates it.
        small = abs(rate - self._ref_rate) < self.epsilon * rate * 0.5
        if small and not (queue_grew and utility < ref_utility):
            self._enter_probing()
            return Verdict("probe-again")
        # A step that fell short of the reference (the probe on the side moved to) did
        # not move past anything measured: keep the better of the two and probe there.
        behind = (rate - self._ref_rate) * self.direction < 0
        if behind and utility >= ref_utility:
            self._enter_probing()
            return Verdict("probe-again")
        gamma = 0.0 if small or (behind and not self.p.continue_from_reference) else (
            (utility - ref_utility) / (self.mbps(rate) - self.mbps(self._ref_rate)))
        if gamma != 0.0 and (gamma > 0) == (self.direction > 0):
            self.tau += 1
            if behind:
                base = self._ref_rate  # the reference stays the best point measured
            else:
                base = rate
                self._set_ref(result, raw_utility)
            step = self._step(gamma, lost=result.loss > 0)
            if self.direction > 0:
                step = max(step, self._increase_floor(base))
            old = self.rate
            self.rate = self.clamp(base + step)
            self.new_epoch()
            return Verdict("continue", self.rate - old)
        # The gradient turned (or a small step did worse).
        return self._reverse(overshoot=(result, raw_utility) if queue_grew else None)

    def _reverse(self, *, overshoot: tuple[MiResult, float] | None = None,
                 decision: str = "reverse") -> Verdict:
        """Go back to the last better rate, reset the learning state and probe there.

        `overshoot`: the result and utility of an MI above that rate that grew the queue.
        """
        old = self.rate
        self.rate = self.clamp(self._ref_rate)
        self.direction, self.tau, self.k = 0, 0, 0
        if not self.p.reuse_overshoot or (
                overshoot is not None and overshoot[0].target_rate <= self.rate):
            overshoot = None
        self._enter_probing(known_high=overshoot)
        return Verdict(decision, self.rate - old)

    # -- step size -------------------------------------------------------------------------

    def _packets_per_srtt(self, packets: float) -> float:
        """`packets` per smoothed RTT, bytes/s (0 when packets <= 0 or no RTT sample yet)."""
        srtt = self.rtt_stats.smoothed_rtt
        if packets <= 0 or srtt <= 0:
            return 0.0
        return packets * self.max_datagram_size / srtt

    def _increase_floor(self, rate: float) -> float:
        """increase_floor_packets: the smallest increase from `rate`, bytes/s."""
        return min(self._packets_per_srtt(self.p.increase_floor_packets),
                   self.boundary() * rate)

    @staticmethod
    def amplifier(tau: int) -> float:
        """m(tau) of thesis 4.4.2."""
        return float(tau) if tau <= AMPLIFIER_LINEAR_UNTIL else float(2 * tau - 3)

    def boundary(self) -> float:
        """omega = omega0 + k*delta, the largest step as a fraction of the rate."""
        return self.p.omega0 + self.k * self.p.delta

    def _step(self, gamma: float, *, lost: bool = False) -> float:
        """Signed rate change in bytes/s for utility gradient `gamma` (per Mbit/s); `lost`:
        the MIs it was decided on lost packets."""
        p = self.p
        rate_mbps = self.mbps(self.rate)
        theta = p.theta0
        if p.theta_rate_ref_mbps > 0:
            scale = max(1.0, rate_mbps / p.theta_rate_ref_mbps)
            theta *= scale ** p.theta_increase_power if gamma > 0 else scale
        change_mbps = theta * self.amplifier(self.tau) * gamma
        ratio = abs(change_mbps) / rate_mbps if rate_mbps > 0 else 0.0
        omega = self.boundary()
        cap = p.increase_boundary_max if gamma > 0 else p.decrease_boundary_max
        if gamma < 0 and lost and p.decrease_boundary_max_latency_only:
            cap = 0.0
        if cap > 0:
            omega = min(omega, cap)
        floor_mbps = (self.mbps(self._packets_per_srtt(p.increase_boundary_floor_packets))
                      if gamma > 0 else 0.0)
        if ratio > omega:
            # A step within the packet floor is not clipped, and the boundary does not grow.
            if abs(change_mbps) > floor_mbps:
                change_mbps = math.copysign(max(omega * rate_mbps, floor_mbps), change_mbps)
                self.k += 1
        elif p.delta > 0:
            self.k = max(0, math.ceil((ratio - p.omega0) / p.delta - 1e-9))
        return change_mbps * MBIT / 8
