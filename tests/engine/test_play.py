"""The driver loop and the scorekeeper's log (cdc_env/play.py) by hand: a game stopped after its
turns, and the lines of the events that are built in code, word for word."""

from __future__ import annotations

from typing import Any

import pytest

from cdc_env.actions import Action
from cdc_env.flow import Decision
from cdc_env.game import GameState
from cdc_env.play import describe_event, play_game
from cdc_env.rules import load_ruleset


class FirstOption:
    def act(self, state: GameState, decision: Decision) -> Action:
        return decision.legal_actions()[0]


def test_a_game_stops_as_the_turn_after_its_last_begins() -> None:
    state = play_game(load_ruleset("classic"), [FirstOption(), FirstOption()], seed=1, max_turns=2)
    assert state.turn_number == 3 and not state.is_over
    assert [e["turn"] for e in state.log if e["type"] == "turn_start"] == [1, 2, 3]


@pytest.mark.parametrize("event, line", [
    ({"type": "bird_bet", "turn": 1, "seat": 1, "face": 4}, "  seat 1 bets Mouette (4)"),
    ({"type": "bird_bet", "turn": 1, "seat": 1, "face": 1}, "  seat 1 bets Linotte (1)"),
    ({"type": "beau_sirop", "turn": 1, "seat": 2, "face": 3}, "  seat 2 bets Beau-Sirop (3)"),
    ({"type": "race", "turn": 1, "race": "chouette_velute", "shouts": {}, "tied": [2]},
     "  race chouette velute: seat 2 first"),
    ({"type": "race", "turn": 1, "race": "chouette_velute", "shouts": {}, "tied": [0, 1]},
     "  race chouette velute: seat 0, seat 1 tied first"),
    ({"type": "race", "turn": 1, "race": "suite", "shouts": {}, "tied": [1]}, "  race suite: seat 1 last"),
    ({"type": "race", "turn": 1, "race": "suite_tie", "shouts": {}, "tied": [0, 2]},
     "  race suite tie: seat 0, seat 2 tied last"),
    ({"type": "race", "turn": 1, "race": "tichette", "shouts": {}, "tied": []},
     "  race tichette: nobody shouted in time"),
    # Alone against the clock (solo), shouted in time: it said nobody had.
    ({"type": "race", "turn": 1, "race": "suite", "shouts": {"0": 819.0}, "tied": []},
     "  race suite: shouted in time, nobody loses"),
    # The engine's names in the Bévue's reason, in words.
    ({"type": "score", "turn": 1, "seat": 0, "points": -5, "delta": -5, "score": 10, "reason": "bevue",
      "why": "shouted 'sans_fin' in the suite_tie race"},
     "  seat 0 -5 for a Bévue (shouted « sans fin » in the suite tie race) → 10"),
    # Seats counted from 1, as every table shows them (the line beside it said seat 4, this one 3).
    ({"type": "join", "turn": 4, "seat": 3, "name": "Zoé", "rule": "chante_sloubi"},
     "+++ Zoé joins the game at seat 4 (chante-sloubi)"),
    ({"type": "score", "turn": 1, "seat": 0, "points": -5, "delta": -5, "score": 10, "reason": "bevue"},
     "  seat 0 -5 for a Bévue → 10"),
    ({"type": "score", "turn": 1, "seat": 1, "points": 25, "delta": 10, "score": 343, "reason": "sirop_failure"},
     "  seat 1 +10 for sirop failure (of +25, capped) → 343"),
    ({"type": "score", "turn": 1, "seat": 1, "points": 1, "delta": 0, "score": 343, "reason": "velute"},
     "  seat 1 +0 for velute (of +1, capped) → 343"),
    ({"type": "score", "turn": 1, "seat": 1, "points": -5, "delta": -3, "score": 0, "reason": "civet_lost"},
     "  seat 1 -3 for civet lost (of -5, held at 0) → 0"),
    ({"type": "velutee_tie", "turn": 1, "seats": [], "dice": [1, 2], "combination": "neant"},
     "  Velutée tie between nobody: [1, 2] = néant"),
    # Combinations, races and phrases in words, as people say them.
    ({"type": "combination", "turn": 1, "seat": 0, "dice": [1, 1, 2], "combination": "chouette_velute",
      "value": 8, "races": ["chouette_velute"]},
     "  seat 0: [1, 1, 2] = chouette velute (8), races: chouette velute"),
    ({"type": "shout", "turn": 1, "seat": 0, "race": "chouette_velute", "phrase": "pas_mou_le_caillou",
      "onset_ms": 412.4}, "  seat 0 shouts « pas mou le caillou » at 412 ms"),
    ({"type": "false_shout", "turn": 1, "seat": 2, "phrase": "grelotte_ca_picote"},
     "  seat 2 shouts « grelotte ça picote » out of any race"),
    ({"type": "claim", "turn": 1, "seat": 1, "phrase": "achat_du_cul"}, "  seat 1 claims: « achat du cul »"),
    ({"type": "civet", "turn": 1, "seat": 1, "stake": 50, "combination": "cul_de_chouette"},
     "  seat 1 stakes a Civet of 50 on cul de chouette"),
    # An event without a line of its own: its type and fields.
    ({"type": "odd_event", "turn": 4, "seat": 1, "a": 1, "b": "x"}, "  seat 1 odd event: a=1, b=x"),
    ({"type": "odd_event", "turn": 4}, "  the table odd event"),
    ({"type": "odd_event", "turn": 4, "seat": [0, 2]}, "  seat 0, seat 2 odd event"),
    ({"type": "odd_event", "turn": 4, "seat": []}, "  nobody odd event"),
])
def test_an_events_line(event: dict[str, Any], line: str) -> None:
    assert describe_event(event) == line


def test_names_stand_for_seats() -> None:
    names = ["Ana", "Bob", "Cléo"]
    assert describe_event({"type": "race", "turn": 1, "race": "chouette_velute", "shouts": {}, "tied": [0, 2]},
                          names) == "  race chouette velute: Ana, Cléo tied first"
    assert describe_event({"type": "odd_event", "turn": 1, "seat": 1}, names) == "  Bob odd event"
