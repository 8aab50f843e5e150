"""`pccstream bench soak`: the reliability suite in full form (#17), as JSON.

Four parts, each against the real server in its own process:
- fuzz: `pccstream.bench.fuzz` over every decoder of outside input (in a worker process, while
  the churn runs: neither measures time);
- churn: sessions opened and closed one after another (normal, cancelled mid-transfer, and
  client processes SIGKILLed mid-transfer), with the server's RSS sampled as it goes;
- viewers: concurrent viewers fetching segments through the emulator, every byte checked
  against the media files, with the server's CPU and RSS;
- outage: a bulk flow through the `outage-2s` scenario; how long after the link comes back
  the flow regains 80 % of its rate before the outage;
- ab-kill: a real `pccstream ab` (browser, server, emulator) SIGKILLed in its second run, then
  resumed: no process it started outlives it, the run that finished stays as it was, the
  killed one is run again, and no slot is stored twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import textwrap
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pccstream.ab.store import open_store
from pccstream.bench.fuzz import run_all
from pccstream.emulator.relay import EmulatorProcess
from pccstream.harness.cpu import descendants, is_running, process_name
from pccstream.harness.processes import ServerProcess, make_bulk_media
from pccstream.harness.udp_drops import rcvbuf_errors, socket_drops
from pccstream.media.manifest import Manifest, load_manifest
from pccstream.paths import child_process_env
from pccstream.protocol import Kind, Request, Status
from pccstream.stats import median
from pccstream.wt_client import WebTransportClient

Progress = Callable[[str], None]


@dataclass(frozen=True)
class SoakSettings:
    media: Path
    fuzz_cases: int = 100_000
    churn_sessions: int = 1000
    # RSS growth is measured from this session on (the start-up high-water mark is not growth:
    # the server keeps its last 64 sessions for /api/sessions).
    churn_baseline_session: int = 200
    # Growth beyond this fails the run; judged only from 500 sessions on (quick runs report it).
    churn_max_growth: float = 0.05
    # A settled sample at the baseline, every this many sessions after it, and at the end.
    churn_settled_every: int = 200
    # Every this many sessions, a client process with KILLED_PER_BATCH sessions is SIGKILLed.
    churn_killed_every: int = 50
    # Before the baseline and the final RSS sample: time for SIGKILLed clients' sessions to
    # reach the server's 30 s idle timeout, so their queued segments are not counted as growth.
    churn_settle_s: float = 35.0
    viewers: int = 50
    viewer_seconds: float = 60.0
    outage: bool = True
    ab_kill: bool = True


def quick(media: Path) -> SoakSettings:
    """A smoke run of every part (well under a minute)."""
    return SoakSettings(media, fuzz_cases=1000, churn_sessions=60, churn_baseline_session=20,
                        churn_settle_s=0.0, churn_settled_every=20, viewers=4,
                        viewer_seconds=4.0, ab_kill=False)


def run_soak(settings: SoakSettings, progress: Progress) -> dict[str, Any]:
    manifest = load_manifest(settings.media)
    started = time.monotonic()
    with ProcessPoolExecutor(1) as pool:
        fuzz_future = pool.submit(_fuzz, settings.fuzz_cases)
        progress(f"fuzz: {settings.fuzz_cases} cases in a worker process")
        churn = asyncio.run(run_churn(settings, manifest, progress))
        fuzz = fuzz_future.result()
    progress(f"fuzz: {fuzz['cases']} cases, {fuzz['failures']} failures")
    viewers = asyncio.run(run_viewers(settings, manifest, progress))
    outage = ({cc: asyncio.run(run_outage(progress, cc)) for cc in OUTAGE_CONTROLLERS}
              if settings.outage else None)
    ab_kill = run_ab_kill(settings.media, progress) if settings.ab_kill else None
    return {
        "settings": {**asdict(settings), "media": str(settings.media)},
        "fuzz": fuzz,
        "churn": churn,
        "viewers": viewers,
        "outage": outage,
        "ab_kill": ab_kill,
        "wall_s": round(time.monotonic() - started, 1),
        "ok": (fuzz["failures"] == 0 and churn["ok"] and viewers["ok"]
               and (outage is None or all(o["ok"] for o in outage.values()))
               and (ab_kill is None or ab_kill["ok"])),
    }


def _fuzz(cases: int) -> dict[str, Any]:
    import logging

    from pccstream.bench.fuzz import targets

    logging.disable(logging.WARNING)  # the decoders' own "dropped a bad datagram" lines

    return run_all(max(1, cases // len(targets())))


def _rss_mib(pid: int) -> float:
    pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _expected(media: Path, manifest: Manifest, rendition: int, segment: int) -> bytes:
    return (media / manifest.renditions[rendition].segments[segment].file).read_bytes()


# --- churn ----------------------------------------------------------------------------------

_KILLED_CLIENT = textwrap.dedent("""
    import asyncio, sys
    from pccstream.protocol import Kind, Request
    from pccstream.wt_client import WebTransportClient
    async def main(port, sessions, rendition):
        clients = []
        for _ in range(sessions):
            client = await WebTransportClient.open("127.0.0.1", port).__aenter__()
            asyncio.ensure_future(client.get(Request(Kind.SEGMENT, rendition, 0)))
            clients.append(client)
        while min(c.response_bytes_received for c in clients) == 0:
            await asyncio.sleep(0.005)
        print("mid-transfer", flush=True)
        await asyncio.sleep(3600)
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])))
""")
KILLED_PER_BATCH = 5


async def run_churn(settings: SoakSettings, manifest: Manifest,
                    progress: Progress) -> dict[str, Any]:
    server = ServerProcess(settings.media)
    info = await server.start()
    port = int(info["quic_port"])
    top = len(manifest.renditions) - 1
    segments = len(manifest.renditions[0].segments)
    counts = {"normal": 0, "cancelled": 0, "killed": 0}
    wrong = 0
    curve: list[tuple[int, float]] = []
    done = 0
    sample_every = max(1, settings.churn_sessions // 20)
    # Every settled sample follows the same procedure: right after a SIGKILLed batch (the
    # checkpoints are multiples of churn_killed_every), then churn_settle_s without sessions.
    settled: list[tuple[int, float]] = []
    next_settled = settings.churn_baseline_session

    async def settle() -> None:
        await asyncio.sleep(settings.churn_settle_s)
        settled.append((done, round(_rss_mib(server.pid), 1)))
        progress(f"churn: {done} sessions, settled {settings.churn_settle_s:g} s: "
                 f"server RSS {settled[-1][1]} MiB")

    try:
        curve.append((0, round(_rss_mib(server.pid), 1)))
        while done < settings.churn_sessions:
            if done % settings.churn_killed_every == settings.churn_killed_every - 1:
                await _killed_batch(port, top)
                counts["killed"] += KILLED_PER_BATCH
                done += KILLED_PER_BATCH
            elif done % 10 in (7, 8):
                async with WebTransportClient.open("127.0.0.1", port) as client:
                    pending = asyncio.ensure_future(client.get(Request(Kind.SEGMENT, top, 0)))
                    while client.response_bytes_received == 0 and not pending.done():
                        await asyncio.sleep(0.002)
                    pending.cancel()
                counts["cancelled"] += 1
                done += 1
            else:
                segment = done % segments
                async with WebTransportClient.open("127.0.0.1", port) as client:
                    answer = await asyncio.wait_for(
                        client.get(Request(Kind.SEGMENT, 0, segment)), 30)
                if (answer.header.status != Status.OK
                        or answer.body != _expected(settings.media, manifest, 0, segment)):
                    wrong += 1
                counts["normal"] += 1
                done += 1
            if done // sample_every > len(curve) - 1:
                curve.append((done, round(_rss_mib(server.pid), 1)))
                progress(f"churn: {done} sessions, server RSS {curve[-1][1]} MiB")
            if done >= next_settled and done < settings.churn_sessions:
                await settle()
                next_settled += settings.churn_settled_every
        await settle()
    finally:
        await server.close()
    baseline, end = settled[0], settled[-1]
    growth = (end[1] - baseline[1]) / baseline[1]
    settled_mib = [mib for _, mib in settled]
    return {
        "sessions": done, "kinds": counts, "wrong_answers": wrong,
        # Every sample_every sessions, not settled: includes the SIGKILLed clients' sessions
        # still waiting for their idle timeout (a few MiB each batch).
        "rss_mib_curve": curve,
        # [session, MiB] after the settle time; growth is measured from the first to the last.
        "rss_mib_settled": settled,
        "rss_mib_settled_baseline": baseline, "rss_mib_settled_end": end,
        "rss_growth_from_baseline": round(growth, 4),
        "rss_settled_spread_mib": round(max(settled_mib) - min(settled_mib), 1),
        "rss_max_growth_from_baseline": round(max(settled_mib) / baseline[1] - 1, 4),
        "growth_judged": settings.churn_sessions >= 500,
        "ok": wrong == 0 and (settings.churn_sessions < 500
                              or growth <= settings.churn_max_growth),
    }


async def _killed_batch(port: int, rendition: int) -> None:
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _KILLED_CLIENT, str(port), str(KILLED_PER_BATCH), str(rendition),
        stdout=asyncio.subprocess.PIPE, env=child_process_env())
    try:
        assert child.stdout is not None
        await asyncio.wait_for(child.stdout.readline(), 30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(signal.SIGKILL)
        await child.wait()


# --- viewers --------------------------------------------------------------------------------

async def run_viewers(settings: SoakSettings, manifest: Manifest,
                   progress: Progress) -> dict[str, Any]:
    server = ServerProcess(settings.media)
    info = await server.start()
    emulator = EmulatorProcess(upstream=f"127.0.0.1:{info['quic_port']}", down="200mbit",
                               up="200mbit", delay_ms=10, queue="1000kB", seed=1)
    expected = {(r, s): _expected(settings.media, manifest, r, s)
                for r in range(len(manifest.renditions))
                for s in range(len(manifest.renditions[r].segments))}
    totals = {"segments": 0, "bytes": 0, "wrong": 0, "errors": 0}
    error_messages: list[str] = []  # the first few, so --json says what went wrong
    try:
        port = await emulator.start()
        assert emulator.proc is not None
        emulator_pid = emulator.proc.pid

        def drops() -> dict[str, int]:
            """Receive-buffer drops so far: who did not read its socket in time."""
            server_drops, emulator_drops = socket_drops(server.pid), socket_drops(emulator_pid)
            return {"server": server_drops, "emulator": emulator_drops,
                    "namespace": rcvbuf_errors()}

        drops_before = drops()
        rss_before = _rss_mib(server.pid)
        cpu_before = server.cpu_seconds()
        started = time.monotonic()
        deadline = started + settings.viewer_seconds
        progress(f"viewers: {settings.viewers} for {settings.viewer_seconds:g} s")

        async def viewer(index: int) -> None:
            rendition = index % len(manifest.renditions)
            count = len(manifest.renditions[rendition].segments)
            segment = index % count
            doing = "opening its session"
            try:
                async with WebTransportClient.open("127.0.0.1", port, timeout=30) as client:
                    while time.monotonic() < deadline:
                        doing = f"fetching segment {rendition}/{segment}"
                        answer = await asyncio.wait_for(
                            client.get(Request(Kind.SEGMENT, rendition, segment)), 60)
                        totals["segments"] += 1
                        totals["bytes"] += len(answer.body)
                        if (answer.header.status != Status.OK
                                or answer.body != expected[(rendition, segment)]):
                            totals["wrong"] += 1
                        segment = (segment + 1) % count
                    doing = "closing its session"
            except Exception as exc:  # counted and reported, the other viewers carry on
                totals["errors"] += 1
                so_far = {k: v - drops_before[k] for k, v in drops().items()}
                message = (f"viewer {index}: {type(exc).__name__}: {exc} ({doing}, "
                           f"{time.monotonic() - started:.1f} s into the run; UDP receive-"
                           f"buffer drops so far: {so_far})")
                if len(error_messages) < 10:
                    error_messages.append(message)
                progress(message)

        await asyncio.gather(*(viewer(i) for i in range(settings.viewers)))
        wall = time.monotonic() - started
        cpu = server.cpu_seconds() - cpu_before
        rss_after = _rss_mib(server.pid)
        dropped = {k: v - drops_before[k] for k, v in drops().items()}
    finally:
        await emulator.close()
        await server.close()
    return {
        "viewers": settings.viewers, "seconds": round(wall, 1), **totals,
        "error_messages": error_messages,
        "goodput_mbps": round(totals["bytes"] * 8 / wall / 1e6, 2),
        "server_cpu_cores": round(cpu / wall, 3),
        "server_rss_mib_before": round(rss_before, 1),
        "server_rss_mib_after": round(rss_after, 1),
        # Datagrams the kernel dropped for a full receive buffer during the run: on the
        # server's sockets, the emulator's, and in the whole network namespace (the viewers in
        # this process and anything else running on the machine).
        "udp_rcvbuf_drops": dropped,
        "ok": totals["wrong"] == 0 and totals["errors"] == 0 and totals["segments"] > 0,
    }


# --- outage ---------------------------------------------------------------------------------

# The thesis's controller, and the kernel default as the reference for "recovers its rate".
OUTAGE_CONTROLLERS = ("vivace", "cubic")
OUTAGE_AT_S = 6.0
OUTAGE_S = 2.0
RECOVERED_FRACTION = 0.8


async def run_outage(progress: Progress, cc: str = "vivace") -> dict[str, Any]:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="pccstream-soak-") as tmp:
        media = make_bulk_media(Path(tmp) / "bulk")
        server = ServerProcess(media, cc=cc)
        info = await server.start()
        emulator = EmulatorProcess(
            upstream=f"127.0.0.1:{info['quic_port']}", scenario="outage-2s",
            params={"outage_at_s": OUTAGE_AT_S, "outage_end_s": OUTAGE_AT_S + OUTAGE_S}, seed=1)
        progress(f"outage: {cc} through outage-2s ({OUTAGE_S:g} s at {OUTAGE_AT_S:g} s)")
        samples: list[tuple[float, int]] = []
        errors = 0
        try:
            port = await emulator.start()
            started = time.monotonic()  # the emulator's timeline starts with its process
            async with WebTransportClient.open("127.0.0.1", port, timeout=30) as client:
                async def fetch() -> None:
                    nonlocal errors
                    segment = 0
                    while time.monotonic() - started < OUTAGE_AT_S + OUTAGE_S + 8:
                        answer = await asyncio.wait_for(
                            client.get(Request(Kind.SEGMENT, 0, segment % 8)), 40)
                        errors += answer.header.status != Status.OK
                        segment += 1

                async def sample() -> None:
                    while time.monotonic() - started < OUTAGE_AT_S + OUTAGE_S + 8:
                        samples.append((time.monotonic() - started,
                                        client.response_bytes_received))
                        await asyncio.sleep(0.1)

                await asyncio.gather(fetch(), fetch(), sample())
        finally:
            await emulator.close()
            await server.close()
    rates = [(t1, (b1 - b0) * 8 / (t1 - t0) / 1e6)
             for (t0, b0), (t1, b1) in zip(samples, samples[5:], strict=False)]  # 0.5 s windows
    before = [r for t, r in rates if 2.0 <= t <= OUTAGE_AT_S]
    before_mbps = median(before) or 0.0
    end = OUTAGE_AT_S + OUTAGE_S
    recovered = next((t - end for t, r in rates
                      if t > end and r >= RECOVERED_FRACTION * before_mbps), None)
    return {
        "cc": cc, "outage_s": OUTAGE_S, "rate_before_mbps": round(before_mbps, 2),
        "recovery_s": None if recovered is None else round(recovered, 2),
        "recovered_within_2s": recovered is not None and recovered <= 2.0,
        # [s since the link came back, Mbit/s over the 0.5 s before], every 0.5 s.
        "rate_after_mbps": [[round(t - end, 1), round(r, 2)] for t, r in rates[::5] if t > end],
        "errors": errors,
        "ok": errors == 0 and recovered is not None,
    }


# --- ab killed, then resumed ------------------------------------------------------------

AB_KILL_ARMS = ("cubic", "reno")
AB_KILL_SECONDS = 8.0
AB_KILL_BITRATE_KBPS = 3000
AB_KILL_TIMEOUT_S = 240.0
_AB_MAIN = "import sys; from pccstream.cli import main; sys.exit(main())"


def ab_kill_command(media: Path, db: Path, *, resume: bool = False) -> list[str]:
    """A small real experiment: two arms, two blocks, through the emulator."""
    command = [sys.executable, "-c", _AB_MAIN, "ab", "--cc", ",".join(AB_KILL_ARMS),
               "--scenario", "const-12mbps-30ms-1bdp", "--bitrate", str(AB_KILL_BITRATE_KBPS),
               "--runs", "2", "--duration", str(AB_KILL_SECONDS), "--seed", "1",
               "--media", str(media), "--db", str(db)]
    return command + ["--resume"] if resume else command


def stored_runs(db: Path) -> list[tuple[int, str, float]]:
    """(block, arm, started_at) of every stored run."""
    if not db.exists():
        return []
    with open_store(db) as store:
        return [(row["block"], row["arm"], row["started_at"]) for row in store.runs()]


def run_ab_kill(media: Path, progress: Progress) -> dict[str, Any]:
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="pccstream-soak-ab-") as tmp:
        db = Path(tmp) / "ab.sqlite"
        progress(f"ab-kill: {' vs '.join(AB_KILL_ARMS)}, 2 blocks x {AB_KILL_SECONDS:g} s; "
                 "SIGKILL in the second run")
        ab = subprocess.Popen(ab_kill_command(media, db), env=child_process_env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
        deadline = time.monotonic() + AB_KILL_TIMEOUT_S
        while time.monotonic() < deadline and ab.poll() is None and not stored_runs(db):
            time.sleep(0.2)
        # Into the second run: its server, emulator and browser are up.
        time.sleep(AB_KILL_SECONDS / 2 + 3)
        children = set(descendants(ab.pid))
        finished_early = ab.poll() is not None
        ab.send_signal(signal.SIGKILL)
        ab.wait()
        orphans: list[int] = []
        for _ in range(50):  # 10 s for every child to see its parent go
            orphans = sorted(pid for pid in children if is_running(pid))
            if not orphans:
                break
            time.sleep(0.2)
        orphan_names = [process_name(pid) for pid in orphans]
        for pid in orphans:  # leave nothing behind for the next part
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        killed_at = stored_runs(db)
        progress(f"ab-kill: killed with {len(killed_at)} run(s) stored, "
                 f"{len(children)} processes below it, {len(orphans)} outlived it; resuming")
        resumed = subprocess.run(ab_kill_command(media, db, resume=True),
                                 env=child_process_env(), capture_output=True, text=True,
                                 timeout=AB_KILL_TIMEOUT_S, check=False)
        after = stored_runs(db)
    slots = [(b, a) for b, a, _ in after]
    expected = {(b, a) for b in range(2) for a in AB_KILL_ARMS}
    kept = all(run in after for run in killed_at)
    return {
        "runs_stored_at_kill": len(killed_at),
        "processes_below_ab": len(children),
        "orphans": len(orphans), "orphan_names": orphan_names,
        "resume_exit_code": resumed.returncode,
        "resume_error": resumed.stderr.strip().splitlines()[-1:] if resumed.returncode else [],
        "runs_after_resume": len(after),
        "duplicates": len(slots) - len(set(slots)),
        "missing": sorted(f"{b}:{a}" for b, a in expected - set(slots)),
        "runs_kept": kept,
        "ok": (not finished_early and bool(killed_at) and len(killed_at) < len(expected)
               and bool(children) and not orphans and resumed.returncode == 0
               and set(slots) == expected and len(slots) == len(expected) and kept),
    }


def format_json(result: dict[str, Any]) -> str:
    return json.dumps(result, indent=2)
