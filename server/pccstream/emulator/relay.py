"""The asyncio UDP relay that feeds the link model from real sockets and the real clock.

One listening socket faces the clients. Each client address gets its own connected socket
towards the upstream server (so the server sees distinct 5-tuples), but every client's packets
go through the same two `Link` objects, one per direction: the shared bottleneck.

Timing: model time is ms since `base_ns` on the monotonic clock (the clock asyncio's loop.time()
uses). The relay wakes with `loop.call_at` at the model's next event. asyncio's epoll selector
rounds timeouts up to whole ms, so the CLI runs the relay on a `select()`-based loop, which
sleeps with microsecond resolution (measured: timer lateness p99 0.16 ms vs 0.8-1 ms).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import selectors
import shlex
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from typing import IO, Any

from pccstream.child_process import die_with_parent
from pccstream.emulator.lateness import HEADER_KEY as LATENESS_KEY
from pccstream.emulator.lateness import TimerLateness
from pccstream.emulator.link import Link, LinkStatus
from pccstream.emulator.log import LOG_FORMATS, EventLog, PacketLog
from pccstream.emulator.loss import parse_loss
from pccstream.emulator.mahimahi import MahimahiLog
from pccstream.emulator.packet import Packet
from pccstream.emulator.scenario import Change, Scenario, load_scenario
from pccstream.emulator.trace import Trace, constant_rate_trace, load_trace
from pccstream.errors import UserError
from pccstream.paths import child_process_env

_BATCH = 256  # datagrams read per readiness event before yielding to timers
_SOCK_BUF = 4 << 20
_HOUSEKEEPING_S = 0.05
_IDLE_SESSION_S = 300.0
# IP + UDP header bytes added to the payload to get the wire size the schedule counts.
_OVERHEAD: dict[int, int] = {int(socket.AF_INET): 28, int(socket.AF_INET6): 48}


def parse_hostport(text: str, where: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise UserError(f"{where}: {text!r} is not HOST:PORT")
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port)


def _resolve(host: str, port: int, where: str) -> tuple[int, tuple[Any, ...]]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)
    except socket.gaierror as exc:
        raise UserError(f"{where}: cannot resolve {host!r}: {exc}") from None
    fam, _, _, _, addr = infos[0]
    return fam, addr


def _bigger_buffers(sock: socket.socket) -> None:
    # Best effort: unprivileged processes are capped by net.core.[rw]mem_max.
    for opt in (socket.SO_RCVBUF, socket.SO_SNDBUF):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, opt, _SOCK_BUF)


class _Session:
    __slots__ = ("addr", "sock", "last_seen")

    def __init__(self, addr: tuple[Any, ...], sock: socket.socket, now: float) -> None:
        self.addr = addr
        self.sock = sock
        self.last_seen = now


class Emulator:
    """In-process emulator: `port = await emu.start()`, ..., `await emu.close()`.

    It runs on the caller's event loop; for sub-millisecond timing run it on a loop built with
    `selectors.SelectSelector` (as the CLI does) or use `EmulatorProcess`.
    """

    def __init__(
        self,
        scenario: Scenario,
        listen: tuple[str, int],
        upstream: tuple[str, int],
        *,
        seed: int | None = None,
        log_path: str | None = None,
        log_format: str = "pccstream",
        uplink_log_path: str | None = None,
    ) -> None:
        if log_format not in LOG_FORMATS:
            formats = ", ".join(LOG_FORMATS)
            raise UserError(f"--log-format {log_format!r}: expected one of {formats}")
        if uplink_log_path and log_format != "mahimahi":
            raise UserError("--uplink-log is for --log-format mahimahi (the pccstream log has both "
                            "directions in one file)")
        self.scenario = scenario
        self.listen = listen
        self.upstream = upstream
        self.seed = scenario.seed if seed is None else seed
        self.log_path = log_path
        self.log_format = log_format
        self.uplink_log_path = uplink_log_path
        self.base_ns = 0
        self._base_s = 0.0
        self.port = 0
        self.down: Link | None = None
        self.up: Link | None = None
        self._log: PacketLog | None = None
        self._lsock: socket.socket | None = None
        self._sessions: dict[tuple[Any, ...], _Session] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf
        self.timer_lateness = TimerLateness()
        self._house_due = 0.0  # model ms the housekeeping timer is due at
        self._house: asyncio.TimerHandle | None = None
        self._tl_handle: asyncio.TimerHandle | None = None
        self._changes: Iterator[Change] | None = None
        self._pending: tuple[Change, dict[str, Trace]] | None = None
        self._traces: dict[str, Trace] = {}
        self._loss_changes = 0
        self._up_family = socket.AF_INET
        self._up_addr: tuple[Any, ...] = ()
        self._ovh_client = 28
        self._ovh_server = 28
        self.send_errors = 0
        self.closed = asyncio.Event()

    @classmethod
    def from_settings(
        cls,
        *,
        upstream: str,
        listen: str = "127.0.0.1:0",
        down: str | None = None,
        up: str | None = None,
        delay_ms: float | None = None,
        loss: str | float | None = None,
        queue: str | None = None,
        scenario: str | None = None,
        params: Mapping[str, str | float] | None = None,
        seed: int | None = None,
        log: str | None = None,
        log_format: str = "pccstream",
        uplink_log: str | None = None,
    ) -> Emulator:
        """Build from CLI-like settings; explicit settings override the scenario's."""
        sc = load_scenario(scenario, params) if scenario else Scenario(name="settings")
        sc.apply_overrides(down=down, up=up, delay_ms=delay_ms, loss=loss, queue=queue)
        return cls(sc, parse_hostport(listen, "--listen"), parse_hostport(upstream, "--upstream"),
                   seed=seed, log_path=log, log_format=log_format, uplink_log_path=uplink_log)

    # -- lifecycle -----------------------------------------------------------------------------
    async def start(self) -> int:
        """Bind, build the links, apply t=0 changes; returns the bound listen port."""
        self._loop = loop = asyncio.get_running_loop()
        lfam, laddr = _resolve(*self.listen, "--listen")
        self._up_family, self._up_addr = _resolve(*self.upstream, "--upstream")
        self._ovh_client = _OVERHEAD.get(int(lfam), 28)
        self._ovh_server = _OVERHEAD.get(int(self._up_family), 28)
        lsock = socket.socket(lfam, socket.SOCK_DGRAM)
        try:
            lsock.bind(laddr)
        except OSError as exc:
            lsock.close()
            where = f"--listen {self.listen[0]}:{self.listen[1]}"
            raise UserError(f"{where}: cannot bind: {exc}") from None
        lsock.setblocking(False)
        _bigger_buffers(lsock)
        self._lsock = lsock
        self.port = lsock.getsockname()[1]

        self.base_ns = time.monotonic_ns()
        self._base_s = self.base_ns / 1e9
        self._log = self._open_log()
        self.down = self._build_link("down")
        self.up = self._build_link("up")

        self._changes = self.scenario.changes(self.seed)
        self._prepare_next_change()
        while self._pending is not None and self._pending[0].at_s <= 0:
            self._apply_pending(0.0)
        self._arm_timeline()

        loop.add_reader(lsock.fileno(), self._on_client_readable)
        self._house_due = self.now_ms() + _HOUSEKEEPING_S * 1e3
        self._house = loop.call_later(_HOUSEKEEPING_S, self._housekeeping)
        return self.port

    def _open_log(self) -> PacketLog | None:
        if self.log_format == "pccstream":
            if not self.log_path:
                return None
            return EventLog.open(self.log_path, self.base_ns, self._config())
        paths = {d: path for d, path in (("d", self.log_path), ("u", self.uplink_log_path)) if path}
        if not paths:
            return None
        traces: dict[str, str] = {}
        queues: dict[str, str] = {}
        for d, name in (("d", "down"), ("u", "up")):
            spec = self.scenario.direction(name)
            traces[d] = (str(spec.trace) if spec.trace is not None
                         else "unshaped" if spec.rate_bps is None
                         else f"{spec.rate_bps / 1e6:.6g}mbit")
            queues[d] = spec.build_queue().describe()
        return MahimahiLog.open(paths, traces=traces, queues=queues,
                                command_line=shlex.join(["pccstream", *sys.argv[1:]]))

    def _config(self) -> dict[str, Any]:
        return {"scenario": self.scenario.summary(), "seed": self.seed,
                "listen": f"{self.listen[0]}:{self.port}",
                "upstream": f"{self.upstream[0]}:{self.upstream[1]}"}

    def _build_link(self, name: str) -> Link:
        spec = self.scenario.direction(name)
        rng = random.Random(f"{self.seed}:{name}:loss")
        return Link(name, spec.build_trace(), spec.build_queue(), spec.build_loss(rng),
                    spec.delay_ms, self._log)

    async def close(self) -> None:
        loop = self._loop
        if loop is None:
            return
        for h in (self._timer, self._house, self._tl_handle):
            if h is not None:
                h.cancel()
        if self._lsock is not None:
            loop.remove_reader(self._lsock.fileno())
            self._lsock.close()
            self._lsock = None
        for s in self._sessions.values():
            loop.remove_reader(s.sock.fileno())
            s.sock.close()
        self._sessions.clear()
        if self._log is not None:
            now = self.now_ms()
            for link in (self.down, self.up):
                if link is not None:
                    link.rationalize(now)
            if isinstance(self._log, EventLog):
                self._log.note(LATENESS_KEY, self.timer_lateness.summary(now))
            self._log.close()
            self._log = None
        self._loop = None
        self.closed.set()

    # -- clock -------------------------------------------------------------------------------
    def now_ms(self) -> float:
        return (time.monotonic_ns() - self.base_ns) / 1e6

    def status(self) -> dict[str, LinkStatus]:
        """Dashboard side channel: current capacity, queue length and settings per direction."""
        now = self.now_ms()
        return {k.direction: k.status(now) for k in (self.down, self.up) if k is not None}

    def upstream_addresses(self) -> list[tuple[str, int]]:
        """Local (host, port) of each client's socket towards the server: the addresses the
        server sees as its peers (for the link status side channel)."""
        out: list[tuple[str, int]] = []
        for s in self._sessions.values():
            with contextlib.suppress(OSError):
                name = s.sock.getsockname()
                out.append((str(name[0]), int(name[1])))
        return out

    # -- data path ---------------------------------------------------------------------------
    def _on_client_readable(self) -> None:
        lsock = self._lsock
        up = self.up
        if lsock is None or up is None:
            return
        recv = lsock.recvfrom
        sessions = self._sessions
        ovh = self._ovh_client
        mono = time.monotonic_ns
        base = self.base_ns
        now = 0.0
        for _ in range(_BATCH):
            try:
                data, addr = recv(65535)
            except BlockingIOError:
                break
            except OSError:
                continue  # e.g. an ICMP error queued on the socket
            now = (mono() - base) / 1e6
            sess = sessions.get(addr)
            if sess is None:
                sess = self._new_session(addr, now)
            sess.last_seen = now
            up.enqueue(Packet(now, len(data) + ovh, data, sess), now)
        self._service((mono() - base) / 1e6)

    def _on_server_readable(self, sess: _Session) -> None:
        down = self.down
        if down is None:
            return
        recv = sess.sock.recv
        ovh = self._ovh_server
        mono = time.monotonic_ns
        base = self.base_ns
        for _ in range(_BATCH):
            try:
                data = recv(65535)
            except BlockingIOError:
                break
            except OSError:
                continue  # ECONNREFUSED: the server is not (yet) listening
            now = (mono() - base) / 1e6
            down.enqueue(Packet(now, len(data) + ovh, data, sess), now)
        self._service((mono() - base) / 1e6)

    def _new_session(self, addr: tuple[Any, ...], now: float) -> _Session:
        sock = socket.socket(self._up_family, socket.SOCK_DGRAM)
        sock.setblocking(False)
        _bigger_buffers(sock)
        sock.connect(self._up_addr)
        sess = _Session(addr, sock, now)
        self._sessions[addr] = sess
        assert self._loop is not None
        self._loop.add_reader(sock.fileno(), self._on_server_readable, sess)
        return sess

    def _service(self, now: float) -> None:
        """Send everything due by `now`, then arm the timer for the next model event."""
        up, down, lsock = self.up, self.down, self._lsock
        if up is None or down is None or lsock is None:
            return
        for pkt in up.pop_ready(now):
            sess = pkt.dest
            assert isinstance(sess, _Session)
            try:
                sess.sock.send(pkt.payload)
            except OSError:
                self.send_errors += 1  # buffer full or server unreachable: lost, like a wire
        sendto = lsock.sendto
        for pkt in down.pop_ready(now):
            sess = pkt.dest
            assert isinstance(sess, _Session)
            try:
                sendto(pkt.payload, sess.addr)
            except OSError:
                self.send_errors += 1
        nxt = min(up.next_event(), down.next_event())
        if nxt < self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            assert self._loop is not None
            self._timer_at = nxt
            self._timer = self._loop.call_at(self._base_s + nxt / 1000.0, self._on_timer)

    def _on_timer(self) -> None:
        now = self.now_ms()
        self.timer_lateness.observe(now - self._timer_at, now)
        self._timer = None
        self._timer_at = math.inf
        self._service(now)

    def _housekeeping(self) -> None:
        assert self._loop is not None
        now = self.now_ms()
        # Sampled even while no packet flows, so an idle link still measures the host.
        self.timer_lateness.observe(now - self._house_due, now)
        # Account idle opportunities regularly so capacity shows up in the log promptly and a
        # long idle period never costs one big catch-up.
        for link in (self.down, self.up):
            if link is not None:
                link.rationalize(now)
        stale = [a for a, s in self._sessions.items() if now - s.last_seen > _IDLE_SESSION_S * 1e3]
        for a in stale:
            s = self._sessions.pop(a)
            self._loop.remove_reader(s.sock.fileno())
            s.sock.close()
        if self._log is not None and int(now) // 1000 != int(now - _HOUSEKEEPING_S * 1e3) // 1000:
            self._log.flush()
        self._house_due = now + _HOUSEKEEPING_S * 1e3
        self._house = self._loop.call_later(_HOUSEKEEPING_S, self._housekeeping)

    # -- timeline ------------------------------------------------------------------------------
    def _prepare_next_change(self) -> None:
        """Fetch the next change and build its traces now, well before it is due, so applying
        it does not stall packet timing."""
        assert self._changes is not None
        change = next(self._changes, None)
        if change is None:
            self._pending = None
            return
        traces: dict[str, Trace] = {}
        if change.trace is not None:
            key = str(change.trace)
            if key not in self._traces:
                self._traces[key] = load_trace(change.trace)
            traces["t"] = self._traces[key]
        elif change.rate_bps is not None:
            traces["t"] = constant_rate_trace(change.rate_bps)
        self._pending = (change, traces)

    def _apply_pending(self, now: float) -> None:
        assert self._pending is not None
        change, traces = self._pending
        self._loss_changes += 1
        for name in change.directions:
            link = self.down if name == "down" else self.up
            assert link is not None
            if "t" in traces:
                link.set_trace(traces["t"], now)
            if change.delay_ms is not None:
                link.set_delay(change.delay_ms, now)
            if change.loss is not None:
                rng = random.Random(f"{self.seed}:{name}:loss:{self._loss_changes}")
                link.set_loss(parse_loss(change.loss, rng), now)
        self._prepare_next_change()

    def _arm_timeline(self) -> None:
        if self._pending is None or self._loop is None:
            return
        when = self._base_s + self._pending[0].at_s
        self._tl_handle = self._loop.call_at(when, self._on_timeline)

    def _on_timeline(self) -> None:
        self._tl_handle = None
        now = self.now_ms()
        while self._pending is not None and self._pending[0].at_s * 1000.0 <= now + 0.5:
            self._apply_pending(now)
        self._service(now)
        self._arm_timeline()


