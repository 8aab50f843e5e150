"""`pccstream ab pool`: one paired comparison over the blocks of many campaigns.

A block runs every arm on one network realization, so a block's difference arm − other is
paired. Campaigns of one setup with different seeds draw independent realizations, so their
blocks' differences pool into one sample: its mean, a bootstrap CI over the pooled blocks,
and the relative change of the means. Campaigns must share the setup (scenario, its
parameters, mode, bitrate, viewers, duration) unless the caller says otherwise, and two
campaigns with the same seed repeat the same networks, which is flagged, as are campaigns run
on different CPU models (the host is part of the instrument).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pccstream.ab import stats
from pccstream.ab.report import METRICS, ExperimentView, Metric, starved
from pccstream.ab.store import open_store
from pccstream.errors import UserError

# The design fields that make two campaigns one setup.
SETUP_FIELDS = ("scenario", "scenario_params", "mode", "bitrate_kbps", "viewers", "duration_s",
                "datagram_size")


@dataclass(frozen=True)
class CampaignPairs:
    """The blocks one experiment contributes: per block, the two arms' values."""

    source: str
    experiment_id: str
    seed: int
    setup: dict[str, Any]
    arm: str
    against: str
    blocks: list[int]
    arm_values: list[float]
    against_values: list[float]
    starved_blocks: list[int]
    cpu_models: tuple[str, ...] = ()  # of the compared arms' runs; none stored before hosts were

    @property
    def differences(self) -> list[float]:
        return [a - b for a, b in zip(self.arm_values, self.against_values, strict=True)]


@dataclass(frozen=True)
class PooledComparison:
    metric: Metric
    arm: str
    against: str
    campaigns: list[CampaignPairs]
    difference: stats.Estimate  # arm − against, in the metric's stored unit
    relative: stats.Estimate  # mean(arm) / mean(against) − 1
    lower_in: int
    dropped_starved: int
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def pairs(self) -> int:
        return sum(len(c.blocks) for c in self.campaigns)


def metric_named(column: str) -> Metric:
    for metric in METRICS:
        if metric.column == column:
            return metric
    names = ", ".join(m.column for m in METRICS)
    raise UserError(f"--metric {column!r}: not a run metric; expected one of {names}")


def _alternatives(text: str, flag: str) -> list[str]:
    names = [name.strip() for name in text.split("|") if name.strip()]
    if not names:
        raise UserError(f"{flag} {text!r}: give an arm label, or several separated by |")
    return names


@dataclass(frozen=True)
class Source:
    """One results database, read once: its experiments' runs."""

    path: str
    views: list[ExperimentView]


def load(paths: Sequence[str | Path]) -> list[Source]:
    sources = []
    for path in paths:
        with open_store(path, read_only=True) as store:
            views = [ExperimentView(store, row) for row in store.experiments()]
        sources.append(Source(str(path), views))
    return sources


def collect(
    sources: Sequence[Source],
    arm: str,
    against: str,
    metric: Metric,
    *,
    drop_starved: bool = False,
) -> tuple[list[CampaignPairs], list[str], int]:
    """Every experiment in `sources` that ran both arms, with its complete pairs.

    `arm` and `against` are arm labels; `A|B` takes the first of A and B that an experiment ran
    (the same controller recorded under two labels). Returns the campaigns, one line per
    experiment left out and why, and how many CPU-starved pairs were dropped."""
    arm_names = _alternatives(arm, "--arm")
    against_names = _alternatives(against, "--against")
    campaigns: list[CampaignPairs] = []
    skipped: list[str] = []
    dropped = 0
    for source in sources:
        if not source.views:
            skipped.append(f"{source.path}: no experiment")
        for view in source.views:
            mine = next((name for name in arm_names if name in view.arms), None)
            theirs = next((name for name in against_names if name in view.arms), None)
            where = f"{source.path} ({view.design.experiment_id})"
            if mine is None or theirs is None:
                missing = arm if mine is None else against
                skipped.append(f"{where}: did not run {missing}")
                continue
            if mine == theirs:
                raise UserError(f"{where}: --arm and --against both name {mine}")
            campaign, n_dropped = _pairs(view, source.path, mine, theirs, metric,
                                         drop_starved=drop_starved)
            dropped += n_dropped
            if campaign.blocks:
                campaigns.append(campaign)
            else:
                skipped.append(f"{where}: no block with both arms finished")
    return campaigns, skipped, dropped


