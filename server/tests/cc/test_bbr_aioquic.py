"""BBR through the real aioquic stack (in-memory pair on a virtual clock): the delivery-rate
sampler and the app-limited detector see aioquic's own send and ACK events."""

from __future__ import annotations

import heapq
import math

import pytest

from pccstream.cc import create_controller
from pccstream.cc.aioquic_integration import install_controller
from pccstream.cc.bbr import Bbr, BbrState
from pccstream.cc.delivery_rate import IdleDetector

from .cc_quic_pair import QuicPair

RATE = 10e6 / 8  # the pair's bottleneck, bytes/s


def bbr_pair(**kw: float) -> tuple[QuicPair, Bbr]:
    pair = QuicPair(rate_mbps=10, rtt=0.04, queue_bytes=50_000, seed=3, qlog=False, **kw)
    ctrl = create_controller("bbr", seed=1)
    assert isinstance(ctrl, Bbr)
    install_controller(pair.server, ctrl, t0=pair.now)
    pair.handshake()
    return pair, ctrl


def test_bbr_bulk_transfer_models_the_path() -> None:
    pair, bbr = bbr_pair()
    size = 3_000_000
    pair.send_from_server(size)
    pair.run(until=lambda: pair.received >= size)
    assert bbr.state is BbrState.PROBE_BW
    assert 0.85 * RATE <= bbr.btlbw <= 1.15 * RATE
    assert 0.04 <= bbr.rtprop <= 0.05
    # The sampler tracked exactly the controller's packets.
    assert bbr.sampler.bytes_in_flight == bbr.bytes_in_flight
    assert bbr.sampler.delivered == bbr.bytes_acked


@pytest.mark.parametrize("detect", [True, False])
def test_bbr_app_limited_video_like_sender_keeps_its_estimate(detect: bool) -> None:
    pair, bbr = bbr_pair()
    if not detect:  # the control: app-limited periods go unnoticed
        bbr.idle = IdleDetector(min_gap=math.inf)
    pair.send_from_server(1_500_000)
    pair.run(until=lambda: pair.received >= 1_500_000)
    estimate = bbr.btlbw
    assert estimate >= 0.85 * RATE
    # Then 25 kB every 250 ms for 6 s (0.8 Mbit/s on a 10 Mbit/s path), as a player
    # fetching small segments does: dozens of rounds of low, app-limited samples.
    start = pair.now
    due = [start + 0.25 * i for i in range(24)]

    def app(p: QuicPair) -> None:
        while due and p.now >= due[0]:
            due.pop(0)
            p.send_from_server(25_000)

    # The pair's clock jumps from event to event; an empty datagram to the client (which
    # aioquic ignores) makes it stop at each due time even when the connection is idle.
    for t in due + [start + 6.0]:
        heapq.heappush(pair._events, (t, next(pair._seq), "c", b""))
    rounds = bbr.round_count
    pair.run(until=lambda: pair.now >= start + 6.0, on_step=app, max_time=10.0)
    assert bbr.round_count - rounds > 20
    if detect:
        assert bbr.btlbw >= 0.9 * estimate
    else:
        assert bbr.btlbw < 0.5 * estimate
