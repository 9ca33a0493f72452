"""Play Cul de Chouette aloud (or at the keyboard) against the bots.

    python scripts/play.py --humans Alice --bots prudent bold          # voice, keyboard too
    python scripts/play.py --keyboard --humans Alice Bob --bots bold   # no microphone

The game runs on a full-screen table: the dice, the players (score, items, voice status), the
question with numbered options, the last race (each shout's onset in ms, who won or lost and
why) and the log. Humans answer by voice (each with a microphone or a channel: --devices) and
always also by keyboard: type the number of a choice (Enter alone takes the only one), or words
such as `oui`, `non`, `je_sirote`. In a race press Enter the moment you would shout (or say the
phrase): who was first or last is decided by when each shout began. `!` shouts a race phrase at
any other moment (`! 2` for seat 2, `! g` for « grelotte ça picote »): a false shout, which
costs a Bévue in rulesets with Bévues; `-` takes back the last one a microphone heard, or the
last answer it heard while only dice and bots have played since (talk it misheard: a shout as if
never said, an answer asked again, the dice that followed falling again). `+ Name` seats a late
friend as a human (the house rule chante_sloubi, on in maison: they start at ⌊(best − second) ×
round / 10⌋; `+ Name !` if they sang the Sloubi to its end), as the next turn begins. --save
keeps the game in a file after every move; --resume goes on from it (alone, with the save's
players, late friends included). Ctrl+Q leaves.

    python scripts/play.py --web --humans Ana Bob --bots champion    # phones join over Wi-Fi

--web serves the table to the phones on the local network (docs/web.md): each human opens the
printed address (or scans the QR code) on a phone, takes a seat, and plays by tapping and by
voice (the phone is the microphone: --model, the French Vosk model, for the voice; without it
the phones tap). /board shows the whole table on a TV. --no-screen runs the web table alone,
without the terminal's table (Ctrl+C stops; the save is kept); what the game says (races, a
take-back, a line refused) is printed in that terminal, where the host's lines are typed.
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import wave
from collections.abc import Callable
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.text import Text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import cdc_env.ctrl_c_at_start  # noqa: E402, F401, I001 - first: a Ctrl+C while the libraries load is one line

from agents.bots import check_table, make_bot  # noqa: E402
from cdc_env.actions import Action  # noqa: E402
from cdc_env.cli import (  # noqa: E402
    BUDGET_HELP,
    OutputError,
    budget_ms,
    by_ctrl_c,
    check_output_file,
    in_use_by_one,
    lock_path,
    named_path,
    non_negative_float,
    one_line,
    path_error,
    short_path,
)
from cdc_env.game import Decision, GameError, GameLoadError  # noqa: E402
from cdc_env.reaction import REACTION_LEVELS  # noqa: E402
from cdc_env.rules import Ruleset, RulesetError, load_ruleset  # noqa: E402
from voice.intents import check_game_lexicon  # noqa: E402
from voice.lexicon import LexiconError, load_lexicon  # noqa: E402
from voice.microphone import devices_refusal  # noqa: E402
from voice.model import ModelNotFoundError, find_model  # noqa: E402
from voice.session import (  # noqa: E402
    KeyLines,
    Listener,
    PlaySession,
    SaveError,
    SeatPlayer,
    View,
    name_refusal,
)
from voice.table import TableApp, after_the_end, new_game_line, summary  # noqa: E402

Build = Callable[..., PlaySession]
Again = Callable[[PlaySession], PlaySession]


def espeak(text: str) -> float:
    """Speaks a bot's shout without waiting; returns how long it lasts, in seconds: the speech
    made (the microphones' mask and the game's wait end with it; an estimate from its words was
    2 s short of three shouts said together)."""
    subprocess.Popen(["espeak-ng", "-v", "fr", text], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return speech_length(text)


def speech_length(text: str) -> float:
    """How long espeak-ng says `text` (made without playing it: about 50 ms)."""
    made = subprocess.run(["espeak-ng", "-v", "fr", "--stdout", text], capture_output=True, timeout=30).stdout
    with wave.open(io.BytesIO(made)) as speech:
        # (--stdout's header cannot know the length: the frames are counted to the end)
        frames = len(speech.readframes(2**31 - 1)) // (speech.getsampwidth() * speech.getnchannels())
        return frames / speech.getframerate()


def make_listener(args: argparse.Namespace, human_seats: list[int], console: Console):
    """Microphones for the humans, or None (with the reason shown) to play by keyboard."""
    from voice.live import build_listener  # voice needs vosk and sounddevice

    return build_listener(model=args.model, lexicon=args.lexicon, seats=human_seats,
                          devices=args.devices,
                          report=lambda text: console.print(f"[yellow]{escape(text)}[/yellow]", emoji=False))


def say_error(console: Console, error: object, head: str = "error:") -> None:
    """One error line. Its text is the user's (a path, a bot's name): printed as it is, never
    read as rich markup (a path with `[/x]` in it used to raise MarkupError) or emoji codes
    (`searcher:abc:` was shown as `searcher🔤`). A ruleset's several problems are `; `-joined, and
    the line is never wrapped: one line."""
    console.print(f"[red]{escape(head)}[/red] {escape(one_line(str(error)))}", highlight=False, emoji=False,
                  soft_wrap=True)


def bots_as_saved(args: argparse.Namespace, saved: dict | None) -> None:
    """The bots' reaction time and thinking budget: as given, else the saved game's (--resume
    alone brings the same bots back), else the defaults."""
    settings = (saved or {}).get("settings", {})
    if args.reaction is None:
        reaction = settings.get("reaction", "human")
        if reaction not in REACTION_LEVELS:
            levels = ", ".join(sorted(REACTION_LEVELS))
            raise GameLoadError(f"the save's bots' reaction {reaction!r} is none of {levels}; give --reaction")
        args.reaction = reaction
    if args.budget_ms is None and settings.get("budget_ms") is not None:
        try:
            args.budget_ms = budget_ms(str(settings["budget_ms"]))
        except argparse.ArgumentTypeError as error:
            raise GameLoadError(f"the save's bots' budget: {error}; give --budget-ms") from None


def lineup(args: argparse.Namespace, seed: int, saved: dict | None) -> list[SeatPlayer]:
    """The seats: --humans then --bots, or, resuming without them, the save's own line-up (with
    --bots alone, the save's humans by their names)."""
    def bot(name: str, seat: int) -> object:
        return make_bot(name, seed=f"{seed}:{seat}", reaction=args.reaction, budget_ms=args.budget_ms)

    if saved is not None and args.humans is None and args.bots is None and saved.get("lineup"):
        return [SeatPlayer(str(p["name"]), None if p["bot"] is None else bot(str(p["bot"]), seat), p["bot"] or "")
                for seat, p in enumerate(saved["lineup"])]
    if args.humans is not None:
        humans = args.humans
    elif saved is not None and saved.get("lineup"):  # --resume with --bots alone: the save's humans, not « You »
        humans = [str(p["name"]) for p in saved["lineup"] if p["bot"] is None]
    else:
        humans = ["You"]
    bots = ["champion"] if args.bots is None else args.bots
    players = [SeatPlayer(name) for name in humans]
    players += [SeatPlayer(f"{name}-{i + 1}", bot(name, i), name) for i, name in enumerate(bots)]
    return players


