"""ACK silences: how long the ACKs have been silent, and what past silences turned out to be.

A cellular uplink can hold ACKs for seconds while the downlink keeps delivering; a downlink
outage silences the ACKs as well. While a silence lasts the sender cannot tell the two
apart, but afterwards it can. An uplink that held the ACKs releases them together, so a
packet sent during the silence is acknowledged within moments of the silence's end. After a
downlink outage the bottleneck first delivers what queued before it, and the packets sent
during the silence are acknowledged only after that backlog, about a window later, or not at
all.
"""

from __future__ import annotations

# After the silence ends, a packet sent during it acknowledged within this many min RTTs
# came back with the released ACKs: the uplink held them.
RELEASE_RTTS = 0.5
# With queue_rtts: the share of the silence's growth (as queueing time) the first packet
# after it may wait before the growth is judged to have queued.
QUEUE_GROWTH_SHARE = 0.5


class AckSilences:
    """The current ACK silence, and the share of past ones that were held ACKs."""

    def __init__(self, *, weight: float, queue_rtts: float = 0.0,
                 queue_last: bool = False) -> None:
        self.weight = weight  # of each verdict in `hold_share`
        # > 0: a silence the release judged held counts as held only if the first packet
        # sent after it came back within this many min RTTs above the min RTT. When the
        # downlink returns before the uplink from an outage of both, the release test is
        # fooled, but what was sent into the silence then queues ahead of that packet
        # (unless that backlog holds the window full until it has drained).
        self.queue_rtts = queue_rtts
        # With queue_rtts: time the last packet sent before the silence ended instead. It
        # waits behind the whole backlog of an outage, whether or not the window lets a
        # packet leave before that backlog drains, and behind nothing after a hold. Off in
        # `vivace-lte`: the first packet's wait also tells whether the path works again
        # after the release, the better guide on UMTS (docs/cc.md, session 49).
        self.queue_last = queue_last
        self.last_ack_at: float | None = None
        self.hold_share = 1.0  # the first silences are given the benefit of the doubt
        self.holds = 0
        self.outages = 0
        self._first_sent: float | None = None  # first packet sent past the grace
        self._judging: tuple[float, float] | None = None  # (that packet, the silence's end)
        self._queue_test_from: float | None = None  # the released silence's end (queue_rtts)
        self._growth_s = 0.0  # the judged silence's growth, seconds of receive rate
        self._last_sent: float | None = None
        self._last_in = 0.0  # the judged silence's last packet (queue_last)
        # (that packet, when its ACK is due after a hold) while the last-packet test waits
        self._last_test: tuple[float, float] | None = None

    def silence_start(self, grace_s: float) -> float | None:
        """When the current silence's grace ends (None before the first ACK)."""
        return None if self.last_ack_at is None else self.last_ack_at + grace_s

    def on_sent(self, sent_time: float, grace_s: float) -> None:
        self._last_sent = sent_time
        start = self.silence_start(grace_s)
        if self._first_sent is None and start is not None and sent_time >= start:
            self._first_sent = sent_time

    def on_acked(self, now: float, sent_time: float | None, min_rtt: float,
                 growth_s: float = 0.0) -> None:
        """Every acknowledged packet, in order, with its ACK's arrival time, and the
        window's growth (in seconds of receive rate) if this ACK ends a silence."""
        after = self._queue_test_from
        if after is not None and sent_time is not None and sent_time >= after:
            self._queue_test_from = None
            # What the growth sent into an outage queues about growth_s ahead of it.
            allowed = max(self.queue_rtts * min_rtt, QUEUE_GROWTH_SHARE * self._growth_s)
            self._verdict(held=now - sent_time - min_rtt <= allowed)
        if self._judging is not None:
            first, end = self._judging
            if now - end > RELEASE_RTTS * min_rtt:
                self._verdict(held=False)
            elif sent_time is not None and sent_time >= first:
                if self.queue_rtts <= 0:
                    self._verdict(held=True)
                elif self.queue_last:
                    # After a hold its ACK comes with the release, or a min RTT after it
                    # left if it left within a min RTT of the end.
                    last = self._last_in
                    self._judging, self._last_test = None, (last, max(end, last + min_rtt))
                else:
                    self._judging, self._queue_test_from = None, end
        if self._last_test is not None:
            last, due = self._last_test
            late = now - due > self.queue_rtts * min_rtt
            if late or (sent_time is not None and sent_time >= last):
                self._last_test = None
                self._verdict(held=not late)
        if now != self.last_ack_at:
            # A silence is judged only when its first packet past the grace went out at
            # least a min RTT before it ended: an uplink that held that packet's ACK then
            # releases it with the others.
            first = self._first_sent
            if (self._judging is None and self._queue_test_from is None
                    and self._last_test is None and first is not None
                    and now - first >= min_rtt):
                self._judging, self._growth_s = (first, now), growth_s
                self._last_in = self._last_sent if self._last_sent is not None else first
            self._first_sent = None
        self.last_ack_at = now

    def _verdict(self, *, held: bool) -> None:
        self._judging = None
        if held:
            self.holds += 1
        else:
            self.outages += 1
        self.hold_share += self.weight * (float(held) - self.hold_share)
