"""The flat action space and the observation encoding: masks equal the engine's legal actions,
every legal choice is reachable, and observations hold public information only."""

from __future__ import annotations

import numpy as np
import pytest
from env_helpers import RULESETS, players_for, random_decisions

from cdc_env.actions import ACTION_TYPES, ChallengeGrelottine, Pass, Shout
from cdc_env.dice import SeededDice
from cdc_env.env import raw_env
from cdc_env.game import DECISION_TEXT, RACE_PHRASES, SHOUTABLE_PHRASES, Decision, GameState
from cdc_env.rules import Ruleset, load_ruleset
from cdc_env.spaces import (
    DECISION_KINDS,
    PHRASES,
    RACES,
    SEAT_FEATURES,
    ActionCodec,
    ObservationEncoder,
    stake_at,
)


def check_mask(codec: ActionCodec, decision: Decision) -> None:
    seat = decision.seat
    assert seat is not None  # a seat's decision
    mask = codec.mask(decision, seat)
    assert mask.dtype == np.int8 and set(np.unique(mask)) <= {0, 1}
    decoded = []
    for index in np.flatnonzero(mask).tolist():
        action = codec.decode(index, decision, seat)
        if isinstance(action, Shout):
            action = Shout(action.phrase, 500.0)
        assert decision.allows(action), f"index {index} ({codec.names[index]}) decodes to {action}"
        decoded.append(action)
    assert len(set(decoded)) == len(decoded), "two masked-in indices play the same action"
    # Every option is reachable, and comes back from its own index.
    for option in decision.options:
        index = codec.encode(option, decision, seat)
        assert mask[index], f"{option} is legal but its index {index} is masked out"
        assert codec.decode(index, decision, seat) == option
    # Every staked combination is reachable at its minimum and its maximum stake.
    for combination, allowed in decision.stakes:
        stakes = {a.stake for a in decoded if getattr(a, "combination", None) == combination
                  and type(a) is decision.staked}
        assert min(stakes) == allowed.start and max(stakes) == allowed.stop - 1
    # Nobody else may act.
    for other in range(codec.players):
        if other != seat:
            assert not codec.mask(decision, other).any()


@pytest.mark.parametrize("ruleset", RULESETS)
def test_masks_are_the_engines_legal_actions(ruleset: str) -> None:
    kinds = set()
    players = players_for(ruleset)
    for seed in range(3):
        table = raw_env(ruleset, players, max_turns=60, auto_forced=False)
        for decision in random_decisions(table, 1500, seed):
            kinds.add(decision.kind)
            check_mask(table.codec, decision)
    assert "turn_start" in kinds and ("race" in kinds or players == 1)


def test_classic_play_visits_every_decision_kind_and_stakes_are_masked() -> None:
    """Long random play in classic reaches the rare decisions (Civet, Grelottine, Soufflette)."""
    kinds = set()
    staked = 0
    for seed in range(4):
        table = raw_env("classic", 4, max_turns=150, auto_forced=False)
        for decision in random_decisions(table, 4000, seed, frozenset({"buy_cul"})):
            kinds.add(decision.kind)
            if decision.stakes:
                staked += 1
                check_mask(table.codec, decision)
    classic = {"turn_start", "buy_cul", "sirop", "sirop_bet", "race", "soufflette",
               "soufflette_keep", "grelottine", "boucliette", "challenge_bet", "challenge_roll"}
    assert classic <= kinds, f"never reached: {classic - kinds}"
    assert staked > 0


def test_stake_levels_include_min_and_max_and_skip_duplicates() -> None:
    codec = ActionCodec(players=3)
    start = codec._staked_start(Decision(0, "grelottine", staked=ChallengeGrelottine), "velute")
    for allowed, expected in [
        (range(1, 2), [1]),
        (range(1, 4), [1, 2, 3]),
        (range(1, 101), [1, 26, 51, 75, 100]),
    ]:
        decision = Decision(0, "grelottine", (Pass(),), staked=ChallengeGrelottine,
                            stakes=(("velute", allowed),))
        mask = codec.mask(decision, 0)
        decoded = [codec.decode(i, decision, 0) for i in np.flatnonzero(mask) if i >= start]
        chosen = [a.stake if isinstance(a, ChallengeGrelottine) else a for a in decoded]
        assert chosen == expected
        assert stake_at(allowed, 0.0) == allowed.start and stake_at(allowed, 1.0) == allowed.stop - 1


def test_soufflette_targets_are_relative_to_the_acting_seat() -> None:
    from cdc_env.actions import ChallengeSoufflette

    codec = ActionCodec(players=4)
    for seat in range(4):
        options = (Pass(),) + tuple(ChallengeSoufflette((seat + k) % 4) for k in (1, 2, 3))
        decision = Decision(seat, "soufflette", options)
        next_seat = codec.blocks["soufflette"].start
        assert codec.decode(next_seat, decision, seat) == ChallengeSoufflette((seat + 1) % 4)


