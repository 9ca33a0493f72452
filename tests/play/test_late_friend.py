"""A late friend at the live table (Chante-Sloubi): the host types `+ Name` and the newcomer
plays as a human from the next turn's start; the save keeps them and resumes with them."""

from __future__ import annotations

import json
from pathlib import Path

from doubles import FixedBot
from test_session import Recorder, TypedLater

from cdc_env.dice import InjectedDice
from cdc_env.game import GameState
from cdc_env.rules import Ruleset, load_ruleset
from voice.session import Keyboard, PlaySession, SeatPlayer


def sloubi(name: str = "basic") -> Ruleset:
    return load_ruleset(name).with_house_rules(["chante_sloubi"])


def session_of(keyboard: TypedLater, dice: list[int], rules: Ruleset | None = None,
               save: Path | None = None, bot: object = None) -> PlaySession:
    """Ana (human) starts (1 against 6); the bot, at 300, wins with a Cul de Chouette."""
    return PlaySession(rules or sloubi(), [SeatPlayer("Ana"), SeatPlayer("bot", bot or FixedBot(1500))],
                       view=Recorder(), keyboard=Keyboard(keyboard.reader), dice=InjectedDice([1, 6, *dice]),
                       setup={"scores": [120, 300]}, save_path=save)


def test_plus_name_at_a_turns_start_seats_a_human_and_saves(tmp_path: Path) -> None:
    keyboard = TypedLater()
    keyboard.type("+ Zoé", 0.0)   # Ana's turn is beginning: Zoé sits down at once
    keyboard.type("1", 0.3)       # Ana rolls 1, 3, 6: nothing; the bot rolls 6, 6, 6 and wins
    save = tmp_path / "game.json"
    session = session_of(keyboard, [1, 3, 6, 6, 6, 6], save=save)
    state = session.run()
    assert [p.name for p in session.players] == ["Ana", "bot", "Zoé"] and session.players[2].human
    assert state.players == 3 and state.scores[2] == 18  # ⌊(300 − 120) × round 1 / 10⌋
    assert any("Zoé joins at seat 3 with 18 points" in line for line in session.view.said)  # type: ignore[attr-defined]
    saved = json.loads(save.read_text(encoding="utf-8"))
    assert saved["players"] == 2 and [p["name"] for p in saved["lineup"]] == ["Ana", "bot", "Zoé"]
    assert GameState.from_json(saved).log == state.log
    # --resume alone rebuilds the line-up from the save, the newcomer included.
    players = [SeatPlayer(str(p["name"]), None if p["bot"] is None else FixedBot(0), p["bot"] or "")
               for p in saved["lineup"]]
    resumed = PlaySession.resume(save, players, view=Recorder(), keyboard=Keyboard(TypedLater().reader))
    assert resumed.state.players == 3 and resumed.state.log == state.log


def test_a_friend_typed_in_mid_turn_joins_as_the_next_turn_begins() -> None:
    keyboard = TypedLater()
    keyboard.type("1", 0.0)       # Ana rolls 1, 1, 2: a Chouette-Velute, a race
    keyboard.type("+ Zoé !", 0.25)  # during the race: she waits for the next turn (and sang the Sloubi)
    keyboard.type("", 0.4)        # Ana shouts first: +8
    session = session_of(keyboard, [1, 1, 2, 6, 6, 6])
    state = session.run()
    said = session.view.said  # type: ignore[attr-defined]
    assert "Zoé joins as the next turn begins" in said
    join = next(e for e in state.log if e["type"] == "join")
    assert join["turn"] == 2 and join["seat"] == 2  # seated as the bot's turn began
    assert state.scores[0] == 128 and state.scores[2] == 26  # ⌈⌊(300 − 128) × 1 / 10⌋ × 1.5⌉ = ⌈25.5⌉


