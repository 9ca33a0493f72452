"""The live table as a person sees it: the app driven by Textual's pilot, its screen read as text."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from doubles import FixedBot
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Input

from cdc_env.dice import InjectedDice, SeededDice
from cdc_env.game import GameState
from cdc_env.rules import load_ruleset
from voice.session import Heard, PlaySession, SeatPlayer
from voice.table import TableApp, TableView, TypedLines, option_lines, question, screen_text

ROOT = Path(__file__).resolve().parents[2]
Script = Callable[[TableApp, Pilot], Coroutine[Any, Any, None]]


def drive(build: Callable[[TableView, TypedLines], PlaySession], script: Script) -> TableApp:
    async def run() -> TableApp:
        app = TableApp(build)
        async with app.run_test(size=(120, 44)) as pilot:
            await script(app, pilot)
        return app
    return asyncio.run(run())


async def until(pilot: Pilot, app: TableApp, *texts: str, timeout: float = 8.0) -> str:
    """The screen once it shows every one of `texts` (fails, showing the screen, if it never does).
    Several at once where one frame may show a pane before its new height is laid out."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        screen = screen_text(app)
        if all(text in screen for text in texts):
            return screen
        await pilot.pause(0.05)
    raise AssertionError(f"never shown: {texts!r}\n{screen_text(app)}")


async def type_line(pilot: Pilot, app: TableApp, text: str) -> None:
    app.query_one(Input).value = text
    await pilot.press("enter")


def against_a_bot(ruleset: str, dice: list[int], onset_ms: float = 1200,
                  listener: Any = None) -> Callable[[TableView, TypedLines], PlaySession]:
    def build(view: TableView, keyboard: TypedLines) -> PlaySession:
        return PlaySession(load_ruleset(ruleset), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(onset_ms))],
                           view=view, keyboard=keyboard, dice=InjectedDice(dice), listener=listener,
                           setup={"scores": [0, 300]})
    return build


# Ana starts (1 vs 6) and throws 1, 3, 6 (nothing, no race), then the bot throws 2, 4.
NOTHING_TWICE = [1, 6, 1, 3, 6, 2, 4, 5]


def test_the_question_names_only_what_is_possible_and_enter_takes_it() -> None:
    async def script(app: TableApp, pilot: Pilot) -> None:
        screen = await until(pilot, app, "Ana: roll the dice")
        assert "Enter: roll the dice" in screen and "1. roll the dice" in screen
        assert "Civet" not in screen and "Grelottine" not in screen and "heard" not in screen
        await type_line(pilot, app, "hello")
        screen = await until(pilot, app, "« hello » is not one of the choices now: type 1..1")
        assert "heard" not in screen and "or first declare" not in screen
        await type_line(pilot, app, "")  # Enter alone: the only option
        # The bot throws its two dice: Ana may buy the third (two options, numbered).
        screen = await until(pilot, app, "Ana: buy the cul (the third die) or pass")
        assert "1. buy the cul (the third die)" in screen and "2. pass" in screen
        assert "Ana: [1, 3, 6] = néant (0)" in screen  # the log
        assert "bot's throw" in screen and "┌───────┐ ┌───────┐" in screen  # the dice, large
        assert "│  ● ●  │" in screen

    drive(against_a_bot("classic", NOTHING_TWICE), script)


def test_a_race_shows_onsets_who_won_and_why_then_the_end() -> None:
    async def script(app: TableApp, pilot: Pilot) -> None:
        await until(pilot, app, "Ana: roll the dice")
        await type_line(pilot, app, "")
        screen = await until(pilot, app, "RACE — chouette velute!")
        assert "shout « pas mou le caillou » now: press Enter" in screen
        await type_line(pilot, app, "")  # Ana shouts now, well before the bot's 2500 ms
        # The players pane grows by a row for its title « final table »: one frame may still
        # clip the last row, so the screen is read once both rows are there.
        screen = await until(pilot, app, "game over", "final table", "│ Ana ")
        race = screen[screen.index("race ─"):]
        assert "race chouette velute: Ana first" in race
        assert "Ana « pas mou le caillou »" in race and "(keyboard)" in race
        assert "2500 ms  bot « pas mou le caillou »" in race
        assert "Ana +8 for chouette velute → 8" in race
        assert "bot wins with 400 points after 2 turns." in screen and "Races won: Ana 1." in screen
        assert screen.index("bot (bot)") < screen.index("│ Ana ")  # ranked by score
        assert "*** bot wins with 400 ***" in screen  # the log pane

    # Ana rolls 1, 1, 2 (a Chouette-Velute: a race), then the bot rolls 6, 6, 6 and wins.
    app = drive(against_a_bot("basic", [1, 6, 1, 1, 2, 6, 6, 6], onset_ms=2500), script)
    assert app.final is not None and app.final.winner == 1


def test_the_question_grows_with_what_is_held() -> None:
    # Ana holds a Civet and has 50 points: she may declare it before her throw.
    state = GameState(load_ruleset("classic"), 2, dice=InjectedDice([1, 6]),
                      setup={"scores": [50, 0], "items": [{"civet": 1}, {}]})
    decision = state.pending
    assert decision is not None
    assert question("Ana", decision, list(decision.options)) == "Ana: roll the dice or declare a Civet"
    lines = option_lines(decision, list(decision.options), ["Ana", "Bob"])
    assert lines[:2] == ["1. roll the dice", "2. declare a Civet on chouette, stake 1..50  — type « 2 50 »"]


class SaysOnDemand:
    """A microphone for seat 0 that says what the test tells it to, when it tells it."""

    def __init__(self) -> None:
        self.seats = [0]
        self.queued: list[str] = []

    def listen_for(self, intents: set[str], race: bool = False) -> None:
        pass

    def poll(self) -> list[Heard]:
        heard = [Heard(0, intent, time.monotonic()) for intent in self.queued]
        self.queued = []
        return heard

    def mark_playback(self, start: float, end: float) -> None:
        pass

    def close(self) -> None:
        pass


def test_voice_status_per_human() -> None:
    microphone = SaysOnDemand()

    async def script(app: TableApp, pilot: Pilot) -> None:
        screen = await until(pilot, app, "Ana: roll the dice")
        assert "listening" in screen
        microphone.queued.append("oui")  # no answer to a throw
        screen = await until(pilot, app, "heard « oui »: not one of the choices now: say it again")
        [row] = [line for line in screen.splitlines() if "│ Ana " in line]  # the players' table
        assert "say it again" in row
        assert "or first declare" not in screen
        microphone.queued.append("je_lance")
        screen = await until(pilot, app, "Ana: buy the cul")
        assert "heard « je lance »" in screen and "Ana: [1, 3, 6] = néant (0)" in screen

    drive(against_a_bot("classic", NOTHING_TWICE, listener=microphone), script)