def test_illegal_index_names_the_decision_and_the_legal_choices() -> None:
    codec = ActionCodec(players=2)
    decision = Decision(1, "sirop", (ACTION_TYPES["sirop"](), Pass()))
    roll = codec.blocks["roll"].start
    legal = r"roll\) is not legal now: seat 1 must sirop.*legal: 0 pass, 3 sirop"
    with pytest.raises(ValueError, match=legal):
        codec.decode(roll, decision, 1)
    with pytest.raises(ValueError, match="outside"):
        codec.decode(codec.size, decision, 1)
    with pytest.raises(ValueError, match="an action is an index"):
        codec.decode("pass", decision, 1)


def test_every_engine_kind_has_its_place() -> None:
    """When the engine grows a decision kind, a race, a phrase or an action type, it must have
    a place in the spaces (cdc_env/spaces.py)."""
    codec = ActionCodec(players=4)
    assert set(DECISION_TEXT) - {"chance"} <= set(DECISION_KINDS)
    assert set(RACE_PHRASES) <= set(RACES)
    assert set(RACE_PHRASES.values()) <= set(SHOUTABLE_PHRASES) <= set(PHRASES)
    # The dice are chance's; a join (chante_sloubi) is the host's act, which an environment's
    # fixed agents refuse (tests/engine/test_chante_sloubi.py).
    missing = set(ACTION_TYPES) - {"dice", "join"} - set(codec.blocks)
    assert not missing, f"action types without a block in ActionCodec: {missing}"


class NoDice:
    """A dice source that fails if anyone asks it anything: encoding must not look ahead."""

    def roll(self, count: int, sides: int = 6) -> tuple[int, ...]:
        raise AssertionError("the encoder rolled the dice")

    def to_json(self) -> dict:
        raise AssertionError("the encoder looked at the dice source")


@pytest.mark.parametrize("ruleset", RULESETS)
def test_observations_do_not_depend_on_future_dice(ruleset: str) -> None:
    players = players_for(ruleset)
    table = raw_env(ruleset, players, max_turns=40)
    for count, _decision in enumerate(random_decisions(table, 300, seed=5)):
        state = table.state
        assert state is not None
        if count % 25:
            continue
        # The same past with another future gives the same observations.
        saved = state.to_json()
        saved["dice"] = SeededDice(10_000 + count).to_json()
        other = GameState.from_json(saved)
        for seat in range(players):
            np.testing.assert_array_equal(table.encoder.encode(state, seat),
                                          table.encoder.encode(other, seat))
        # And the encoder never touches the dice source.
        source, state.dice_source = state.dice_source, NoDice()
        try:
            for seat in range(players):
                table.encoder.encode(state, seat)
                assert state.pending is not None
                table.codec.mask(state.pending, seat)
        finally:
            state.dice_source = source


def test_a_race_in_progress_hides_the_others_shouts() -> None:
    """Races are simultaneous: the seat asked second cannot tell whether the first shouted."""
    found = 0
    for seed in range(40):
        state = GameState(load_ruleset("classic"), 3, dice=SeededDice(seed))
        while state.pending is not None and state.turn_number < 30:
            decision = state.pending
            if decision.kind == "race":
                shouted = GameState.from_json(state.to_json())
                silent = GameState.from_json(state.to_json())
                shouted.apply_action(Shout(RACE_PHRASES[decision.reason], 400.0))
                silent.apply_action(Pass())
                if shouted.pending is not None and shouted.pending.kind == "race":
                    encoder = ObservationEncoder(state.rules, 3, 100)
                    seat = shouted.pending.seat
                    assert seat is not None  # a race decision is a seat's
                    np.testing.assert_array_equal(encoder.encode(shouted, seat),
                                                  encoder.encode(silent, seat))
                    found += 1
            state.apply_action(Pass() if decision.allows(Pass()) else decision.options[0])
        if found >= 3:
            break
    assert found >= 3


BASE_SECTIONS = ["seats", "dice", "combination", "decision", "race", "stakes", "civet", "challenge",
                 "soufflette", "turn", "throw_reach"]


