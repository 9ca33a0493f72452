"""The live table of `scripts/play.py`: a full-screen Textual app around a PlaySession.

    ┌ dice (large) ─────────┐┌ players: seat, score, items, voice ┐
    ├ the question, numbered options ─────┐┌ race: shouts in ms, who won and why ┐
    ├ the event log (scrolls) ────────────────────────────────────────────────────┤
    └ the line where humans type (Enter alone: the only choice, or a race shout)  ┘

The session runs on a thread of its own, as it does at a terminal; what it shows reaches the
screen through `TableView` (the session's View), and what is typed reaches it through
`TypedLines` (the session's keyboard), each line with the moment Enter was pressed.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Sequence
from typing import Any

from rich import box
from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import Footer, Header, Input, RichLog, Static

from cdc_env.actions import (
    BIRDS,
    Action,
    BeauSirop,
    BetOnSuccess,
    BetSum,
    BirdBet,
    BuyCul,
    ChallengeGrelottine,
    ChallengeSoufflette,
    CoucheSirop,
    DeclareCivet,
    KeepDice,
    Pass,
    Roll,
    Shout,
    Sirop,
    UseBoucliette,
    UseGrelottine,
)
from cdc_env.game import Decision, GameState, turns_played
from cdc_env.play import bevue_words, describe_event, words
from cdc_env.rulebook.races import LAST_SHOUTER_LOSES
from voice.session import KEYBOARD_ONLY, TAKE_BACK, PlaySession, shout_keys, typed_number

ITEM_MARKS = {"grelottine": "Grelottine", "civet": "Civet", "boucliette": "Boucliette", "flan": "Flan"}

# What each kind of action does, as a question names it.
VERBS: dict[type[Action], str] = {
    Roll: "roll the dice", DeclareCivet: "declare a Civet", UseGrelottine: "use your Grelottine",
    BuyCul: "buy the cul (the third die)", Sirop: "sirop the odd die", BirdBet: "bet a bird on the sirop die",
    BeauSirop: "say Beau-Sirop", CoucheSirop: "say Couche-Sirop", BetSum: "bet on the relaunch's sum",
    ChallengeSoufflette: "challenge a player to a Soufflette", KeepDice: "choose the dice to keep",
    ChallengeGrelottine: "challenge the thrower to a Grelottine", UseBoucliette: "cancel it with your Boucliette",
    BetOnSuccess: "bet on its success", Shout: "shout",
}
# Passing means something else at each moment.
PASS_WORDS = {"sirop": "keep the Chouette", "claim": "say nothing",
              "soufflette_keep": "throw all three again"}
# The house rules' decisions are answered "yes" (BetOnSuccess) or passed (docs/rules.md, House rules).
HOUSE_YES = {"verdier_bet": "bet « Vert-Linette ! » (on 2, 4, 6)", "civet_double": "double the Civet with yours",
             "attrape_oiseau": "catch the bird (take the sirop over)",
             "flan_use": "flan the thrower (« Tatan elle fait des Flans ! »)"}

PIPS = {1: ["   ", " ● ", "   "], 2: ["●  ", "   ", "  ●"], 3: ["●  ", " ● ", "  ●"],
        4: ["● ●", "   ", "● ●"], 5: ["● ●", " ● ", "● ●"], 6: ["● ●", "● ●", "● ●"]}


def verb(action: Action, decision: Decision) -> str:
    if isinstance(action, Pass):
        if action in decision.bevues:  # (the pass is announced here: « Couche-Sirop »)
            return "say nothing (a Bévue here)"
        return PASS_WORDS.get(decision.kind, "pass")
    if isinstance(action, Roll) and decision.kind == "challenge_roll":
        return "roll the challenge throw"
    if isinstance(action, BetOnSuccess) and decision.kind in HOUSE_YES:
        return HOUSE_YES[decision.kind]
    return VERBS.get(type(action), action.kind)


def question(name: str, decision: Decision, options: Sequence[Action]) -> str:
    """`Ana: roll the dice` — only what is possible now, from the decision's own options."""
    kinds = list(options) + ([decision.staked(*_first_stake(decision))] if decision.staked else [])
    verbs = list(dict.fromkeys(verb(a, decision) for a in kinds))
    return f"{name}: {', '.join(verbs[:-1])} or {verbs[-1]}" if len(verbs) > 1 else f"{name}: {verbs[0]}"


