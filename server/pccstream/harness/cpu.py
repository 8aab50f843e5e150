"""CPU seconds of a run's processes, from /proc (Linux; no psutil).

A process's own time is utime + stime of /proc/PID/stat. A process tree's time is, over every
live process in it, utime + stime + cutime + cstime: a child that exited and was reaped by its
parent in the tree has its time (and its own reaped children's) in the parent's cutime/cstime,
so every CPU second is counted once, including renderers that came and went during the run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str] | None:
    """Fields after the `(comm)` of /proc/PID/stat (index 0 = state), or None if gone."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def is_running(pid: int) -> bool:
    """The process exists and is not a zombie waiting for its (new) parent to reap it."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of one process so far (None if it is gone)."""
    fields = _stat_fields(pid)
    if fields is None:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def descendants(root: int) -> list[int]:
    """Every live process below `root` (children first, depth-first)."""
    children = _children()
    out: list[int] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            out.append(child)
            stack.append(child)
    return out


def process_name(pid: int) -> str:
    """The process's command name ("" if it is gone)."""
    try:
        return (_PROC / str(pid) / "comm").read_text().strip()
    except OSError:
        return ""


def tree_cpu_seconds(root: int, children: Mapping[int, list[int]] | None = None) -> float:
    """CPU seconds of `root` and all its descendants, reaped ones included (module doc)."""
    children = _children() if children is None else children
    total = 0.0
    stack = [root]
    while stack:
        pid = stack.pop()
        fields = _stat_fields(pid)
        if fields is not None:
            total += sum(int(fields[i]) for i in (11, 12, 13, 14)) / _TICKS
        stack.extend(children.get(pid, ()))
    return total


def chromium_roots(ancestor: int | None = None) -> list[int]:
    """The topmost Chromium processes below `ancestor` (default: this process), i.e. the
    browser processes Playwright launched (through its driver); their trees hold every
    renderer, GPU and utility process."""
    children = _children()
    roots: list[int] = []
    stack = list(children.get(os.getpid() if ancestor is None else ancestor, ()))
    while stack:
        pid = stack.pop()
        name = process_name(pid)
        if name.startswith("chrom") and not name.startswith("chrome_crashpad"):
            roots.append(pid)
        else:
            stack.extend(children.get(pid, ()))
    return sorted(roots)


def chromium_cpu(ancestor: int | None = None) -> dict[int, float]:
    """CPU seconds so far of each Chromium tree below `ancestor`, by root pid."""
    children = _children()
    return {root: tree_cpu_seconds(root, children) for root in chromium_roots(ancestor)}


def cpu_delta(before: Mapping[int, float], after: Mapping[int, float]) -> float:
    """CPU seconds used between two `chromium_cpu` snapshots; a browser relaunched in between
    counts from zero."""
    return max(0.0, sum(after[pid] - before.get(pid, 0.0) for pid in after))


def cpu_model() -> str | None:
    """The CPU's model name (/proc/cpuinfo), e.g. for telling the machines of a cluster apart."""
    try:
        for line in (_PROC / "cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                return value.strip()
    except OSError:
        pass
    return None
