"""Congestion control for pccstream, laid out like quiche's `congestion_control/`.

* `base`       - the one `Controller` interface (rate-based and window-based).
* estimators shared by the algorithms: `rtt_stats`, `monitor_interval`, `delivery_rate`,
  `windowed_filter`, `packet_window`; `params` (per-session parameters from URL strings).
* one algorithm per file: the PCC family (`pcc_sender` holds their monitor-interval
  plumbing, `utility` their utility functions) and the baselines (`window` wraps aioquic's
  own Reno and Cubic; `baselines` declares the rest).
* `registry`   - every controller by name: `list_controllers()` is the authoritative list.
* `pacing`     - token-bucket pacing at a controller's rate, independent of the QUIC stack.
* `aioquic_integration` - plugs a controller and its pacing into an aioquic connection.
* `sim`        - a small discrete-event link model for tests and experiments.

See docs/cc.md and docs/baselines.md.
"""

from .base import Controller, SentPacket
from .registry import create_controller, list_controllers

__all__ = ["Controller", "SentPacket", "create_controller", "list_controllers"]