def _first_stake(decision: Decision) -> tuple[str, int]:
    name, stakes = decision.stakes[0]
    return name, stakes.start


def option_label(action: Action, decision: Decision, names: Sequence[str]) -> str:
    if isinstance(action, BirdBet):
        return f"bet {BIRDS[action.face - 1].capitalize()} ({action.face})"
    if isinstance(action, KeepDice):
        return f"keep {' '.join(map(str, action.keep))}" if action.keep else "throw all three again"
    if isinstance(action, BetSum):
        return f"bet on {action.total}"
    if isinstance(action, Shout):
        return f"shout « {words(action.phrase)} »"
    if isinstance(action, ChallengeSoufflette):
        return f"challenge {names[action.target]} to a Soufflette"
    return verb(action, decision)


def bet_sums(decision: Decision, options: Sequence[Action]) -> list[int] | None:
    """At a Bleu-Rouge bet, the sums that may be bet on: typed, a number there is the sum (3..18),
    as « quinze » said is, not a menu line (« 15 » was the 15th line, the sum 17). None elsewhere."""
    if decision.kind != "bleu_rouge_bet":
        return None
    return [a.total for a in options if isinstance(a, BetSum)]


def option_lines(decision: Decision, options: Sequence[Action], names: Sequence[str]) -> list[str]:
    lines = [f"{i}. {option_label(a, decision, names)}" for i, a in enumerate(options, 1)]
    for j, (combination, stakes) in enumerate(decision.stakes, len(options) + 1):
        what = verb(decision.staked(combination, stakes.start), decision)  # type: ignore[misc]
        lines.append(f"{j}. {what} on {words(combination)}, stake {stakes.start}..{stakes.stop - 1}"
                     f"  — type « {j} {stakes.stop - 1} »")
    return lines


def menu(lines: list[str]) -> RenderableType:
    """The options, in as many columns as the pane's width takes where each is short (a sirop's
    birds): one a line, a long menu ran off a small screen."""
    if len(lines) > 4 and max(map(len, lines)) <= 40:
        return Columns([Text(line) for line in lines], padding=(0, 3), column_first=True)
    return Text("\n".join(lines))


def dice_art(dice: Sequence[int]) -> list[str]:
    """The dice drawn large, side by side (five lines)."""
    rows = ["", "", "", "", ""]
    for face in dice:
        art = ["┌───────┐", *(f"│  {row}  │" for row in PIPS[face]), "└───────┘"]
        rows = [f"{row} {line}" if row else line for row, line in zip(rows, art, strict=True)]
    return rows


def dice_panel(state: GameState, names: Sequence[str]) -> RenderableType:
    table = state.table
    if not table.dice:
        return Text("no dice on the table yet", style="dim")
    art = Text("\n".join(dice_art(table.dice)), style="bold")
    lines = [art]
    owner = f"{names[table.thrower]}'s throw" if table.thrower is not None else "the throw"
    what = f": {words(table.combination)}" if table.combination else ""
    lines.append(Text(f"{owner}{what}", style="bold cyan"))
    if table.civet:
        lines.append(Text(f"Civet: {words(table.civet['combination'])} for {table.civet['stake']}"))
    if table.challenge:
        c = table.challenge
        lines.append(Text(f"Grelottine: {names[c['challenger']]} → {names[c['challenged']]}, "
                          f"{words(c['combination'])} for {c['stake']}"))
    if table.sirop_bets:
        bets = ", ".join(f"{names[s]}: {BIRDS[f - 1]}" for s, f in table.sirop_bets.items())
        lines.append(Text("bird bets: " + bets))
    return Group(*lines)