def new_event_loop() -> asyncio.AbstractEventLoop:
    """An event loop whose sleeps have microsecond resolution (see module docstring)."""
    return asyncio.SelectorEventLoop(selectors.SelectSelector())


def request_realtime(priority: int) -> str:
    """Ask for SCHED_RR at `priority` (needs root, CAP_SYS_NICE or an rtprio limit). On a loaded
    machine this is what keeps wake-ups on time: measured under load 8 on 2 cores, departure
    error p99 went from ~20 ms to 0.15 ms. The relay sleeps between events, and the kernel's RT
    throttling (95 % by default) bounds what a runaway could take. Returns what was obtained."""
    try:
        os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(priority))
    except (PermissionError, OSError, AttributeError) as exc:
        return f"normal priority (SCHED_RR {priority} refused: {exc})"
    return f"SCHED_RR {priority}"


async def serve(emu: Emulator, announce: bool = True) -> int | None:
    """Run until SIGINT/SIGTERM; returns the signal that stopped it."""
    port = await emu.start()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    received: list[int] = []

    def on_signal(sig: int) -> None:
        received.append(sig)
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, on_signal, sig)
    if announce:
        host = emu.listen[0]
        print(f"listening on {host}:{port} -> {emu.upstream[0]}:{emu.upstream[1]}", flush=True)
    try:
        await stop.wait()
    finally:
        await emu.close()
    return received[0] if received else None