def test_a_join_refused_is_one_line_and_the_game_goes_on() -> None:
    keyboard = TypedLater()
    keyboard.type("+ ana", 0.0)   # a name at the table
    keyboard.type("+", 0.1)       # no name
    keyboard.type("+ " + "Z" * 10_000, 0.15)  # seated, and shown whole in every line of the table
    keyboard.type("1", 0.2)
    session = session_of(keyboard, [1, 3, 6, 6, 6, 6])
    state = session.run()
    said = session.view.said  # type: ignore[attr-defined]
    assert "ana cannot join: Ana is already at the table: give the newcomer another name" in said
    assert any(line.startswith("a late friend joins with « + Name »") for line in said)
    assert f"{'Z' * 30}… cannot join: the name 'ZZZZZZZZZZZZ'… has 10000 characters: give at most 30" in said
    assert state.players == 2 and state.winner == 1


def test_without_the_rule_the_table_says_so() -> None:
    keyboard = TypedLater()
    keyboard.type("+ Zoé", 0.0)
    keyboard.type("1", 0.1)
    session = session_of(keyboard, [1, 3, 6, 6, 6, 6], rules=load_ruleset("basic"))
    state = session.run()
    assert state.players == 2
    assert any(line.startswith("Zoé cannot join: no player can join a game under way in ruleset 'basic'")
               for line in session.view.said)  # type: ignore[attr-defined]


class OneTableBot(FixedBot):
    """A bot that plays one table size only, like a trained model."""

    def check_seats(self, rules: Ruleset, players: int) -> None:
        if players != 2:
            raise ValueError("model x was trained for 2 seats")


def test_a_bot_that_plays_one_table_size_refuses_the_newcomer() -> None:
    keyboard = TypedLater()
    keyboard.type("+ Zoé", 0.0)
    keyboard.type("1", 0.1)
    session = session_of(keyboard, [1, 3, 6, 6, 6, 6], bot=OneTableBot(1500))
    state = session.run()
    assert state.players == 2
    assert "Zoé cannot join: bot cannot play at 3 seats (model x was trained for 2 seats)" in \
        session.view.said  # type: ignore[attr-defined]


def test_a_friend_waiting_for_the_next_turn_is_kept_in_the_save_and_in_the_next_game(tmp_path: Path) -> None:
    # « + Zoé » typed mid-turn: told she sits down as the next turn begins. The game stopped
    # before it (a crash, Ctrl+Q) and resumed, she is still waiting; the game over before it,
    # the next game at the table seats her. Before, she was forgotten either way.
    save = tmp_path / "game.json"
    keyboard = TypedLater()
    session = session_of(keyboard, [1, 1, 2, 6, 6, 6], save=save)
    session.state.apply_action(session.state.pending.legal_actions()[0], seat=0)  # type: ignore[union-attr]
    session.join("Zoé", sung=True)
    assert session.joining == [("Zoé", True)]
    session.save()
    assert json.loads(save.read_text(encoding="utf-8"))["joining"] == [["Zoé", True]]
    resumed = PlaySession.resume(save, [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(1500))], view=Recorder(),
                                 keyboard=Keyboard(keyboard.reader), save_path=save)
    assert resumed.joining == [("Zoé", True)]
    assert resumed.rematch(seed=1, save_path=None).joining == [("Zoé", True)]


def test_a_save_whose_waiting_friends_or_settings_are_damaged_is_refused_in_one_line(tmp_path: Path) -> None:
    import re

    import pytest

    from cdc_env.game import GameLoadError

    state = GameState(sloubi(), 2)
    for damage, says in ((("joining", [["Zoé"]]), "its 'joining' must be a list of [name, sung]"),
                         (("joining", "Zoé"), "its 'joining' must be"), (("settings", [1]), "its 'settings' must be")):
        path = tmp_path / "game.json"
        path.write_text(json.dumps({**state.to_json(), damage[0]: damage[1]}), encoding="utf-8")
        with pytest.raises(GameLoadError, match=re.escape(says)):
            PlaySession.read_save(path)
