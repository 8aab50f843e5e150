from collections import Counter

import pytest

from pccstream.ab.design import (
    Arm,
    Design,
    block_order,
    default_ladder,
    parse_arms,
    resolve_scenario,
    schedule,
)
from pccstream.errors import UserError


def make(**kw) -> Design:
    base = dict(arms=("vivace", "cubic", "reno"), scenario="video-rttflap", runs=8, seed=3)
    base.update(kw)
    return Design(**base)  # type: ignore[arg-type]


def test_every_block_runs_every_arm_once_on_one_network_realization():
    design = make()
    slots = schedule(design)
    assert len(slots) == design.runs * len(design.arms)
    assert [s.index for s in slots] == list(range(len(slots)))
    for block in range(design.runs):
        in_block = [s for s in slots if s.block == block]
        assert sorted(s.arm for s in in_block) == sorted(design.arms)
        assert [s.position for s in in_block] == [0, 1, 2]
        assert len({s.network_seed for s in in_block}) == 1
    # Blocks are contiguous: a block finishes before the next starts.
    assert [s.block for s in slots] == sorted(s.block for s in slots)
    # Different blocks see different network realizations.
    assert len({s.network_seed for s in slots}) == design.runs


def test_schedule_is_seeded_and_randomized():
    assert schedule(make()) == schedule(make())
    orders = [tuple(block_order(("a", "b", "c"), 3, b)) for b in range(40)]
    assert len(set(orders)) > 1  # not always the same order
    firsts = Counter(order[0] for order in orders)
    assert set(firsts) == {"a", "b", "c"}  # every arm goes first sometimes
    other = schedule(make(seed=4))
    assert [s.network_seed for s in other] != [s.network_seed for s in schedule(make())]


def test_more_runs_extend_the_schedule_without_changing_earlier_blocks():
    short, long = schedule(make(runs=2)), schedule(make(runs=5))
    assert [(s.block, s.arm, s.network_seed) for s in long[: len(short)]] == [
        (s.block, s.arm, s.network_seed) for s in short
    ]


def test_experiment_id_identifies_the_design():
    assert make().experiment_id == make().experiment_id
    assert make().experiment_id != make(seed=4).experiment_id
    assert make().experiment_id != make(duration_s=30).experiment_id
    assert make().experiment_id != make(scenario_params={"bitrate_kbps": "6000"}).experiment_id
    assert Design.from_dict(make().to_dict()) == make()


def test_unknown_arm_is_refused_with_the_valid_names():
    with pytest.raises(UserError) as info:
        parse_arms("vivace,nosuch")
    assert "nosuch" in str(info.value) and "cubic" in str(info.value)


def test_arm_parameters_and_duplicates():
    arms = parse_arms("vivace:t=0.9,cubic")
    assert arms[0] == Arm("vivace", (("t", "0.9"),)) and arms[0].label == "vivace:t=0.9"
    with pytest.raises(UserError, match="no parameter"):
        parse_arms("vivace:nosuch=1")
    with pytest.raises(UserError):
        parse_arms("cubic,cubic")
    with pytest.raises(UserError):
        Arm.parse("vivace:oops")
    with pytest.raises(UserError):
        parse_arms(" , ")


def test_an_arm_may_set_its_own_player_parameters():
    same_cc = parse_arms("vivace,vivace:t=0.9:player.fec=8")
    assert same_cc[1] == Arm("vivace", (("t", "0.9"),), (("fec", "8"),))
    assert same_cc[1].label == "vivace:t=0.9:player.fec=8"
    assert Arm.parse(same_cc[1].label) == same_cc[1]
    for bad in ("vivace:player.cc=bbr", "vivace:player.nosuch=1", "vivace:player.cc.t=1",
                "webrtc:player.fec=8"):
        with pytest.raises(UserError, match="player|webrtc"):
            Arm.parse(bad)


@pytest.mark.parametrize(
    "kw",
    [
        dict(runs=0),
        dict(duration_s=0),
        dict(mode="stream"),
        dict(viewers=0),
        dict(mode="fixed", bitrate_kbps=None),
        dict(mode="live", bitrate_kbps=None),
        dict(mode="live", target_latency_ms=20),
        dict(mode="fixed", target_latency_ms=500),
        dict(arms=("webrtc", "cubic"), mode="fixed"),
    ],
)
def test_bad_designs_are_refused(kw):
    with pytest.raises(UserError):
        make(**kw)