class EmulatorProcess:
    """The same interface as `Emulator`, but the relay runs in its own process (the CLI), so
    its timing does not suffer from the caller's CPU use or the GIL."""

    def __init__(self, *, upstream: str, listen: str = "127.0.0.1:0", realtime: bool = False,
                 **settings: Any) -> None:
        """`settings` as in `Emulator.from_settings` (down, up, delay_ms, loss, queue, scenario,
        params, seed, log); `realtime` asks for SCHED_RR (see `request_realtime`)."""
        self.argv = [sys.executable, "-m", "pccstream.emulator", "emulate",
                     "--listen", listen, "--upstream", upstream]
        if realtime:
            self.argv.append("--realtime")
        for key, value in settings.items():
            if value is None:
                continue
            if key == "params":
                for k, v in dict(value).items():
                    self.argv += ["--param", f"{k}={v}"]
                continue
            flag = {"delay_ms": "--delay"}.get(key, "--" + key.replace("_", "-"))
            self.argv += [flag, str(value)]
        self.proc: asyncio.subprocess.Process | None = None
        self._stderr: IO[bytes] | None = None
        self.port = 0

    async def start(self) -> int:
        env = child_process_env()
        # stderr goes to a file, not a pipe nobody drains (a full pipe would stall the relay).
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (lives until close())
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv, stdout=asyncio.subprocess.PIPE, stderr=self._stderr, env=env,
            preexec_fn=die_with_parent,
        )
        assert self.proc.stdout is not None
        line = await self.proc.stdout.readline()
        if not line.startswith(b"listening on "):
            await self.proc.wait()
            self._stderr.seek(0)
            err = self._stderr.read().decode(errors="replace").strip()
            raise UserError(f"emulator failed to start: {err}")
        hostport = line.split()[2].decode()
        self.port = int(hostport.rpartition(":")[2])
        return self.port

    async def close(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
