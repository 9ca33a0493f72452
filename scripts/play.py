"""Play Cul de Chouette aloud (or at the keyboard) against the bots.

    python scripts/play.py --humans Alice --bots prudent bold          # voice, keyboard too
    python scripts/play.py --keyboard --humans Alice Bob --bots bold   # no microphone

Humans answer by voice (each with a microphone or a channel: --devices) and always also by
keyboard: type the number of a choice, or words such as `oui`, `non`, `je_sirote`. In a race
press Enter the moment you would shout (or say the phrase): who was first or last is decided
by when each shout began. --save keeps the game in a file after every move; --resume goes on
from it.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.bots import make_bot  # noqa: E402
from agents.champion import champion_path  # noqa: E402
from cdc_env.actions import Action  # noqa: E402
from cdc_env.game import DECISION_TEXT, Decision, GameLoadError  # noqa: E402
from cdc_env.play import describe_event  # noqa: E402
from cdc_env.reaction import REACTION_LEVELS  # noqa: E402
from cdc_env.rules import RulesetError, load_ruleset  # noqa: E402
from voice.session import Keyboard, PlaySession, SeatPlayer  # noqa: E402

ITEM_MARKS = {"grelottine": "G", "civet": "C", "boucliette": "B", "flan": "F"}


class RichView:
    """The table in the terminal: seats, scores, items, dice, whose turn, the log."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.shown = 0

    def show(self, session: PlaySession) -> None:
        state = session.state
        for event in state.log[self.shown:]:
            self.console.print(describe_event(event, [p.name for p in session.players]), highlight=False)
        self.shown = len(state.log)
        table = Table(expand=False, title=f"Cul de Chouette — {state.rules.name}, turn {state.turn_number}")
        for column in ("seat", "player", "score", "items"):
            table.add_column(column)
        for seat, player in enumerate(session.players):
            marks = " ".join(ITEM_MARKS[i] for i, n in state.items[seat].items() if n)
            who = f"{player.name}{'' if player.human else ' (bot)'}"
            style = "bold yellow" if seat == state.turn_seat else ""
            table.add_row(str(seat + 1), who, str(state.scores[seat]), marks, style=style)
        context = [f"dice: {list(state.table.dice) or '-'}  {state.table.combination}"]
        if state.table.civet:
            context.append(f"Civet: {state.table.civet['combination']} for {state.table.civet['stake']}")
        if state.table.challenge:
            c = state.table.challenge
            context.append(f"Grelottine: seat {c['challenger'] + 1} → seat {c['challenged'] + 1}, "
                           f"{c['combination']} for {c['stake']}")
        if state.table.sirop_bets:
            context.append("bird bets: " + ", ".join(f"seat {s + 1}: {f}" for s, f in state.table.sirop_bets.items()))
        self.console.print(Panel.fit(table, subtitle=" · ".join(context)))

    def say(self, text: str) -> None:
        self.console.print(f"[cyan]{text}[/cyan]")

    def ask(self, session: PlaySession, decision: Decision, options: list[Action]) -> None:
        name = session.players[decision.seat].name
        what = DECISION_TEXT.get(decision.kind, decision.kind)
        self.console.print(f"[bold]{name}[/bold], {what}:")
        lines = [f"  {i}. {option}" for i, option in enumerate(options, 1)]
        for j, (combination, stakes) in enumerate(decision.stakes, len(options) + 1):
            lines.append(f"  {j}. {decision.staked.kind} on {combination}, stake {stakes.start}..{stakes.stop - 1}"
                         f"  (type: {j} STAKE)")
        self.console.print("\n".join(lines), highlight=False)


def espeak(text: str) -> float:
    """Speaks a bot's shout without waiting; returns roughly how long it lasts."""
    if shutil.which("espeak-ng"):
        subprocess.Popen(["espeak-ng", "-v", "fr", text], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return 0.08 * len(text.split()) + 0.4


def make_listener(args: argparse.Namespace, human_seats: list[int], console: Console):
    """Microphones for the humans, or None (with the reason shown) to play by keyboard."""
    from voice.live import build_listener  # voice needs vosk and sounddevice

    return build_listener(model=args.model, lexicon=args.lexicon, seats=human_seats,
                          devices=args.devices, report=lambda text: console.print(f"[yellow]{text}[/yellow]"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ruleset", default="classic")
    parser.add_argument("--humans", nargs="*", default=["You"], help="names of the human players")
    parser.add_argument("--bots", nargs="*", default=["champion"],
                        help="bot names or model paths, one per bot seat (default: the shipped champion "
                             "of the table, agents/champion.py)")
    parser.add_argument("--reaction", default="human", choices=sorted(REACTION_LEVELS), help="the bots' reaction time")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keyboard", action="store_true", help="no microphone: play by keyboard only")
    parser.add_argument("--model", default=None, help="path of the French Vosk model (or CDC_VOSK_MODEL)")
    parser.add_argument("--lexicon", default="configs/voice/fr.yaml")
    parser.add_argument("--devices", nargs="*", default=None,
                        help="one input per human: DEVICE or DEVICE:CHANNEL (default: the default input)")
    parser.add_argument("--speak", action="store_true", help="speak the bots' shouts with espeak-ng")
    parser.add_argument("--save", type=Path, default=None, help="keep the game in this file after every move")
    parser.add_argument("--resume", type=Path, default=None, help="go on with a game saved by --save")
    args = parser.parse_args(argv)
    console = Console()
    seed = args.seed if args.seed is not None else int.from_bytes(__import__("os").urandom(4), "little")
    try:
        rules = load_ruleset(args.ruleset)
        players = [SeatPlayer(name) for name in args.humans]
        players += [SeatPlayer(f"{name}-{i + 1}", make_bot(name, seed=f"{seed}:{i}", reaction=args.reaction))
                    for i, name in enumerate(args.bots)]
        if not rules.min_players <= len(players) <= rules.max_players:
            raise ValueError(f"ruleset {rules.name} is for {rules.min_players}–{rules.max_players} players, "
                             f"got {len(players)} ({len(args.humans)} humans, {len(args.bots)} bots)")
        if "champion" in args.bots:
            champion_path(rules.name, len(players))  # a table without a champion: say so now, listing those with one
    except (RulesetError, ValueError) as error:
        console.print(f"[red]error:[/red] {error}")
        return 2
    human_seats = [s for s, p in enumerate(players) if p.human]
    listener = None
    if not args.keyboard and human_seats:
        try:
            listener = make_listener(args, human_seats, console)
        except Exception as error:  # noqa: BLE001 - any voice failure falls back to the keyboard
            console.print(f"[yellow]voice is off: {error}\nPlaying by keyboard.[/yellow]")
    common = dict(view=RichView(console), keyboard=Keyboard(), listener=listener, seed=seed,
                  speak=espeak if args.speak else None, save_path=args.save or args.resume)
    try:
        if args.resume:
            session = PlaySession.resume(args.resume, players, **common)
        else:
            session = PlaySession(rules, players, **common)
    except (GameLoadError, OSError, ValueError) as error:
        console.print(f"[red]cannot resume {args.resume}:[/red] {error}")
        return 2
    try:
        state = session.run()
    except (KeyboardInterrupt, EOFError) as stop:
        where = f" It is saved in {session.save_path}: --resume {session.save_path}" if session.save_path else ""
        console.print(f"\nGame stopped ({type(stop).__name__}).{where}")
        return 1
    finally:
        if session.listener is not None:
            session.listener.close()
    console.print(f"[bold green]{players[state.winner].name} wins with {state.scores[state.winner]}![/bold green]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