def test_a_race_phrase_said_outside_a_race_is_a_false_shout() -> None:
    microphone = SaysOnDemand()

    async def script(app: TableApp, pilot: Pilot) -> None:
        await until(pilot, app, "Ana: roll the dice")
        microphone.queued.append("grelotte_ca_picote")  # no dice on the table: no Suite
        screen = await until(pilot, app, "Bévue: Ana -10")
        assert "false shout: Ana « grelotte ça picote » with no race on" in screen
        assert "Ana shouted « grelotte ça picote » (voice) with no race to shout for" in screen
        assert "Ana: roll the dice" in screen  # still her turn to throw

    app = drive(against_a_bot("classic", NOTHING_TWICE, listener=microphone), script)
    assert [e["type"] for e in app.session.state.log[-2:]] == ["false_shout", "score"]


def test_a_false_shout_the_microphone_misheard_is_taken_back_at_the_table() -> None:
    # Talk taken for « grelotte ça picote » outside a race: a Bévue. « - » typed at the table
    # takes it back: the score is as before, and what happens next still reaches the log.
    microphone = SaysOnDemand()

    async def script(app: TableApp, pilot: Pilot) -> None:
        await until(pilot, app, "Ana: roll the dice")
        microphone.queued.append("grelotte_ca_picote")
        screen = await until(pilot, app, "Bévue: Ana -10")
        assert "« - » typed at the table takes it back" in screen
        await type_line(pilot, app, "-")
        screen = await until(pilot, app, "Ana's « grelotte ça picote » is taken back")
        [row] = [line for line in screen.splitlines() if "│ Ana " in line]
        assert " 0 " in row and "-10" not in row  # her score as before the Bévue
        await type_line(pilot, app, "")  # she throws
        screen = await until(pilot, app, "Ana: [1, 3, 6] = néant (0)")
        # Every line of it: the log, two events shorter, goes on from where it now ends.
        assert "dice for chouettes (Ana): [1, 3]" in screen and "dice for cul (Ana): [6]" in screen

    app = drive(against_a_bot("classic", NOTHING_TWICE, listener=microphone), script)
    assert "false_shout" not in [e["type"] for e in app.session.state.log]


def test_players_table_fits_eight_seats() -> None:
    def build(view: TableView, keyboard: TypedLines) -> PlaySession:
        players = [SeatPlayer("Ana")] + [SeatPlayer(f"bot-{i}", FixedBot(1500)) for i in range(1, 8)]
        return PlaySession(load_ruleset("classic"), players, view=view, keyboard=keyboard,
                           dice=InjectedDice([1, 6, 6, 6, 6, 6, 6, 6]))

    async def script(app: TableApp, pilot: Pilot) -> None:
        screen = await until(pilot, app, "Ana: roll the dice")
        assert all(f"bot-{i} (bot)" in screen for i in range(1, 8))

    drive(build, script)


# --- scripts/play.py: bad resumes, each one clear error, the save untouched -------------------


def load_play() -> Any:
    from doubles import script

    return script("play", "play_script")


def saved_game(tmp_path: Path, **changes: Any) -> Path:
    state = GameState(load_ruleset("classic"), 2, dice=SeededDice(5))
    data = {**state.to_json(), "lineup": [{"name": "Ana", "bot": None}, {"name": "bold-1", "bot": "bold"}]}
    data.update(changes)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def prepare(argv: list[str]) -> tuple[Any, str]:
    console = Console(width=2000, record=True, file=io.StringIO())
    result = load_play().prepare(argv, console)
    return result, console.export_text()


@pytest.mark.parametrize("history", [None, 7])
def test_resume_of_a_save_whose_history_is_not_a_list(tmp_path: Path, history: Any) -> None:
    path = saved_game(tmp_path, history=history)
    before = path.read_text()
    status, said = prepare(["--keyboard", "--resume", str(path)])
    assert status == 2
    assert f"its 'history' must be the list of moves, got {json.dumps(history)}" in said
    assert path.read_text() == before


@pytest.mark.parametrize("lineup, says", [
    ([{"player": "Ana"}, {"player": "bold-1"}], "its 'lineup' must be a list of players, each {\"name\""),
    ([{"name": "Ana", "bot": None}, {"name": "bold-1", "bot": 5}], "its 'lineup' must be a list of players"),
    ([{"name": "Ana", "bot": None}], "its 'lineup' names 1 players, its game has 2"),
    # It resumed with the default line-up (You and the champion): another game, without a word.
    ([], "its line-up is empty (no players); resume from another save, or start a new game"),
])
def test_resume_of_a_save_whose_line_up_is_damaged(tmp_path: Path, lineup: Any, says: str) -> None:
    path = saved_game(tmp_path, lineup=lineup)
    before = path.read_text()
    status, said = prepare(["--keyboard", "--resume", str(path)])
    assert status == 2 and "Traceback" not in said
    assert f"cannot resume {path}: {path} is damaged: {says}" in said
    assert path.read_text() == before