PACE_LIMIT = 30.0  # seconds: beyond it the table looks stuck after each bot's move (--pace 1e300 froze it)


def pace(text: str) -> float:
    """--pace: seconds from 0 to PACE_LIMIT."""
    value = non_negative_float(text)
    if value > PACE_LIMIT:
        raise argparse.ArgumentTypeError(f"{value:g}: give at most {PACE_LIMIT:g} seconds")
    return value


SAVE_LOOK_BYTES = 64 << 20  # a save is read whole to tell; a file larger than a long game's is none


def check_save(save: Path | None, resume: Path | None, overwrite: bool, locks: ExitStack) -> None:
    """--save never replaces another game's save unless --overwrite: only the game it holds
    (--resume FILE) goes on in it. The file the game writes (--save, else --resume) is locked
    in `locks` first: a game live in it refuses a second one (the two wrote over each other's
    moves). A save only read (--resume A --save B) is not: B starts as a copy of A."""
    target = save or resume
    if target is None:
        return
    if save is not None:
        check_output_file(save, "--save")
    if target.parent.is_dir():  # a --resume not there is said by its reading, in its own words
        locks.enter_context(in_use_by_one(lock_path(target), target, "play.py"))
    if save is None:
        return
    if save.exists() and not overwrite and (resume is None or save.resolve() != resume.resolve()):
        if not holds_a_game(save):  # (it said "holds another game; go on with it", which then failed)
            raise OutputError(f"--save {save}: the file exists and is no saved game (a file of yours?); save "
                              "elsewhere, or give --overwrite to replace it")
        raise OutputError(f"--save {save}: the file exists and holds another game; go on with it (--resume {save}), "
                          "save elsewhere, or give --overwrite to replace it")