def test_scenario_gets_bitrate_and_viewers_when_it_declares_them():
    name, params = resolve_scenario("video-3viewers", {}, 1500, 3)
    assert name == "video-3viewers"
    assert params == {"bitrate_kbps": "1500", "viewers": "3"}
    _, explicit = resolve_scenario("video-rttflap:bitrate_kbps=999", {}, 1500, 1)
    assert explicit == {"bitrate_kbps": "999"}
    with pytest.raises(UserError):
        resolve_scenario("no-such-scenario", {}, 1500, 1)


def test_default_ladder():
    assert default_ladder("fixed", 3000) == (3000,)
    assert default_ladder("abr", 3000) == (300, 750, 1500, 3000)


def test_live_designs_default_their_target_latency_and_accept_the_webrtc_arm():
    design = make(arms=("vivace", "webrtc"), mode="live", bitrate_kbps=2500)
    assert design.target_latency_ms == 1000
    assert Design.from_dict(design.to_dict()) == design
    assert "live @ 2500 kbit/s, target 1000 ms" in design.scenario_label
    assert Arm.parse("webrtc").is_webrtc
    with pytest.raises(UserError, match="takes no parameters"):
        Arm.parse("webrtc:x=1")


def test_designs_without_live_keep_their_ids():
    """Adding target_latency_ms must not change the id of an experiment designed before."""
    design = make()
    assert "target_latency_ms" not in design.to_dict()


def test_sprout_and_remy_arms_with_their_parameters():
    arms = parse_arms("sprout,sprout-ewma,remy:table=2014-100x,remy")
    assert [a.label for a in arms] == ["sprout", "sprout-ewma", "remy:table=2014-100x", "remy"]
    assert arms[2] == Arm("remy", (("table", "2014-100x"),))
    with pytest.raises(UserError, match="table='nope' is not a shipped RemyCC table") as caught:
        parse_arms("remy:table=nope")
    assert "\n" not in str(caught.value)
    with pytest.raises(UserError, match="target_ms='5' is out of range"):
        parse_arms("sprout:target_ms=5")


def test_live_abr_designs_are_live_only_and_keep_earlier_ids():
    plain = make(arms=("vivace", "webrtc"), mode="live", bitrate_kbps=2500)
    assert "live_abr" not in plain.to_dict()
    design = make(arms=("vivace", "webrtc"), mode="live", bitrate_kbps=2500, live_abr=True)
    assert design.to_dict()["live_abr"] is True
    assert design.experiment_id != plain.experiment_id
    assert Design.from_dict(design.to_dict()) == design
    assert "live ABR up to 2500 kbit/s, target 1000 ms" in design.scenario_label
    with pytest.raises(UserError, match="--abr is live ABR"):
        make(mode="fixed", bitrate_kbps=3000, live_abr=True)


def test_player_params_are_part_of_the_design_and_old_ids_stay():
    plain = make()
    assert "player_params" not in plain.to_dict()
    start_abr = make(player_params=(("startRendition", "abr"),))
    assert start_abr.experiment_id != plain.experiment_id
    assert Design.from_dict(start_abr.to_dict()) == start_abr
    assert "[startRendition=abr]" in start_abr.scenario_label
    with pytest.raises(UserError, match="sets bitrate itself"):
        make(player_params=(("bitrate", "100"),))


def test_scenario_none_runs_without_an_emulator():
    assert resolve_scenario("none", {}, 3000, 1) == ("none", {})
    with pytest.raises(UserError, match="no scenario parameters"):
        resolve_scenario("none:rtt_ms=5", {}, 3000, 1)
    with pytest.raises(UserError, match="emulated link"):
        make(arms=("vivace", "webrtc"), scenario="none", mode="live", bitrate_kbps=2500)


def test_the_datagram_size_is_part_of_the_design_and_old_ids_stay():
    plain = make()
    assert "datagram_size" not in plain.to_dict()
    ethernet = make(datagram_size=1452)
    assert ethernet.to_dict()["datagram_size"] == 1452
    assert ethernet.experiment_id != plain.experiment_id
    assert Design.from_dict(ethernet.to_dict()) == ethernet
    assert ethernet.scenario_label.endswith(", 1452-byte datagrams")
    assert "datagram" not in plain.scenario_label
    with pytest.raises(UserError, match="^--datagram-size 1500: expected 1200 to 1472"):
        make(datagram_size=1500)