@pytest.mark.parametrize(("ruleset", "house", "players", "sections"), [
    ("classic", {}, 4, BASE_SECTIONS),
    ("maison", {}, 4, [*BASE_SECTIONS, "verdier_bets"]),  # the Verdier's bettors, one per seat
    ("maison", {"doublette": True}, 6, [*BASE_SECTIONS, "team", "verdier_bets"]),  # + the team mates
])
def test_observation_layout_is_seat_relative(ruleset: str, house: dict, players: int, sections: list[str]) -> None:
    """The sections in docs/environment.md's order, end to end; the seats' blocks and the house
    rules' seat sections (one value per seat) seen from the observing seat."""
    data = load_ruleset(ruleset).to_dict()
    data["house_rules"] = {**data.get("house_rules", {}), **house}
    table = raw_env(Ruleset.from_dict(data), players)
    table.reset(seed=2)
    state, layout = table.state, table.encoder.layout
    assert state is not None
    assert list(layout) == sections
    assert [s.start for s in layout.values()] == [0] + [s.stop for s in layout.values()][:-1]
    assert list(layout.values())[-1].stop == table.encoder.size
    for name in sections[len(BASE_SECTIONS):]:
        assert layout[name].stop - layout[name].start == players
    state.scores[:] = [10 * (seat + 1) for seat in range(players)]  # scores go first in each seat's block
    width = len(SEAT_FEATURES)
    for seat in range(players):
        observation = table.encoder.encode(state, seat)
        seats = observation[layout["seats"]].reshape(players, width)
        expected = [state.scores[(seat + k) % players] / 343 for k in range(players)]
        np.testing.assert_allclose(seats[:, 0], expected, rtol=1e-6)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_observations_stay_in_bounds(ruleset: str) -> None:
    table = raw_env(ruleset, players_for(ruleset), max_turns=200)
    space = table.observation_space("seat_0")
    for decision in random_decisions(table, 1000, seed=11):
        observation = table.observe(f"seat_{decision.seat}")
        assert space.contains(observation)


def test_endgame_reach_features_by_hand() -> None:
    table = raw_env("classic", 2)
    table.reset(seed=2)
    encoder, state = table.encoder, table.state
    assert state is not None
    # Classic values: a Cul de Chouette of 6 is worth 100, the best roll; 80 or more only from
    # the Culs de Chouette of 4, 5 and 6 (3 rolls of 216).
    assert encoder.reach(0) == 1.0 and encoder.reach(101) == 0.0
    assert encoder.reach(80) == pytest.approx(3 / 216)
    # With 3 and 4 shown: a 3 or a 4 makes a Chouette (9, 16), a 1 a Velute of 4 (32), a 2 or
    # a 5 a Suite (0), a 6 nothing: 3 culs of 6 are worth 7 or more, 1 (the Velute) 17 or more.
    assert encoder.throw_reach((3, 4), 7) == pytest.approx(3 / 6)
    assert encoder.throw_reach((3, 4), 17) == pytest.approx(1 / 6)
    assert encoder.throw_reach((6, 6), 100) == pytest.approx(1 / 6)  # only the Cul de Chouette
    assert encoder.throw_reach((), 80) == encoder.reach(80) and encoder.throw_reach((1, 2), -5) == 1.0
    # In the vector: each seat's reach, seat-relative, and the throw in progress.
    state.scores[:] = [300, 320]
    width = len(SEAT_FEATURES)
    reach_at = SEAT_FEATURES.index("win_reach")
    seats = encoder.encode(state, 0)[encoder.layout["seats"]].reshape(2, width)
    assert seats[0, reach_at] == pytest.approx(encoder.reach(43))
    assert seats[1, reach_at] == pytest.approx(encoder.reach(23))
    state.table.thrower, state.table.dice = 1, (3, 4)
    observation = encoder.encode(state, 0)
    assert observation[encoder.layout["throw_reach"]][0] == pytest.approx(encoder.throw_reach((3, 4), 23))


def test_at_a_doublette_the_reaches_read_the_teams_sum() -> None:
    # Seats 0 and 2 play together with 200 + 140: seat 0 wins with 3 points of its own turn,
    # and the reaches read its own 200 (143 to go: "cannot end") where it was 3.
    rules = load_ruleset("maison").with_house_rules(["doublette"])
    table = raw_env(rules, 4)
    table.reset(seed=2, options={"setup": {"scores": [200, 0, 140, 0]}})
    encoder, state = table.encoder, table.state
    assert state is not None
    width = len(SEAT_FEATURES)
    reach_at = SEAT_FEATURES.index("win_reach")
    seats = encoder.encode(state, 0)[encoder.layout["seats"]].reshape(4, width)
    assert [seats[s, reach_at] for s in range(4)] == pytest.approx(
        [encoder.reach(3), encoder.reach(343), encoder.reach(3), encoder.reach(343)])
    state.table.thrower, state.table.dice = 2, (3, 4)
    observation = encoder.encode(state, 0)
    assert observation[encoder.layout["throw_reach"]][0] == pytest.approx(encoder.throw_reach((3, 4), 3))
