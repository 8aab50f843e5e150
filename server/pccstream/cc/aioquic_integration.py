"""The one point where a `Controller` is plugged into aioquic (1.7.x).

`install_controller(connection, controller)` replaces the connection's congestion control
(`connection._loss._cc`) with `ControllerCongestionControl`, an aioquic
`QuicCongestionControl` that forwards to the controller, and its pacer
(`connection._loss._pacer`) with `ControllerPacer`, which takes its rate from the controller:
`pacing_rate` for rate-based controllers, cwnd/srtt otherwise, refreshed whenever the
controller's outputs change rather than only on RTT samples.

It may be called again on the same connection (the WebTransport CONNECT chose `?cc=`): the
new controller starts fresh, the bytes in flight carry over, and packets sent before the
swap are kept out of the new controller when they are acked or lost later.

All access to aioquic's private attributes lives in this module; `check_aioquic_internals`
(run on every install, and by the tests) fails loudly if aioquic changes them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from aioquic.quic.congestion.base import QuicCongestionControl
from aioquic.quic.connection import QuicConnection
from aioquic.quic.packet_builder import QuicSentPacket
from aioquic.quic.recovery import K_MICRO_SECOND, K_SECOND, QuicPacketPacer, QuicPacketRecovery

from .base import Controller

# (object, attribute) pairs this module relies on; see check_aioquic_internals.
_CONNECTION_ATTRS = ("_loss", "_quic_logger", "_max_datagram_size")
_RECOVERY_ATTRS = ("_cc", "_pacer", "_rtt_smoothed", "_rtt_latest", "_rtt_min",
                   "_rtt_variance", "_rtt_initial")
_PACER_ATTRS = ("_max_datagram_size", "packet_time", "bucket_max", "bucket_time",
                "evaluation_time")

# Packets of credit a pacer timer waits for once the bucket is empty. Each wake-up costs a
# pass through aioquic's timer and send path in Python; a rate-bound sender (PCC) woke once
# per packet. Two back-to-back packets (2.4 kB, 1.6 ms of a 12 Mbit/s link) do not matter to
# the bottleneck; the long-run rate is unchanged (credit accrues continuously). 1 = as aioquic.
PACING_WAKE_QUANTUM = 2


class AioquicInternalsChanged(RuntimeError):
    """aioquic no longer has the private attributes the integration relies on."""


def check_aioquic_internals(connection: QuicConnection) -> None:
    """Raise AioquicInternalsChanged if `connection` lacks what this module touches."""
    missing = [f"QuicConnection.{a}" for a in _CONNECTION_ATTRS if not hasattr(connection, a)]
    recovery = getattr(connection, "_loss", None)
    if not isinstance(recovery, QuicPacketRecovery):
        missing.append("QuicConnection._loss: QuicPacketRecovery")
    else:
        missing += [f"QuicPacketRecovery.{a}" for a in _RECOVERY_ATTRS
                    if not hasattr(recovery, a)]
        pacer = getattr(recovery, "_pacer", None)
        missing += [f"QuicPacketPacer.{a}" for a in _PACER_ATTRS if not hasattr(pacer, a)]
        if not isinstance(getattr(recovery, "_cc", None), QuicCongestionControl):
            missing.append("QuicPacketRecovery._cc: QuicCongestionControl")
    if missing:
        raise AioquicInternalsChanged(
            "pccstream.cc.aioquic_integration does not match this aioquic version; "
            "missing: " + ", ".join(missing))


class ControllerCongestionControl(QuicCongestionControl):
    """aioquic's congestion-control interface, answered by a `Controller`."""

    def __init__(self, controller: Controller, *, recovery: QuicPacketRecovery,
                 max_datagram_size: int, bytes_in_flight: int) -> None:
        super().__init__(max_datagram_size=max_datagram_size)
        self.controller = controller
        self.bytes_in_flight = bytes_in_flight
        self._recovery = recovery
        # First packet number this controller sent, per packet number space: anything
        # older was sent by a previous controller and is only removed from bytes_in_flight.
        self._first_packet: dict[object, int] = {}
        self._sync()

    def _owns(self, packet: QuicSentPacket) -> bool:
        first = self._first_packet.get(packet.epoch)
        return first is not None and packet.packet_number >= first

    def _sync(self) -> None:
        self.congestion_window = self.controller.congestion_window
        self.ssthresh = self.controller.ssthresh

    def on_packet_sent(self, *, packet: QuicSentPacket) -> None:
        self.bytes_in_flight += packet.sent_bytes
        self._first_packet.setdefault(packet.epoch, packet.packet_number)
        now = packet.sent_time if packet.sent_time is not None else 0.0
        self.controller.on_packet_sent(now, packet)
        self._sync()

    def on_packet_acked(self, *, now: float, packet: QuicSentPacket) -> None:
        self.bytes_in_flight -= packet.sent_bytes
        if self._owns(packet):
            self.controller.on_packet_acked(now, packet)
            self._sync()

    def on_packets_expired(self, *, packets: Iterable[QuicSentPacket]) -> None:
        owned = self._settle(packets)
        if owned:
            self.controller.on_packets_expired(owned)
            self._sync()

    def on_packets_lost(self, *, now: float, packets: Iterable[QuicSentPacket]) -> None:
        owned = self._settle(packets)
        if owned:
            self.controller.on_packets_lost(now, owned)
            self._sync()

    def _settle(self, packets: Iterable[QuicSentPacket]) -> list[QuicSentPacket]:
        owned = []
        for packet in packets:
            self.bytes_in_flight -= packet.sent_bytes
            if self._owns(packet):
                owned.append(packet)
        return owned

    def on_persistent_congestion(self) -> None:
        self.controller.on_persistent_congestion()
        self._sync()

    def on_rtt_measurement(self, *, now: float, rtt: float) -> None:
        # The recovery has already folded this sample (minus ACK delay) into its estimates.
        _copy_rtt(self._recovery, self.controller)
        self.controller.on_rtt_sample(now, rtt)
        self._sync()

    def get_log_data(self) -> dict[str, Any]:
        data = super().get_log_data()
        data.update(self.controller.log_data())
        return data


