from __future__ import annotations

import pytest

from pccstream.errors import UserError
from pccstream.media.ladder import parse_bitrate, parse_ladder


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("300k", 300_000),
        ("3m", 3_000_000),
        ("1.5M", 1_500_000),
        ("800000", 800_000),
        (" 750K ", 750_000),
    ],
)
def test_parse_bitrate(text: str, bps: int) -> None:
    assert parse_bitrate(text) == bps


def test_default_ladder_sorted_with_resolutions() -> None:
    rungs = parse_ladder("3000k,300k,1500k,750k")
    assert [r.id for r in rungs] == ["300k", "750k", "1500k", "3000k"]
    assert [(r.width, r.height) for r in rungs] == [(426, 240), (640, 360), (854, 480), (1280, 720)]


def test_high_bitrates_get_hd() -> None:
    rungs = parse_ladder("3000k,6000k,12000k")
    assert [(r.id, r.height) for r in rungs] == [("3000k", 720), ("6000k", 1080), ("12000k", 1080)]
    assert parse_ladder("1.5M")[0].id == "1500k"


def test_explicit_resolution_per_rung() -> None:
    rungs = parse_ladder("95M@1280x720,15M,50M@854x480")
    assert [(r.id, r.width, r.height) for r in rungs] == [
        ("15000k", 1920, 1080), ("50000k", 854, 480), ("95000k", 1280, 720),
    ]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("300x", "300x"),
        ("", "''"),
        ("0", "'0'"),
        ("0k", "must be greater than zero"),
        ("300k,750k,300k", "duplicates '300k'"),
        ("1500k,1.5M", "duplicates '1500k'"),
        ("300k,,750k", "item 2 is empty"),
        ("300", "did you mean k"),
        ("-5k", "-5k"),
        ("50M@1280", "bad resolution '1280': expected WIDTHxHEIGHT"),
        ("50M@1281x720", "must be even"),
        ("50M@640x720", "narrower than 1.6 x height"),
        ("50M@7680x4320", "within 3840x2160"),
        ("50M@1280x720,50000k@854x480", "duplicates '50M@1280x720'"),
    ],
)
def test_malformed_ladder_names_the_item(text: str, names: str) -> None:
    with pytest.raises(UserError) as info:
        parse_ladder(text)
    message = str(info.value)
    assert names in message
    assert "\n" not in message