def players_table(session: PlaySession, voices: dict[int, str], final: bool = False) -> Table:
    state = session.state
    # No outer edge (two rows fewer on a small screen), and the names whole: squeezed into a
    # narrow pane, every bot was « bo… (b… ». Items and voice wrap instead.
    table = Table(expand=True, title="final table" if final else None, box=box.HEAVY_HEAD, show_edge=False)
    longest = max((len(p.name) + (0 if p.human else 6) for p in session.players), default=6)
    table.add_column("seat", no_wrap=True)
    table.add_column("player", no_wrap=True, min_width=min(longest, 24))
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("items", ratio=1)
    # The voices' column where some human has a microphone: « keyboard only » on every row said nothing.
    heard = any(voices.get(seat, KEYBOARD_ONLY) != KEYBOARD_ONLY
                for seat, player in enumerate(session.players) if player.human)
    if heard:
        table.add_column("voice", ratio=1)
    # The final table as the game was won: a team's sum first at a Doublette, and both of the
    # winning pair marked (the summary said « Ana and Cy win as a team » above Cy alone marked).
    winners = state.teams[state.winner] if final and state.winner is not None else ()
    order = sorted(range(state.players), key=lambda s: (-sum(state.scores[m] for m in state.teams[s]),
                                                        -state.scores[s], s)) if final else range(state.players)
    for seat in order:
        player = session.players[seat]
        items = ", ".join(ITEM_MARKS.get(i, i) for i, n in state.items[seat].items() if n)
        who = player.name if player.human else f"{player.name} (bot)"
        turn = seat == state.turn_seat and not final
        voice = voices.get(seat, KEYBOARD_ONLY) if player.human else ""
        # Text: a name is shown as typed, never read as markup ('[/x]' raised MarkupError).
        table.add_row(f"{'▶' if turn else ' '}{seat + 1}", Text(who), str(state.scores[seat]), items,
                      *([voice] if heard else []), style="bold yellow" if turn or seat in winners else "")
    return table


def _last_index(log: list[dict[str, Any]], wanted: Callable[[dict[str, Any]], bool]) -> int | None:
    """The index of the log's last event that is `wanted`: read from the end, as the panel is
    redrawn after every move of a game whose log only grows."""
    return next((i for i in range(len(log) - 1, -1, -1) if wanted(log[i])), None)


def race_panel(session: PlaySession) -> RenderableType:
    """The last race: each shout with its onset, then who won or lost and why (and Bévues)."""
    names = [p.name for p in session.players]
    log = session.state.log
    lines: list[Text] = []
    for shout in sorted(session.race_now, key=lambda s: s.onset_ms):
        lines.append(Text(f"{shout.onset_ms:6.0f} ms  {names[shout.seat]} « {words(shout.phrase)} »"
                          f"  ({shout.by})"))
    last_race = _last_index(log, lambda e: e["type"] == "race")
    if last_race is not None and last_race < session.race_log_from:
        last_race = None  # the race before: not the verdict of the one under way (nor its Bévues)
    if last_race is not None:  # (its verdict also where nobody shouted: "nobody shouted in time")
        # Who was first (or, in a Suite, last) in the engine's own words.
        lines.insert(0, Text(describe_event(log[last_race], names).strip(), style="bold"))
        for later in log[last_race + 1:]:
            if later["type"] not in ("score", "item"):
                break
            lines.append(Text(describe_event(later, names).strip(), style="yellow"))
    false = _last_index(log, lambda e: e["type"] == "false_shout")
    if false is not None and false > (last_race if last_race is not None else session.race_log_from - 1):
        event = log[false]
        lines.append(Text(f"false shout: {names[event['seat']]} « {words(event['phrase'])} » "
                          f"with no race on", style="bold"))
        if not session.rules.bevue.enabled:
            lines.append(Text(f"no Bévue in the {session.rules.name} rules", style="dim"))
    last_bevue = _last_index(log, lambda e: e["type"] == "score" and e["reason"] == "bevue")
    if last_bevue is not None and last_bevue >= session.race_log_from:  # this race's, or since it began
        last = log[last_bevue]
        lines.append(Text(f"Bévue: {names[last['seat']]} {last['delta']:+d} — {bevue_words(last.get('why', ''))}",
                          style="bold red"))
    if lines:
        return Group(*lines)
    pending = session.state.pending
    if pending is not None and pending.kind == "race":
        return Text(f"{words(pending.reason)}: the shouts appear here as they come", style="bold")
    return Text("no race yet: shouts appear here with their onsets", style="dim")


