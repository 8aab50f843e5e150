import json

import pytest

from pccstream.bench.wire_overhead import main


def test_larger_datagrams_spend_less_of_the_link_on_headers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--sizes", "1200,1452", "--segments", "2"]) == 0
    result = json.loads(capsys.readouterr().out)
    small, large = result["sizes"]
    assert (small["max_datagram_size"], small["largest_datagram"]) == (1200, 1200)
    assert (large["max_datagram_size"], large["largest_datagram"]) == (1452, 1452)
    assert small["media_bytes"] == large["media_bytes"] == 2_000_000
    # About 40 bytes a packet: header, AEAD tag, STREAM frame header.
    assert 0.02 < large["overhead"] < small["overhead"] < 0.06


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--sizes", "1200,9000"], "--sizes 9000: expected 1200 to 1472"),
        (["--sizes", "big"], "--sizes 'big': expected byte counts"),
        (["--segments", "0"], "--segments 0: expected 1 to 100"),
    ],
)
def test_bad_flags_get_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
