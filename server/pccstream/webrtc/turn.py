"""A local coturn (`turnserver`) for the WebRTC arm: the relay both peers must use.

Both pages run with `iceTransportPolicy: 'relay'`; the sender talks to coturn directly, the
receiver through the emulator (whose upstream is coturn), so every media and feedback packet
crosses the emulated link once (docs/webrtc.md). coturn runs with no configuration file, on
127.0.0.1 only, UDP only (no TCP/TLS/DTLS listeners, no CLI, no web admin), long-term
credentials with one static user, relay addresses on 127.0.0.1 and loopback peers allowed.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import random
import shutil
import signal
import socket
import struct
import tempfile
from pathlib import Path

from pccstream.child_process import die_with_parent
from pccstream.errors import ToolMissingError, UserError

# Static credentials: coturn listens on loopback only, so they guard nothing but mistakes.
DEFAULT_USERNAME = "pccstream"
DEFAULT_CREDENTIAL = "pccstream"
REALM = "pccstream"
_STUN_MAGIC = 0x2112A442


# Debian's coturn; used when `turnserver` is not on PATH (e.g. PATH without /usr/bin).
DEBIAN_TURNSERVER = Path("/usr/bin/turnserver")


def turnserver_path() -> str:
    found = shutil.which("turnserver") or (
        str(DEBIAN_TURNSERVER) if DEBIAN_TURNSERVER.is_file() else None
    )
    if found is None:
        raise ToolMissingError(
            "turnserver (coturn) not found: run ./infra/bootstrap.sh (it installs Debian's coturn)"
        )
    return found


def turn_url(port: int, host: str = "127.0.0.1") -> str:
    return f"turn:{host}:{port}?transport=udp"


def free_udp_port(host: str = "127.0.0.1") -> int:
    """A free UDP port below Linux's ephemeral range (32768+), where no other program's
    automatically chosen port can take it between this check and coturn's bind."""
    rng = random.SystemRandom()
    for _ in range(50):
        port = rng.randrange(20000, 32000)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _check_port_free(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            raise UserError(
                f"TURN port {port} on 127.0.0.1 is already in use (choose another port)"
                if exc.errno == errno.EADDRINUSE
                else f"cannot bind TURN port 127.0.0.1:{port}: {exc.strerror}"
            ) from None


def stun_binding_request(transaction_id: bytes) -> bytes:
    """RFC 5389 Binding request with no attributes."""
    return struct.pack(">HHI", 0x0001, 0, _STUN_MAGIC) + transaction_id


def is_binding_success(data: bytes, transaction_id: bytes) -> bool:
    if len(data) < 20:
        return False
    kind, _, magic = struct.unpack_from(">HHI", data)
    return kind == 0x0101 and magic == _STUN_MAGIC and data[8:20] == transaction_id


class TurnServer:
    """`port = await turn.start()` ... `await turn.close()`; `UserError` if it cannot start."""

    def __init__(
        self,
        *,
        port: int = 0,
        username: str = DEFAULT_USERNAME,
        credential: str = DEFAULT_CREDENTIAL,
        log_path: Path | None = None,
        verbose: bool = False,
    ) -> None:
        self.port = port
        self.username = username
        self.credential = credential
        self.log_path = log_path
        self.verbose = verbose
        self.proc: asyncio.subprocess.Process | None = None
        self._workdir: tempfile.TemporaryDirectory[str] | None = None

    @property
    def url(self) -> str:
        return turn_url(self.port)

    def ice_server(self, url: str | None = None) -> dict[str, str]:
        """An RTCIceServer for this relay (or for `url`, e.g. an emulator in front of it)."""
        return {"urls": url or self.url, "username": self.username, "credential": self.credential}

    def argv(self, workdir: Path) -> list[str]:
        log = self.log_path or workdir / "turnserver.log"
        argv = [
            turnserver_path(),
            "-n",  # no configuration file: only these flags
            "--listening-ip", "127.0.0.1",
            "--listening-port", str(self.port),
            "--relay-ip", "127.0.0.1",
            "--allow-loopback-peers",
            "--no-multicast-peers",
            "--no-tcp", "--no-tls", "--no-dtls", "--no-tcp-relay",
            "--no-cli", "--no-rfc5780", "--no-software-attribute",
            "--lt-cred-mech", "--fingerprint",
            "--realm", REALM,
            "--user", f"{self.username}:{self.credential}",
            "--userdb", str(workdir / "turndb"),
            "--pidfile", str(workdir / "turnserver.pid"),
            "--log-file", str(log), "--simple-log", "--no-stdout-log",
        ]  # fmt: skip
        if self.verbose:
            argv.append("--verbose")
        return argv

    async def start(self, timeout_s: float = 10.0) -> int:
        if ":" in self.username or not self.username:
            raise UserError(f"TURN username {self.username!r}: must be non-empty, without ':'")
        if not 0 <= self.port <= 65535:
            raise UserError(f"TURN port {self.port} is not a port number (0-65535)")
        if self.port == 0:
            # One more try on another port if coturn does not answer on the first.
            for attempt in (1, 2):
                self.port = free_udp_port()
                try:
                    return await self._start(timeout_s)
                except UserError:
                    if attempt == 2:
                        raise
                    self.port = 0
        _check_port_free(self.port)  # coturn binds with SO_REUSEPORT and would share it
        return await self._start(timeout_s)

    async def _start(self, timeout_s: float) -> int:
        self._workdir = tempfile.TemporaryDirectory(prefix="pccstream-turn-")
        workdir = Path(self._workdir.name)
        # Output to a file, never to a pipe nobody drains.
        with (workdir / "stderr.txt").open("wb") as stderr:
            self.proc = await asyncio.create_subprocess_exec(
                *self.argv(workdir),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=stderr,
                stderr=stderr,
                start_new_session=True,  # a terminal's Ctrl-C goes to us; close() stops it
                preexec_fn=die_with_parent,
            )
        try:
            await self._wait_ready(timeout_s)
        except BaseException:
            await self.close()
            raise
        return self.port

    async def _wait_ready(self, timeout_s: float) -> None:
        """Until coturn answers a STUN Binding request on its port."""
        assert self.proc is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.setblocking(False)
            sock.connect(("127.0.0.1", self.port))
            while True:
                if self.proc.returncode is not None:
                    raise UserError(f"turnserver exited {self.proc.returncode}: {self._log_tail()}")
                if loop.time() > deadline:
                    raise UserError(
                        f"turnserver did not answer on 127.0.0.1:{self.port} within "
                        f"{timeout_s:g} s: {self._log_tail()}"
                    )
                txid = os.urandom(12)
                with contextlib.suppress(OSError):  # ECONNREFUSED until it listens
                    sock.send(stun_binding_request(txid))
                with contextlib.suppress(TimeoutError, OSError):
                    data = await asyncio.wait_for(loop.sock_recv(sock, 2048), 0.1)
                    if is_binding_success(data, txid):
                        return
                await asyncio.sleep(0.05)

    def _log_tail(self, lines: int = 5) -> str:
        if self._workdir is None:
            return ""
        workdir = Path(self._workdir.name)
        text: list[str] = []
        for path in (self.log_path or workdir / "turnserver.log", workdir / "stderr.txt"):
            with contextlib.suppress(OSError):
                text += path.read_text(errors="replace").strip().splitlines()
        return " | ".join(text[-lines:]) or "(no output)"

    async def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None

    async def __aenter__(self) -> TurnServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
