"""`pccstream ab export`: the runs of a results database as flat tables.

Two tables, written side by side:
- runs (`OUT`): one row per run: every design field of its experiment (`design_` prefix:
  arms, scenario, scenario_params, runs, duration_s, mode, bitrate_kbps, buffer_s, viewers,
  seed, ladder, target_latency_ms, ...), then every scalar column of the run (identity, timing,
  metrics, and any column a newer schema adds).
- segments (`OUT` with `.segments` before the suffix): one row per downloaded segment per
  viewer (the player's `metrics().segments`), keyed by experiment, slot, block, arm and viewer.

Lists and objects are JSON text in CSV, so a spreadsheet reads every cell.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pccstream.ab.design import Design
from pccstream.ab.store import Store
from pccstream.errors import UserError

EXPORT_FORMATS = ("csv", "parquet", "jsonl")
# Run columns that are not scalars (stored as JSON or compressed): left out of the runs table.
_BLOB_COLUMNS = frozenset(
    {"viewers_json", "link_json", "series_json", "telemetry_z", "config_json", "versions_json"}
)
_RUN_KEY = ("experiment_id", "slot", "block", "arm")


def segments_path(out: Path) -> Path:
    return out.with_name(f"{out.stem}.segments{out.suffix}")


def design_fields(design_json: str) -> dict[str, Any]:
    """Every field of the design, defaults filled in (older designs omit some)."""
    fields = Design.from_dict(json.loads(design_json)).to_dict()
    fields.setdefault("target_latency_ms", None)  # to_dict omits it outside live mode
    return {f"design_{key}": value for key, value in fields.items()}


def iter_run_rows(store: Store) -> Iterator[dict[str, Any]]:
    designs = {row["id"]: design_fields(row["design_json"]) for row in store.experiments()}
    for row in store.runs():
        out: dict[str, Any] = {"experiment_id": row["experiment_id"]}
        out.update(designs[row["experiment_id"]])
        for key in row.keys():  # noqa: SIM118 (sqlite3.Row is not a mapping)
            if key not in _BLOB_COLUMNS and key not in ("id", "experiment_id"):
                out[key] = row[key]
        yield out


def iter_segment_rows(store: Store) -> Iterator[dict[str, Any]]:
    for row in store.runs():
        for viewer, metrics in enumerate(_viewers(row)):
            for segment in (metrics or {}).get("segments") or []:
                yield {**{key: row[key] for key in _RUN_KEY}, "viewer": viewer, **segment}


def _viewers(row: sqlite3.Row) -> list[dict[str, Any] | None]:
    try:
        viewers = json.loads(row["viewers_json"] or "[]")
    except ValueError:
        return []
    return viewers if isinstance(viewers, list) else []


def export_runs(store: Store, fmt: str, out: Path) -> tuple[int, int]:
    """Write the runs table to `out` and the segments table beside it; (runs, segments)."""
    if fmt not in EXPORT_FORMATS:
        raise UserError(f"--format {fmt!r}: expected one of {', '.join(EXPORT_FORMATS)}")
    runs = list(iter_run_rows(store))
    if not runs:
        raise UserError(f"{store.path}: no runs to export")
    segments = list(iter_segment_rows(store))
    _write(runs, fmt, out)
    _write(segments, fmt, segments_path(out), empty_columns=[*_RUN_KEY, "viewer"])
    return len(runs), len(segments)


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


def _cell(value: Any) -> Any:
    return json.dumps(value, sort_keys=True) if isinstance(value, list | tuple | dict) else value


def _write(
    rows: list[dict[str, Any]], fmt: str, out: Path, empty_columns: list[str] | None = None
) -> None:
    columns = _columns(rows) or list(empty_columns or [])
    try:
        if fmt == "csv":
            with out.open("w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=columns)
                writer.writeheader()
                writer.writerows({k: _cell(row.get(k)) for k in columns} for row in rows)
        elif fmt == "jsonl":
            with out.open("w") as handle:
                for row in rows:
                    handle.write(json.dumps(row, sort_keys=False) + "\n")
        else:
            try:
                import pyarrow as pa  # type: ignore[import-not-found]
                import pyarrow.parquet as pq  # type: ignore[import-not-found]
            except ImportError:
                raise UserError(
                    "--format parquet needs pyarrow (pip install pyarrow); csv does not"
                ) from None
            table = (
                pa.Table.from_pylist([{k: _cell(row.get(k)) for k in columns} for row in rows])
                if rows
                else pa.table({k: pa.array([], pa.string()) for k in columns})
            )
            pq.write_table(table, out)
    except OSError as exc:
        raise UserError(f"{out}: cannot write the export: {exc}") from None
