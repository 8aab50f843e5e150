"""`pccstream media synth|package|info`: produce and inspect media directories."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pccstream.errors import UserError
from pccstream.media.ffmpeg import find_tools, stderr_reporter
from pccstream.media.ladder import DEFAULT_LADDER, parse_ladder
from pccstream.media.manifest import load_manifest
from pccstream.media.package import (
    CODECS,
    ENCODER_REVISION,
    ENCODER_REVISION_NAME,
    made_by_this_encoder,
    make_settings,
    package_file,
    synthesize,
)

DEFAULT_SYNTH_DURATION_S = 60.0


def _float(text: str, flag: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{flag} {text!r}: not a number") from None
    if not value > 0 or value == float("inf"):
        raise UserError(f"{flag} {text}: must be a positive number of seconds")
    return value


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="DIR",
        help="media directory to write (manifest.json + one dir per rendition)",
    )
    parser.add_argument(
        "--ladder",
        default=DEFAULT_LADDER,
        help=f"comma-separated bitrates, e.g. 3000k,6000k,12M (default {DEFAULT_LADDER})",
    )
    parser.add_argument(
        "--segment-seconds",
        default="2",
        metavar="S",
        help="segment duration = GOP length in seconds (default 2)",
    )
    parser.add_argument(
        "--chunk-frames",
        type=int,
        default=None,
        metavar="N",
        help="frames per CMAF chunk (moof+mdat) inside a segment; 1 for low-latency live, "
        "0 for one chunk per segment (default: the most frames that divide the segment and "
        "last at most 0.2 s, e.g. 6 at 30 fps)",
    )
    parser.add_argument("--codec", default="h264", choices=CODECS, help="default h264")
    parser.add_argument("--fps", default="30", help="output frame rate (default 30)")
    parser.add_argument(
        "--force",
        action="store_true",
        help="write into a non-empty directory that has no manifest.json",
    )


def register(subparsers: Any) -> None:
    media = subparsers.add_parser("media", help="produce segmented media for the server")
    sub = media.add_subparsers(dest="media_command", metavar="ACTION", required=True)

    synth = sub.add_parser(
        "synth",
        help="synthetic video with burned-in frame number",
        description="Encode a synthetic moving pattern with the frame "
        "number burned in (text and binary code) into CMAF renditions.",
    )
    _common(synth)
    synth.add_argument(
        "--duration",
        default=str(DEFAULT_SYNTH_DURATION_S),
        metavar="S",
        help=f"seconds of video (default {DEFAULT_SYNTH_DURATION_S:g})",
    )
    synth.set_defaults(func=run_synth)

    package = sub.add_parser(
        "package",
        help="segment a video file",
        description="Encode a video file into CMAF renditions.",
    )
    package.add_argument("input", type=Path, metavar="INPUT", help="video file")
    _common(package)
    package.add_argument(
        "--duration", default=None, metavar="S", help="use only the first S seconds"
    )
    package.add_argument(
        "--burn-in",
        action="store_true",
        help="draw the frame number code and counter over the video",
    )
    package.set_defaults(func=run_package)

    recipe = sub.add_parser(
        "recipe",
        help="encode one of the named media (default, live) of infra/media/recipes.toml",
        description="Encode a named synthetic media (infra/media/recipes.toml, shipped with "
        "the package): `default` is the demo's video on demand, `live` the live channel's.",
    )
    recipe.add_argument("name", metavar="NAME", help="recipe name, e.g. default or live")
    recipe.add_argument("--out", required=True, type=Path, metavar="DIR")
    recipe.add_argument(
        "--force", action="store_true", help="write into a non-empty directory"
    )
    recipe.add_argument(
        "--if-stale",
        action="store_true",
        help="do nothing if DIR already holds this recipe's media as the recipe is now "
        "(its fingerprint, written beside manifest.json, matches)",
    )
    recipe.add_argument(
        "--stamp",
        action="store_true",
        help="only record DIR as made from the recipe as it is now (no encode): for media "
        "today's encoder made before fingerprints whose recipe has not changed since",
    )
    recipe.set_defaults(func=run_recipe)

    info = sub.add_parser("info", help="validate a media directory and summarise it")
    info.add_argument("dir", type=Path, metavar="DIR")
    info.set_defaults(func=run_info)


def run_synth(args: argparse.Namespace) -> int:
    settings = make_settings(
        parse_ladder(args.ladder), args.codec, args.fps, args.segment_seconds, args.chunk_frames
    )
    duration = _float(args.duration, "--duration")
    tools = find_tools()
    synthesize(
        tools,
        args.out,
        settings=settings,
        duration_s=duration,
        force=args.force,
        report=stderr_reporter,
    )
    return 0


def run_recipe(args: argparse.Namespace) -> int:
    from pccstream.media.recipes import is_current, make, stamp

    if args.stamp:
        if not (args.out / "manifest.json").is_file():
            raise UserError(f"--stamp {args.out}: no manifest.json there to stamp")
        if not made_by_this_encoder(args.out):
            raise UserError(
                f"--stamp {args.out}: written by an older encoder (no {ENCODER_REVISION_NAME} "
                f"of revision {ENCODER_REVISION}); make it again without --stamp"
            )
        stamp(args.name, args.out)
        return 0
    if args.if_stale and is_current(args.name, args.out):
        print(f"{args.out}: media of recipe {args.name!r} is current", file=sys.stderr)
        return 0
    make(args.name, args.out, force=args.force)
    return 0


def run_package(args: argparse.Namespace) -> int:
    settings = make_settings(
        parse_ladder(args.ladder), args.codec, args.fps, args.segment_seconds, args.chunk_frames
    )
    duration = None if args.duration is None else _float(args.duration, "--duration")
    tools = find_tools()
    package_file(
        tools,
        args.input,
        args.out,
        settings=settings,
        duration_s=duration,
        burn_in=args.burn_in,
        force=args.force,
        report=stderr_reporter,
    )
    return 0


def run_info(args: argparse.Namespace) -> int:
    manifest = load_manifest(args.dir)
    print(
        f"{manifest.media_dir}: {manifest.source or '?'}, {manifest.duration_s:g} s, "
        f"{manifest.segment_count} segments of {manifest.segment_seconds:g} s"
        + (f", {manifest.fps:g} fps" if manifest.fps else "")
    )
    for r in manifest.renditions:
        total = r.init.bytes + sum(s.bytes for s in r.segments)
        print(
            f"  [{r.index}] {r.id:>7} {r.width}x{r.height} {r.codec:<16} "
            f"target {r.bitrate_bps / 1000:.0f} kbit/s, measured {r.measured_bps / 1000:.0f} "
            f"kbit/s, {total / 1e6:.2f} MB, ahead of its target by at most "
            f"{r.lead_over_bitrate_s:.2f} s"
        )
    return 0
