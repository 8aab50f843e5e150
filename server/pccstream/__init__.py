"""pccstream: video over WebTransport with PCC congestion control inside QUIC."""

__version__ = "0.1.0"
