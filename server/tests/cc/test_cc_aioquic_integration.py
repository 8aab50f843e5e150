"""The aioquic integration: controllers drive a real in-memory QUIC transfer."""

from __future__ import annotations

from typing import Any

import pytest
from aioquic.quic.recovery import QuicPacketPacer

from pccstream.cc import create_controller, list_controllers
from pccstream.cc.aioquic_integration import (
    ControllerCongestionControl,
    ControllerPacer,
    controller_telemetry,
    install_controller,
    installed_controller,
)
from pccstream.cc.base import Controller
from pccstream.cc.fixed_window import FixedWindow, FixedWindowParams
from pccstream.cc.pcc_sender import PccSender

from .cc_quic_pair import QuicPair

ALL = [info.name for info in list_controllers()]
TELEMETRY_KEYS = {"cwnd_bytes", "pacing_rate_bps", "srtt_ms", "min_rtt_ms", "latest_rtt_ms",
                  "bytes_in_flight", "delivery_rate_bps", "bytes_sent", "bytes_lost"}
MI_KEYS = {"type", "t_ms", "target_rate_bps", "send_rate_bps", "delivery_rate_bps", "rtt_ms",
           "rtt_min_ms", "rtt_gradient_raw", "rtt_gradient", "rtt_gradient_minima",
           "rtt_samples", "rtt_gradient_stderr", "rtt_residual_autocorr", "loss",
           "utility", "send_fill", "state", "decision", "step_bps"}
SILENCE_KEYS = {"ack_silences_held", "ack_silences_out", "ack_silence_hold_share"}


def test_connections_start_with_aioquic_own_pacer() -> None:
    pair = QuicPair()
    assert type(pair.server._loss._pacer) is QuicPacketPacer


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
    # The shared keys for every controller; the cellular profile adds its silence verdicts.
    assert sample is not None and set(sample) - SILENCE_KEYS == TELEMETRY_KEYS
    assert (set(sample) >= SILENCE_KEYS) == (name == "vivace-lte")
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
    assert pacer.pacing.packet_time == pytest.approx(1200 / 123_456.0)


class _OpeningWindow(FixedWindow):
    """A window that a test grows by hand and that says when it will open."""

    def __init__(self) -> None:
        self.extra = 0
        self.opens: float | None = None
        super().__init__(FixedWindowParams(window=10))

    @property
    def congestion_window(self) -> int:
        return super().congestion_window + self.extra

    def window_opens_at(self) -> float | None:
        return self.opens


def test_a_window_that_opens_with_time_is_read_live_and_woken_by_the_pacer() -> None:
    """aioquic reads the window when it sends, not as copied at the last event, and the
    pacer's time is the wake for a window that no ACK will open."""
    pair = QuicPair()
    controller = _OpeningWindow()
    install_controller(pair.server, controller, clock=lambda: 42.0)
    assert controller.clock is not None and controller.clock() == 42.0
    before = pair.server._loss.congestion_window
    controller.extra = 5000
    assert pair.server._loss.congestion_window == before + 5000
    pacer = pair.server._loss._pacer
    controller.opens = pair.now + 0.25
    assert pacer.next_send_time(pair.now) == pytest.approx(pair.now + 0.25)
    controller.opens = None
    assert pacer.next_send_time(pair.now) is None  # unpaced before an RTT sample


def _record_packets(controller: Controller) -> tuple[set[object], set[object]]:
    """(packets `controller` was told were sent, packets it was told were acked or lost),
    as (epoch, packet number)."""
    sent: set[object] = set()
    settled: set[object] = set()
    on_sent, on_acked, on_lost = (controller.on_packet_sent, controller.on_packet_acked,
                                  controller.on_packets_lost)

    def record_sent(now: float, packet: Any) -> None:
        sent.add((packet.epoch, packet.packet_number))
        on_sent(now, packet)

    def record_acked(now: float, packet: Any) -> None:
        settled.add((packet.epoch, packet.packet_number))
        on_acked(now, packet)

    def record_lost(now: float, packets: Any) -> None:
        packets = list(packets)
        settled.update((p.epoch, p.packet_number) for p in packets)
        on_lost(now, packets)

    controller.on_packet_sent = record_sent  # type: ignore[method-assign]
    controller.on_packet_acked = record_acked  # type: ignore[method-assign]
    controller.on_packets_lost = record_lost  # type: ignore[method-assign]
    return sent, settled


@pytest.mark.parametrize(("first", "second"), [("cubic", "vivace"), ("vivace", "reno"),
                                               ("allegro", "vivace-lte")])
def test_swap_mid_connection(first: str, second: str) -> None:
    pair = QuicPair(rate_mbps=8, rtt=0.03, queue_bytes=30_000, loss=0.01, seed=5)
    old_events: list[dict[str, Any]] = []
    new_events: list[dict[str, Any]] = []
    old = create_controller(first, seed=1)
    install_controller(pair.server, old, on_event=old_events.append)
    pair.handshake()
    size = 500_000
    pair.send_from_server(size)
    swapped: list[Controller] = []
    at_swap: dict[str, int] = {}
    new_packets: list[tuple[set[object], set[object]]] = []

    def swap_when_busy(p: QuicPair) -> None:
        cc = p.server._loss._cc
        if not swapped and p.received > 150_000 and cc.bytes_in_flight >= 2 * 1200:
            in_flight = cc.bytes_in_flight
            ctrl = create_controller(second, seed=2)
            new_packets.append(_record_packets(ctrl))
            install_controller(p.server, ctrl, on_event=new_events.append)
            swapped.append(ctrl)
            at_swap.update(events=len(old_events), sent=old.bytes_sent, acked=old.bytes_acked,
                           in_flight=in_flight)
            # Bytes in flight carry over; the new controller has none of its own yet.
            assert p.server._loss._cc.bytes_in_flight == in_flight
            assert ctrl.bytes_in_flight == 0

    pair.run(until=lambda: pair.received >= size, on_step=swap_when_busy)
    assert swapped and pair.received == size
    new = swapped[0]
    assert installed_controller(pair.server) is new
    # Packets in flight at the swap were acked or lost later, yet never reached the new
    # controller: everything it was told about settling, it had sent itself.
    sent, settled = new_packets[0]
    assert at_swap["in_flight"] > 0 and settled and settled <= sent
    assert new.bytes_in_flight >= 0 and pair.server._loss._cc.bytes_in_flight >= 0
    # The replaced controller fell silent: no events, no packets after the swap.
    assert len(old_events) == at_swap["events"]
    assert (old.bytes_sent, old.bytes_acked) == (at_swap["sent"], at_swap["acked"])
    assert new_events or second in ("cubic", "reno")


def test_qlog_absent_is_fine() -> None:
    pair = QuicPair(qlog=False)
    events: list[dict[str, Any]] = []
    install_controller(pair.server, create_controller("allegro", seed=1), on_event=events.append)
    pair.handshake()
    pair.send_from_server(200_000)
    pair.run(until=lambda: pair.received >= 200_000)
    assert events