def holds_a_game(path: Path) -> bool:
    """Whether `path` looks like a game play.py saved (a JSON object with the lineup)."""
    if not path.is_file():  # (a pipe there: reading it waited for a writer for ever)
        return False
    try:
        with path.open("rb") as file:
            data = json.loads(file.read(SAVE_LOOK_BYTES))
    except (OSError, ValueError):  # (UnicodeDecodeError and JSON errors are ValueErrors)
        return False
    return isinstance(data, dict) and "lineup" in data


def prepare(argv: list[str] | None, console: Console, locks: ExitStack | None = None) -> TableApp | WebTable | int:
    """The table, ready to run; or the exit status after one clear error. The save's lock is
    held in `locks` (the game's life: main's); without it, it is checked and let go."""
    if locks is None:
        with ExitStack() as checked:
            return prepare(argv, console, checked)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ruleset", default=None, help="a ruleset's name or YAML file (default: classic)")
    parser.add_argument("--house", nargs="*", default=[], metavar="RULE",
                        help="house rules to play on top of the ruleset, by name (see docs/rules.md): "
                             "--house verdier")
    parser.add_argument("--humans", nargs="*", default=None, help="names of the human players (default: You)")
    parser.add_argument("--bots", nargs="*", default=None,
                        help="bot names or model paths, one per bot seat (default: champion, the shipped "
                             "agent of the table: agents/champion.py)")
    parser.add_argument("--reaction", default=None, choices=sorted(REACTION_LEVELS),
                        help="the bots' reaction time (default human; --resume: the saved game's)")
    parser.add_argument("--budget-ms", type=budget_ms, default=None, metavar="MS", help=BUDGET_HELP)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keyboard", action="store_true", help="no microphone: play by keyboard only")
    parser.add_argument("--model", default=None, help="path of the French Vosk model (or CDC_VOSK_MODEL)")
    parser.add_argument("--lexicon", default=str(ROOT / "configs" / "voice" / "fr.yaml"))
    parser.add_argument("--devices", nargs="*", default=None,
                        help="one input per human: DEVICE or DEVICE:CHANNEL (default: the default input)")
    parser.add_argument("--speak", action="store_true", help="speak the bots' shouts with espeak-ng")
    parser.add_argument("--pace", type=pace, default=0.6,
                        help="seconds the table waits after each bot's move, unless it opened a race (0: none)")
    parser.add_argument("--save", type=named_path, default=None, help="keep the game in this file after every move")
    parser.add_argument("--resume", type=named_path, default=None,
                        help="go on with a game saved by --save (alone: with the save's players)")
    parser.add_argument("--web", action="store_true",
                        help="serve the table to phones on the local network (HTTPS; see docs/web.md)")
    parser.add_argument("--port", type=int, default=8443,
                        help="--web: the HTTPS port (the /trust page is on the next one; 0: any free port)")
    parser.add_argument("--host", default="0.0.0.0", help="--web: the address to listen on (default: all)")
    parser.add_argument("--no-screen", action="store_true",
                        help="--web: no terminal table, only the web table (Ctrl+C stops it)")
    parser.add_argument("--overwrite", action="store_true", help="--save may replace a file that holds another game")
    args = parser.parse_args(argv)
    if (args.no_screen or args.port != 8443 or args.host != "0.0.0.0") and not args.web:
        parser.error("--port, --host and --no-screen go with --web")
    if args.keyboard and args.devices is not None:  # (the table started with them unused, without a word)
        parser.error("--devices gives the humans microphones, and --keyboard plays without the host's: give one "
                     "of them")
    if args.keyboard and args.model and not args.web:
        parser.error("--model is the voices' model, and --keyboard plays without voices (with --web, the phones': "
                     "add --web); give one of them")
    if not 0 <= args.port <= 65534:
        parser.error(f"--port {args.port}: give a port from 1 to 65534 (or 0 for any free port)")
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    try:
        check_save(args.save, args.resume, args.overwrite, locks)
        saved = PlaySession.read_save(args.resume) if args.resume else None
        bots_as_saved(args, saved)
        rules = load_ruleset(args.ruleset or "classic").with_house_rules(args.house)
        if saved is not None and isinstance(saved.get("ruleset"), dict):
            # The game goes on under its own rules (--ruleset and --house are a new game's):
            # its bots are checked against those, or a model of another ruleset's table was refused.
            given = rules
            try:
                rules = Ruleset.from_dict(saved["ruleset"], source="(saved game)")
            except RulesetError as error:
                raise GameLoadError(f"saved game has a bad ruleset: {error}") from None
            # (compared as rules, not by name: the same house rules in another order are the same)
            if (args.ruleset is not None or args.house) and given.model_copy(update={"name": rules.name}) != rules:
                # It was dropped without a word: the table played other rules than asked.
                raise ValueError(f"--ruleset/--house ask for {given.name}, and the saved game plays on under its "
                                 f"own rules ({rules.name}): drop them to go on with it, or start a new game")
        players = lineup(args, seed, saved)
        if args.humans is not None:
            bots = [p.name for p in players if not p.human]
            humans = [p.name for p in players if p.human]
            for seat, name in enumerate(humans):
                if (refusal := name_refusal(name, humans[:seat] + bots)) is not None:
                    raise ValueError(f"--humans: {refusal}")
        if saved is None and (refusal := rules.players_refusal(len(players))) is not None:
            raise ValueError(f"{refusal} (--humans and --bots): change --humans or --bots")
        for player in players:
            # A bot that cannot play this table (no champion for it, a model of another size):
            # say so now, listing the tables that have one.
            check_table(player.bot, rules, len(players))
        if not args.keyboard:
            # A bad lexicon is the user's to fix, not a reason to play without voice.
            check_game_lexicon(load_lexicon(args.lexicon))
            speaking = sum(p.human for p in players)
            if speaking and (not args.web or args.devices is not None):  # the host's own microphones
                if (refusal := devices_refusal(speaking, args.devices)) is not None:
                    raise ValueError(refusal)
        if args.speak and shutil.which("espeak-ng") is None:
            # It was taken without a word: nothing spoken, and the microphones masked all the same.
            raise ValueError("--speak speaks the bots' shouts with espeak-ng, which is not installed "
                             "(Debian: apt install espeak-ng); install it or play without --speak")
        if args.model and (args.web or not args.keyboard):
            # Nor a --model that is no model folder (a typo): it was a game without voices, the
            # reason said once and soon gone (the table takes the screen; the phones just tap).
            find_model(args.model)
    except ModelNotFoundError as error:
        say_error(console, error, "error: --model:")
        return 2
    except GameLoadError as error:
        say_error(console, error, f"cannot resume {short_path(args.resume)}:")
        return 2
    except (RulesetError, LexiconError, GameError, ValueError) as error:
        say_error(console, error)
        return 2
    except OSError as error:  # a path given that the file system refuses (a name too long: --bots, --save)
        say_error(console, path_error(error))
        return 2
    human_seats = [s for s, p in enumerate(players) if p.human]
    listener = None
    # With --web the phones are the microphones; the host's own only for --devices.
    host_microphones = not args.keyboard and (not args.web or args.devices is not None)
    if host_microphones and human_seats:
        try:
            listener = make_listener(args, human_seats, console)
        except LexiconError as error:
            say_error(console, error)
            return 2
        except Exception as error:  # noqa: BLE001 - any voice failure falls back to the keyboard
            console.print(f"[yellow]voice is off: {escape(str(error))}\nPlaying by keyboard.[/yellow]",
                          emoji=False)

    if human_seats and listener is not None and not args.web:  # (--web: once the phones' voices are known)
        warn_unsayable_stakes(rules, console)

    tap_delivery_s = 0.0  # the terminal's keys arrive as they are pressed; the phones' taps travel
    if args.web:
        from voice.web.room import TAP_DELIVERY_S as tap_delivery_s

    def build(view: View, keyboard: KeyLines, listener: Listener | None = listener,
              keep: Callable[[], dict[str, Any]] | None = None,
              seats_changed: Callable[[], bool] | None = None) -> PlaySession:
        common = dict(view=view, keyboard=keyboard, listener=listener, seed=seed, pace=args.pace,
                      speak=espeak if args.speak else None, save_path=args.save or args.resume, keep=keep,
                      seats_changed=seats_changed,
                      tap_delivery_s=tap_delivery_s,
                      settings={"reaction": args.reaction, "budget_ms": args.budget_ms})
        if args.resume:
            return PlaySession.resume(args.resume, players, **common)
        return PlaySession(rules, players, **common)

    games = itertools.count(1)

    def again(last: PlaySession) -> PlaySession:
        """The next game at this table: the next seed (from --seed: each game replays), saved
        beside the last one's save (`game-2.json`: the games before are kept)."""
        save = next_save(last.save_path, locks) if last.save_path is not None else None
        session = last.rematch((seed + next(games)) % 2**32, save)
        session.save()  # at once, as the first game's: its first move may be a phone's
        return session

    if args.web:
        return web_table(args, rules, players, build, listener, console, again, saved)
    try:
        return TableApp(build, again=again)
    except GameLoadError as error:
        if listener is not None:
            listener.close()
        say_error(console, error, f"cannot resume {short_path(args.resume)}:")
        return 2


