"""The observation vector and the staked part of the action codec, worked out by hand: a table
with everything on it at once (a Civet, a Grelottine challenge, a Soufflette, bets), and every
value of the vector checked against the layout (docs/environment.md)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cdc_env.actions import (
    ChallengeGrelottine,
    DeclareCivet,
    Dice,
    IllegalActionError,
    KeepDice,
    Pass,
    Roll,
    Shout,
)
from cdc_env.combinations import COMBINATION_NAMES
from cdc_env.flow import Table
from cdc_env.game import Decision, GameState
from cdc_env.rules import CIVET_COMBINATIONS, GRELOTTINE_COMBINATIONS, load_ruleset
from cdc_env.spaces import (
    DECISION_KINDS,
    RACES,
    SEAT_FEATURES,
    STAKED_COMBINATIONS,
    ActionCodec,
    ObservationEncoder,
    _extended,
)

CLASSIC = load_ruleset("classic")  # target 343, Soufflette in 3 throws
W = len(SEAT_FEATURES)
F = {name: i for i, name in enumerate(SEAT_FEATURES)}


def busy_table() -> GameState:
    """Seat 1 throws 3-3-5 (a Chouette), seat 2 bought the cul; seat 0 has declared a Civet on
    the Velute at 40; seat 2 challenges seat 1 on a Chouette-Velute at 30; seat 0 challenged
    seat 2 to a Soufflette (second throw); seat 0 bet Mouette (4), seat 2 Chouette (6) and on
    success, seat 0 a sum of 9; turn 30; seat 2 must decide a Grelottine."""
    state = GameState(CLASSIC, 3, setup={"scores": [100, -400, 0],
                                         "items": [{"civet": 1}, {"grelottine": 1}, {}]})
    # Past the target, as a winner's score shows in the last observation (a setup may not
    # start there: the game would be over).
    state.scores[2] = 400
    state.table = Table(dice=(3, 3, 5), combination="chouette", thrower=1, buyer=2,
                        civet={"seat": 0, "combination": "velute", "stake": 40},
                        challenge={"challenger": 2, "challenged": 1, "combination": "chouette_velute", "stake": 30},
                        soufflette={"challenger": 0, "target": 2, "throw": 2},
                        sirop_bets={0: 4, 2: 6}, success_bets=[2], sum_bets={0: 9})
    state.turn_number = 30
    state.pending = Decision(2, "grelottine", (Pass(),), staked=ChallengeGrelottine,
                             stakes=(("velute", range(1, 26)), ("chouette", range(1, 34))))
    return state


def test_a_busy_table_seen_from_seat_1() -> None:
    encoder = ObservationEncoder(CLASSIC, 3, max_turns=300)
    layout = encoder.layout
    expected = np.zeros(encoder.size, np.float32)
    me, nxt, last = 0, W, 2 * W  # seat 1 first, then seat 2, then seat 0 (play order)
    # seat 1: −400 is past −343 (−1); no roll reaches 743 points; holds a Grelottine and its
    # Boucliette; throws; is challenged.
    for offset, value in (("score", -1.0), ("win_reach", 0.0), ("grelottine", 1.0), ("boucliette", 1.0),
                          ("thrower", 1.0), ("grelottine_challenged", 1.0)):
        expected[me + F[offset]] = value
    # seat 2: 400 is past 343 (+1); over the target already (reach 1); bought; decides;
    # challenges; is the Soufflette's target; bet Chouette (6) and on success.
    for offset, value in (("score", 1.0), ("win_reach", 1.0), ("boucliette", 1.0), ("buyer", 1.0),
                          ("deciding", 1.0), ("grelottine_challenger", 1.0), ("soufflette_target", 1.0),
                          ("bird_bet_6", 1.0), ("bet_on_success", 1.0)):
        expected[nxt + F[offset]] = value
    # seat 0: 100 / 343; 243 more is past the best roll (100): reach 0; Civet, Boucliette,
    # declared the Civet, challenged to the Soufflette, bet Mouette (4) and a sum of 9 (9 / 18).
    for offset, value in (("score", 100 / 343), ("win_reach", 0.0), ("civet", 1.0), ("boucliette", 1.0),
                          ("civet_declared", 1.0), ("soufflette_challenger", 1.0), ("bird_bet_4", 1.0),
                          ("sum_bet", 0.5)):
        expected[last + F[offset]] = value
    dice = layout["dice"].start
    expected[[dice + 2, dice + 6 + 2, dice + 12 + 4]] = 1.0  # faces 3, 3, 5: one-hot per die
    expected[layout["combination"].start + COMBINATION_NAMES.index("chouette")] = 1.0
    expected[layout["decision"].start + DECISION_KINDS.index("grelottine")] = 1.0
    stakes = layout["stakes"].start
    velute, chouette = STAKED_COMBINATIONS.index("velute"), STAKED_COMBINATIONS.index("chouette")
    expected[[stakes + 2 * velute, stakes + 2 * velute + 1]] = (1 / 343, 25 / 343)
    expected[[stakes + 2 * chouette, stakes + 2 * chouette + 1]] = (1 / 343, 33 / 343)
    expected[layout["civet"].start + CIVET_COMBINATIONS.index("velute")] = 1.0
    expected[layout["civet"].stop - 1] = 40 / 343
    expected[layout["challenge"].start + GRELOTTINE_COMBINATIONS.index("chouette_velute")] = 1.0
    expected[layout["challenge"].stop - 1] = 30 / 343
    expected[layout["soufflette"].start] = 2 / 3
    expected[layout["turn"].start] = 30 / 300
    # No race; the throw is complete (three dice): no throw reach.
    np.testing.assert_allclose(encoder.encode(busy_table(), 1), expected, rtol=1e-6, atol=0)


def test_stakes_and_counts_past_the_target_are_held_at_one() -> None:
    state = busy_table()
    assert state.table.civet is not None and state.table.challenge is not None
    state.table.civet["stake"] = 500
    state.table.challenge["stake"] = 400
    state.pending = Decision(2, "grelottine", (Pass(),), staked=ChallengeGrelottine,
                             stakes=(("velute", range(350, 401)),))
    state.turn_number = 400
    encoder = ObservationEncoder(CLASSIC, 3, max_turns=300)
    obs = encoder.encode(state, 1)
    layout = encoder.layout
    velute = layout["stakes"].start + 2 * STAKED_COMBINATIONS.index("velute")
    assert (obs[velute], obs[velute + 1]) == (1.0, 1.0)
    assert obs[layout["civet"].stop - 1] == 1.0 and obs[layout["challenge"].stop - 1] == 1.0
    assert obs[layout["turn"].start] == 1.0
    assert obs.min() >= -1.0 and obs.max() <= 1.0


def test_a_throw_in_progress_and_a_race() -> None:
    """Seat 0 has shown a 6 and needs 43 (300 of 343): of the 36 ways the other two dice fall,
    6-6 (a Cul de Chouette, 100), 1-5, 5-1, 2-4, 4-2 (Velutes of 6, 72) and 3-3 (a
    Chouette-Velute, scored as its Velute, 72) reach it: 6 / 36. A seat with 0 needs 343,
    past the best roll: 0."""
    state = GameState(CLASSIC, 2, setup={"scores": [300, 0]})
    state.table = Table(dice=(6,), thrower=0)
    state.pending = Decision(1, "race", (Pass(), Shout("velutee")), reason="suite")
    encoder = ObservationEncoder(CLASSIC, 2, max_turns=100)
    layout = encoder.layout
    obs = encoder.encode(state, 1)
    assert obs[layout["throw_reach"].start] == pytest.approx(6 / 36)
    assert obs[layout["race"].start + RACES.index("suite")] == 1.0
    assert obs[layout["decision"].start + DECISION_KINDS.index("race")] == 1.0
    assert obs[layout["dice"].start + 5] == 1.0 and obs[layout["dice"]].sum() == 1.0
    state.table = Table(dice=(6,), thrower=1)
    assert encoder.encode(state, 1)[layout["throw_reach"].start] == 0.0
    # Not in a challenge's throw or a Soufflette's, nor once the three dice are down.
    for table in (Table(dice=(6,), thrower=0, challenge={"challenger": 1, "challenged": 0,
                                                         "combination": "chouette", "stake": 5}),
                  Table(dice=(6,), thrower=0, soufflette={"challenger": 1, "target": 0, "throw": 1}),
                  Table(dice=(6, 6, 6), thrower=0), Table(dice=(6,))):
        state.table = table
        assert encoder.encode(state, 1)[layout["throw_reach"].start] == 0.0


def test_a_race_shown_by_the_table_and_the_dice_falling() -> None:
    state = GameState(CLASSIC, 2)
    state.table = Table(race="chouette_velute")
    state.pending = Decision(None, "chance", count=1, reason="cul")
    encoder = ObservationEncoder(CLASSIC, 2, max_turns=100)
    obs = encoder.encode(state, 0)
    assert obs[encoder.layout["race"].start + RACES.index("chouette_velute")] == 1.0
    assert obs[encoder.layout["decision"]].sum() == 0.0  # the dice decide: no seat's decision
    assert obs[F["deciding"]] == 0.0 and obs[W + F["deciding"]] == 0.0


def test_unknown_kinds_and_staked_combinations_are_named() -> None:
    state = GameState(CLASSIC, 2)
    encoder = ObservationEncoder(CLASSIC, 2, max_turns=100)
    state.pending = Decision(0, "dance", (Pass(),))
    with pytest.raises(ValueError, match=r"^unknown decision kind 'dance': append it to DECISION_KINDS in "
                                         r"cdc_env/spaces\.py$"):
        encoder.encode(state, 0)
    state.pending = Decision(0, "grelottine", (Pass(),), staked=ChallengeGrelottine, stakes=(("flan", range(1, 3)),))
    with pytest.raises(ValueError, match=r"^decision 'grelottine' stakes on 'flan': add it to STAKED_COMBINATIONS"):
        encoder.encode(state, 0)


def test_reach_by_hand() -> None:
    """A fresh roll is worth at least 1 point 132 times in 216 (néants 60, suites 18 and
    Soufflettes 6 score nothing to the thrower), at least 100 only as 6-6-6."""
    encoder = ObservationEncoder(CLASSIC, 2, max_turns=100)
    assert encoder.reach(1) == pytest.approx(132 / 216)
    assert encoder.reach(0) == 1.0 and encoder.reach(-5) == 1.0
    assert encoder.reach(100) == pytest.approx(1 / 216)
    assert encoder.reach(101) == 0.0 and encoder.reach(5000) == 0.0
    assert encoder.throw_reach((6,), 43) == pytest.approx(6 / 36)
    assert encoder.throw_reach((6,), 43) == pytest.approx(6 / 36)  # again, from the cache
    assert encoder.throw_reach((6, 6), 101) == 0.0 and encoder.throw_reach((6, 6), 100) == pytest.approx(1 / 6)


def test_staked_actions_encode_to_the_nearest_level() -> None:
    """A Civet's stakes 1..102 at levels 0, ¼, ½, ¾, 1 are 1, 26, 52, 77, 102 (1 + ⌊level ×
    101 + ½⌋). A stake of 60 is nearest 52 (level ½); 39 is as near 26 as 52: the lower level."""
    codec = ActionCodec(players=3)
    decision = Decision(0, "turn_start", (), staked=DeclareCivet,
                        stakes=(("chouette", range(1, 103)), ("velute", range(1, 103))))
    start = codec.blocks["civet"].start + len(codec.stake_levels) * CIVET_COMBINATIONS.index("velute")
    for stake, level in ((60, 2), (39, 1), (1, 0), (102, 4), (89, 3), (90, 4)):
        index = codec.encode(DeclareCivet("velute", stake), decision, 0)
        assert index == start + level, stake
    assert codec.decode(start + 2, decision, 0) == DeclareCivet("velute", 52)
    grelottine = Decision(1, "grelottine", (Pass(),), staked=ChallengeGrelottine,
                          stakes=(("cul_de_chouette", range(1, 11)),))  # 1, 3, 6, 8, 10
    levels = len(codec.stake_levels)
    gstart = codec.blocks["grelottine"].start + levels * GRELOTTINE_COMBINATIONS.index("cul_de_chouette")
    assert codec.encode(ChallengeGrelottine("cul_de_chouette", 7), grelottine, 1) == gstart + 2
    assert codec.decode(gstart + 3, grelottine, 1) == ChallengeGrelottine("cul_de_chouette", 8)
    assert codec.block_of(gstart + 3).name == "grelottine"


def test_extended_appends_new_names_once_in_order() -> None:
    assert _extended(("a", "b"), ["c", "a", "d", "c"]) == ("a", "b", "c", "d")
    assert _extended(("a",), []) == ("a",)


@pytest.mark.parametrize("levels", [(0.0, 0.5), (0.5, 1.0), (0.0, 0.75, 0.5, 1.0), (), (0.0, float("nan"), 1.0)])
def test_stake_levels_must_rise_from_0_to_1(levels: tuple[float, ...]) -> None:
    with pytest.raises(ValueError, match=re.escape(f"stake_levels must rise from 0.0 (the minimum stake) to 1.0 "
                                                   f"(the maximum), got {levels!r}")):
        ActionCodec(players=2, stake_levels=levels)


def test_blocks_hold_exactly_their_choices() -> None:
    codec = ActionCodec(players=2)
    assert codec.blocks["bird_bet"].choices == (1, 2, 3, 4, 5, 6)
    if "bet_sum" in codec.blocks:  # complete's Bleu-Rouge: a sum of three dice
        assert codec.blocks["bet_sum"].choices == tuple(range(3, 19))
    assert codec.mask(None, 0).dtype == np.int8 and codec.mask(Decision(1, "sirop", (Pass(),)), 0).dtype == np.int8


def test_what_has_no_index_is_named() -> None:
    codec = ActionCodec(players=2)
    size = codec.size
    moment = Decision(0, "turn_start", (Pass(), Dice((1,))))
    with pytest.raises(ValueError, match=re.escape("decision 'turn_start' offers dice(values=(1,)), which has no "
                                                   "action index here: add a block for Dice to ActionCodec in "
                                                   "cdc_env/spaces.py")):
        codec.mask(moment, 0)
    with pytest.raises(ValueError, match=re.escape("decision 'turn_start' offers dice(values=(1,)), which has no")):
        codec.encode(Dice((1,)), moment, 0)
    with pytest.raises(ValueError, match="^" + re.escape("civet(combination='velute', stake=5), which has no "
                                                         "action index here: add a block for DeclareCivet")):
        codec.index_of(DeclareCivet("velute", 5), 0)
    with pytest.raises(ValueError, match=re.escape("keep(keep=(7,)) has no action index: its keep (7,) is not "
                                                   "among the choices of block KeepDice in cdc_env/spaces.py")):
        codec.index_of(KeepDice((7,)), 0)
    staked = Decision(0, "turn_start", (Roll(),), staked=DeclareCivet, stakes=(("flan", range(1, 3)),))
    with pytest.raises(ValueError, match=r"^decision 'turn_start' offers .*DeclareCivet.* on 'flan', which has no "
                                         r"action index: add it to the staked blocks of cdc_env/spaces\.py$"):
        codec.mask(staked, 0)
    sirop = Decision(0, "sirop", (Pass(),))
    with pytest.raises(IllegalActionError, match=f"^action index {size} is outside 0..{size - 1}$"):
        codec.decode(size, sirop, 0)
    with pytest.raises(IllegalActionError, match=f"^an action is an index in 0..{size - 1}, got 'pass'$"):
        codec.decode("pass", sirop, 0)


def test_a_fourth_die_is_not_shown() -> None:
    state = GameState(CLASSIC, 2)
    state.table = Table(dice=(1, 2, 3, 4), thrower=0)
    encoder = ObservationEncoder(CLASSIC, 2, max_turns=100)
    obs = encoder.encode(state, 0)
    assert obs[encoder.layout["dice"]].sum() == 3.0 and obs[encoder.layout["combination"]].sum() == 0.0


def test_index_names() -> None:
    codec = ActionCodec(players=3)
    names = codec.names
    assert names[codec.blocks["pass"].start] == "pass"
    assert names[codec.blocks["bird_bet"].start] == "bird_bet linotte (1)"
    assert names[codec.blocks["bird_bet"].start + 3] == "bird_bet mouette (4)"
    assert names[codec.blocks["shout"].start] == "shout pas_mou_le_caillou"
    assert names[codec.blocks["soufflette"].start + 1] == "soufflette seat+2"
    assert names[codec.blocks["keep"].start] == "keep []"
    assert names[codec.blocks["keep"].start + 7] == "keep [1, 1]"
    assert names[codec.blocks["civet"].start + 7] == "civet velute stake 50%"
    assert names[codec.blocks["grelottine"].start + 4] == "grelottine chouette stake 100%"


def test_the_layout_section_by_section() -> None:
    """docs/environment.md's layout at 3 seats of classic: a saved model depends on every size."""
    encoder = ObservationEncoder(CLASSIC, 3, max_turns=300)
    sizes = {name: part.stop - part.start for name, part in encoder.layout.items()}
    assert sizes == {"seats": 3 * W, "dice": 18, "combination": len(COMBINATION_NAMES),
                     "decision": len(DECISION_KINDS), "race": len(RACES), "stakes": 2 * len(STAKED_COMBINATIONS),
                     "civet": len(CIVET_COMBINATIONS) + 1, "challenge": len(GRELOTTINE_COMBINATIONS) + 1,
                     "soufflette": 1, "turn": 1, "throw_reach": 1}
    assert W == 22 and encoder.size == sum(sizes.values())
    assert list(encoder.layout) == list(sizes)  # in this order
