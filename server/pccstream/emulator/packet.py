"""The unit the link model moves around."""

from __future__ import annotations


class Packet:
    """One datagram inside the emulator. `size` is the wire size (payload + IP/UDP headers),
    the quantity mahimahi's schedule counts; `left` is what remains to be transmitted."""

    __slots__ = ("arrival", "size", "payload", "dest", "left")

    def __init__(self, arrival: float, size: int, payload: bytes = b"", dest: object = None):
        self.arrival = arrival
        self.size = size
        self.payload = payload
        self.dest = dest
        self.left = size