class SaidAtTheTerminal:
    """--no-screen: what the game says (a race and its shouts, a late friend seated, a false
    shout or answer taken back, a line typed and refused) printed on the host's terminal, where
    those lines are typed. The phones and the board show the table itself; without this the
    host's « - » or « + Name » got no answer at all."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def say(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, emoji=False, soft_wrap=True)
        sys.stdout.flush()

    def show(self, session: PlaySession) -> None:
        pass  # the table: on the phones and the board

    def ask(self, session: PlaySession, decision: Decision, options: list[Action]) -> None:
        pass

    def voice(self, seat: int, status: str) -> None:
        pass


class WebTable:
    """--web: the table served to the phones and the board, beside the terminal's table or
    alone (--no-screen)."""

    def __init__(self, args: argparse.Namespace, room: Any, server: Any, build: Build, listener: Any,
                 shown_host: str, again: Again) -> None:
        self.args, self.room, self.server, self.listener = args, room, server, listener
        self.shown_host, self.again = shown_host, again
        # --no-screen: the game is over (`again` typed may start the next); the next one is made.
        self.over, self.next_game = threading.Event(), threading.Event()
        self.session: PlaySession | None = None
        self.app: TableApp | None = None
        from voice.web.room import Views

        # The save keeps the room (its secret, the seats' tokens): --resume on the same port
        # is the same room, and the phones come back by themselves.
        if args.no_screen:
            self.session = build(Views(room.view, SaidAtTheTerminal(Console())), room.keys, listener, keep=room.kept,
                                 seats_changed=room.seats_changed)
        else:
            def build_both(view: View, keyboard: KeyLines) -> PlaySession:
                room.keys = keyboard  # the phones' lines join the terminal's
                return build(Views(room.view, view), keyboard, listener, keep=room.kept,
                             seats_changed=room.seats_changed)
            # `phone 2` at the terminal is the room's: a lost phone's seat given to another one.
            self.app = TableApp(build_both, command=partial(host_line, room), again=again)
            self.session = self.app.session

    def announce(self, console: Console) -> None:
        import segno

        from voice.web.server import addresses

        where = addresses(self.server, self.shown_host)
        sys.stdout.flush()
        drawn = can_draw_blocks(sys.stdout)
        if drawn:
            segno.make(where["phone"], error="m").terminal(out=sys.stdout, compact=True)
        console.print(f"[bold]phones:[/bold] {where['phone']}", highlight=False, soft_wrap=True)
        console.print(f"[bold]board:[/bold]  {where['board']}", highlight=False, soft_wrap=True)
        console.print(f"[bold]first time on a phone:[/bold] {where['trust']} (trust the table's certificate)",
                      highlight=False, soft_wrap=True)
        others = [n for n in self.server.certificates.lan if n != self.shown_host]
        if others:  # a VPN's or a second network's: the phones may be on that one
            console.print(f"this machine's other addresses: {', '.join(others)} (phones that cannot open the one "
                          f"above: --host ADDRESS)", highlight=False, soft_wrap=True)
        if not drawn:
            encoding = getattr(sys.stdout, "encoding", None) or "unknown"
            console.print(f"no QR code: this terminal's encoding ({encoding}) cannot draw it; the phones' address "
                          "above is the way in, typed into each phone's browser", highlight=False, soft_wrap=True)
        sys.stdout.flush()

    def run(self, console: Console) -> int:
        assert self.session is not None
        session = self.session
        try:
            self.server.start()
        except RuntimeError as error:
            say_error(console, error)
            return 2
        try:
            self.announce(console)
            session.save()  # the save exists from the start (the first move may be a phone's)
            if self.app is None:
                return self._run_alone(session, console)
            if sys.stdin.isatty():
                input("Scan the QR code with each phone, then press Enter to open the table… ")
            self.app.run()
            if self.app.error is not None:
                return stopped_on(self.app.error, console)
            if self.app.final is None:
                return stopped(self.app.session, console)
            return finished(self.app.session, console)  # the last game's (`again` plays more)
        except (KeyboardInterrupt, Exception) as error:  # noqa: BLE001 - a bug of ours: said in one line
            # Ctrl+C is a stop, also where it came out as another error: in a lock's wait, a
            # RuntimeError('release unlocked lock') with the KeyboardInterrupt as its context.
            if by_ctrl_c(error):
                return stopped(self.app.session if self.app is not None else self.session, console)
            return stopped_on(error, console)
        finally:
            self.server.stop()
            if self.listener is not None:
                self.listener.close()

    def _run_alone(self, session: PlaySession, console: Console) -> int:
        console.print("the web table is open; Ctrl+C stops it. Type here « phone 2 » to give seat 2 to a new "
                      "phone (theirs is lost), « + Name » to seat a late friend (chante_sloubi), « - » to take "
                      "back a false shout or an answer a phone's microphone misheard", highlight=False,
                      soft_wrap=True)
        sys.stdout.flush()
        threading.Thread(target=self._host_typing, args=(console,), daemon=True, name="host-typing").start()
        while True:
            try:
                session.run()
            except (KeyboardInterrupt, EOFError):
                return stopped(session, console)
            self.next_game.clear()
            self.over.set()  # before it is said: an `again` typed at once must find the game over
            try:  # the game is over: Ctrl+C from here on, even as its end is said, closes the table
                finished(session, console)
                console.print("the phones show the final table; type « again » here for another game with the "
                              "same players, Ctrl+C closes it", highlight=False, soft_wrap=True)
                sys.stdout.flush()
                while not self.next_game.wait(1.0):
                    pass
            except KeyboardInterrupt:
                return 0
            assert self.session is not None
            session = self.session

    def _host_typing(self, console: Console) -> None:
        """--no-screen: lines typed at the host's terminal, as on the terminal's table: the room's
        (`phone 2`) or the game's (`+ Name`; a choice, for a human playing at the laptop)."""
        # Bytes not of its encoding replaced: a line in another one ended this thread (a
        # UnicodeDecodeError), and the host could type nothing more.
        if isinstance(sys.stdin, io.TextIOWrapper):
            sys.stdin.reconfigure(errors="replace")
        if sys.stdin is None:  # started with its input closed (`0<&-`)
            console.print(Text("no terminal input: the table plays on, and nothing typed here reaches it",
                               style="yellow"), highlight=False, soft_wrap=True)
            return
        lines = iter(sys.stdin)
        while True:
            try:
                typed = next(lines, None)
            except (OSError, ValueError) as error:  # no terminal to read (`nohup … 0>&-`, a closed stdin)
                console.print(Text(f"the terminal's input cannot be read ({error.__class__.__name__}): the table "
                                   "plays on, and nothing typed here reaches it (« phone N » included)",
                                   style="yellow"), highlight=False, soft_wrap=True)
                return
            if typed is None:
                return
            self._host_line(console, typed)

    def _host_line(self, console: Console, typed: str) -> None:
        """One line typed at the host's terminal (--no-screen)."""
        at = time.monotonic()  # Enter's moment (the game's lines carry it)
        line = typed.strip()
        try:
            answer = host_line(self.room, line, draw=can_draw_blocks(sys.stdout))
            if answer is None and self.over.is_set() and line.casefold() == "again":
                answer = self._next_game()
            elif answer is None and self.over.is_set() and (said := after_the_end(line)) is not None:
                answer = Text(said, style="yellow")
        except Exception as error:  # noqa: BLE001 - a fault of ours on one line: said, the host types on
            answer = Text(f"« {line[:40]} » could not be taken ({type(error).__name__}: "
                          f"{one_line(str(error))[:120]}): type it again", style="red")
        if answer is None:
            self.room.keys.put(line, at)
        else:
            console.print(answer, highlight=False, soft_wrap=True)  # an address never cut
            sys.stdout.flush()

    def _next_game(self) -> Text:
        """--no-screen, after a game's end: the next one, the same players (run by _run_alone)."""
        assert self.session is not None
        try:
            self.session = self.again(self.session)
        except (OSError, ValueError) as error:  # its save cannot be made or locked
            return Text(f"no new game: {one_line(str(error))}", style="red")
        self.over.clear()
        self.next_game.set()
        return new_game_line(self.session)