def _pairs(
    view: ExperimentView, source: str, arm: str, against: str, metric: Metric, *,
    drop_starved: bool,
) -> tuple[CampaignPairs, int]:
    mine = view.by_block(arm, metric.column)
    theirs = view.by_block(against, metric.column)
    hungry = {r["block"] for r in view.runs if r["arm"] in (arm, against) and starved(r)}
    blocks = sorted(b for b in set(mine) & set(theirs)
                    if mine[b] is not None and theirs[b] is not None)
    dropped = 0
    if drop_starved:
        dropped = sum(1 for b in blocks if b in hungry)
        blocks = [b for b in blocks if b not in hungry]
    design = view.design.to_dict()
    return CampaignPairs(
        source=source,
        experiment_id=view.design.experiment_id,
        seed=view.design.seed,
        setup={name: design.get(name) for name in SETUP_FIELDS},
        arm=arm,
        against=against,
        blocks=blocks,
        arm_values=[float(mine[b]) for b in blocks],  # type: ignore[arg-type]
        against_values=[float(theirs[b]) for b in blocks],  # type: ignore[arg-type]
        starved_blocks=sorted(b for b in blocks if b in hungry),
        cpu_models=tuple(sorted({r["cpu_model"] for r in view.runs
                                 if r["arm"] in (arm, against) and r["cpu_model"]})),
    ), dropped


def check_setup(campaigns: Sequence[CampaignPairs]) -> None:
    """One setup across the campaigns, or a UserError naming the first that differs."""
    if not campaigns:
        return
    first = campaigns[0]
    for campaign in campaigns[1:]:
        for name in SETUP_FIELDS:
            if campaign.setup[name] != first.setup[name]:
                raise UserError(
                    f"{campaign.source} ({campaign.experiment_id}): {name} is "
                    f"{campaign.setup[name]!r}, but {first.source} ({first.experiment_id}) has "
                    f"{first.setup[name]!r}; pool one setup (or pass --mixed to pool anyway)"
                )


def repeated_networks(campaigns: Sequence[CampaignPairs]) -> list[str]:
    """Campaigns of one setup and one seed ran the same network realizations."""
    seen: dict[tuple[str, int], CampaignPairs] = {}
    out = []
    for campaign in campaigns:
        key = (json.dumps(campaign.setup, sort_keys=True), campaign.seed)
        if key in seen:
            out.append(
                f"{campaign.source} ({campaign.experiment_id}) has the seed of "
                f"{seen[key].source} ({seen[key].experiment_id}), {campaign.seed}: its blocks "
                "repeat those networks, so they are not independent samples"
            )
        else:
            seen[key] = campaign
    return out


def mixed_cpu_models(campaigns: Sequence[CampaignPairs]) -> list[str]:
    """One warning when the campaigns ran on more than one CPU model."""
    sources: dict[str, list[str]] = {}
    for campaign in campaigns:
        for model in campaign.cpu_models:
            sources.setdefault(model, []).append(campaign.source)
    if len(sources) < 2:
        return []
    where = "; ".join(f"{model}: {', '.join(dict.fromkeys(paths))}"
                      for model, paths in sorted(sources.items()))
    return [f"the campaigns ran on {len(sources)} CPU models ({where}): the host is part of the "
            "instrument, so compare them before pooling"]


def pool(
    paths: Sequence[str | Path],
    arm: str,
    against: str,
    *,
    metric: str = "buffering_ratio",
    drop_starved: bool = False,
    mixed: bool = False,
    seed: int = stats.DEFAULT_SEED,
    resamples: int = stats.DEFAULT_RESAMPLES,
) -> PooledComparison:
    return compare(load(paths), arm, against, metric=metric, drop_starved=drop_starved,
                   mixed=mixed, seed=seed, resamples=resamples)


