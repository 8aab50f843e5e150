"""The aioquic integration: controllers drive a real in-memory QUIC transfer."""

from __future__ import annotations

from typing import Any

import pytest
from aioquic.quic.recovery import QuicPacketPacer

from pccstream.cc import create_controller, list_controllers
from pccstream.cc.aioquic_integration import (
    PACING_WAKE_QUANTUM,
    AioquicInternalsChanged,
    ControllerCongestionControl,
    ControllerPacer,
    check_aioquic_internals,
    controller_telemetry,
    install_controller,
    installed_controller,
)
from pccstream.cc.base import Controller
from pccstream.cc.pcc_sender import PccSender

from .cc_quic_pair import QuicPair

ALL = [info.name for info in list_controllers()]
TELEMETRY_KEYS = {"cwnd_bytes", "pacing_rate_bps", "srtt_ms", "min_rtt_ms", "latest_rtt_ms",
                  "bytes_in_flight", "delivery_rate_bps", "bytes_sent", "bytes_lost"}
MI_KEYS = {"type", "t_ms", "target_rate_bps", "send_rate_bps", "delivery_rate_bps", "rtt_ms",
           "rtt_gradient_raw", "rtt_gradient", "loss", "utility", "state", "decision",
           "step_bps"}


def test_aioquic_internals_are_as_expected() -> None:
    # If this fails, aioquic changed the private attributes the integration patches:
    # update pccstream/cc/aioquic_integration.py before anything else.
    pair = QuicPair()
    check_aioquic_internals(pair.server)
    assert type(pair.server._loss._pacer) is QuicPacketPacer


def test_internals_check_fails_loudly() -> None:
    pair = QuicPair()
    del pair.server._loss._rtt_smoothed
    with pytest.raises(AioquicInternalsChanged, match="_rtt_smoothed"):
        install_controller(pair.server, create_controller("vivace", seed=1))


@pytest.mark.parametrize("name", ALL)
def test_transfer_with_each_controller(name: str) -> None:
    pair = QuicPair(rate_mbps=10, rtt=0.02, queue_bytes=25_000, loss=0.01, seed=3)
    events: list[dict[str, Any]] = []
    controller = create_controller(name, seed=1)
    install_controller(pair.server, controller, on_event=events.append, t0=pair.now)
    assert installed_controller(pair.server) is controller
    pair.handshake()
    size = 400_000
    pair.send_from_server(size)
    pair.run(until=lambda: pair.received >= size)

    assert pair.received == size
    sample = controller_telemetry(pair.server, pair.now)
    assert sample is not None and set(sample) == TELEMETRY_KEYS
    assert sample["bytes_sent"] > size and sample["srtt_ms"] >= 20
    cc = pair.server._loss._cc
    assert isinstance(cc, ControllerCongestionControl) and cc.bytes_in_flight >= 0
    pacer = pair.server._loss._pacer
    assert isinstance(pacer, ControllerPacer)
    if isinstance(controller, PccSender):
        # The pacer runs at the controller's rate, and MIs were reported on both channels.
        assert pacer.rate == controller.pacing_rate
        assert events and all(set(e) == MI_KEYS and e["type"] == "mi" for e in events)
        assert all(e["t_ms"] >= 0 for e in events)
        assert pair.server_logger is not None
        trace = pair.server_logger.to_dict()["traces"][0]
        names = [e["name"] for e in trace["events"]]
        assert names.count("recovery:pcc_monitor_interval") == len(events)
    else:
        # The Sprout and Remy arms report their model; the other baselines nothing.
        telemetry = {"sprout": "sprout", "sprout-ewma": "sprout", "remy": "remy"}.get(name)
        assert {e["type"] for e in events} == ({telemetry} if telemetry else set())
        srtt = pair.server._loss._rtt_smoothed
        # cwnd/srtt with the pacing gain (1.2 after slow start).
        assert pacer.rate is not None
        assert pacer.rate == pytest.approx(controller.paced_rate(srtt))
        if name in ("cubic", "reno"):
            assert pacer.rate >= controller.congestion_window / srtt