def can_draw_blocks(stream: Any) -> bool:
    """Whether `stream` can print the QR code's block characters: a Windows console in cp1252
    (or PYTHONIOENCODING=cp1252) cannot, and segno's UnicodeEncodeError stopped the table."""
    try:
        "▀▄█".encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def netloc(address: str) -> str | None:
    """An address's host and port; None for one that is no address (a damaged save's
    "https://[bad/": urlsplit raises ValueError)."""
    from urllib.parse import urlsplit

    try:
        return urlsplit(address).netloc
    except ValueError:
        return None


def take_back_room(room: Any, kept: Any, address: str) -> str:
    """A resumed game's web room, as its save keeps it, where the phones will find it again: the
    same address (a phone's page keeps its seat's token for its own address); what is said."""
    before = kept.get("address") if isinstance(kept, dict) else None
    was_at = netloc(before) if isinstance(before, str) else None
    if was_at is None or was_at != netloc(address):
        was = one_line(before)[:80] if isinstance(before, str) and was_at is not None \
            else "an address the save does not say"
        return (f"the saved game's phones were at {was}; this table is at {address}: the phones join it again "
                "(give the same --port and --host for them to come back by themselves)")
    refusal = room.restore(kept)
    if refusal is not None:
        return f"the saved game's web table cannot be taken back ({refusal}): the phones join again"
    return "the saved game's phones come back to their seats by themselves (their pages keep trying)"