def compare(
    sources: Sequence[Source],
    arm: str,
    against: str,
    *,
    metric: str = "buffering_ratio",
    drop_starved: bool = False,
    mixed: bool = False,
    seed: int = stats.DEFAULT_SEED,
    resamples: int = stats.DEFAULT_RESAMPLES,
) -> PooledComparison:
    """`pool` on databases already read (`load`), so several comparisons read them once."""
    chosen = metric_named(metric)
    campaigns, skipped, dropped = collect(sources, arm, against, chosen,
                                          drop_starved=drop_starved)
    if not campaigns:
        detail = "; ".join(skipped) or "no database given"
        raise UserError(f"no campaign ran both {arm} and {against}: {detail}")
    # By seed, so the bootstrap's draws, and the CI, do not depend on the order of the files.
    campaigns.sort(key=lambda c: (c.seed, c.experiment_id, c.source))
    if not mixed:
        check_setup(campaigns)
    # One key per (campaign, block), so blocks stay paired and campaigns never collide.
    mine: dict[int, float | None] = {}
    theirs: dict[int, float | None] = {}
    for campaign in campaigns:
        for a, b in zip(campaign.arm_values, campaign.against_values, strict=True):
            key = len(mine)
            mine[key], theirs[key] = a, b
    paired = stats.paired_difference(theirs, mine, seed=seed, resamples=resamples)
    return PooledComparison(
        metric=chosen,
        arm=arm,
        against=against,
        campaigns=campaigns,
        difference=paired.mean_difference,
        relative=paired.relative_change,
        lower_in=sum(1 for d in paired.differences if d < 0),
        dropped_starved=dropped,
        skipped=skipped,
        warnings=mixed_cpu_models(campaigns) + repeated_networks(campaigns),
    )


def _scaled(value: float | None, metric: Metric) -> float | None:
    return None if value is None else value * metric.scale


def to_json(result: PooledComparison) -> dict[str, Any]:
    m = result.metric
    return {
        "metric": m.column,
        "unit": m.unit,
        "arm": result.arm,
        "against": result.against,
        "pairs": result.pairs,
        "difference": _scaled(result.difference.value, m),
        "difference_ci95": [_scaled(result.difference.low, m), _scaled(result.difference.high, m)],
        "relative_change": result.relative.value,
        "relative_change_ci95": [result.relative.low, result.relative.high],
        "lower_in": result.lower_in,
        "dropped_starved_pairs": result.dropped_starved,
        "campaigns": [
            {
                "source": c.source,
                "experiment_id": c.experiment_id,
                "seed": c.seed,
                "setup": c.setup,
                "arm": c.arm,
                "against": c.against,
                "blocks": [b + 1 for b in c.blocks],
                "arm_values": [v * m.scale for v in c.arm_values],
                "against_values": [v * m.scale for v in c.against_values],
                "starved_blocks": [b + 1 for b in c.starved_blocks],
            }
            for c in result.campaigns
        ],
        "skipped": result.skipped,
        "warnings": result.warnings,
    }


def markdown(result: PooledComparison) -> str:
    m = result.metric
    lines = [
        f"{result.arm} − {result.against}, {m.title} ({m.unit}), paired by block over "
        f"{len(result.campaigns)} campaign(s)",
        "",
        "| campaign | experiment | seed | pairs | arm mean | other mean | mean difference "
        "| lower in | CPU-starved pairs |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in result.campaigns:
        n = len(c.blocks)
        diffs = c.differences
        lines.append(
            f"| {c.source} | {c.experiment_id} | {c.seed} | {n} "
            f"| {_num(sum(c.arm_values) / n * m.scale)} "
            f"| {_num(sum(c.against_values) / n * m.scale)} "
            f"| {_num(sum(diffs) / n * m.scale, signed=True)} "
            f"| {sum(1 for d in diffs if d < 0)} of {n} | {len(c.starved_blocks)} |"
        )
    d, r = result.difference, result.relative
    estimate = (
        f"{_num(_scaled(d.value, m), signed=True)} "
        f"[{_num(_scaled(d.low, m), signed=True)}, {_num(_scaled(d.high, m), signed=True)}]"
    )
    # Bold only when the CI excludes zero on the better side, as the results pages mark a met
    # comparison (an arm that is surely worse is not a result to highlight).
    if d.low is not None and d.high is not None and (
            d.high < 0 if m.lower_is_better else d.low > 0):
        estimate = f"**{estimate}**"
    lines.append(
        f"| **pooled** | | | {result.pairs} | | "
        f"| {estimate} ({_percent(r)}) | {result.lower_in} of {result.pairs} "
        f"| {sum(len(c.starved_blocks) for c in result.campaigns)} |"
    )
    notes = []
    if result.dropped_starved:
        notes.append(f"{result.dropped_starved} CPU-starved pair(s) left out (--drop-starved).")
    notes += [f"warning: {w}" for w in result.warnings]
    notes += [f"left out: {s}" for s in result.skipped]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def _num(value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def _percent(estimate: stats.Estimate) -> str:
    if estimate.value is None:
        return "relative n/a"
    text = f"{estimate.value * 100:+.0f} %"
    if estimate.low is not None and estimate.high is not None:
        text += f" [{estimate.low * 100:+.0f}, {estimate.high * 100:+.0f}]"
    return text
