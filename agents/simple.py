"""Two simple built-in bots: a random legal player, and a plain rule-of-thumb player.

Both play any ruleset through the engine's public interface only (`state.pending`, the public
scores and items), and shout with onsets from their reaction-time model.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Protocol

from cdc_env.actions import (
    Action,
    BeauSirop,
    BetSum,
    BirdBet,
    ChallengeGrelottine,
    ChallengeSoufflette,
    CoucheSirop,
    KeepDice,
    Pass,
    Roll,
    Shout,
    Sirop,
    UseBoucliette,
)
from cdc_env.game import RACE_PHRASES, Decision, GameState
from cdc_env.reaction import DEFAULT_REACTION, ReactionModel, reaction_model


class Bot(Protocol):
    name: str
    reaction: ReactionModel
    rng: random.Random  # tournaments and searches reseed it between games and samples

    def act(self, state: GameState, decision: Decision) -> Action: ...


class RandomBot:
    """Any legal option, uniformly; shouts come with a sampled onset."""

    name = "random"

    def __init__(self, seed: int | str = 0, reaction: str = DEFAULT_REACTION) -> None:
        self.rng = random.Random(seed)
        self.reaction = reaction_model(reaction)

    def act(self, state: GameState, decision: Decision) -> Action:
        choice = self.rng.choice(decision.legal_actions())
        if isinstance(choice, Shout):
            return Shout(choice.phrase, self.reaction.sample(self.rng))
        return choice


# Ways three dice make each sum 3..18 (out of 216), for Bleu-Rouge bets.
SUM_WAYS = {total: sum(1 for a in range(1, 7) for b in range(1, 7) for c in range(1, 7) if a + b + c == total)
            for total in range(3, 19)}


def best_sum_bet(state: GameState, options: Sequence[Action]) -> BetSum:
    """The free Bleu-Rouge sum worth most: its chance (ways of 216) × what it pays."""
    bet_rules = state.rules.bleu_rouge
    return max((o for o in options if isinstance(o, BetSum)),
               key=lambda o: SUM_WAYS[o.total] * (bet_rules.bet_base + bet_rules.bet_per_point * o.total))


class SimpleBot:
    """Rules of thumb a beginner is taught: sirop only small Chouettes, always shout the right
    phrase, challenge a Velute at the maximum stake, keep the Boucliette for oneself, claim
    every gain, bet the likeliest free sum on a Bleu-Rouge, never bet one's Civet."""

    name = "simple"

    def __init__(self, seed: int | str = 0, reaction: str = DEFAULT_REACTION) -> None:
        self.rng = random.Random(seed)
        self.reaction = reaction_model(reaction)

    def act(self, state: GameState, decision: Decision) -> Action:
        seat = decision.seat
        options = decision.options
        kind = decision.kind
        if kind == "race":
            if (decision.reason == "chouette_velute" and state.rules.races.chouette_velute_tie == "subtract"
                    and seat != state.table.thrower and state.players > 2):
                # When ties lose the value, a table of equally quick players mostly ties:
                # leave the Chouette-Velute to its thrower.
                return Pass()
            if decision.reason == "tichette" and seat is not None and not _strictly_last(state, seat):
                # House rule Tichette: among several claimants the best score pays n × V. Only
                # the player strictly last claims: alone they win V, and with others they are
                # never the one who pays (claiming more drains every score: measured -1400 a game).
                return Pass()
            return Shout(self._phrase(state, decision), self.reaction.sample(self.rng))
        if kind == "claim":
            return Shout(decision.reason, self.reaction.sample(self.rng))
        if kind == "sirop":
            # Siroting a Chouette of a wins (40 + 10a)/6 on average and loses 5a²/6: worth it
            # for 1 and 2 only.
            return Sirop() if _pair_face(state) <= 2 else Pass()
        if kind == "sirop_bet":
            if state.rules.sirotage.self_bet:
                # A free bonus when the sirop succeeds: the chouette's own bird, or Beau-Sirop
                # where that is the bet (the own bird then is a Bévue, or not offered at all).
                if BeauSirop() in options:
                    return BeauSirop()
                if BirdBet(_pair_face(state)) in options:
                    return BirdBet(_pair_face(state))
            # A bird bet is worth 25/6 - 5·5/6 = 0 on average: not worth a Bévue risk.
            return CoucheSirop() if CoucheSirop() in options else Pass()
        if kind == "bleu_rouge_bet":
            return best_sum_bet(state, options)
        if kind == "soufflette":
            # Never one's partner at a Doublette: the 30 would only move within the team.
            allowed = [o for o in options if isinstance(o, ChallengeSoufflette)
                       and seat is not None and o.target not in state.teams[seat]
                       and meets_minimum(state, seat, "soufflette") and meets_minimum(state, o.target, "soufflette")]
            return max(allowed, key=lambda o: state.scores[o.target]) if allowed else Pass()
        if kind == "soufflette_keep":
            wanted = [KeepDice(k) for k in (o.keep for o in options if isinstance(o, KeepDice))
                      if len(set(k)) == len(k) and set(k) <= {1, 2, 4}]
            return max(wanted, key=lambda o: len(o.keep))
        if kind == "grelottine":
            stakes = dict(decision.stakes).get("velute")
            return ChallengeGrelottine("velute", stakes[-1]) if stakes else Pass()
        if kind == "boucliette":
            challenge = state.table.challenge or {}
            return UseBoucliette() if challenge.get("challenged") == seat else Pass()
        if Roll() in options:
            return Roll()
        return Pass() if Pass() in options else options[0]


    def _phrase(self, state: GameState, decision: Decision) -> str:
        answers = decision.answers or (RACE_PHRASES[decision.reason],)
        if "mecreant" in answers:
            # Take the Grelottine when one may hold it, otherwise keep it from the others.
            seat = decision.seat
            assert seat is not None  # a bot is asked only a seat's decisions
            may_take = not state.items[seat]["grelottine"] and meets_minimum(state, seat, "grelottine")
            return "mecreant" if may_take else "je_suis_un_miserable"
        return answers[0]


def _strictly_last(state: GameState, seat: int) -> bool:
    return all(score > state.scores[seat] for other, score in enumerate(state.scores) if other != seat)


def _pair_face(state: GameState) -> int:
    dice = state.table.dice
    return max(set(dice), key=dice.count)


def meets_minimum(state: GameState, seat: int | None, what: str) -> bool:
    """Whether `seat` has the minimum score a rule asks for (only without negative scores)."""
    rules = state.rules
    return seat is not None and (rules.negative_scores or state.scores[seat] >= getattr(rules.minimum_scores, what))


BOTS: dict[str, Callable[..., Bot]] = {"random": RandomBot, "simple": SimpleBot}


def make_bot(name: str, seed: int | str = 0, reaction: str = DEFAULT_REACTION) -> Bot:
    try:
        return BOTS[name](seed=seed, reaction=reaction)
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; choose from {', '.join(BOTS)}") from None
