"""SQLite storage of A/B experiments: a file, no server.

Tables:
- `experiments`: one row per design (`id` = hash of the design's canonical JSON).
- `runs`: one row per finished run, written in ONE transaction when the run is complete, so a
  killed run leaves nothing behind. `UNIQUE(experiment_id, block, arm)` makes a duplicate
  impossible. Scalar metrics are columns (for SQL and export); everything else — the player's
  full `metrics()` per viewer, the emulator's analysis, the controller telemetry, versions and
  the configuration — is JSON (telemetry zlib-compressed).
- `claims`: the slots being run right now, and by which process. A slot is claimed in one
  transaction before it is run, so two `--resume` processes on one database never run the
  same slot; a claim whose process is gone (killed) is taken over.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
import uuid
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pccstream.ab.design import Design
from pccstream.errors import UserError

SCHEMA_VERSION = 1

# Scalar per-run columns: (name, SQL type). Player metrics are the mean over viewers.
METRIC_COLUMNS: tuple[tuple[str, str], ...] = (
    ("buffering_ratio", "REAL"),
    ("startup_delay_ms", "REAL"),
    ("stall_count", "REAL"),
    ("stall_seconds", "REAL"),
    ("play_seconds", "REAL"),
    ("mean_bitrate_kbps", "REAL"),
    ("bitrate_switches", "REAL"),
    ("frame_height", "REAL"),
    ("ended", "INTEGER"),
    ("player_errors", "INTEGER"),
    ("capacity_mbps", "REAL"),
    ("throughput_mbps", "REAL"),
    ("utilization", "REAL"),
    ("p95_queue_delay_ms", "REAL"),
    ("p95_signal_delay_ms", "REAL"),
    ("loss_rate", "REAL"),
    ("server_cpu_s", "REAL"),
    # Live and WebRTC arms: glass-to-glass latency from the burned-in frame codes.
    ("latency_p50_ms", "REAL"),
    ("latency_p95_ms", "REAL"),
    ("frames_skipped", "REAL"),
    # Freezes by WebRTC's rule (webrtc-stats freezeCount), for live and WebRTC arms alike.
    ("freeze_count", "REAL"),
    # CPU health (docs/ab.md, "CPU starvation"): the player's view, the run's processes, the
    # host, and the one rule over them (pccstream.ab.starvation).
    ("buffering_ratio_with_startup", "REAL"),
    ("dropped_frames", "REAL"),
    ("decoded_frames", "REAL"),
    ("dropped_frames_near_stalls", "REAL"),
    ("event_loop_lag_p95_ms", "REAL"),
    ("event_loop_lag_max_ms", "REAL"),
    ("browser_cpu_s", "REAL"),
    ("emulator_cpu_s", "REAL"),
    ("cpu_window_s", "REAL"),
    ("loadavg_start", "REAL"),
    ("host_cpus", "INTEGER"),
    ("cpu_starved", "INTEGER"),
    ("cpu_starved_reason", "TEXT"),
    # The emulator's timer lateness (emulator/lateness.py): the share of the run its
    # real-time timers fired over 1 ms late, summed, and the latest. A host stall (a virtual
    # machine's descheduled CPU, in no load average) or the emulator short of CPU.
    ("emulator_late_share", "REAL"),
    ("emulator_late_max_ms", "REAL"),
    # Where the run ran: this machine, or the cluster worker's (docs/cluster.md).
    ("worker_host", "TEXT"),
    ("cpu_model", "TEXT"),
)

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS experiments (
    id TEXT PRIMARY KEY,
    design_json TEXT NOT NULL,
    scenario TEXT NOT NULL,
    label TEXT NOT NULL,
    created_at REAL NOT NULL,
    command TEXT
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    experiment_id TEXT NOT NULL REFERENCES experiments(id),
    slot INTEGER NOT NULL,
    block INTEGER NOT NULL,
    position INTEGER NOT NULL,
    arm TEXT NOT NULL,
    network_seed INTEGER NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL NOT NULL,
    wall_s REAL NOT NULL,
    overhead_s REAL,
    {", ".join(f"{name} {kind}" for name, kind in METRIC_COLUMNS)},
    viewers_json TEXT NOT NULL,
    link_json TEXT NOT NULL,
    series_json TEXT NOT NULL,
    telemetry_z BLOB,
    config_json TEXT NOT NULL,
    versions_json TEXT NOT NULL,
    UNIQUE (experiment_id, block, arm)
);
CREATE TABLE IF NOT EXISTS claims (
    experiment_id TEXT NOT NULL,
    block INTEGER NOT NULL,
    arm TEXT NOT NULL,
    owner TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    claimed_at REAL NOT NULL,
    PRIMARY KEY (experiment_id, block, arm)
);
"""


