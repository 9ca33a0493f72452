"""The live table on a small screen, and what its panes and typed lines say at some moments:
a Bleu-Rouge bet typed as said, several humans racing at one keyboard, the race pane's Bévue,
the pass announced at a sirop, a line typed while a bot thinks, a resume naming its humans."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

from doubles import FixedBot, Recorder
from test_table import NOTHING_TWICE, prepare, rendered, saved_game, type_line, until
from textual.pilot import Pilot
from textual.widgets import Input

from cdc_env.actions import Action, BeauSirop, BetSum, BirdBet, CoucheSirop, Pass
from cdc_env.dice import InjectedDice
from cdc_env.game import Decision, GameState
from cdc_env.rules import load_ruleset
from voice.session import PlaySession, SeatPlayer
from voice.table import TableApp, TableView, TypedLines, option_lines, question, race_panel, screen_text


def drive_at(size: tuple[int, int], build: Any, script: Any) -> TableApp:
    async def run() -> TableApp:
        app = TableApp(build)
        async with app.run_test(size=size) as pilot:
            await script(app, pilot)
        return app
    return asyncio.run(run())


def typing_line_shown(app: TableApp) -> bool:
    """Whether the line where humans type lies whole on the screen."""
    return app.screen.region.contains_region(app.query_one(Input).region)


# --- 1. a small screen: the typing line, the log and the whole question stay on it ----------


def test_at_80x24_four_players_leave_the_typing_line_the_log_and_the_question_on_screen() -> None:
    def build(view: TableView, keyboard: TypedLines) -> PlaySession:
        players = [SeatPlayer("Ana")] + [SeatPlayer(f"bot-{i}", FixedBot(1200)) for i in range(1, 4)]
        return PlaySession(load_ruleset("classic"), players, view=view, keyboard=keyboard,
                           dice=InjectedDice([1, 6, 6, 6, 3, 3, 4]))

    async def script(app: TableApp, pilot: Pilot) -> None:
        await until(pilot, app, "Ana: roll the dice")
        await pilot.pause(0.3)  # laid out again once the table is shown
        screen = screen_text(app)
        assert typing_line_shown(app) and "a number and Enter" in screen
        assert "1. roll the dice" in screen and "Enter: roll the dice" in screen  # the menu's last line
        assert app.query_one("#log").content_size.height >= 3 and "Ana starts" in screen
        assert all(f"bot-{i} (bot)" in screen for i in range(1, 4))  # the names whole, not « bo… (b… »

    drive_at((80, 24), build, script)


def test_at_80x24_a_civet_menu_longer_than_its_pane_scrolls_with_the_page_keys() -> None:
    def build(view: TableView, keyboard: TypedLines) -> PlaySession:
        return PlaySession(load_ruleset("classic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(1200))],
                           view=view, keyboard=keyboard, dice=InjectedDice([1, 6, 3, 3, 4]),
                           setup={"scores": [50, 0], "items": [{"civet": 1, "grelottine": 1}, {}]})

    async def script(app: TableApp, pilot: Pilot) -> None:
        await until(pilot, app, "1. roll the dice")
        await pilot.pause(0.3)
        assert typing_line_shown(app) and app.query_one("#log").content_size.height >= 3
        assert "6. declare a Civet on" not in screen_text(app)  # the menu's last choice, below
        await pilot.press("pagedown", "pagedown", "pagedown")  # the keys in the line where one types
        await until(pilot, app, "6. declare a Civet on")
        assert typing_line_shown(app) and app.query_one(Input).has_focus

    drive_at((80, 24), build, script)


def bleu_rouge(view: TableView, keyboard: TypedLines) -> PlaySession:
    # Ana starts (1 vs 6) and throws 3, 3, 4: a Bleu-Rouge; she bets first on the relaunch's sum.
    return PlaySession(load_ruleset("complete"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(1200))],
                       view=view, keyboard=keyboard, dice=InjectedDice([1, 6, 3, 3, 4] + [2, 5, 6, 1, 4, 5] * 5),
                       setup={"scores": [0, 300]})


def test_a_bleu_rouge_bet_shows_every_sum_and_the_number_typed_is_the_sum_as_said() -> None:
    # The menu ran off a 120x44 screen at « 14. bet on 16 »; and « 15 » typed was the 15th line,
    # the sum 17, while « quinze » said is 15.
    async def script(app: TableApp, pilot: Pilot) -> None:
        await until(pilot, app, "Ana: roll the dice")
        await type_line(pilot, app, "")
        screen = await until(pilot, app, "Ana: bet on the relaunch's sum")
        await pilot.pause(0.3)
        screen = screen_text(app)
        assert "sums: 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18" in screen
        assert "type the sum: « 15 » is « quinze »" in screen and typing_line_shown(app)
        for wrong in ("2", "19", "15 3"):
            await type_line(pilot, app, wrong)
            await until(pilot, app, f"« {wrong} »: type the sum you bet on alone, one of 3, 4, 5")
        assert app.session.state.pending is not None and app.session.state.pending.kind == "bleu_rouge_bet"
        await type_line(pilot, app, "15")
        deadline = time.monotonic() + 8
        while {"seat": 0, "action": {"kind": "bet_sum", "total": 15}} not in app.session.state.history:
            assert time.monotonic() < deadline, app.session.state.history
            await pilot.pause(0.05)

    drive_at((120, 44), bleu_rouge, script)


def test_a_bleu_rouge_bet_fits_at_80x24() -> None:
    async def script(app: TableApp, pilot: Pilot) -> None:
        await until(pilot, app, "Ana: roll the dice")
        await type_line(pilot, app, "")
        await until(pilot, app, "Ana: bet on the relaunch's sum")
        await pilot.pause(0.3)
        screen = screen_text(app)
        assert "15 16 17 18" in screen and "type the sum: « 15 » is « quinze »" in screen
        assert typing_line_shown(app)

    drive_at((80, 24), bleu_rouge, script)


def test_a_phones_choice_at_a_bleu_rouge_bet_is_still_the_options_number() -> None:
    # A phone's tap reaches the game as the option's number (voice/web/room.py): only what is
    # typed at the table's line is read as the sum.
    session = PlaySession(load_ruleset("complete"), [SeatPlayer("Ana"), SeatPlayer("Bob")],
                          view=TableView(None), keyboard=TypedLines())  # type: ignore[arg-type]
    bet = Decision(0, "bleu_rouge_bet", tuple(BetSum(t) for t in range(3, 19)))
    assert session._typed_action(bet, list(bet.options), "15")[0] == BetSum(17)
    assert session._typed_action(bet, list(bet.options), "nombre_15")[0] == BetSum(15)


# --- 2. several humans racing at one keyboard are told « ! » and their seat ------------------


def test_two_humans_racing_at_one_keyboard_are_told_to_name_their_seat_not_to_press_enter() -> None:
    def build(view: TableView, keyboard: TypedLines) -> PlaySession:
        return PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("Bob"),
                                                   SeatPlayer("bot", FixedBot(2500))],
                           view=view, keyboard=keyboard, dice=InjectedDice([1, 6, 2, 1, 1, 2, 6, 6, 6]),
                           setup={"scores": [0, 0, 300]})

    async def script(app: TableApp, pilot: Pilot) -> None:
        await until(pilot, app, "Ana: roll the dice")
        await type_line(pilot, app, "")
        await until(pilot, app, "RACE — chouette velute!")
        keys = "« ! » then your seat's number: « ! 1 » Ana, « ! 2 » Bob"
        pane = rendered(TableView._waiting(app.session))  # (the question pane, unwrapped)
        assert f"shout « pas mou le caillou » now: {keys}" in pane and "Enter" not in pane
        await type_line(pilot, app, "! 2")  # what it says does shout
        screen = await until(pilot, app, "Bob (keyboard): « pas mou le caillou »")
        # The log's line (wrapped in the log's width), said as the race opened.
        assert "RACE: chouette velute! — shout « pas mou le caillou » (« ! » then your seat's" in screen
        assert "(Enter)" not in screen

    drive_at((140, 50), build, script)


# --- 3. the race pane's Bévue is this race's ---------------------------------------------------


def test_the_race_pane_shows_no_bevue_from_before_the_race() -> None:
    session = PlaySession(load_ruleset("classic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(800))],
                          view=TableView(None), keyboard=TypedLines())  # type: ignore[arg-type]
    session.state.log.append({"type": "score", "turn": 1, "seat": 0, "points": -10, "delta": -10, "score": -10,
                              "reason": "bevue", "capped": False, "why": "false shout"})
    assert "Bévue: Ana -10" in rendered(race_panel(session))
    session.state.log.append({"type": "turn_start", "turn": 2, "seat": 1})
    session.race_log_from = len(session.state.log)  # a race begins, turns later
    session.state.log.append({"type": "race", "turn": 2, "race": "chouette_velute", "shouts": {}, "tied": []})
    assert "Bévue" not in rendered(race_panel(session))
    session.state.log.append({"type": "score", "turn": 2, "seat": 1, "points": -10, "delta": -10, "score": -10,
                              "reason": "bevue", "capped": False, "why": "false shout"})
    assert "Bévue: bot -10" in rendered(race_panel(session))  # one since it began


# --- 4. the pass announced at a sirop --------------------------------------------------------


SIROP_BET = Decision(1, "sirop_bet", (Pass(), CoucheSirop(), BeauSirop(), *(BirdBet(f) for f in range(1, 7))),
                     bevues=(Pass(), BirdBet(3)))


def test_the_silent_pass_at_a_sirop_where_it_is_announced_says_it_costs_a_bevue() -> None:
    lines = option_lines(SIROP_BET, list(SIROP_BET.options), ["Ana", "Bob"])
    assert lines[:2] == ["1. say nothing (a Bévue here)", "2. say Couche-Sirop"]
    assert "say nothing (a Bévue here)" in question("Bob", SIROP_BET, list(SIROP_BET.options))
    keep = Decision(0, "sirop", (Pass(),))
    assert option_lines(keep, [Pass()], ["Ana"]) == ["1. keep the Chouette"]  # other passes as they were


class Clock:
    t = 100.0

    def __call__(self) -> float:
        return self.t


def test_couche_sirop_typed_as_the_hint_says_it_is_the_announcement_and_no_bevue() -> None:
    # Ana throws 2, 2, 5 and sirops; Bob, asked to bet, types the words he is told to say.
    clock = Clock()
    answers = {"turn_start": [""], "buy_cul": ["2"], "sirop": ["1"], "sirop_bet": ["non", "Couche-Sirop !"]}

    class Lines:
        closed = False

        def poll(self, timeout: float) -> tuple[str, float] | None:
            clock.t += max(timeout, 0.01)
            decision = session.state.pending
            if decision is None or decision.kind == "race":
                return None
            queue = answers.get(decision.kind)
            if not queue:
                raise EOFError(decision.kind)
            return queue.pop(0), clock.t

    view = Recorder()
    session = PlaySession(load_ruleset("complete"), [SeatPlayer("Ana"), SeatPlayer("Bob")], view=view,
                          keyboard=Lines(), dice=InjectedDice([1, 6, 2, 2, 5, 3, 4, 5, 6, 1, 2, 3] * 2), clock=clock)
    try:
        session.run()
    except EOFError:
        pass
    assert {"seat": 1, "action": {"kind": "couche_sirop"}} in session.state.history
    assert not [e for e in session.state.log if e["type"] == "score" and e["reason"] == "bevue"]
    refused = next(line for line in view.said if "« couche sirop »" in line)
    assert refused.endswith("; typed, « couche sirop » or 2")  # « non » is no announcement


# --- 5. a line typed while a bot thinks answers no question put after it ----------------------


def test_a_line_typed_while_a_bot_thinks_does_not_answer_the_next_question() -> None:
    # --pace 0: Ana typed « 2 » while the bot thought; her next question (buy its cul?) was
    # answered by it before it was shown. A line typed once the question is put answers it.
    keyboard = TypedLines()
    asked: list[str] = []

    class Typing(Recorder):
        def ask(self, session: PlaySession, decision: Decision, options: list[Action]) -> None:
            asked.append(decision.kind)
            if len(asked) == 1:
                keyboard.put("", time.monotonic())  # her roll, typed as it is asked
            elif len(asked) == 2:
                threading.Timer(0.3, lambda: keyboard.put("1", time.monotonic())).start()
            else:
                keyboard.close()

    class Thinking(FixedBot):
        def act(self, state: GameState, decision: Any) -> Any:
            keyboard.put("2", time.monotonic())  # typed while it thinks
            time.sleep(0.2)
            return super().act(state, decision)

    view = Typing()
    session = PlaySession(load_ruleset("classic"), [SeatPlayer("Ana"), SeatPlayer("bot", Thinking(800), "bold")],
                          view=view, keyboard=keyboard, dice=InjectedDice(NOTHING_TWICE), pace=0.0)
    try:
        session.run()
    except EOFError:
        pass
    assert asked[:2] == ["turn_start", "buy_cul"]
    ana = [entry["action"] for entry in session.state.history if entry["seat"] == 0]
    assert ana == [{"kind": "roll"}, {"kind": "buy_cul"}]  # the « 1 » typed after it, not the « 2 » before
    assert "« 2 » ignored: typed before this question was put; type it again" in view.said


# --- 6. --resume with --bots alone keeps the save's humans' names -----------------------------


def test_resume_with_bots_alone_keeps_the_saves_humans(tmp_path: Path) -> None:
    app, said = prepare(["--keyboard", "--resume", str(saved_game(tmp_path)), "--bots", "bold"])
    assert isinstance(app, TableApp), said
    assert [(p.name, p.human) for p in app.session.players] == [("Ana", True), ("bold-1", False)]
