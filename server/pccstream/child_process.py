"""Child processes that die with their parent, also when the parent is killed by SIGKILL.

A killed `pccstream ab`, `bench transfer` or `demo` must not leave its server, emulators or
TURN relay running (re-parented to PID 1, holding ports and CPU that skew the next run).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """`preexec_fn` for a child: SIGTERM when the parent dies, even by SIGKILL (Linux).

    The kernel sends it when the thread that forked the child exits, so start children from
    a thread that lives as long as they should (the event loop's)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() == 1:  # the parent died before prctl took effect: orphaned already
        os.kill(os.getpid(), signal.SIGTERM)