class ControllerPacer(QuicPacketPacer):
    """A token-bucket pacer with its rate taken from a `Controller`.

    It keeps aioquic's state and bucket sizing but charges tokens strictly: a packet needs a
    whole packet time of credit. aioquic's own pacer lets a packet go on any positive
    credit and then zeroes the bucket, so every incoming ACK releases a packet and the
    actual rate tracks the ACK clock (about twice the nominal rate in our tests) -
    harmless under a window, fatal for a rate-based controller.
    """

    def __init__(self, controller: Controller, *, recovery: QuicPacketRecovery,
                 max_datagram_size: int) -> None:
        super().__init__(max_datagram_size=max_datagram_size)
        self.controller = controller
        self._recovery = recovery
        self._version = -1
        self.rate: float | None = None  # bytes/s in force, None while unpaced

    # aioquic annotates `float` but returns None when no wait is needed; we pass it through.
    def next_send_time(self, now: float) -> float:
        self._refresh()
        if self.packet_time is None:
            return None  # type: ignore[return-value]  # unpaced, as aioquic
        self.update_bucket(now=now)
        missing = self.packet_time - self.bucket_time
        if missing <= 1e-9:
            return None  # type: ignore[return-value]
        # Out of credit: sleep until PACING_WAKE_QUANTUM packets' worth has accrued (within
        # the bucket) rather than one, halving the timer wake-ups of a pacing-bound sender.
        quantum = min(PACING_WAKE_QUANTUM * self.packet_time, self.bucket_max)
        return now + max(missing, quantum - self.bucket_time)

    def update_after_send(self, now: float) -> None:
        self._refresh()
        if self.packet_time is None:
            return
        self.update_bucket(now=now)
        # Packets sent without asking (ACKs due, probes) still pay: the bucket may go into
        # debt, by at most one bucket, so the long-run rate holds.
        self.bucket_time = max(self.bucket_time - self.packet_time, -self.bucket_max)

    def update_rate(self, congestion_window: int, smoothed_rtt: float) -> None:
        # Called by the recovery after RTT samples and losses.
        self._apply()

    def _refresh(self) -> None:
        if self.controller.pacing_version != self._version:
            self._apply()

    def _apply(self) -> None:
        ctrl = self.controller
        self._version = ctrl.pacing_version
        srtt = self._recovery._rtt_smoothed
        rate = ctrl.paced_rate(srtt)
        if rate is None or rate <= 0 or not math.isfinite(rate):
            # As stock aioquic: no pacing before the first RTT sample.
            self.packet_time = None
            self.rate = None
            return
        self.rate = rate
        mss = self._max_datagram_size
        # aioquic's own sizing: bursts up to a quarter of the window (2 to 16 packets),
        # the window being the rate's BDP for rate-based controllers.
        window = rate * max(srtt, K_MICRO_SECOND) if ctrl.is_rate_based else ctrl.congestion_window
        self.packet_time = max(K_MICRO_SECOND, min(mss / rate, K_SECOND))
        self.bucket_max = max(2 * mss, min(int(window) // 4, 16 * mss)) / rate
        if self.bucket_time > self.bucket_max:
            self.bucket_time = self.bucket_max


def _copy_rtt(recovery: QuicPacketRecovery, controller: Controller) -> None:
    controller.rtt_stats.initial_rtt = recovery._rtt_initial
    if recovery._rtt_smoothed > 0:
        controller.rtt_stats.set(latest=recovery._rtt_latest, smoothed=recovery._rtt_smoothed,
                                 variance=recovery._rtt_variance, minimum=recovery._rtt_min)


# qlog event names (category "recovery") of the controllers' telemetry events, by type.
QLOG_EVENT_NAMES = {"mi": "pcc_monitor_interval", "sprout": "sprout_forecast",
                    "remy": "remy_rule"}


def install_controller(connection: QuicConnection, controller: Controller, *,
                       on_event: Callable[[dict[str, Any]], None] | None = None,
                       t0: float | None = None) -> None:
    """Make `controller` drive `connection`'s congestion window and pacing.

    `on_event` receives the controller's events: one dict per finished PCC monitor
    interval (type "mi"), per Sprout tick ("sprout"), per Remy rule sample ("remy"); the
    same dict is logged to the connection's qlog (`QLOG_EVENT_NAMES`). `t_ms` in
    events is relative to `t0` (a time on the connection's clock, i.e. the `now` passed to
    aioquic), or to the first packet this controller sends when `t0` is None.
    Calling it again replaces the previous controller (bytes in flight carry over).
    """
    check_aioquic_internals(connection)
    recovery = connection._loss
    mss = connection._max_datagram_size
    controller.bind(max_datagram_size=mss, now=t0)
    _copy_rtt(recovery, controller)

    def sink(event: dict[str, Any]) -> None:
        quic_logger = connection._quic_logger  # None once the connection is closed
        if quic_logger is not None:
            quic_logger.log_event(category="recovery",
                                  event=QLOG_EVENT_NAMES.get(event["type"], str(event["type"])),
                                  data=event)
        if on_event is not None:
            on_event(event)

    controller.event_sink = sink
    previous = recovery._cc
    if isinstance(previous, ControllerCongestionControl):
        previous.controller.event_sink = None  # the replaced controller falls silent
    recovery._cc = ControllerCongestionControl(
        controller, recovery=recovery, max_datagram_size=mss,
        bytes_in_flight=previous.bytes_in_flight)
    recovery._pacer = ControllerPacer(controller, recovery=recovery, max_datagram_size=mss)


def installed_controller(connection: QuicConnection) -> Controller | None:
    """The controller `install_controller` put on `connection`, if any."""
    cc = connection._loss._cc
    return cc.controller if isinstance(cc, ControllerCongestionControl) else None


def controller_telemetry(connection: QuicConnection, now: float) -> dict[str, Any] | None:
    """The installed controller's `telemetry_sample`, with the connection's bytes in flight."""
    cc = connection._loss._cc
    if not isinstance(cc, ControllerCongestionControl):
        return None
    sample = cc.controller.telemetry_sample(now)
    sample["bytes_in_flight"] = cc.bytes_in_flight
    return sample
