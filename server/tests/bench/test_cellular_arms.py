"""The link-model cellular table's command line."""

from __future__ import annotations

import pytest

from pccstream.bench import cellular_arms


@pytest.mark.parametrize("spec", ["vivace-lte:bdp_cap_gain=1.25,bdp_cap_ack_aggregation=0",
                                  "vivace-lte:no_such_param=1", "no-such-controller"])
def test_a_bad_arm_is_one_line_naming_it_before_any_trace_runs(
        spec: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.argv", ["cellular_arms", "--arms", spec])
    with pytest.raises(SystemExit) as exit_info:
        cellular_arms.main()
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    last = err.strip().splitlines()[-1]
    assert last.startswith("cellular_arms: error: --arms: ")
    assert "Traceback" not in err