# A run's identity and timing: stored as columns and exported as they are.
RUN_SCALAR_COLUMNS = (
    "slot",
    "block",
    "position",
    "arm",
    "network_seed",
    "started_at",
    "finished_at",
    "wall_s",
    "overhead_s",
)


class Store:
    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        """`read_only`: the file is never written (reports and pools of committed results);
        an older schema is brought up to date in a private in-memory copy instead."""
        self.path = Path(path)
        try:
            if read_only:
                self.conn = sqlite3.connect(":memory:")
                disk = sqlite3.connect(self._read_only_uri(), uri=True, timeout=30)
                try:
                    disk.backup(self.conn)
                finally:
                    disk.close()
            else:
                self.conn = sqlite3.connect(self.path, timeout=30)
        except sqlite3.Error as exc:
            raise UserError(f"{self.path}: cannot open the database: {exc}") from None
        self.conn.row_factory = sqlite3.Row
        # Who claims slots through this store: unique even for two stores in one process.
        self.owner = uuid.uuid4().hex
        try:
            if not read_only:
                self.conn.execute("PRAGMA journal_mode=WAL")
            with self.conn:
                self.conn.executescript(_SCHEMA)
                self.conn.execute(
                    "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,)
                )
                self._add_missing_columns()
        except sqlite3.DatabaseError as exc:
            raise UserError(f"{self.path}: not an A/B results database ({exc})") from None

    def _read_only_uri(self) -> str:
        """A read-only URI for the file. Without a -wal file beside it no writer is connected
        (a WAL writer keeps one open), so the file is read as immutable: a plain read-only
        reader of a WAL database would create -shm and -wal files it cannot remove."""
        uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
        wal = self.path.with_name(self.path.name + "-wal")
        return uri if wal.exists() else uri + "&immutable=1"

    def _add_missing_columns(self) -> None:
        """Databases written before a metric column existed get it (NULL for old runs)."""
        present = {row["name"] for row in self.conn.execute("PRAGMA table_info(runs)")}
        for name, kind in METRIC_COLUMNS:
            if name not in present:
                self.conn.execute(f"ALTER TABLE runs ADD COLUMN {name} {kind}")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- experiments -------------------------------------------------------------------------

    def experiment(self, experiment_id: str) -> sqlite3.Row | None:
        return self.conn.execute(
            "SELECT * FROM experiments WHERE id = ?", (experiment_id,)
        ).fetchone()

    def experiments(self) -> list[sqlite3.Row]:
        return self.conn.execute("SELECT * FROM experiments ORDER BY created_at").fetchall()

    def add_experiment(self, design: Design, command: str | None = None) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT INTO experiments (id, design_json, scenario, label, created_at, command)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    design.experiment_id,
                    design.canonical_json(),
                    design.scenario,
                    design.scenario_label,
                    time.time(),
                    command,
                ),
            )

    def design(self, experiment_id: str) -> Design:
        row = self.experiment(experiment_id)
        if row is None:
            raise UserError(f"{self.path}: no experiment {experiment_id}")
        return Design.from_dict(json.loads(row["design_json"]))

    # -- runs --------------------------------------------------------------------------------

    def completed(self, experiment_id: str) -> set[tuple[int, str]]:
        rows = self.conn.execute(
            "SELECT block, arm FROM runs WHERE experiment_id = ?", (experiment_id,)
        )
        return {(row["block"], row["arm"]) for row in rows}

    def claim(self, experiment_id: str, block: int, arm: str) -> str | None:
        """Claim a slot for this store before running it, atomically: None when it is ours
        now, else why not ("already stored", or which live process holds it)."""
        key = (experiment_id, block, arm)
        self.conn.execute("BEGIN IMMEDIATE")  # no other writer between the check and the claim
        with self.conn:
            stored = self.conn.execute(
                "SELECT 1 FROM runs WHERE experiment_id = ? AND block = ? AND arm = ?", key
            ).fetchone()
            if stored is not None:
                return "already stored"
            holder = self.conn.execute(
                "SELECT owner, pid, host FROM claims"
                " WHERE experiment_id = ? AND block = ? AND arm = ?",
                key,
            ).fetchone()
            if (
                holder is not None
                and holder["owner"] != self.owner
                and _process_alive(holder["pid"], holder["host"])
            ):
                return f"claimed by process {holder['pid']} on {holder['host']}"
            self.conn.execute(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?, ?, ?)",
                (*key, self.owner, os.getpid(), socket.gethostname(), time.time()),
            )
        return None

    def release(self, experiment_id: str, block: int, arm: str) -> None:
        """Give up this store's claim on a slot (its run failed or was interrupted)."""
        with self.conn:
            self.conn.execute(
                "DELETE FROM claims WHERE experiment_id = ? AND block = ? AND arm = ?"
                " AND owner = ?",
                (experiment_id, block, arm, self.owner),
            )

    def commit_run(self, experiment_id: str, record: dict[str, Any]) -> int:
        """Store one finished run in a single transaction; returns its row id."""
        columns = [
            "experiment_id",
            *RUN_SCALAR_COLUMNS,
            *(name for name, _ in METRIC_COLUMNS),
            "viewers_json",
            "link_json",
            "series_json",
            "telemetry_z",
            "config_json",
            "versions_json",
        ]
        telemetry = record.get("telemetry")
        values: list[Any] = [experiment_id]
        for name in columns[1:]:
            if name == "telemetry_z":
                values.append(
                    zlib.compress(json.dumps(telemetry).encode(), 6) if telemetry else None
                )
            elif name.endswith("_json"):
                values.append(json.dumps(record.get(name[: -len("_json")]), allow_nan=False))
            else:
                values.append(record.get(name))
        placeholders = ", ".join("?" for _ in columns)
        try:
            with self.conn:
                cursor = self.conn.execute(
                    f"INSERT INTO runs ({', '.join(columns)}) VALUES ({placeholders})", values
                )
                self.conn.execute(
                    "DELETE FROM claims WHERE experiment_id = ? AND block = ? AND arm = ?",
                    (experiment_id, record.get("block"), record.get("arm")),
                )
        except sqlite3.IntegrityError as exc:
            raise UserError(
                f"{self.path}: run block {record.get('block')} arm {record.get('arm')} of "
                f"experiment {experiment_id} is already stored ({exc})"
            ) from None
        return int(cursor.lastrowid or 0)

    def adopt_runs(self, from_id: str, to_id: str, blocks: int) -> int:
        """Copy the runs of blocks < `blocks` of experiment `from_id` into `to_id`, except the
        (block, arm) pairs `to_id` already holds, in one transaction; returns how many. The
        source's rows stay (nothing stored is lost)."""
        columns = [
            row["name"]
            for row in self.conn.execute("PRAGMA table_info(runs)")
            if row["name"] not in ("id", "experiment_id")
        ]
        names = ", ".join(columns)
        with self.conn:
            cursor = self.conn.execute(
                # UNIQUE (experiment_id, block, arm) skips the pairs `to_id` already holds.
                f"INSERT OR IGNORE INTO runs (experiment_id, {names}) SELECT ?, {names}"
                " FROM runs WHERE experiment_id = ? AND block < ? ORDER BY slot",
                (to_id, from_id, blocks),
            )
        return cursor.rowcount

    def runs(self, experiment_id: str | None = None) -> list[sqlite3.Row]:
        if experiment_id is None:
            return self.conn.execute("SELECT * FROM runs ORDER BY experiment_id, slot").fetchall()
        return self.conn.execute(
            "SELECT * FROM runs WHERE experiment_id = ? ORDER BY slot", (experiment_id,)
        ).fetchall()


def telemetry(row: sqlite3.Row) -> list[Any]:
    """The controller telemetry of a run: one list of records per viewer's session, viewer 0
    first (databases from before several viewers hold one session's records unnested)."""
    blob = row["telemetry_z"]
    if not blob:
        return []
    return json.loads(zlib.decompress(blob))


def telemetry_sessions(row: sqlite3.Row) -> list[list[dict[str, Any]]]:
    """`telemetry(row)` as one list of records per viewer's session, viewer 0 first, whatever
    the database's age (an unnested session becomes the only one)."""
    records = telemetry(row)
    if not records:
        return []
    sessions = records if isinstance(records[0], list) else [records]
    return [[r for r in session if isinstance(r, dict)] for session in sessions]


@contextmanager
def open_store(path: str | Path, *, must_exist: bool = False,
               read_only: bool = False) -> Iterator[Store]:
    if (must_exist or read_only) and not Path(path).is_file():
        raise UserError(f"{path}: no such results database")
    store = Store(path, read_only=read_only)
    try:
        yield store
    finally:
        store.close()


def _process_alive(pid: int, host: str) -> bool:
    """Whether a claim's process still runs (a claim from another host is assumed live)."""
    if host != socket.gethostname():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
