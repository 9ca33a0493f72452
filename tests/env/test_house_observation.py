"""What the house rules add to the observation (docs/environment.md, "House rules"): the team
mates of a team mode (the Doublette) and who has bet « Vert-Linette ! » on the throw in play (the
Verdier), each one value per seat, seat-relative like the seats' blocks; nothing for a table
without them."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from cdc_env.actions import BetOnSuccess, Pass, Roll
from cdc_env.dice import InjectedDice
from cdc_env.env import raw_env
from cdc_env.game import GameState
from cdc_env.rulebook.house import HouseRule, register, unregister
from cdc_env.rules import Ruleset, load_ruleset
from cdc_env.spaces import ObservationEncoder


def with_house(name: str, house_rules: dict[str, object], **sections: dict[str, object]) -> Ruleset:
    data = load_ruleset(name).to_dict()
    data["house_rules"] = house_rules
    for key, value in sections.items():
        data[key] = {**data.get(key, {}), **value}
    return Ruleset.from_dict(data)


def marked(observation: np.ndarray, encoder: ObservationEncoder, section: str) -> list[int]:
    """The seat offsets (+1: the next seat in play order) a section marks, each with 1.0."""
    values = observation[encoder.layout[section]]
    assert all(value in (0.0, 1.0) for value in values.tolist()), values  # a mark is 1.0, no other value
    return [int(i) for i in np.flatnonzero(values)]


@pytest.mark.parametrize("players", [4, 6, 8])
def test_doublette_shows_the_team_mate_at_plus_half_from_every_seat(players: int) -> None:
    table = raw_env(with_house("maison", {"doublette": True}), players)
    table.reset(seed=3)
    state, encoder = table.state, table.encoder
    assert state is not None
    assert encoder.layout["team"].stop - encoder.layout["team"].start == players
    for seat in range(players):
        assert marked(encoder.encode(state, seat), encoder, "team") == [players // 2]


# A team mode whose mates are not opposite each other: seats (0, 1), (2, 3), (4, 5). The
# Doublette's +N/2 is the same counted either way round; these pairs tell +1 from −1.
@pytest.fixture
def neighbours() -> Iterator[None]:
    register(HouseRule("neighbours", "this test", {}, teams=lambda n: [(s, s + 1) for s in range(0, n, 2)]))
    yield
    unregister("neighbours")


def test_team_mates_are_counted_from_the_observing_seat(neighbours: None) -> None:
    table = raw_env(with_house("classic", {"neighbours": True}), 6)
    table.reset(seed=3)
    state, encoder = table.state, table.encoder
    assert state is not None
    seen = [marked(encoder.encode(state, seat), encoder, "team") for seat in range(6)]
    assert seen == [[1], [5], [1], [5], [1], [5]]


def first_player_dice(rules: Ruleset, players: int, first: int) -> list[int]:
    assert rules.first_player == "lowest_die"
    return [1 if seat == first else 6 for seat in range(players)]


def test_verdier_bettors_are_shown_seat_relative_as_they_bet() -> None:
    """Six seats; seat 2 throws 2, 4; seats 2 and 5 say « Vert-Linette ! », the others pass."""
    rules = with_house("classic", {"verdier": True}, dice_buying={"enabled": False})
    state = GameState(rules, 6, dice=InjectedDice([*first_player_dice(rules, 6, 2), 2, 4, 5]))
    encoder = ObservationEncoder(rules, 6, 300)
    assert "team" not in encoder.layout
    state.apply_action(Roll())
    order = (2, 3, 4, 5, 0, 1)
    for seat in order:
        assert state.pending is not None and (state.pending.kind, state.pending.seat) == ("verdier_bet", seat)
        bettors = [s for s in (2, 5) if s in order[:order.index(seat)]]  # those who said it already
        for observer in range(6):
            expected = sorted((bettor - observer) % 6 for bettor in bettors)
            assert marked(encoder.encode(state, observer), encoder, "verdier_bets") == expected
        state.apply_action(BetOnSuccess() if seat in (2, 5) else Pass())
    # The cul (5) fell: the bets are settled and the section is empty again.
    assert [e["seat"] for e in state.log if e["type"] == "score" and e["reason"] == "verdier_lost"] == [2, 5]
    assert all(marked(encoder.encode(state, observer), encoder, "verdier_bets") == [] for observer in range(6))


@pytest.mark.parametrize("ruleset", ["basic", "classic", "v004", "complete", "solo"])
def test_the_five_texts_get_no_house_section(ruleset: str) -> None:
    rules = load_ruleset(ruleset)
    players = 1 if ruleset == "solo" else 4
    layout = ObservationEncoder(rules, players, 300).layout
    assert list(layout)[-1] == "throw_reach" and "team" not in layout and "verdier_bets" not in layout