@pytest.mark.parametrize(("text", "says"), [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply (a damaged file)"),  # a RecursionError traceback
    ('{"history": [' + "1" * 5000 + "]}", "a number of more than 4300 digits (a damaged file)"),  # "use sys.set_..."
])
def test_resume_of_a_save_nested_too_deeply_or_with_a_number_too_long(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "game.json"
    path.write_text(text, encoding="utf-8")
    status, said = prepare(["--keyboard", "--resume", str(path)])
    assert status == 2 and "Traceback" not in said
    assert f"cannot resume {path}: {path} is not a saved game (not JSON: {says})" in said
    assert path.read_text(encoding="utf-8") == text


@pytest.mark.parametrize(("values", "says"), [
    ([2, 0], "injected die 2 is 0: each must be a whole number from 1 to 6"),
    ([7], "injected die 1 is 7: each must be a whole number from 1 to 6"),
    (["x"], "injected die 1 is 'x': each must be"),
    ([2.5], "injected die 1 is 2.5: each must be"),
    ([True], "injected die 1 is True: each must be"),
    ([[3]], "injected die 1 is a list: each must be"),
    ([10**40], "injected die 1 is a number past 10**12: each must be"),
    ([3] * 100_001, "injected dice: 100001 given, at most 100000 (more than a game rolls)"),
    ("3 4", "injected dice: 'values' must be a list of dice, got '3 4'"),
])
def test_resume_of_a_save_whose_injected_dice_are_bad_is_refused_at_load(
        tmp_path: Path, values: Any, says: str) -> None:
    # A hand-edited save: the game stopped mid-way, at the roll the bad die fell on
    # ('the game stopped on an error: ValueError(...)', a TypeError for "x").
    path = saved_game(tmp_path, dice={"kind": "injected", "values": values})
    before = path.read_text()
    status, said = prepare(["--keyboard", "--resume", str(path)])
    assert status == 2 and "Traceback" not in said
    assert f"cannot resume {path}: saved game has a bad dice source: {says}" in said
    assert path.read_text() == before


def test_resume_of_a_save_that_is_not_text(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    path.write_bytes(b"\x00\xff\xfe")
    status, said = prepare(["--keyboard", "--resume", str(path)])
    assert status == 2
    assert f"cannot resume {path}: {path} is not a saved game (not UTF-8 text); give a file written by --save" in said
    assert path.read_bytes() == b"\x00\xff\xfe"


def test_resume_of_a_pipe_is_refused_on_one_line_not_waited_on(tmp_path: Path) -> None:
    # A named pipe was read until someone wrote to it (the table hung); an error was wrapped at
    # the console's 80 columns, two lines.
    import os

    pipe = tmp_path / "game.json"
    os.mkfifo(pipe)
    console = Console(width=80, record=True, file=io.StringIO())
    assert load_play().prepare(["--keyboard", "--resume", str(pipe)], console) == 2
    said = console.export_text().strip()
    assert said == (f"cannot resume {pipe}: {pipe} is not a saved game (not a file but a pipe); "
                    "give a file written by --save")


@pytest.mark.parametrize("humans, says", [
    ([""], "--humans: a name is empty: give each player a name"),
    (["  "], "--humans: a name is empty: give each player a name"),
    (["Ana", "ana"], "--humans: ana is already at the table as Ana: give each player a name of their own"),
    (["bold-1"], "--humans: bold-1 is already at the table: give each player a name of their own"),  # a bot's
    (["A" * 10_000], "--humans: the name 'AAAAAAAAAAAA'… has 10000 characters: give at most 30"),
    (["Ana\nBob"], "--humans: the name 'Ana\\nBob' holds a line break or a control character: give a plain name"),
])
def test_a_humans_name_that_no_table_can_tell_apart_is_refused(humans: list[str], says: str) -> None:
    # Each one opened the table: two players of one name, one without any, one of 10,000 characters.
    status, said = prepare(["--keyboard", "--humans", *humans, "--bots", "bold"])
    assert status == 2
    assert said.strip() == f"error: {says}"


@pytest.mark.parametrize("argv", [["--resume", "x" * 5000], ["--humans", "A", "--bots", "x" * 5000],
                                  ["--humans", "A", "--bots", "bold", "--save", "x" * 5000]])
def test_a_path_too_long_is_one_line(argv: list[str]) -> None:
    # Each was an OSError traceback (File name too long), the 5,000 characters quoted whole.
    status, said = prepare(["--keyboard", *argv])
    assert status == 2 and "Traceback" not in said and len(said.strip().splitlines()) == 1
    assert "x" * 60 + "… (5000 characters): File name too long" in said
    assert len(said) < 300


@pytest.mark.parametrize("value", ["1e300", "31"])
def test_a_pace_no_one_would_wait_is_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    # --pace 1e300 opened the table, which then stood still after the bot's first move.
    with pytest.raises(SystemExit) as stop:
        prepare(["--keyboard", "--humans", "Ana", "--bots", "bold", "--pace", value])
    assert stop.value.code == 2
    assert f"argument --pace: {float(value):g}: give at most 30 seconds" in capsys.readouterr().err


def test_a_house_rule_unknown_is_one_line() -> None:
    # The ruleset's problems were printed on three lines, a list under the error.
    status, said = prepare(["--keyboard", "--humans", "Ana", "--bots", "bold", "--house", "nope"])
    assert status == 2 and len(said.strip().splitlines()) == 1
    assert said.startswith("error: ruleset classic with --house nope is not valid: house_rules.nope: no such house")


@pytest.mark.parametrize("argv, given", [
    (["--humans", "Ana", "Bob"], "not of Ana (human), Bob (human)"),  # the bot seat turned human
    (["--humans", "Ana", "--bots", "bold", "prudent"], "not of Ana (human), bold-1 (bot bold), prudent-2"),
    (["--humans", "Ana"], "not of Ana (human), champion-1 (bot champion);"),  # the default bot: the champion
])
def test_resume_with_another_line_up_names_the_saves(tmp_path: Path, argv: list[str], given: str) -> None:
    path = saved_game(tmp_path)
    before = path.read_text()
    status, said = prepare(["--keyboard", "--resume", str(path), *argv])
    assert status == 2
    assert "is a game of Ana (human), bold-1 (bot bold), " in said and given in said
    assert "resume it with the same humans and bots (or with --resume alone)" in said
    assert path.read_text() == before


def test_resume_alone_takes_the_saves_line_up(tmp_path: Path) -> None:
    app, _ = prepare(["--keyboard", "--resume", str(saved_game(tmp_path))])
    assert isinstance(app, TableApp)
    assert [(p.name, p.human, p.bot_name) for p in app.session.players] == [("Ana", True, ""),
                                                                           ("bold-1", False, "bold")]


def test_the_web_table_alone_says_a_fault_of_ours_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # --web --no-screen caught only Ctrl+C, the end of input and a save's error: a fault of ours
    # was a traceback (the terminal's table says it in one line, as here).
    play = load_play()
    table = object.__new__(play.WebTable)

    class Server:
        def start(self) -> None: ...
        def stop(self) -> None: ...

    class Session:
        save_path = None

        def save(self) -> None: ...

        def run(self) -> None:
            raise ValueError("a fault of ours")

    table.server, table.listener, table.app, table.session = Server(), None, None, Session()
    monkeypatch.setattr(table, "announce", lambda console: None)
    monkeypatch.setattr(table, "_host_typing", lambda console: None)
    console = Console(width=2000, record=True, file=io.StringIO())
    assert table.run(console) == 1
    said = console.export_text()
    assert "the game stopped on an error: ValueError('a fault of ours')" in said and "Traceback" not in said


def test_a_game_stopped_before_any_move_does_not_say_it_is_saved(tmp_path: Path) -> None:
    # The game is saved after each move: stopped before one, « --resume game.json » pointed at a
    # file never written.
    from types import SimpleNamespace

    def said(path: Path | None) -> str:
        console = Console(width=2000, record=True, file=io.StringIO())
        assert load_play().stopped(SimpleNamespace(save_path=path), console) == 1
        return console.export_text().strip()

    path = tmp_path / "game.json"
    assert said(path) == "Game stopped. Nothing was played, so nothing new was saved."
    path.write_text("{}", encoding="utf-8")
    assert said(path) == f"Game stopped. It is saved in {path}: --resume {path}"
    assert said(None) == "Game stopped."


def test_resume_alone_brings_the_bots_back_as_they_were_set(tmp_path: Path) -> None:
    # Slow bots for beginners (--reaction slow): --resume alone brought them back at « human »
    # speed, a different game (a race is won against a bot's reaction). Given again, it wins.
    path = tmp_path / "game.json"
    app, said = prepare(["--keyboard", "--humans", "Ana", "--bots", "bold", "--reaction", "slow",
                         "--budget-ms", "150", "--save", str(path)])
    assert isinstance(app, TableApp), said
    app.session.save()
    assert json.loads(path.read_text(encoding="utf-8"))["settings"] == {"reaction": "slow", "budget_ms": 150.0}
    resumed, said = prepare(["--keyboard", "--resume", str(path)])
    assert isinstance(resumed, TableApp), said
    assert resumed.session.players[1].bot.reaction.level == "slow"
    assert resumed.session.settings == {"reaction": "slow", "budget_ms": 150.0}
    faster, _ = prepare(["--keyboard", "--resume", str(path), "--reaction", "fast"])
    assert faster.session.players[1].bot.reaction.level == "fast"
    for settings, says in (({"reaction": "warp"}, "bots' reaction 'warp' is none of expert, fast, human, slow"),
                           ({"budget_ms": -5}, "the save's bots' budget: -5 is out of range")):
        path.write_text(json.dumps({**json.loads(path.read_text(encoding="utf-8")), "settings": settings}),
                        encoding="utf-8")
        status, said = prepare(["--keyboard", "--resume", str(path)])
        assert status == 2 and says in said and "Traceback" not in said


def test_resume_alone_checks_the_bots_against_the_saves_rules_not_the_default_ones(tmp_path: Path) -> None:
    # A v004 game against a network of v004 (a model file): --resume alone checked the bot
    # against --ruleset's default, classic, and refused the save ("trained for v004, not classic").
    model = str(Path(__file__).resolve().parents[2] / "agents" / "champions" / "v004_2p.npz")
    state = GameState(load_ruleset("v004"), 2, dice=SeededDice(5))
    path = tmp_path / "game.json"
    path.write_text(json.dumps({**state.to_json(), "lineup": [{"name": "Ana", "bot": None},
                                                             {"name": "net-1", "bot": model}]}), encoding="utf-8")
    app, said = prepare(["--keyboard", "--resume", str(path)])
    assert isinstance(app, TableApp), said
    assert app.session.state.rules.name == "v004"


@pytest.mark.parametrize("argv, says", [
    (["--humans", "A", "--bots", "searcher:abc"], "error: searcher:abc: the budget 'abc' is"),  # was 'searcher🔤'
    (["--humans", "A", "--bots", "[bold]x"], "error: unknown bot '[bold]x':"),  # was "unknown bot 'x'"
    (["--resume", "{tmp}/[/x]/game.json"], "cannot resume {tmp}/[/x]/game.json: {tmp}/[/x]/game.json: No such file"),
])
def test_an_error_shows_the_users_text_as_typed(tmp_path: Path, argv: list[str], says: str) -> None:
    # A path or a name is the user's text: never rich markup (a path with '[/x]' in it raised
    # MarkupError, a traceback) nor emoji codes.
    status, said = prepare(["--keyboard", *(arg.replace("{tmp}", str(tmp_path)) for arg in argv)])
    assert status == 2 and "Traceback" not in said
    assert says.replace("{tmp}", str(tmp_path)) in said.replace("\n", "")


def test_a_players_name_in_brackets_is_shown_as_typed() -> None:
    def build(view: TableView, keyboard: TypedLines) -> PlaySession:
        return PlaySession(load_ruleset("classic"), [SeatPlayer("[/x]"), SeatPlayer("bot", FixedBot(1200))],
                           view=view, keyboard=keyboard, dice=InjectedDice([3, 5]))

    async def script(app: TableApp, pilot: Pilot) -> None:
        await until(pilot, app, "[/x]: roll the dice")  # the players' table used to raise MarkupError
        assert "│ [/x] " in screen_text(app)

    drive(build, script)


def test_a_lexicon_key_with_a_typo_stops_play_with_its_name(tmp_path: Path) -> None:
    text = (ROOT / "configs" / "voice" / "fr.yaml").read_text(encoding="utf-8")
    typo = tmp_path / "fr.yaml"
    typo.write_text(text.replace("\nje_lance:", "\nje_lanse:"), encoding="utf-8")
    status, said = prepare(["--humans", "Ana", "--bots", "bold", "--lexicon", str(typo)])
    assert status == 2 and "key 'je_lanse' is not an intent of the game; did you mean 'je_lance'?" in said


@pytest.mark.parametrize("web", [False, True])
def test_a_model_given_that_is_no_model_stops_play_with_its_path(tmp_path: Path, web: bool,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # A typo in --model was a game without voices: the reason said once, then the table took the
    # screen (terminal), or "no French Vosk model found; give --model" as if none were given (--web).
    monkeypatch.setenv("CDC_WEB_DIR", str(tmp_path / "certs"))
    status, said = prepare(["--humans", "Ana", "--bots", "bold", "--model", str(tmp_path / "vosk-modle-fr"),
                            *(["--web", "--keyboard", "--port", "0"] if web else [])])
    assert status == 2
    assert said.startswith(f"error: --model: No Vosk model found. Tried: --model: {tmp_path / 'vosk-modle-fr'} "
                           "(no such folder); Download ") and said.count("\n") == 1
    assert not (tmp_path / "certs").exists()  # refused before anything was made


def test_a_web_table_whose_save_cannot_be_written_stops_in_one_line(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # --web --no-screen: the first save's OSError was a traceback (and mid-game, the terminal's
    # table said "the game stopped on an error: OSError(28, ...)" with no word of the save).
    monkeypatch.setenv("CDC_WEB_DIR", str(tmp_path / "certs"))
    save = tmp_path / "games" / "game.json"
    table, _ = prepare(["--humans", "Ana", "--bots", "bold", "--keyboard", "--web", "--no-screen", "--port", "0",
                        "--host", "127.0.0.1", "--save", str(save)])
    (tmp_path / "games").rmdir()  # the folder checked, then gone (a disk unplugged)
    console = Console(width=2000, record=True, file=io.StringIO())
    assert table.run(console) == 2
    said = console.export_text()
    assert said.endswith(f"error: the game cannot be saved in {save} (No such file or directory); nothing was saved: "
                         "make room and start again\n")
    assert "Traceback" not in said


def test_a_model_vosk_cannot_load_stops_the_web_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # It opened with "the phones play by tapping only: no French Vosk model found; give --model".
    monkeypatch.setenv("CDC_WEB_DIR", str(tmp_path / "certs"))
    (tmp_path / "model" / "am").mkdir(parents=True)
    (tmp_path / "model" / "am" / "final.mdl").write_text("not a model")
    (tmp_path / "model" / "graph").mkdir()
    for part in ("HCLr.fst", "Gr.fst"):
        (tmp_path / "model" / "graph" / part).write_text("not a graph")
    status, said = prepare(["--humans", "Ana", "--bots", "bold", "--model", str(tmp_path / "model"), "--web",
                            "--port", "0"])
    assert status == 2
    assert said == f"error: --model: Vosk could not load the model at {tmp_path / 'model'}: Failed to create a model\n"


def test_a_false_shout_at_the_keyboard_ends_that_moment_with_a_bevue_on_the_table(tmp_path: Path) -> None:
    # scripts/play.py, two humans at one keyboard, the classic rules (with Bévues). Seed 1: Ana
    # starts and throws 1 and 3; Bob is asked whether he buys the third die. Those dice start
    # no race, and Ana shouts « pas mou le caillou » (« ! 1 »: seat 1's shout).
    app, _ = prepare(["--keyboard", "--humans", "Ana", "Bob", "--bots", "--seed", "1", "--ruleset", "classic",
                      "--save", str(tmp_path / "game.json")])
    assert isinstance(app, TableApp)

    async def script(app: TableApp, pilot: Pilot) -> None:
        await until(pilot, app, "Ana: roll the dice")
        await type_line(pilot, app, "")
        screen = await until(pilot, app, "Bob: buy the cul (the third die) or pass")
        assert app.session.state.table.dice == (1, 3)
        await type_line(pilot, app, "! 1")
        screen = await until(pilot, app, "Bévue: Ana -10")
        race = screen[screen.index("race ─"):]
        assert "false shout: Ana « pas mou le caillou » with no race on" in race
        assert "shouted « pas mou le caillou » when no race was on" in race  # the Bévue's reason, in words
        assert "Bob: buy the cul (the third die) or pass" in screen  # the moment goes on
        assert "Ana shouted « pas mou le caillou » (keyboard) with no race to shout for" in screen

    async def run() -> None:
        async with app.run_test(size=(120, 44)) as pilot:
            await script(app, pilot)
    asyncio.run(run())
    state = app.session.state
    assert state.pending is not None
    assert state.scores[0] == -10 and state.pending.kind == "buy_cul" and state.pending.seat == 1
    saved = json.loads((tmp_path / "game.json").read_text())
    assert saved["history"][-1] == {"seat": 0, "action": state.history[-1]["action"]}
    assert GameState.from_json(saved).scores == [-10, 0]  # the save replays the shout


def test_the_summary_counts_races_won_not_a_suites_loser() -> None:
    from types import SimpleNamespace

    from voice.table import summary

    log = [{"type": "race", "race": "chouette_velute", "tied": [1]},
           {"type": "race", "race": "suite", "tied": [0]},        # Ana lost the Suite
           {"type": "race", "race": "suite_tie", "tied": [0]}]
    state = SimpleNamespace(winner=None, turn_number=9, players=2, log=log, scores=[0, 0], is_over=False)
    session = SimpleNamespace(state=state, players=[SimpleNamespace(name="Ana"), SimpleNamespace(name="Bob")])
    said = summary(session)  # type: ignore[arg-type]  # a stand-in: only what summary reads
    assert "Races won: Bob 1." in said
    assert said.startswith("No winner after 8 turns.")  # cut short as turn 9 began: 8 played
    # A Doublette: "Ana wins with 209 points", the team's 346 and Cy unnamed.
    from cdc_env.game import GameState

    doublette = GameState(load_ruleset("classic").with_house_rules(["doublette"]), 4)
    # The scores a won game ends with (a setup may not start there: the game would be over).
    doublette.scores = [209, 100, 137, 50]
    doublette.winner, doublette.turn_number = 0, 15
    names = [SimpleNamespace(name=n) for n in ("Ana", "Bob", "Cy", "Dan")]
    assert summary(SimpleNamespace(state=doublette, players=names)).startswith(  # type: ignore[arg-type]
        "Ana and Cy win as a team with 346 points after 15 turns.")


def test_a_race_phrase_at_ones_own_claim_is_a_false_shout_and_the_claim_still_waits() -> None:
    microphone = SaysOnDemand()

    async def script(app: TableApp, pilot: Pilot) -> None:
        await until(pilot, app, "Ana: roll the dice")
        await type_line(pilot, app, "")
        await until(pilot, app, "Kadoc")  # 6,5,2 is a Flan: Ana's claim moment
        microphone.queued.append("pas_mou_le_caillou")
        screen = await until(pilot, app, "Bévue: Ana -10")
        assert "Kadoc" in screen  # the claim is still hers to make

    app = drive(against_a_bot("complete", [1, 6, 6, 5, 2, 4, 5, 3], listener=microphone), script)
    assert app.session.state is not None and app.session.state.pending is not None
    assert app.session.state.pending.kind == "claim"
    assert [e["type"] for e in app.session.state.log[-2:]] == ["false_shout", "score"]


def test_an_unknown_phrase_typed_for_a_shout_is_an_error_not_a_bevue() -> None:
    # Seed 1 as above: Bob is asked about the cul, no race is on; Ana types « ! 1 zz ». No phrase
    # starts with zz: the table says so, and nobody is charged a Bévue for a typo.
    app, _ = prepare(["--keyboard", "--humans", "Ana", "Bob", "--bots", "--seed", "1", "--ruleset", "classic"])
    assert isinstance(app, TableApp)

    async def script(app: TableApp, pilot: Pilot) -> None:
        await until(pilot, app, "Ana: roll the dice")
        await type_line(pilot, app, "")
        await until(pilot, app, "Bob: buy the cul (the third die) or pass")
        await type_line(pilot, app, "! 1 zz")
        screen = await until(pilot, app, "« zz » is no phrase to shout here")
        assert "Bévue" not in screen and "pas mou le caillou" in screen  # the phrases it could be

    async def run() -> None:
        async with app.run_test(size=(120, 44)) as pilot:
            await script(app, pilot)
    asyncio.run(run())
    state = app.session.state
    assert state.pending is not None
    assert state.scores == [0, 0] and state.pending.kind == "buy_cul" and state.pending.seat == 1


def test_save_never_replaces_another_games_save(tmp_path: Path) -> None:
    other = saved_game(tmp_path)
    before = other.read_text()
    status, said = prepare(["--keyboard", "--humans", "Ana", "Bob", "--bots", "--save", str(other)])
    assert status == 2
    assert f"--save {other}: the file exists and holds another game" in said and "--overwrite" in said
    assert other.read_text() == before
    # The game it holds goes on in it; --overwrite replaces it when asked.
    resumed, _ = prepare(["--keyboard", "--resume", str(other), "--save", str(other)])
    assert isinstance(resumed, TableApp)
    replaced, _ = prepare(["--keyboard", "--humans", "Ana", "Bob", "--bots", "--save", str(other), "--overwrite"])
    assert isinstance(replaced, TableApp)
    status, said = prepare(["--keyboard", "--humans", "Ana", "Bob", "--bots", "--save", str(tmp_path)])
    assert status == 2 and "is a folder: give a file name" in said
    # A file of the user's that is no save: it was said to hold a game, to go on with (--resume failed).
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes", encoding="utf-8")
    status, said = prepare(["--keyboard", "--humans", "Ana", "Bob", "--bots", "--save", str(notes)])
    assert status == 2 and f"--save {notes}: the file exists and is no saved game (a file of yours?)" in said
    assert "--resume" not in said and notes.read_text(encoding="utf-8") == "my notes"


def test_resume_with_other_rules_asked_for_says_the_save_keeps_its_own(tmp_path: Path) -> None:
    # --ruleset v004 --house verdier beside a classic save: dropped without a word, the table
    # played classic; the same rules named again are no error.
    game = saved_game(tmp_path)
    status, said = prepare(["--keyboard", "--resume", str(game), "--ruleset", "v004", "--house", "verdier"])
    assert status == 2 and ("--ruleset/--house ask for v004+verdier, and the saved game plays on under its own "
                            "rules (classic)") in said
    status, said = prepare(["--keyboard", "--resume", str(game), "--house", "verdier"])
    assert status == 2 and "ask for classic+verdier" in said
    resumed, _ = prepare(["--keyboard", "--resume", str(game), "--ruleset", "classic"])
    assert isinstance(resumed, TableApp)


def test_a_late_friend_typed_at_the_table_sits_down_and_is_saved(tmp_path: Path) -> None:
    """`+ Zoé` at the live table (maison plays chante_sloubi): Zoé is in the players' panel and
    the log, and the save holds her; --resume alone goes on with her."""
    save = tmp_path / "game.json"

    def build(view: TableView, keyboard: TypedLines) -> PlaySession:
        return PlaySession(load_ruleset("classic").with_house_rules(["chante_sloubi"]),
                           [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(1200))], view=view, keyboard=keyboard,
                           dice=InjectedDice(NOTHING_TWICE), setup={"scores": [100, 300]}, save_path=save)

    async def script(app: TableApp, pilot: Pilot) -> None:
        await until(pilot, app, "Ana: roll the dice")
        await type_line(pilot, app, "+ Zoé")
        screen = await until(pilot, app, "Zoé joins at seat 3 with 20 points")
        assert "+++ Zoé joins the game at seat 3 (chante-sloubi)" in screen  # as the line above: seats from 1
        assert "Zoé" in screen.split("players")[1]
        app.exit()

    drive(build, script)
    saved = json.loads(save.read_text(encoding="utf-8"))
    assert [p["name"] for p in saved["lineup"]] == ["Ana", "bot", "Zoé"]
    saved["lineup"][1]["bot"] = "bold"  # a bot scripts/play.py can make again
    save.write_text(json.dumps(saved), encoding="utf-8")
    app, said = prepare(["--keyboard", "--resume", str(save)])
    assert isinstance(app, TableApp), said
    assert [(p.name, p.human) for p in app.session.players] == [("Ana", True), ("bot", False), ("Zoé", True)]
    assert app.session.state.players == 3 and app.session.state.scores[2] == 20


# --- one game at a time in a save ------------------------------------------------------------


def test_a_save_a_live_game_writes_is_refused_to_a_second_game(tmp_path: Path) -> None:
    # Two games in one save wrote over each other's moves: the second is refused, the save as it was.
    save = saved_game(tmp_path)
    before = save.read_bytes()
    play = load_play()
    with ExitStack() as locks:  # as main holds it: the game's whole life
        console = Console(width=2000, record=True, file=io.StringIO())
        live = play.prepare(["--keyboard", "--resume", str(save)], console, locks)
        assert isinstance(live, TableApp)
        in_use = f"error: {save} is in use by another play.py (pid {os.getpid()}); wait for it or stop it\n"
        for argv in (["--resume", str(save)], ["--humans", "Ana", "--bots", "bold", "--save", str(save), "--overwrite"],
                     ["--humans", "Ana", "--bots", "bold", "--save", str(save)]):
            assert prepare(["--keyboard", *argv]) == (2, in_use)
        # Its moves read into another save: a copy of the game, the live one's file only read.
        copy, said = prepare(["--keyboard", "--resume", str(save), "--save", str(tmp_path / "copy.json")])
        assert isinstance(copy, TableApp), said
        assert save.read_bytes() == before and play.lock_path(save).exists()
    assert not play.lock_path(save).exists(), "the game's end lets go of its lock and leaves no file"
    resumed, said = prepare(["--keyboard", "--resume", str(save)])
    assert isinstance(resumed, TableApp), said


def test_the_web_table_holds_its_save_until_it_stops(tmp_path: Path) -> None:
    # scripts/play.py itself, two processes: the second game names the first one's pid.
    save = tmp_path / "game.json"
    env = {**os.environ, "CDC_WEB_DIR": str(tmp_path / "certs")}
    first = subprocess.Popen([sys.executable, "scripts/play.py", "--web", "--no-screen", "--keyboard", "--port", "0",
                              "--host", "127.0.0.1", "--humans", "Ana", "--bots", "bold", "--save", str(save)],
                             cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert first.stdout is not None
        lines = []
        for line in first.stdout:
            lines.append(line)
            if "the web table is open" in line:
                break
        assert save.exists(), "".join(lines)
        second = subprocess.run([sys.executable, "scripts/play.py", "--keyboard", "--resume", str(save)], cwd=ROOT,
                                env=env, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        assert second.stdout == (f"error: {save} is in use by another play.py (pid {first.pid}); "
                                 "wait for it or stop it\n")
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
    assert first.returncode == 1 and save.exists() and not (tmp_path / "game.json.lock").exists()


# --- another game at the same table ----------------------------------------------------------


def test_again_after_the_end_plays_another_game_with_the_same_players_in_a_save_of_its_own(tmp_path: Path) -> None:
    """A bot plays out a game at the live table; `again` typed after its end starts the next one:
    the same players, saved in game-2.json (game.json keeps the first game), then game-3.json."""
    save = tmp_path / "game.json"
    play = load_play()
    with ExitStack() as locks:
        console = Console(width=2000, record=True, file=io.StringIO())
        # A bot alone at `solo`: each game ends within a second.
        app = play.prepare(["--keyboard", "--ruleset", "solo", "--humans", "--bots", "bold", "--seed", "3",
                            "--pace", "0", "--save", str(save)], console, locks)
        assert isinstance(app, TableApp), console.export_text()
        first = app.session

        async def run() -> None:
            async with app.run_test(size=(120, 44)) as pilot:
                screen = await until(pilot, app, "game over", timeout=20)
                assert "« again »: another game, the same players" in screen
                kept = save.read_text(encoding="utf-8")
                await type_line(pilot, app, "again")
                await until(pilot, app, "a new game, the same players, saved in", timeout=20)  # (loaded CI)
                assert app.session.save_path == tmp_path / "game-2.json"
                assert app.session is not first and app.session.players is first.players
                await until(pilot, app, "game over", timeout=20)
                assert save.read_text(encoding="utf-8") == kept  # the first game is kept whole
                await type_line(pilot, app, "again")
                await pilot.pause(0.2)
                assert app.session.save_path == tmp_path / "game-3.json"
                app.exit()

        asyncio.run(run())
        second = json.loads((tmp_path / "game-2.json").read_text(encoding="utf-8"))
        assert [p["name"] for p in second["lineup"]] == ["bold-1"]
        assert GameState.from_json(second).winner is not None
        fresh = GameState.from_json(second)
        assert fresh.rules.name == "solo" and fresh.players == 1
        assert play.lock_path(tmp_path / "game-2.json").exists()  # held while this table lives
    assert not play.lock_path(tmp_path / "game-2.json").exists()


def test_the_next_games_save_is_never_a_file_that_exists_nor_one_in_use(tmp_path: Path) -> None:
    play = load_play()
    (tmp_path / "game-2.json").write_text("mine")
    with ExitStack() as locks, ExitStack() as other:
        assert play.next_save(tmp_path / "game.json", locks) == tmp_path / "game-3.json"
        other.enter_context(play.in_use_by_one(play.lock_path(tmp_path / "g-8.json"), tmp_path / "g-8.json", "x"))
        assert play.next_save(tmp_path / "g-7.json", locks) == tmp_path / "g-9.json"  # -8 is another table's
        assert play.next_save(tmp_path / "game-3.json", locks) == tmp_path / "game-4.json"
        assert play.next_save(tmp_path / "save", locks) == tmp_path / "save-2"
    assert (tmp_path / "game-2.json").read_text() == "mine"


def test_again_where_the_next_save_cannot_be_made_says_so_and_the_table_stays(tmp_path: Path) -> None:
    def build(view: TableView, keyboard: TypedLines) -> PlaySession:
        return PlaySession(load_ruleset("basic"), [SeatPlayer("a", FixedBot(900)), SeatPlayer("b", FixedBot(900))],
                           view=view, keyboard=keyboard, seed=1)

    def refused(last: PlaySession) -> PlaySession:
        raise OSError(30, "Read-only file system", str(tmp_path / "game-2.json"))

    async def run() -> str:
        app = TableApp(build, again=refused)
        async with app.run_test(size=(120, 44)) as pilot:
            await until(pilot, app, "game over", timeout=20)
            first = app.session
            await type_line(pilot, app, "again")
            screen = await until(pilot, app, "no new game: [Errno 30] Read-only file system")
            assert app.session is first and app.final is not None
            return screen

    asyncio.run(run())


def test_a_table_whose_widgets_are_gone_as_it_closes_takes_no_more_updates_without_an_error() -> None:
    # Ctrl+Q: Textual removes the widgets a few ms before the keyboard is marked closed; an update
    # posted then (a bot's shout) raised NoMatches, and the game "stopped on an error".
    from types import SimpleNamespace

    from textual.css.query import NoMatches

    from voice.table import TableView

    class Closing:
        keyboard = SimpleNamespace(closed=False)

        def call_from_thread(self, update: Any, *args: Any) -> None:
            raise NoMatches("No nodes match '#dice' on Screen()")

    TableView(Closing())._post(lambda: None)  # type: ignore[arg-type]


def test_espeak_says_how_long_its_speech_lasts() -> None:
    # The words' estimate (0.08 s a word + 0.4) was 0.72 s for a 1.05 s shout and 1.1 s for
    # three shouts of 3 s: the microphones' mask and the game's wait ended with the speech playing.
    play = load_play()
    one = play.speech_length("pas mou le caillou")
    three = play.speech_length("grelotte ça picote grelotte ça picote grelotte ça picote")
    assert 0.8 < one < 1.4 and 2.5 < three < 3.6 and three > 2.5 * one


def test_resume_takes_its_own_house_rules_named_in_any_order_and_a_pipe_as_save_is_no_wait(tmp_path: Path) -> None:
    import os

    rules = load_ruleset("classic").with_house_rules(["verdier", "tichette"])
    state = GameState(rules, 2, dice=SeededDice(5))
    game = tmp_path / "game.json"
    game.write_text(json.dumps({**state.to_json(), "lineup": [{"name": "Ana", "bot": None},
                                                               {"name": "bold-1", "bot": "bold"}]}), encoding="utf-8")
    resumed, said = prepare(["--keyboard", "--resume", str(game), "--house", "tichette", "verdier"])
    assert isinstance(resumed, TableApp), said  # it asked for classic+tichette+verdier: "other rules"
    # A pipe given as --save: reading it to tell whether it holds a game waited for a writer for ever.
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    status, said = prepare(["--keyboard", "--humans", "Ana", "--bots", "bold", "--save", str(pipe)])
    assert status == 2 and "--save" in said


def test_a_late_friend_or_a_take_back_typed_after_the_end_is_told_to_wait_for_again() -> None:
    # Queued for a game that was over, `+ Zoé` was dropped by `again` without a word.
    from voice.table import after_the_end

    said = "the game is over: type « again » for the next one, then « + Name » there"
    assert after_the_end(" + Zoé") == said and after_the_end("-") == said
    assert after_the_end("again") is None and after_the_end("1") is None


def rendered(renderable: Any) -> str:
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_the_race_pane_shows_only_this_races_verdict_and_one_nobody_shouted_in() -> None:
    # A new race under way showed the last race's verdict above its own shouts (« Ana first »,
    # « Ana +8 »); a race nobody shouted in left « no race yet » on the pane.
    from voice.session import RaceShout
    from voice.table import race_panel

    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(800))],
                          view=TableView(None), keyboard=TypedLines())  # type: ignore[arg-type]
    session.state.log.append({"type": "race", "turn": 1, "race": "chouette_velute", "shouts": {}, "tied": []})
    assert "nobody shouted in time" in rendered(race_panel(session))
    session.state.log.append({"type": "turn_start", "turn": 2, "seat": 1})
    session.race_log_from = len(session.state.log)  # the next race begins
    session.race_now = [RaceShout(1, "pas_mou_le_caillou", 800.0, "bot")]
    shown = rendered(race_panel(session))
    assert "800 ms  bot « pas mou le caillou »" in shown and "nobody shouted" not in shown


def test_the_final_table_of_a_doublette_ranks_the_teams_and_marks_both_winners() -> None:
    from voice.table import players_table

    rules = load_ruleset("classic").with_house_rules(["doublette"])
    players = [SeatPlayer(name, FixedBot(500), "bold") for name in ("Ana", "Bob", "Cy", "Dee")]
    session = PlaySession(rules, players, view=TableView(None), keyboard=TypedLines())  # type: ignore[arg-type]
    session.state.scores[:] = [40, 266, 348, 46]
    session.state.winner = 2  # Cy's throw: Ana (seat 0) and Cy (seat 2) win with 388
    table = players_table(session, {}, final=True)
    order = [str(cell) for cell in table.columns[1]._cells]
    assert order == ["Cy (bot)", "Ana (bot)", "Bob (bot)", "Dee (bot)"]
    assert [row.style for row in table.rows] == ["bold yellow", "bold yellow", "", ""]


def test_the_question_answered_leaves_the_screen_before_a_bot_thinks() -> None:
    # The bot after Ana thinks for a while (a searcher): her question stayed on the screen, and
    # at --pace 0 the answer typed again answered her next question unseen.
    seen: list[str] = []

    class Watching:
        def show(self, session: PlaySession) -> None:
            seen.append("show")

        def say(self, text: str) -> None:
            pass

        def ask(self, session: PlaySession, decision: Any, options: Any) -> None:
            seen.append("ask")

        def voice(self, seat: int, status: str) -> None:
            pass

    class Thinking(FixedBot):
        def act(self, state: GameState, decision: Any) -> Any:
            seen.append("bot")
            return super().act(state, decision)

    keyboard = TypedLines()
    keyboard.put("1", time.monotonic())
    closing = threading.Timer(1.5, keyboard.close)  # then Ana's next question ends the session
    closing.start()
    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("bot", Thinking(800), "bold")],
                          view=Watching(), keyboard=keyboard, dice=InjectedDice(NOTHING_TWICE), pace=0.0)
    with pytest.raises(EOFError):
        session.run()
    answered = seen.index("ask")
    assert "show" in seen[answered + 1:seen.index("bot", answered)]