def after_the_end(line: str) -> str | None:
    """What a line meant for the game says once the game is over (a late friend's `+ Name`, a
    take-back): queued for the game, it was dropped by `again`, a late friend never seated."""
    line = line.strip()
    if line.startswith("+") or line == TAKE_BACK:
        return "the game is over: type « again » for the next one, then « + Name » there"
    return None


def summary(session: PlaySession) -> str:
    """Three short lines at the end of a game: the winner, the races won, the Bévues."""
    state = session.state
    names = [p.name for p in session.players]
    if state.winner is None:
        head = f"No winner after {turns_played(state)} turns."
    elif len(team := state.teams[state.winner]) > 1:  # the Doublette: the team's sum won
        head = (f"{' and '.join(names[s] for s in team)} win as a team with {state.team_score(state.winner)} "
                f"points after {state.turn_number} turns.")
    else:
        head = f"{names[state.winner]} wins with {state.scores[state.winner]} points after {state.turn_number} turns."
    won = [0] * state.players
    bevues = [0] * state.players
    for event in state.log:
        # A Suite's `tied` is its loser: only races won by the first shouter are counted.
        if event["type"] == "race" and len(event["tied"]) == 1 and event["race"] not in LAST_SHOUTER_LOSES:
            won[event["tied"][0]] += 1
        if event["type"] == "score" and event["reason"] == "bevue":
            bevues[event["seat"]] += 1
    races = ", ".join(f"{names[s]} {n}" for s, n in enumerate(won) if n) or "none"
    faults = ", ".join(f"{names[s]} {n}" for s, n in enumerate(bevues) if n) or "none"
    return f"{head}\nRaces won: {races}.\nBévues: {faults}."


def new_game_line(session: PlaySession) -> Text:
    """What the host's screen says as the next game at the table begins (`again`)."""
    where = f", saved in {session.save_path}" if session.save_path is not None else ""
    return Text(f"——— a new game, the same players{where} ———", style="bold")


class TypedLines:
    """The session's keyboard: lines typed in the app, each with the moment Enter was pressed."""

    def __init__(self) -> None:
        self.lines: queue.Queue[tuple[str, float]] = queue.Queue()
        self.closed = False

    def put(self, text: str, at: float) -> tuple[str, float]:
        line = (text, at)
        self.lines.put(line)
        return line

    def withdraw(self, line: tuple[str, float]) -> bool:
        """Takes a line back if it is not read yet (a phone's answer to a question the game
        answered otherwise meanwhile); whether it was."""
        with self.lines.mutex:
            try:
                self.lines.queue.remove(line)
            except ValueError:
                return False
            return True

    def poll(self, timeout: float) -> tuple[str, float] | None:
        if self.closed:
            raise EOFError("the table was closed")
        try:
            return self.lines.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None

    def close(self) -> None:
        self.closed = True