def test_pacing_follows_rate_changes_without_rtt_samples() -> None:
    pair = QuicPair()
    controller = create_controller("vivace", seed=1)
    install_controller(pair.server, controller)
    pacer = pair.server._loss._pacer
    assert isinstance(controller, PccSender) and isinstance(pacer, ControllerPacer)
    controller._mi_rate = 123_456.0  # what the start of a new MI does
    controller.pacing_version += 1
    pacer.next_send_time(pair.now)
    assert pacer.rate == 123_456.0
    assert pacer.packet_time == pytest.approx(1200 / 123_456.0)


def test_pacer_sleeps_for_a_quantum_of_credit_and_keeps_the_rate() -> None:
    pair = QuicPair()
    controller = create_controller("vivace", seed=1)
    install_controller(pair.server, controller)
    pacer = pair.server._loss._pacer
    assert isinstance(controller, PccSender) and isinstance(pacer, ControllerPacer)
    controller._mi_rate = 1_500_000.0  # 12 Mbit/s: 0.8 ms per 1200-byte packet
    controller.pacing_version += 1
    now, sent = 10.0, 0
    pacer.next_send_time(now)
    pacer.bucket_time = 0.0
    wakeups = 0
    while now < 11.0:
        wait = pacer.next_send_time(now)
        if wait is None:
            pacer.update_after_send(now)
            sent += 1
            continue
        # Empty bucket: the timer is set for PACING_WAKE_QUANTUM packets, not one.
        assert wait - now == pytest.approx(PACING_WAKE_QUANTUM * pacer.packet_time, rel=0.01)
        now, wakeups = wait, wakeups + 1
    assert sent == pytest.approx(1250, rel=0.01)  # the rate holds
    assert wakeups == pytest.approx(1250 / PACING_WAKE_QUANTUM, rel=0.01)


@pytest.mark.parametrize(("first", "second"), [("cubic", "vivace"), ("vivace", "reno"),
                                               ("allegro", "vivace-lte")])
def test_swap_mid_connection(first: str, second: str) -> None:
    pair = QuicPair(rate_mbps=8, rtt=0.03, queue_bytes=30_000, loss=0.01, seed=5)
    old_events: list[dict[str, Any]] = []
    new_events: list[dict[str, Any]] = []
    install_controller(pair.server, create_controller(first, seed=1), on_event=old_events.append)
    pair.handshake()
    size = 500_000
    pair.send_from_server(size)
    swapped: list[Controller] = []

    def swap_when_busy(p: QuicPair) -> None:
        cc = p.server._loss._cc
        if not swapped and p.received > 150_000 and cc.bytes_in_flight >= 2 * 1200:
            in_flight = cc.bytes_in_flight
            ctrl = create_controller(second, seed=2)
            install_controller(p.server, ctrl, on_event=new_events.append)
            swapped.append(ctrl)
            # Bytes in flight carry over; the new controller has none of its own yet.
            assert p.server._loss._cc.bytes_in_flight == in_flight
            assert ctrl.bytes_in_flight == 0

    pair.run(until=lambda: pair.received >= size, on_step=swap_when_busy)
    assert swapped and pair.received == size
    new = swapped[0]
    assert installed_controller(pair.server) is new
    # Packets of the old controller acked after the swap never reached the new one.
    assert new.bytes_in_flight >= 0 and new.bytes_acked <= new.bytes_sent
    assert pair.server._loss._cc.bytes_in_flight >= 0
    # The replaced controller fell silent: nothing reported after the swap time.
    assert all(e["t_ms"] >= 0 for e in old_events + new_events)


def test_qlog_absent_is_fine() -> None:
    pair = QuicPair(qlog=False)
    events: list[dict[str, Any]] = []
    install_controller(pair.server, create_controller("allegro", seed=1), on_event=events.append)
    pair.handshake()
    pair.send_from_server(200_000)
    pair.run(until=lambda: pair.received >= 200_000)
    assert events
