"""Every decoder of outside input, fuzzed (bounded form; `pccstream bench soak` runs 10^5)."""

from __future__ import annotations

import random

import pytest

from pccstream import protocol
from pccstream.bench.fuzz import Target, run_target, targets
from pccstream.emulator.loss import parse_loss
from pccstream.errors import UserError

CASES = 60  # derandomized: the same inputs every run


@pytest.mark.parametrize("target", targets(), ids=lambda t: t.name)
def test_decoder_ends_in_a_correct_answer_or_a_clear_error(target: Target) -> None:
    outcomes = run_target(target, CASES)
    assert outcomes.failures == []
    assert outcomes.ok + outcomes.refused == CASES


@pytest.mark.parametrize("payload", [b"[]", b"[" * 5000 + b"]" * 5000, b'"text"'])
def test_telemetry_frame_that_is_not_an_object_is_a_clear_error(payload: bytes) -> None:
    buffer = bytearray(len(payload).to_bytes(4, "big") + payload)
    with pytest.raises(ValueError, match="telemetry frame"):
        protocol.decode_telemetry_frames(buffer)


def test_gilbert_elliott_option_that_is_not_a_number_is_a_clear_error() -> None:
    with pytest.raises(UserError, match="option 'p'=None is not a number"):
        parse_loss({"model": "ge", "p": None, "r": 0.5}, random.Random(0), "loss")  # type: ignore[arg-type]