def next_save(last: Path, locks: ExitStack) -> Path:
    """The next game's save, beside the last one's: `game-2.json`, `game-3.json`… never a file
    that exists (the games before are kept) nor one another game holds; locked for its game."""
    stem, number = last.stem, 1
    if (numbered := re.fullmatch(r"(.+)-(\d{1,6})", stem)) is not None:
        stem, number = numbered[1], int(numbered[2])
    for following in range(number + 1, number + 1000):
        save = last.with_name(f"{stem}-{following}{last.suffix}")
        if save.exists():
            continue
        try:
            locks.enter_context(in_use_by_one(lock_path(save), save, "play.py"))
        except OutputError:
            continue  # another table's next game has it
        return save
    raise OutputError(f"no free name for the next game's save beside {short_path(last)}: move the saves of "
                      "earlier games away")


def host_line(room: Any, line: str, draw: bool = True) -> RenderableType | None:
    """A line typed at the terminal's table that is the web room's (`phone 2`: a lost phone's
    seat to a new one), shown with the QR code the new phone scans; None: the game's line.
    `draw` False: a terminal that cannot draw the code (`can_draw_blocks`) gets the link alone."""
    from voice.web.server import qr_rows

    answer = room.host_command(line)
    if answer is None:
        return None
    said = Text(answer.text, style="cyan")
    if answer.link is None:
        return said
    if not draw:  # (its block characters stopped a cp1252 terminal's table: UnicodeEncodeError)
        return Group(said, Text("no QR code: this terminal cannot draw it; the link above opens the seat", style="dim"))
    return Group(said, Text("\n".join(qr_rows(answer.link)), style="black on white", no_wrap=True))


