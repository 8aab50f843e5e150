"""Congestion control for pccstream, laid out like quiche's `congestion_control/`.

* `base`       - the one `Controller` interface (rate-based and window-based).
* `rtt_stats`, `monitor_interval` - shared estimators.
* `utility`    - PCC utility functions (Vivace, Allegro, Allegro-latency).
* `pcc_sender` - monitor-interval plumbing shared by the PCC algorithms.
* `vivace`, `allegro` - one PCC algorithm per file.
* `window`     - aioquic's own Reno and Cubic behind the same interface.
* `registry`   - controllers by name, with per-session parameters.
* `aioquic_integration` - the single point that plugs a controller into aioquic.
* `sim`        - a small discrete-event link model for tests and experiments.

See docs/cc.md.
"""

from .base import Controller, SentPacket
from .registry import create_controller, list_controllers

__all__ = ["Controller", "SentPacket", "create_controller", "list_controllers"]