def test_a_player_renamed_while_asked_is_named_anew_in_the_question() -> None:
    # A phone took Ana's seat naming her Zoé while her question was up: the players' table said
    # Zoé, the question pane « Ana: roll the dice » until she answered.
    players = [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(1200))]
    renamed = threading.Event()

    def seats_changed() -> bool:
        if not renamed.is_set():
            return False
        renamed.clear()
        return True

    def build(view: TableView, keyboard: TypedLines) -> PlaySession:
        return PlaySession(load_ruleset("basic"), players, view=view, keyboard=keyboard,
                           dice=InjectedDice(NOTHING_TWICE), setup={"scores": [0, 300]}, seats_changed=seats_changed)

    async def script(app: TableApp, pilot: Pilot) -> None:
        await until(pilot, app, "Ana: roll the dice")
        players[0].name = "Zoé"
        renamed.set()
        screen = await until(pilot, app, "Zoé: roll the dice")
        assert "Ana: roll the dice" not in screen

    drive(build, script)


@pytest.mark.parametrize("voices", [False, True])
def test_the_stakes_warning_is_for_voices_not_for_phones_that_only_tap(tmp_path: Path, voices: bool,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # A table whose Grelottine stakes reach 171 (past the 120 the voice hears): the warning that
    # a stake must then be typed was printed for a web table without any voice (no model).
    from voice.model import packaged_model_path

    monkeypatch.setenv("CDC_WEB_DIR", str(tmp_path / "certs"))
    monkeypatch.delenv("CDC_VOSK_MODEL", raising=False)
    text = (ROOT / "configs" / "rules" / "classic.yaml").read_text(encoding="utf-8")
    assert "    chouette: 33%" in text
    halved = tmp_path / "halved.yaml"
    halved.write_text(text.replace("    chouette: 33%", "    chouette: 50%"), encoding="utf-8")
    # The phones' voices: the Korean test model and lexicon stand in for the French ones.
    model = ["--model", str(packaged_model_path()), "--lexicon", str(ROOT / "tests" / "voice" / "data" / "ko.yaml")]
    table, said = prepare(["--humans", "Ana", "--bots", "bold", "--ruleset", str(halved), "--web", "--no-screen",
                           "--port", "0", "--host", "127.0.0.1", *(model if voices else [])])
    try:
        assert ("the phones play by tapping only" in said) is not voices, said
        assert ("stakes up to 171 can be asked" in said) is voices, said
    finally:
        table.server.stop()