def stopped_on(error: BaseException, console: Console) -> int:
    """The game's end on an exception: a save that cannot be written is the user's disk (one
    line, what the file keeps, exit 2); anything else a bug of ours, shown as it is."""
    if isinstance(error, SaveError):
        say_error(console, error)
        return 2
    say_error(console, repr(error), "the game stopped on an error:")
    return 1


def finished(session: PlaySession, console: Console) -> int:
    console.print(f"[bold green]{escape(summary(session))}[/bold green]", emoji=False)
    return 0


def stopped(session: PlaySession, console: Console) -> int:
    path = session.save_path
    # The game is saved after each move: stopped before any, there is no file to resume (or the
    # one there is the game resumed from, as it was).
    where = f" It is saved in {path}: --resume {path}" if path is not None and path.exists() else \
        " Nothing was played, so nothing new was saved." if path is not None else ""
    console.print(f"Game stopped.{escape(where)}", highlight=False, emoji=False)
    return 1


def warn_unsayable_stakes(rules: Ruleset, console: Console) -> None:
    """Where a table's stakes go past the numbers the voice hears: said once, where there are voices."""
    from voice.intents import unsayable_stakes

    if warning := unsayable_stakes(rules):
        console.print(f"[yellow]{escape(warning)}[/yellow]", highlight=False, emoji=False, soft_wrap=True)


