from __future__ import annotations

import json

from pccstream.emulator.__main__ import main

from .test_analyze import SMALL


def test_analyze_json(write, capsys) -> None:
    log = write("s.log", SMALL)
    assert main(["emulate", "analyze", str(log), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["down"]["throughput_mbps"] == 3.6


def test_analyze_text_and_plot(write, tmp_path, capsys) -> None:
    log = write("s.log", SMALL)
    png = tmp_path / "o.png"
    assert main(["emulate", "analyze", str(log), "--plot", str(png)]) == 0
    assert "95th percentile signal delay: 8 ms" in capsys.readouterr().out
    assert png.is_file()


def test_bad_trace_is_one_line_exit_2(write, capsys) -> None:
    bad = write("bad.down", "5\n3\n")
    rc = main(["emulate", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:9",
               "--down", str(bad)])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and f"{bad}:2:" in err


def test_impossible_parameters_refused(capsys) -> None:
    for args in (["--queue", "0pkts"], ["--loss", "2"], ["--delay", "-5"],
                 ["--scenario", "nope"], ["--listen", "nonsense"]):
        rc = main(["emulate", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:9", *args])
        assert rc == 2, args
        assert capsys.readouterr().err.startswith("pccstream: error: ")


def test_scenarios_list(capsys) -> None:
    assert main(["emulate", "scenarios", "--json"]) == 0
    assert "verizon-lte-short" in json.loads(capsys.readouterr().out)


def test_scenarios_by_tag(capsys) -> None:
    assert main(["emulate", "scenarios", "--tag", "cellular", "--names"]) == 0
    names = capsys.readouterr().out.split()
    assert "verizon-evdo-driving" in names and "satellite" not in names


def test_scenarios_unknown_tag(capsys) -> None:
    assert main(["emulate", "scenarios", "--tag", "nosuch"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--tag 'nosuch'" in err and "cellular" in err