class TableView:
    """The session's View: builds what to show on the session's thread, hands it to the app."""

    def __init__(self, app: TableApp) -> None:
        self.app = app
        self.voices: dict[int, str] = {}
        self.logged = 0
        self._asked: tuple[Decision, list[Action]] | None = None  # the question last put, to draw again
        # The question put and not yet answered (read on the app's thread: what a line typed answers).
        self.asking: tuple[Decision, list[Action]] | None = None

    def _post(self, update: Callable[..., None], *args: Any) -> None:
        if self.app.keyboard.closed:
            raise EOFError("the table was closed")  # stops the session, between two moves
        try:
            self.app.call_from_thread(update, *args)
        except (RuntimeError, NoMatches):  # the app is closing (its widgets already gone): nothing more to show
            pass

    def show(self, session: PlaySession) -> None:
        names = [p.name for p in session.players]
        state = session.state
        lines = [describe_event(e, names) for e in state.log[self.logged:]]
        self.logged = len(state.log)
        if self.asking is not None and state.pending != self.asking[0]:
            self.asking = None  # answered (or the game moved on): a line typed now is for no question shown
        title = f"{state.rules.name}, turn {state.turn_number}"
        self._post(self.app.show_table, title, dice_panel(state, names), players_table(session, self.voices),
                   race_panel(session), lines)
        waiting = self._waiting(session)
        if waiting is not None:
            self._post(self.app.show_question, waiting)
        elif self._asked is not None and session.state.pending == self._asked[0]:
            # The question put, drawn again: its player may have been renamed meanwhile (a phone
            # that took the seat named them), and the pane named them as they were.
            self._post(self.app.show_question, self._question_body(session, *self._asked))

    @staticmethod
    def _waiting(session: PlaySession) -> RenderableType | None:
        """What the question pane says when no human is being asked: a race, or a bot's move."""
        decision = session.state.pending
        if decision is None or decision.seat is None:
            return None
        if decision.kind == "race":
            answers = session.state.table.race_answers
            humans = [s for s in answers if session.players[s].human]
            if not humans:
                return Text(f"the bots race: {words(decision.reason)}", style="bold")
            # Enter alone shouts for the only human racing; several at one keyboard name their seat.
            keys = shout_keys(humans, [p.name for p in session.players])
            how = f"{keys or 'Enter'}, or say it" if session.listener is not None else keys or "press Enter"
            # Each human's own phrase (a Suite Velutée's thrower says another than the others).
            phrases = {answers[s][0] for s in humans}
            if len(phrases) == 1:
                shout = f"shout « {words(phrases.pop())} » now: {how}"
            else:
                named = ", ".join(f"{session.players[s].name} « {words(answers[s][0])} »" for s in humans)
                shout = f"shout now ({how}): {named}"
            return Group(Text(f"RACE — {words(decision.reason)}!", style="bold red"), Text(shout))
        player = session.players[decision.seat]
        if not player.human:
            return Text(f"{player.name} is playing…", style="dim")
        return None

    def say(self, text: str) -> None:
        self._post(self.app.log_line, Text(text, style="cyan"))

    def ask(self, session: PlaySession, decision: Decision, options: list[Action]) -> None:
        self._asked = self.asking = (decision, options)
        self._post(self.app.show_question, self._question_body(session, decision, options))

    @staticmethod
    def _question_body(session: PlaySession, decision: Decision, options: list[Action]) -> RenderableType:
        assert decision.seat is not None
        names = [p.name for p in session.players]
        asked = Text(question(names[decision.seat], decision, options), style="bold")
        sums = bet_sums(decision, options)
        if sums is not None:
            return Group(asked, Text("sums: " + " ".join(map(str, sums))),
                         Text("type the sum: « 15 » is « quinze »", style="dim"))
        lines = option_lines(decision, options, names)
        hint = ("Enter: " + option_label(options[0], decision, names)) if len(lines) == 1 \
            else "type a number, then Enter"
        return Group(asked, menu(lines), Text(hint, style="dim"))

    def typed(self, text: str) -> tuple[str, str | None]:
        """A line typed, as the game is to read it, or why it is refused: at a Bleu-Rouge bet put,
        a number is the sum bet on, handed on in the voice's words for it (« nombre_15 »: the sum
        whatever the menu; a phone's choice stays the option's number)."""
        asking = self.asking
        sums = bet_sums(*asking) if asking is not None else None
        words = text.split()
        if sums is None or not words or not words[0].isdecimal():
            return text, None
        total = typed_number(words[0])
        if len(words) > 1 or total not in sums:
            return text, f"« {text} »: type the sum you bet on alone, one of {', '.join(map(str, sums))}"
        return f"nombre_{total}", None

    def voice(self, seat: int, status: str) -> None:
        self.voices[seat] = status
        self._post(self.app.show_players, players_table(self.app.session, self.voices))


LOG_ROWS = 5  # the log's height at least, its borders included: the last few things that happened


class TableArea(Vertical):
    """Everything above the line where humans type: its height is shared out anew as the terminal's
    changes (`TableApp.fit`)."""

    def on_resize(self) -> None:
        if isinstance(self.app, TableApp):
            self.app.fit()