def web_table(args: argparse.Namespace, rules: Ruleset, players: list[SeatPlayer], build: Build, host_listener: Any,
              console: Console, again: Again, saved: dict[str, Any] | None) -> WebTable | int:
    """The room, its certificates, the phones' recognisers (when the French model is there) and
    the server (bound, not yet started); or the exit status after one clear error."""
    from voice.model import load_model
    from voice.web.certs import ensure_certificates
    from voice.web.room import Listeners, Room
    from voice.web.server import WebServer, addresses

    make_recogniser = None
    try:
        model_path = find_model(args.model)  # never downloads: the phones may also just tap
        from voice.recogniser import Recogniser

        vosk_model = load_model(model_path)
        words = check_game_lexicon(load_lexicon(args.lexicon))

        def make_recogniser(clock: Callable[[int], float]) -> Recogniser:
            return Recogniser(vosk_model, words, intents=[], clock=clock, crowded=True)
    except LexiconError as error:
        say_error(console, error)
        return 2
    except (ModelNotFoundError, ImportError) as error:
        if args.model and isinstance(error, ModelNotFoundError):  # --model given: Vosk could not load it
            say_error(console, error, "error: --model:")
            return 2
        why = "no French Vosk model found" if isinstance(error, ModelNotFoundError) else f"no voice ({error})"
        console.print(f"[yellow]the phones play by tapping only: {escape(why)}; give --model or CDC_VOSK_MODEL "
                      f"for their voices[/yellow]", highlight=False)
    if any(p.human for p in players) and (make_recogniser is not None or host_listener is not None):
        warn_unsayable_stakes(rules, console)
    try:
        # --host names the address the phones are shown: the certificate must name it too.
        certificates = ensure_certificates(also=[args.host] if args.host not in ("0.0.0.0", "") else None)
        room = Room(players, make_recogniser=make_recogniser)
        server = WebServer(room, certificates, args.host, args.port)
    except OSError as error:
        say_error(console, error)
        return 2
    listeners = [x for x in (host_listener, room.listener) if x is not None]
    listener = Listeners(*listeners, report=room.view.say) if len(listeners) > 1 else \
        (listeners[0] if listeners else None)
    lan = certificates.lan
    shown = args.host if args.host not in ("0.0.0.0", "") else (lan[0] if lan else "127.0.0.1")
    if saved is not None and "web" in saved:
        console.print(escape(take_back_room(room, saved["web"], addresses(server, shown)["phone"])), style="yellow",
                      highlight=False, soft_wrap=True)
    server.join_at(shown)  # the board shows the way in while a seat is free (the secret taken back)
    try:
        return WebTable(args, room, server, build, listener, shown, again)
    except GameLoadError as error:
        server.stop()
        say_error(console, error, f"cannot resume {short_path(args.resume)}:")
        return 2


def main(argv: list[str] | None = None) -> int:
    console = Console()
    if argv is None:
        argv = sys.argv[1:]
    with ExitStack() as locks:  # the save's lock, for the whole game
        return play(argv, console, locks)


def play(argv: list[str], console: Console, locks: ExitStack) -> int:
    app = prepare(argv, console, locks)
    if isinstance(app, int):
        return app
    if isinstance(app, WebTable):
        return app.run(console)
    try:
        app.run()
    finally:
        if app.session.listener is not None:
            app.session.listener.close()
    if app.error is not None:
        return stopped_on(app.error, console)
    if app.final is None:
        return stopped(app.session, console)
    return finished(app.session, console)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # Ctrl+C before the table opened: nothing was played yet
        print("stopped", file=sys.stderr)
        sys.exit(130)
