from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from pccstream.emulator.scenario import Scenario, list_scenarios, load_scenario, scenarios_dir
from pccstream.errors import UserError

REQUIRED = [
    "const-12mbps-30ms-1bdp", "const-12mbps-30ms-10bdp", "loss-2pct-12mbps-30ms", "changing-5s",
    "video-rttflap", "video-3viewers", "satellite", "verizon-lte-short", "tmobile-lte-short",
    "att-lte-driving",
]

# Every shipped mahimahi cellular trace (infra/traces/SOURCE.txt) with the numbers that
# infra/scenarios/README.md documents: (down trace, up trace, down Mbit/s, down period s).
CELLULAR = {
    "att-lte-driving": ("ATT-LTE-driving.down", "ATT-LTE-driving.up", 5.187, 786.112),
    "att-lte-driving-2016": (
        "ATT-LTE-driving-2016.down", "ATT-LTE-driving-2016.up", 4.572, 120.002,
    ),
    "tmobile-lte-driving": ("TMobile-LTE-driving.down", "TMobile-LTE-short.up", 12.804, 474.609),
    "tmobile-lte-short": ("TMobile-LTE-short.down", "TMobile-LTE-short.up", 16.747, 139.986),
    "tmobile-umts-driving": (
        "TMobile-UMTS-driving.down", "TMobile-UMTS-driving.up", 2.025, 928.424,
    ),
    "verizon-evdo-driving": (
        "Verizon-EVDO-driving.down", "Verizon-EVDO-driving.up", 0.522, 1062.016,
    ),
    "verizon-lte-short": ("Verizon-LTE-short.down", "Verizon-LTE-short.up", 5.041, 140.0),
}


def test_required_scenarios_ship() -> None:
    assert set(REQUIRED) <= set(list_scenarios())


@pytest.mark.parametrize("name", [n for n in REQUIRED if "lte" not in n])
def test_scenarios_load_and_build(name: str) -> None:
    sc = load_scenario(name)
    assert sc.name == name
    for d in ("down", "up"):
        spec = sc.direction(d)
        spec.build_queue()
        trace = spec.build_trace()
        assert trace is not None


def test_constant_scenarios() -> None:
    one = load_scenario("const-12mbps-30ms-1bdp")
    ten = load_scenario("const-12mbps-30ms-10bdp")
    assert one.down.rate_bps == 12e6 and one.down.delay_ms == 15 and one.up.delay_ms == 15
    assert one.down.build_queue().max_bytes == 45_000  # 12 Mbit/s x 30 ms
    assert ten.down.build_queue().max_bytes == 450_000


def test_verizon_is_the_contest_setup() -> None:
    sc = load_scenario("verizon-lte-short")
    assert sc.down.trace is not None and sc.down.trace.name == "Verizon-LTE-short.down"
    assert sc.up.trace is not None and sc.up.trace.name == "Verizon-LTE-short.up"
    assert sc.down.delay_ms == 20 and sc.down.queue == "infinite"
    trace = sc.down.build_trace()
    assert trace is not None
    assert abs(trace.average_bps() / 1e6 - 5.04) < 0.01
    assert (scenarios_dir().parent / "traces" / "SOURCE.txt").is_file()


def test_cellular_tag_is_every_trace_in_the_contest_setup() -> None:
    tagged = [n for n in list_scenarios() if "cellular" in load_scenario(n).tags]
    assert tagged == sorted(CELLULAR)
    shipped = {p.name for p in (scenarios_dir().parent / "traces").glob("*.down")}
    assert shipped == {down for down, _, _, _ in CELLULAR.values()}


@pytest.mark.parametrize("name", sorted(CELLULAR))
def test_cellular_scenario(name: str) -> None:
    down_name, up_name, mbps, period_s = CELLULAR[name]
    sc = load_scenario(name)
    assert sc.down.trace is not None and sc.down.trace.name == down_name
    assert sc.up.trace is not None and sc.up.trace.name == up_name
    for spec in (sc.down, sc.up):
        assert spec.delay_ms == 20 and spec.queue == "infinite" and spec.loss == 0.0
    trace = sc.down.build_trace()
    assert trace is not None
    assert trace.average_bps() / 1e6 == pytest.approx(mbps, abs=0.001)
    assert trace.period_ms / 1000 == pytest.approx(period_s)


def test_parameters_and_inline_syntax() -> None:
    assert load_scenario("video-rttflap").down.rate_bps == pytest.approx(3.3e6)
    a = load_scenario("video-rttflap", {"bitrate_kbps": 5000})
    b = load_scenario("video-rttflap:bitrate_kbps=5000")
    assert a.down.rate_bps == b.down.rate_bps == pytest.approx(5.5e6)
    v = load_scenario("video-3viewers", {"bitrate_kbps": 2000})
    assert v.down.rate_bps == pytest.approx(3 * 1.1 * 2e6)
    assert v.down.delay_ms == 50 and v.down.build_queue().max_bytes == 75_000
    with pytest.raises(UserError, match="unknown parameter 'bitrate'"):
        load_scenario("video-rttflap", {"bitrate": 1})


