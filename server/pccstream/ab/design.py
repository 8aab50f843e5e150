"""What an A/B experiment is, and its blocked randomized schedule.

An experiment is identified by its design: every setting that changes what is measured. The
identity is a hash of the design's canonical JSON, so `--resume` finds the experiment again
from the same flags, and a different design never mixes with it.

Schedule: `runs` blocks; each block runs every arm exactly once, in an order drawn from a
generator seeded by (seed, block), on one network realization (the emulator seed of the block),
so the arms of a block see identical network conditions and the order carries no bias.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict, dataclass, field
from typing import Any

from pccstream.cc.registry import create_controller
from pccstream.contracts import is_page_parameter
from pccstream.emulator.scenario import load_scenario, parse_name_and_params
from pccstream.errors import UserError
from pccstream.server.datagram_size import check_max_datagram_size

MODES = ("fixed", "abr", "live")
# `--scenario none`: no emulator, the player dials the server directly on loopback.
NO_EMULATOR = "none"
# Player URL parameters the harness sets itself (player_query); `--player` may not override.
HARNESS_PLAYER_PARAMS = frozenset(
    {"server", "certHash", "cc", "mode", "buffer", "bitrate", "latency", "dashboard"}
)
# The WebRTC reference arm (libwebrtc in Chromium, its own congestion control): live mode only.
WEBRTC_ARM = "webrtc"
# An arm parameter with this prefix is a player URL parameter of that arm (`Arm.player`).
ARM_PLAYER_PREFIX = "player."
DEFAULT_TARGET_LATENCY_MS = 1000


@dataclass(frozen=True)
class Arm:
    """A controller name with per-session parameters, written `NAME[:KEY=VALUE...]`.

    A key `player.NAME` is a player URL parameter of this arm only (e.g. `player.fec=8`), so
    two arms with the same controller can differ in how the player receives (`--player` sets
    one for every arm).
    """

    cc: str
    params: tuple[tuple[str, str], ...] = ()
    player: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        return ":".join([
            self.cc,
            *(f"{k}={v}" for k, v in self.params),
            *(f"{ARM_PLAYER_PREFIX}{k}={v}" for k, v in self.player),
        ])

    @classmethod
    def parse(cls, text: str) -> Arm:
        name, *pairs = text.strip().split(":")
        params: list[tuple[str, str]] = []
        player: list[tuple[str, str]] = []
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep or not key:
                raise UserError(f"--arms {text!r}: parameter {pair!r} is not KEY=VALUE")
            if key.startswith(ARM_PLAYER_PREFIX):
                player.append((_arm_player_key(text, key), value))
            else:
                params.append((key, value))
        if name == WEBRTC_ARM:
            if params or player:
                raise UserError(f"--arms {text!r}: the webrtc arm takes no parameters")
            return cls(name)
        # Refuse unknown names (the message lists the valid ones) and bad parameters now.
        create_controller(name, dict(params))
        return cls(name, tuple(params), tuple(player))

    @property
    def is_webrtc(self) -> bool:
        return self.cc == WEBRTC_ARM


def _arm_player_key(text: str, key: str) -> str:
    name = key.removeprefix(ARM_PLAYER_PREFIX)
    if (name in HARNESS_PLAYER_PARAMS or name.startswith("cc.")
            or not is_page_parameter("player", name)):
        raise UserError(
            f"--arms {text!r}: {key} is not a player parameter an arm may set (the harness sets "
            f"{', '.join(sorted(HARNESS_PLAYER_PARAMS))} itself)"
        )
    return name


def parse_arms(text: str) -> list[Arm]:
    arms = [Arm.parse(item) for item in text.split(",") if item.strip()]
    if not arms:
        raise UserError("--arms: give at least one controller, e.g. vivace,cubic")
    labels = [arm.label for arm in arms]
    if len(set(labels)) != len(labels):
        raise UserError(f"--arms {text!r}: an arm is listed twice")
    return arms


@dataclass(frozen=True)
class Design:
    arms: tuple[str, ...]
    scenario: str
    scenario_params: dict[str, str] = field(default_factory=dict)
    runs: int = 5
    duration_s: float = 60.0
    mode: str = "fixed"
    bitrate_kbps: int | None = 3000
    buffer_s: float = 10.0
    viewers: int = 1
    seed: int = 1
    ladder: tuple[int, ...] = ()  # kbit/s of the media renditions
    # Live mode: the player's target latency (ms). None outside live mode; left out of the
    # design's JSON when None, so experiments designed before live mode keep their ids.
    target_latency_ms: int | None = None
    # Live mode: the player's live ABR picks renditions up to `bitrate_kbps` (`--abr`). Left
    # out of the design's JSON when off, so earlier live experiments keep their ids.
    live_abr: bool = False
    # Extra player URL parameters (`--player KEY=VALUE`, e.g. startRendition=abr); left out of
    # the design's JSON when empty, so earlier experiments keep their ids.
    player_params: tuple[tuple[str, str], ...] = ()
    # The server's largest UDP payload (`--datagram-size`); None: the server's default (1200).
    # Left out of the design's JSON when None, so earlier experiments keep their ids.
    datagram_size: int | None = None

    def __post_init__(self) -> None:
        if not self.arms:
            raise UserError("--arms: give at least one controller")
        if self.runs < 1:
            raise UserError(f"--runs {self.runs}: must be at least 1")
        if not self.duration_s > 0:
            raise UserError(f"--duration {self.duration_s}: must be > 0 seconds")
        if self.mode not in MODES:
            raise UserError(f"--mode {self.mode!r}: expected one of {', '.join(MODES)}")
        if self.mode in ("fixed", "live") and not self.bitrate_kbps:
            raise UserError(f"--mode {self.mode} needs --bitrate KBPS")
        if WEBRTC_ARM in self.arms and self.scenario == NO_EMULATOR:
            raise UserError("--arms webrtc needs an emulated link (--scenario none has none)")
        if WEBRTC_ARM in self.arms and self.mode != "live":
            raise UserError("--arms webrtc: the WebRTC arm is live video; use --mode live")
        if self.mode == "live":
            if self.target_latency_ms is None:
                object.__setattr__(self, "target_latency_ms", DEFAULT_TARGET_LATENCY_MS)
            if not 50 <= (self.target_latency_ms or 0) <= 30_000:
                raise UserError(f"--latency {self.target_latency_ms}: expected 50 to 30000 ms")
        elif self.target_latency_ms is not None:
            raise UserError("--latency is for --mode live only")
        if self.live_abr and self.mode != "live":
            raise UserError("--abr is live ABR: use it with --mode live (--mode abr is VOD ABR)")
        if self.bitrate_kbps is not None and self.bitrate_kbps <= 0:
            raise UserError(f"--bitrate {self.bitrate_kbps}: must be > 0 kbit/s")
        if self.viewers < 1:
            raise UserError(f"--viewers {self.viewers}: must be at least 1")
        if not self.buffer_s > 0:
            raise UserError(f"--buffer {self.buffer_s}: must be > 0 seconds")
        if self.datagram_size is not None:
            check_max_datagram_size(self.datagram_size, "--datagram-size")
        for key, _ in self.player_params:
            if key in HARNESS_PLAYER_PARAMS or key.startswith("cc."):
                raise UserError(
                    f"--player {key}=...: the harness sets {key} itself (use the matching "
                    "ab option)"
                )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["arms"] = list(self.arms)
        data["ladder"] = list(self.ladder)
        data["scenario_params"] = dict(sorted(self.scenario_params.items()))
        if data["target_latency_ms"] is None:
            del data["target_latency_ms"]
        if not data["live_abr"]:
            del data["live_abr"]
        if self.player_params:
            data["player_params"] = [list(pair) for pair in self.player_params]
        else:
            del data["player_params"]
        if data["datagram_size"] is None:
            del data["datagram_size"]
        return data

    def canonical_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @property
    def experiment_id(self) -> str:
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()[:16]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Design:
        return cls(
            arms=tuple(data["arms"]),
            scenario=data["scenario"],
            scenario_params=dict(data.get("scenario_params") or {}),
            runs=int(data["runs"]),
            duration_s=float(data["duration_s"]),
            mode=data["mode"],
            bitrate_kbps=data.get("bitrate_kbps"),
            buffer_s=float(data.get("buffer_s", 10.0)),
            viewers=int(data.get("viewers", 1)),
            seed=int(data["seed"]),
            ladder=tuple(int(x) for x in data.get("ladder") or ()),
            target_latency_ms=data.get("target_latency_ms"),
            live_abr=bool(data.get("live_abr", False)),
            player_params=tuple(
                (str(k), str(v)) for k, v in data.get("player_params") or ()
            ),
            datagram_size=data.get("datagram_size"),
        )

    @property
    def scenario_label(self) -> str:
        """A short name for tables: scenario + its params + viewers + bitrate."""
        params = ",".join(f"{k}={v}" for k, v in sorted(self.scenario_params.items()))
        text = self.scenario + (f":{params}" if params else "")
        if self.mode == "fixed":
            text += f" @ {self.bitrate_kbps} kbit/s"
        elif self.mode == "live":
            what = "live ABR up to" if self.live_abr else "live @"
            what += f" {self.bitrate_kbps}"
            text += f" {what} kbit/s, target {self.target_latency_ms} ms"
        else:
            text += " (abr)"
        if self.viewers > 1:
            text += f" x{self.viewers} viewers"
        if self.player_params:
            text += " [" + ",".join(f"{k}={v}" for k, v in self.player_params) + "]"
        if self.datagram_size is not None:
            text += f", {self.datagram_size}-byte datagrams"
        return text


def default_ladder(mode: str, bitrate_kbps: int | None) -> tuple[int, ...]:
    """Fixed mode needs only the chosen rendition; ABR gets a 4-step ladder up to the bitrate
    (default 3000 kbit/s)."""
    top = bitrate_kbps or 3000
    if mode in ("fixed", "live"):
        return (top,)
    return tuple(sorted({max(100, round(top * f)) for f in (0.1, 0.25, 0.5, 1.0)}))


def resolve_scenario(
    scenario: str, params: dict[str, str], bitrate_kbps: int | None, viewers: int
) -> tuple[str, dict[str, str]]:
    """Split inline `NAME:k=v` params off, feed `--bitrate`/`--viewers` to the scenario when it
    declares `bitrate_kbps`/`viewers` (explicit params win), and check that it loads.
    `none` (NO_EMULATOR) takes no parameters."""
    name, inline = parse_name_and_params(scenario)
    if name == NO_EMULATOR:
        if inline or params:
            raise UserError("--scenario none (no emulator) takes no scenario parameters")
        return name, {}
    merged = {**inline, **params}
    declared = load_scenario(name, merged).params
    if "bitrate_kbps" in declared and "bitrate_kbps" not in merged and bitrate_kbps:
        merged["bitrate_kbps"] = str(bitrate_kbps)
    if "viewers" in declared and "viewers" not in merged:
        merged["viewers"] = str(viewers)
    load_scenario(name, merged)  # raises UserError naming the file and key
    return name, merged


@dataclass(frozen=True)
class Slot:
    """One run of the schedule: `arm` in `block`, `position`-th within the block."""

    index: int
    block: int
    position: int
    arm: str
    network_seed: int


def network_seed(seed: int, block: int) -> int:
    """The emulator seed of a block: one network realization shared by every arm."""
    return random.Random(f"{seed}:network:{block}").randrange(1, 2**31)


def block_order(arms: tuple[str, ...], seed: int, block: int) -> list[str]:
    order = list(arms)
    random.Random(f"{seed}:order:{block}").shuffle(order)
    return order


def schedule(design: Design) -> list[Slot]:
    slots: list[Slot] = []
    for block in range(design.runs):
        net = network_seed(design.seed, block)
        for position, arm in enumerate(block_order(design.arms, design.seed, block)):
            slots.append(Slot(len(slots), block, position, arm, net))
    return slots
