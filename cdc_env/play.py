"""Playing whole games: a driver loop over the engine, and a readable text log."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from cdc_env.actions import BIRDS, Action
from cdc_env.dice import SeededDice
from cdc_env.game import Decision, GameState
from cdc_env.rulebook.races import LAST_SHOUTER_LOSES
from cdc_env.rules import Ruleset


class Policy(Protocol):
    def act(self, state: GameState, decision: Decision) -> Action: ...


def play_game(rules: Ruleset, policies: Sequence[Policy], seed: int,
              max_turns: int | None = None) -> GameState:
    """Play one game: seat i is played by policies[i], the dice by `seed`. It ends with a
    winner, or after `max_turns` turns when given (then `state.is_over` is False)."""
    state = GameState(rules, len(policies), dice=SeededDice(seed))
    while (decision := state.pending) is not None:
        if max_turns is not None and state.turn_number > max_turns:
            break
        assert decision.seat is not None  # the seeded dice answer every chance moment
        state.apply_action(policies[decision.seat].act(state, decision))
    return state


Names = Callable[[Any], str]  # names a seat (None: the table), or a list of seats


# The names the engine spells without their accents, hyphens or apostrophes, as the rules write
# them (../shared/rules/RULES.md): the players shout these words, whatever the page's language.
SPELLED = {
    "a_kadoc": "à Kadoc", "bleu_rouge": "bleu-rouge", "grelotte_ca_picote": "grelotte ça picote",
    "je_suis_un_miserable": "je suis un misérable", "mecreant": "mécréant", "neant": "néant",
    "neant_souffle": "néant soufflé", "passe_montagne": "passe-montagne", "pelican": "pélican",
    "suite_velutee": "suite velutée", "velutee": "velutée",
    "j_apprecie_les_fruits_au_sirop": "j'apprécie les fruits au sirop",
}


def words(name: str) -> str:
    """A combination, race or phrase as people say it: the engine's name with spaces, and its
    accents (`pas_mou_le_caillou` → pas mou le caillou, `grelotte_ca_picote` → grelotte ça picote)."""
    return SPELLED.get(name, name.replace("_", " "))


def _bird(event: dict[str, Any]) -> str:
    return "Beau-Sirop" if event["type"] == "beau_sirop" else BIRDS[event["face"] - 1].capitalize()


def _race(event: dict[str, Any], who: Names) -> str:
    place = "last" if event["race"] in LAST_SHOUTER_LOSES else "first"
    tied = event["tied"]
    if len(tied) > 1:
        return f"  race {words(event['race'])}: {who(tied)} tied {place}"
    if tied:
        return f"  race {words(event['race'])}: {who(tied[0])} {place}"
    if event.get("shouts"):  # a last-loses race with nobody last: alone against the clock (S), in time
        return f"  race {words(event['race'])}: shouted in time, nobody loses"
    return f"  race {words(event['race'])}: nobody shouted in time"


# One line per kind of event, in a scorekeeper's words.
EVENT_LINES: dict[str, Callable[[dict[str, Any], Names], str]] = {
    "first_player": lambda e, who: f"{who(e['seat'])} starts",
    "turn_start": lambda e, who: f"— turn {e['turn']}: {who(e['seat'])} throws",
    "dice": lambda e, who: f"  dice for {words(e['reason'])}"
                           + ("" if e["seat"] is None else f" ({who(e['seat'])})") + f": {e['values']}",
    "combination": lambda e, who: f"  {who(e['seat'])}: {e['dice']} = {words(e['combination'])} ({e['value']})"
                                  + (f", races: {', '.join(map(words, e['races']))}" if e["races"] else ""),
    "score": lambda e, who: "  " + _describe_score(e, who(e["seat"])),
    "item": lambda e, who: f"  {who(e['seat'])} {'gains' if e['change'] > 0 else 'spends'} a "
                           f"{e['item']} ({words(e['reason'])})",
    "shout": lambda e, who: f"  {who(e['seat'])} shouts « {words(e['phrase'])} » at {e['onset_ms']:.0f} ms",
    "false_shout": lambda e, who: f"  {who(e['seat'])} shouts « {words(e['phrase'])} » out of any race",
    "race": _race,
    "win": lambda e, who: (f"*** {' and '.join(who(s) for s in e['team'])} win as a team with {e['team_score']} ***"
                           if "team" in e else f"*** {who(e['seat'])} wins with {e['score']} ***"),
    "civet": lambda e, who: f"  {who(e['seat'])} stakes a Civet of {e['stake']} on {words(e['combination'])}",
    "grelottine": lambda e, who: f"  {who(e['seat'])} challenges {who(e['challenged'])}: a Grelottine "
                                 f"of {e['stake']} on {words(e['combination'])}",
    "challenge_result": lambda e, who: f"  {who(e['challenged'])} {'makes' if e['made'] else 'misses'} "
                                       f"it (challenge of {who(e['challenger'])})",
    "boucliette": lambda e, who: f"  {who(e['seat'])} cancels {who(e['challenger'])}'s challenge "
                                 f"with a Boucliette",
    "bet_on_success": lambda e, who: f"  {who(e['seat'])} bets on success",
    "buy_cul": lambda e, who: f"  {who(e['seat'])} buys the cul from {who(e['from_seat'])}",
    "sirop": lambda e, who: f"  {who(e['seat'])} sirops the Chouette of {e['face']}",
    "bird_bet": lambda e, who: f"  {who(e['seat'])} bets {_bird(e)} ({e['face']})",
    "beau_sirop": lambda e, who: f"  {who(e['seat'])} bets {_bird(e)} ({e['face']})",
    "soufflette": lambda e, who: f"  {who(e['seat'])} challenges {who(e['target'])} to a Soufflette",
    "sum_bet": lambda e, who: f"  {who(e['seat'])} bets on a sum of {e['total']}",
    "relaunch": lambda e, who: f"  {who(e['seat'])} relaunches {e['dice']} (sum {e['total']}): "
                               f"{words(e['combination'])}",
    "claim": lambda e, who: f"  {who(e['seat'])} claims: « {words(e['phrase'])} »",
    "bet_unclaimed": lambda e, who: f"  {who(e['seat'])}'s winning bet was not claimed",
    "velutee_tie": lambda e, who: f"  Velutée tie between {who(e['seats'])}: {e['dice']} = "
                                  f"{words(e['combination'])}",
    # (seats counted from 1, as every table shows them)
    "join": lambda e, who: f"+++ {e['name']} joins the game at seat {e['seat'] + 1} ({e['rule'].replace('_', '-')})",
    "jarret": lambda e, who: f"  {who(e['seat'])}: a Jarret {e['dice']}",
    # house rules (docs/rules.md, House rules)
    "verdier_bet": lambda e, who: f"  {who(e['seat'])} bets « Vert-Linette ! »",
    "civet_doubled": lambda e, who: f"  {who(e['seat'])} doubles {who(e['declarer'])}'s Civet "
                                    f"(stake × {e['multiplier']})",
    "attrape_oiseau": lambda e, who: f"  {who(e['seat'])} catches the bird: {who(e['thrower'])}'s sirop of the "
                                     f"Chouette of {e['face']} is theirs",
    "flan_used": lambda e, who: f"  {who(e['seat'])} flans {who(e['thrower'])}: their points count backwards",
    "robobrol": lambda e, who: f"  {who(e['seat'])}: Robobrol, throws the three dice again",
}


def describe_event(event: dict[str, Any], names: Sequence[str] | None = None) -> str:
    """One line of the log in a scorekeeper's words; `names` gives the players' names by seat."""

    def who(seat: Any) -> str:
        if isinstance(seat, list):
            return ", ".join(who(s) for s in seat) or "nobody"
        if seat is None:
            return "the table"
        return names[seat] if names is not None else f"seat {seat}"

    line = EVENT_LINES.get(event["type"])
    if line is not None:
        return line(event, who)
    fields = ", ".join(f"{k}={v}" for k, v in event.items() if k not in ("type", "turn", "seat"))
    return f"  {who(event.get('seat'))} {words(event['type'])}" + (f": {fields}" if fields else "")


def bevue_words(why: str) -> str:
    """A Bévue's reason with the engine's names in words: "shouted « grelotte ça picote » in the
    chouette velute race" (the engine writes 'grelotte_ca_picote' and chouette_velute)."""
    why = re.sub(r"'(\w+)'", lambda m: f"« {words(m[1])} »", why)
    return re.sub(r"in the (\w+) race", lambda m: f"in the {words(m[1])} race", why)


def _describe_score(event: dict[str, Any], name: str) -> str:
    reason = words(event["reason"])
    if event["reason"] == "bevue":
        reason = f"a Bévue ({bevue_words(event['why'])})" if event.get("why") else "a Bévue"
    line = f"{name} {event['delta']:+d} for {reason}"
    if event["delta"] != event["points"]:
        # Held by the cap (a gain) or by negative_scores: false (a loss held at 0).
        held = "capped" if event["points"] > 0 else "held at 0"
        line += f" (of {event['points']:+d}, {held})"
    return f"{line} → {event['score']}"