def test_changing_timeline_is_seeded_and_in_range() -> None:
    sc = load_scenario("changing-5s")
    first = list(itertools.islice(sc.changes(seed=7), 40))
    again = list(itertools.islice(sc.changes(seed=7), 40))
    other = list(itertools.islice(sc.changes(seed=8), 40))
    assert first == again and first != other
    assert [c.at_s for c in first] == [5.0 * k for k in range(40)]
    for c in first:
        assert c.rate_bps is not None and 2e6 <= c.rate_bps <= 20e6
        assert c.delay_ms is not None and 5 <= c.delay_ms <= 50  # RTT 10-100 ms
        assert isinstance(c.loss, float) and 0 <= c.loss <= 0.01
        assert c.directions == ("down", "up")


def test_rttflap_changes_only_delay() -> None:
    c = next(iter(load_scenario("video-rttflap").changes()))
    assert c.rate_bps is None and c.loss is None and c.delay_ms is not None


def test_path_and_json_scenarios(write, tmp_path: Path) -> None:
    p = write("mine.json", '{"name": "mine", "link": {"rate": "5mbit", "delay_ms": 10},\n'
              ' "timeline": [{"at_s": 2, "rate_mbps": 1, "direction": "down"}]}')
    sc = load_scenario(str(p))
    assert sc.down.rate_bps == 5e6 and sc.up.delay_ms == 10
    (c,) = list(sc.changes())
    assert c.at_s == 2 and c.rate_bps == 1e6 and c.directions == ("down",)


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ('name = "x"\n[link]\nrate_mbps = 12\nspeed = 3\n', 4, "unknown key 'speed'"),
        ('[link]\nrate_mbps = -1\n', 2, "impossible"),
        ('[link]\nqueue = "lots"\n', 2, "cannot parse queue"),
        ('[link]\nloss = 1.5\n', 2, "impossible"),
        ('[link]\ndelay_ms = "2 *"\n', 2, "cannot parse expression"),
        ('[link]\nrate = "12mbit"\n[[timeline]]\nat_s = 1\nrate_mbps = 2\n[[timeline]]\n'
         'every_s = 0\nrate_mbps = 1\n', 7, "impossible"),
        ('[link]\nrate = "12mbit"\n[[timeline]]\nat_s = 1\n', 3, "changes nothing"),
        ('[link]\nrate = "12mbit"\n[[timeline]]\nevery_s = 5\nrtt_ms = [100, 10]\n', 5,
         "low > high"),
        ('[link]\nrate = \n', 2, "invalid TOML"),
        ('[down]\ntrace = "nope.down"\n', 2, "not found"),
        ('name = "x"\ntags = "cellular"\n', 2, "tags must be a list"),
        ('tags = ["Cellular LTE"]\n', 1, "tags must be a list"),
    ],
)
def test_bad_scenarios_name_file_and_line(write, text: str, line: int, what: str) -> None:
    p = write("bad.toml", text)
    with pytest.raises(UserError) as exc:
        load_scenario(str(p))
    assert f"{p}:{line}" in str(exc.value)
    assert what in str(exc.value)


def test_bad_trace_inside_scenario_names_the_trace_line(write) -> None:
    write("broken.down", "1\n2\nx\n")
    p = write("s.toml", '[down]\ntrace = "broken.down"\n')
    with pytest.raises(UserError, match=r"broken\.down:3:"):
        load_scenario(str(p))


def test_unknown_scenario_lists_known() -> None:
    with pytest.raises(UserError, match="verizon-lte-short"):
        load_scenario("no-such-scenario")


def test_from_settings() -> None:
    sc = Scenario.from_settings(down="12mbit", up="1mbit", delay_ms=20, loss="1%", queue="30pkts")
    assert sc.down.rate_bps == 12e6 and sc.up.rate_bps == 1e6
    assert sc.down.delay_ms == sc.up.delay_ms == 20
    assert sc.down.build_queue().max_packets == 30
    with pytest.raises(UserError, match="--delay"):
        Scenario.from_settings(delay_ms=-1)
    with pytest.raises(UserError, match="--down"):
        Scenario.from_settings(down="warp9")


def test_outage_scenario_kills_both_directions_for_two_seconds() -> None:
    scenario = load_scenario("outage-2s", {})
    starts = {(e.at_s, e.loss, e.directions) for e in scenario.timeline}
    assert starts == {(10.0, 1.0, ("down", "up")), (12.0, 0.0, ("down", "up"))}
    moved = load_scenario("outage-2s", {"outage_at_s": 3, "outage_end_s": 5})
    assert [e.at_s for e in moved.timeline] == [3.0, 5.0]


def test_the_uplink_beat_releases_acks_every_40_ms() -> None:
    sc = load_scenario("uplink-beat-40ms")
    assert sc.down.rate_bps == 12e6 and sc.down.delay_ms == 20 and sc.up.delay_ms == 20
    up = sc.up.build_trace()
    assert up is not None and up.period_ms == 1000
    assert list(up.times) == list(range(40, 1001, 40)) and set(up.counts) == {10}
    assert "cellular" not in sc.tags  # a stress case, not a recording