class TopRow(Horizontal):
    """The dice and the players: as their height changes, so does the question's room (`TableApp.fit`)."""

    def on_resize(self) -> None:
        if isinstance(self.app, TableApp):
            self.app.fit()


class TableApp(App[GameState | None]):
    """The whole table on one screen; `build` makes the session from the app's view and keyboard."""

    # The line where humans type has its rows first (below `#table`, whose height is what is
    # left), and the log keeps LOG_ROWS: on a small screen (80x24) the question and the players
    # pushed both off it. The top takes at most its share, the question what is left (`fit`);
    # past it, each scrolls (a long menu is laid out in columns first: `menu`).
    CSS = """
    #table { height: 1fr; }
    #top { height: auto; max-height: 45%; }
    #dice { width: 33; height: auto; border: round $accent; padding: 0 1; }
    #players { width: 1fr; height: auto; max-height: 100%; border: round $accent; }
    #middle { height: auto; }
    #question, #race { height: auto; max-height: 100%; }
    #question-body, #race-body { min-height: 4; }
    #question { width: 1fr; border: round $success; padding: 0 1; }
    #race { width: 1fr; border: round $warning; padding: 0 1; }
    #log { height: 1fr; min-height: 5; border: round $secondary; }  /* LOG_ROWS */
    """
    BINDINGS = [Binding("ctrl+c", "quit", "leave (the game is kept with --save)", priority=True),
                Binding("ctrl+q", "quit", "leave", priority=True),
                # A menu longer than its pane scrolls, and the keys stay in the line where one types.
                Binding("pageup", "scroll_question(-1)", "menu up", show=False),
                Binding("pagedown", "scroll_question(1)", "menu down", show=False)]

    def __init__(self, build: Callable[[TableView, TypedLines], PlaySession],
                 command: Callable[[str], RenderableType | None] | None = None,
                 again: Callable[[PlaySession], PlaySession] | None = None) -> None:
        """`command`: offered each typed line first; a line it answers (the answer is shown in
        the log) is the host's, not the game's (the web table's `phone 2`). `again`: the next
        game at this table from the one just over, played when `again` is typed after its end."""
        super().__init__()
        self.command, self.again = command, again
        self.keyboard = TypedLines()
        self.view = TableView(self)
        self.session = build(self.view, self.keyboard)
        self.error: BaseException | None = None
        self.final: GameState | None = None  # the finished game, once it is over
        self._middle_rows = 0  # the question's and race's height at most (`fit`)

    def compose(self) -> ComposeResult:
        yield Header()
        with TableArea(id="table"):
            with TopRow(id="top"):
                yield Static(id="dice")
                with VerticalScroll(id="players"):
                    yield Static(id="players-table")
            with Horizontal(id="middle"):
                with VerticalScroll(id="question"):
                    yield Static(id="question-body")
                with VerticalScroll(id="race"):
                    yield Static(id="race-body")
            yield RichLog(id="log", wrap=True, markup=False, highlight=False)
        yield Input(id="entry", placeholder=self.placeholder)
        yield Footer()

    @property
    def placeholder(self) -> str:
        phones = " · « phone 2 »: seat 2 to a new phone (theirs is lost)" if self.command is not None else ""
        return ("a number and Enter · Enter alone: the only choice, or your shout in a race · « ! » shouts a race "
                "phrase at any moment · « - »: takes back a shout or an answer the microphone misheard · « + Name »: "
                "a late friend joins (chante_sloubi)" + phones)

    def on_mount(self) -> None:
        self.title = "Cul de Chouette"
        self.query_one("#dice", Static).border_title = "dice"
        self.query_one("#players").border_title = "players"
        self.query_one("#question").border_title = "your move"
        self.query_one("#race").border_title = "race"
        self.query_one("#log", RichLog).border_title = "what happened"
        self.query_one(Input).focus()
        self.run_worker(self._play, thread=True, name="session")

    def _play(self) -> None:
        try:
            state = self.session.run()
        except EOFError:
            return  # the table was closed; the save (if any) has every move
        except Exception as error:  # noqa: BLE001 - shown, then the app closes with it
            self.error = error
            self.call_from_thread(self.exit, None)
            return
        try:
            self.call_from_thread(self.game_over, state)
        except (RuntimeError, NoMatches):  # closed as the game ended: its save holds the end
            pass

    def on_input_submitted(self, event: Input.Submitted) -> None:
        at = time.monotonic()  # Enter's moment, before anything else: a race shout's onset
        answer = self.command(event.value) if self.command is not None else None
        if answer is not None:
            self.query_one("#log", RichLog).write(answer)
        elif self.final is not None and self.again is not None and event.value.strip().casefold() == "again":
            self.play_again()
        elif self.final is not None and (said := after_the_end(event.value)) is not None:
            self.log_line(Text(said, style="yellow"))
        else:
            line, refused = self.view.typed(event.value)
            if refused is not None:
                self.log_line(Text(refused, style="yellow"))
            else:
                self.keyboard.put(line, at)
        event.input.clear()

    def play_again(self) -> None:
        """The next game, the same players at the same screens; this one's log stays above it."""
        assert self.again is not None
        try:
            session = self.again(self.session)
        except (OSError, ValueError) as error:  # its save cannot be made or locked: said, this table stays
            self.log_line(Text(f"no new game: {error}", style="red"))
            return
        self.session, self.final = session, None
        self.view.logged, self.view.voices = 0, {}
        self.log_line(new_game_line(session))
        self.query_one("#question").border_title = "your move"
        self.query_one(Input).placeholder = self.placeholder
        self.run_worker(self._play, thread=True, name="session")

    def action_scroll_question(self, pages: int) -> None:
        pane = self.query_one("#question", VerticalScroll)
        if pages > 0:
            pane.scroll_page_down()
        else:
            pane.scroll_page_up()

    def fit(self) -> None:
        """The question and race panes get what the top leaves above the log's LOG_ROWS (called
        as the table's or the top's height changes: its dice and players change as the game goes)."""
        try:
            table = self.query_one("#table").size.height
            room = max(table - self.query_one("#top").outer_size.height - LOG_ROWS, 3)
            panes = [self.query_one("#middle"), self.query_one("#question-body"), self.query_one("#race-body")]
        except NoMatches:  # closing
            return
        # Once laid out, and only when it changes: each setting lays the screen out again.
        if table and room != self._middle_rows:
            self._middle_rows = room
            panes[0].styles.max_height = room
            for body in panes[1:]:
                # A few rows even for a short question, where the screen has them: a pane the
                # height of its text showed a longer question's first line alone for a moment.
                body.styles.min_height = min(4, room - 2)

    def on_unmount(self) -> None:
        self.keyboard.close()

    # ---------------------------------------------------------------- called from the session

    def show_table(self, title: str, dice: RenderableType, players: Table, race: RenderableType,
                   lines: list[str]) -> None:
        self.sub_title = title
        self.query_one("#dice", Static).update(dice)
        self.query_one("#players-table", Static).update(players)
        self.query_one("#race-body", Static).update(race)
        log = self.query_one("#log", RichLog)
        for line in lines:
            log.write(Text(line))

    def show_players(self, players: Table) -> None:
        self.query_one("#players-table", Static).update(players)

    def log_line(self, text: Text) -> None:
        self.query_one("#log", RichLog).write(text)

    def show_question(self, body: RenderableType) -> None:
        self.query_one("#question-body", Static).update(body)

    def game_over(self, state: GameState) -> None:
        self.query_one("#players-table", Static).update(players_table(self.session, self.view.voices, final=True))
        self.query_one("#question").border_title = "game over"
        more = " · « again »: another game, the same players" if self.again is not None else ""
        self.query_one("#question-body", Static).update(Group(Text(summary(self.session), style="bold green"),
                                                              Text(f"Ctrl+Q leaves the table{more}.", style="dim")))
        self.query_one(Input).placeholder = f"the game is over · Ctrl+Q leaves{more}"
        self.final = state


def screen_text(app: App[Any]) -> str:
    """The screen as plain text, as a person sees it (for tests and bug reports)."""
    import io

    from rich.console import Console

    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system=None, record=True, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()
