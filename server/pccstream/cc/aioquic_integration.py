"""The one point where a `Controller` is plugged into aioquic (1.7.x).

`install_controller(connection, controller)` replaces the connection's congestion control
with `ControllerCongestionControl`, an aioquic `QuicCongestionControl` that forwards to the
controller, and its pacer with `ControllerPacer`, aioquic's face of `ControllerPacing`
(`pccstream.cc.pacing`), which takes its rate from the controller.

It may be called again on the same connection (the WebTransport CONNECT chose `?cc=`): the
new controller starts fresh, the bytes in flight carry over, and packets sent before the
swap are kept out of the new controller when they are acked or lost later.

The private aioquic attributes involved are reached through `pccstream.aioquic_internals`,
whose check the server runs once at start.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from aioquic.quic.congestion.base import QuicCongestionControl
from aioquic.quic.connection import QuicConnection
from aioquic.quic.packet_builder import QuicSentPacket
from aioquic.quic.recovery import QuicPacketPacer, QuicPacketRecovery

from pccstream import aioquic_internals as internals

from .base import Controller
from .pacing import ControllerPacing


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

    # Read live, not copied at events: a controller's window may grow with time alone
    # (`Controller.window_opens_at`), and aioquic reads it when the pacer's wake comes.
    @property
    def congestion_window(self) -> int:  # pyright: ignore[reportIncompatibleVariableOverride]
        return self.controller.congestion_window

    @congestion_window.setter
    def congestion_window(self, value: int) -> None:  # pyright: ignore[reportIncompatibleVariableOverride]
        """aioquic's constructor sets its initial window; the controller's is in force."""

    def _sync(self) -> None:
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
    """aioquic's pacer interface, answered by a `ControllerPacing`."""

    def __init__(self, controller: Controller, *, recovery: QuicPacketRecovery,
                 max_datagram_size: int) -> None:
        super().__init__(max_datagram_size=max_datagram_size)
        self.pacing = ControllerPacing(
            controller, max_datagram_size=max_datagram_size,
            smoothed_rtt=lambda: internals.smoothed_rtt(recovery))

    @property
    def rate(self) -> float | None:
        """Bytes/s in force, None while unpaced."""
        return self.pacing.rate

    # aioquic annotates `float` but returns None when no wait is needed; we pass it through.
    def next_send_time(self, now: float) -> float:
        paced = self.pacing.next_send_time(now)
        # A window that will open with time alone (no ACK coming) needs a wake, which only
        # the pacer's time gives aioquic.
        opens = self.pacing.controller.window_opens_at()
        if opens is not None:
            return opens if paced is None else max(paced, opens)
        return paced  # type: ignore[return-value]

    def update_after_send(self, now: float) -> None:
        self.pacing.update_after_send(now)

    def update_rate(self, congestion_window: int, smoothed_rtt: float) -> None:
        # Called by the recovery after RTT samples and losses.
        self.pacing.apply_rate()


def _copy_rtt(recovery: QuicPacketRecovery, controller: Controller) -> None:
    initial, latest, smoothed, variance, minimum = internals.rtt_estimates(recovery)
    controller.rtt_stats.initial_rtt = initial
    if smoothed > 0:
        controller.rtt_stats.set(latest=latest, smoothed=smoothed, variance=variance,
                                 minimum=minimum)


# qlog event names (category "recovery") of the controllers' telemetry events, by type.
QLOG_EVENT_NAMES = {"mi": "pcc_monitor_interval", "sprout": "sprout_forecast",
                    "remy": "remy_rule"}


def install_controller(connection: QuicConnection, controller: Controller, *,
                       on_event: Callable[[dict[str, Any]], None] | None = None,
                       t0: float | None = None,
                       clock: Callable[[], float] | None = None) -> None:
    """Make `controller` drive `connection`'s congestion window and pacing.

    `on_event` receives the controller's events: one dict per finished PCC monitor
    interval (type "mi"), per Sprout tick ("sprout"), per Remy rule sample ("remy"); the
    same dict is logged to the connection's qlog (`QLOG_EVENT_NAMES`). `t_ms` in
    events is relative to `t0` (a time on the connection's clock, i.e. the `now` passed to
    aioquic), or to the first packet this controller sends when `t0` is None.
    `clock` is the connection's clock (asyncio's `loop.time`), which a controller whose
    window grows with time alone reads; without it such a window grows only at events.
    Calling it again replaces the previous controller (bytes in flight carry over).
    """
    recovery = internals.recovery_of(connection)
    mss = internals.max_datagram_size(connection)
    controller.bind(max_datagram_size=mss, now=t0)
    controller.clock = clock
    _copy_rtt(recovery, controller)

    def sink(event: dict[str, Any]) -> None:
        quic_logger = internals.quic_logger(connection)
        if quic_logger is not None:
            quic_logger.log_event(category="recovery",
                                  event=QLOG_EVENT_NAMES.get(event["type"], str(event["type"])),
                                  data=event)
        if on_event is not None:
            on_event(event)

    controller.event_sink = sink
    previous = internals.congestion_control(connection)
    if isinstance(previous, ControllerCongestionControl):
        previous.controller.event_sink = None  # the replaced controller falls silent
    internals.replace_congestion_control(
        connection,
        ControllerCongestionControl(controller, recovery=recovery, max_datagram_size=mss,
                                    bytes_in_flight=previous.bytes_in_flight),
        ControllerPacer(controller, recovery=recovery, max_datagram_size=mss))


def installed_controller(connection: QuicConnection) -> Controller | None:
    """The controller `install_controller` put on `connection`, if any."""
    cc = internals.congestion_control(connection)
    return cc.controller if isinstance(cc, ControllerCongestionControl) else None


def controller_telemetry(connection: QuicConnection, now: float) -> dict[str, Any] | None:
    """The installed controller's `telemetry_sample`, with the connection's bytes in flight."""
    cc = internals.congestion_control(connection)
    if not isinstance(cc, ControllerCongestionControl):
        return None
    sample = cc.controller.telemetry_sample(now)
    sample["bytes_in_flight"] = cc.bytes_in_flight
    return sample
