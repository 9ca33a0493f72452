"""The best achievable solo game (S), and the grade that compares a game with it.

`expected_turns(score, civet, grelottine)` is the exact expected number of turns still needed
to reach the target from the start of a turn, under optimal play: before the roll, roll, stake
a Civet (combination and stake) or use a Grelottine; on a Chouette, sirop or keep it, and bet
on one's own sirop die; every shout in time. `SoloOptimum.best_turn_start` and
`SoloOptimum.best_sirop` give the optimal choices, and `optimal_action(state, decision)`
answers an engine decision with them.

How it is computed. A turn moves the score (and the Civet and Grelottine held) by a known
distribution: 216 rolls, a sirop die, the Grelottine's draw. Scores mostly go up, but a failed
sirop or a lost stake takes them down, so turns can cycle and plain backward induction does
not apply: this is a stochastic shortest-path problem, solved by policy iteration. The expected
turns of a policy are the exact solution of a linear system (one equation per state); the
policy is then improved greedily, until no choice improves. The last solution is the optimum,
to the precision of the linear solve. Scores below `FLOOR` (far below anything optimal play
reaches from 0) count as `FLOOR`, which keeps the states finite.

Everything comes from the ruleset (the engine's `classify` gives the rolls, its `rulebook.scoring.made` judges
the bets) and is cached per ruleset; tests check one turn of this model against the engine.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from cdc_env import combinations, game
from cdc_env.actions import Action, BirdBet, DeclareCivet, Pass, Roll, Shout, Sirop, UseGrelottine
from cdc_env.combinations import Combination, classify
from cdc_env.game import Decision, GameState, RollOutcome
from cdc_env.rulebook.scoring import made as _made
from cdc_env.rules import Ruleset, load_ruleset

RULEBOOK = Path(game.__file__).parent / "rulebook"

# The lowest score the optimum tells apart (see the module's docstring).
FLOOR = -150
# Expected turns closer than this are equal; the first option in a fixed order wins the tie.
_TIE = 1e-9
# Rows a solo game can meet (the others need other players or are outside S).
_SOLO_ROWS = ("cul_de_chouette", "chouette_velute", "velute", "chouette", "suite", "soufflette", "neant")
_OWN_POINTS = ("cul_de_chouette", "velute", "chouette", "chouette_velute")


@dataclass(frozen=True)
class _RollClass:
    """The rolls (of the 216) that make the same combination, so have the same effect."""

    prob: float
    combination: Combination


def _roll_classes(rules: Ruleset) -> list[_RollClass]:
    counts: dict[Combination, int] = {}
    for dice in itertools.product(range(1, 7), repeat=3):
        combination = classify(dice, rules)
        if combination.name not in _SOLO_ROWS:
            raise ValueError(f"the solo optimum does not cover the combination {combination.name!r}")
        counts[combination] = counts.get(combination, 0) + 1
    return [_RollClass(count / 216, combination) for combination, count in counts.items()]


class _Turn:
    """One roll from scores `s` (shape (n,)), with the items held once the pre-roll choice is
    made and the bet it made: a Civet on `civet` for `stakes` (broadcast against (n, 1)), or a
    Grelottine on `grelottine` (its stake from the score). Inner choices (sirop, self-bet) are
    the best under `values`.

    An outcome of the roll is described before the bet is settled, as (score x, won, items
    held, sirop success); `next_state` settles the bet and gives the state's index (`win`:
    won), `next_value` its expected turns. With a Civet, the values come from a table over
    (items, made, score, stake) rather than from the arithmetic, which is much faster."""

    def __init__(self, optimum: SoloOptimum, values: np.ndarray, s: np.ndarray,
                 civet_held: int, grelottine_held: int, civet: str | None = None,
                 stakes: Any = None, grelottine: str | None = None,
                 civet_table: np.ndarray | None = None) -> None:
        self.o = optimum
        self.rules = optimum.rules
        self.known = np.append(values.ravel(), 0.0)
        self.s = s[:, None]
        self.civet_held, self.grelottine_held = civet_held, grelottine_held
        self.items = 2 * civet_held + grelottine_held
        self.civet, self.stakes, self.grelottine = civet, stakes, grelottine
        width = np.broadcast(self.s, np.asarray(stakes)).shape[1] if civet else 1
        self.shape = (len(s), width)
        self.grelottine_stake = optimum.stake(self.s, grelottine) if grelottine else None
        self.civet_table = civet_table  # [items, made, score - floor, stake number]

    def own(self, x: np.ndarray, points: int) -> tuple[np.ndarray, np.ndarray]:
        """Points of one's own dice: a gain may reach the target and win at once."""
        if points <= 0:
            return (self.o.lose(x, -points) if points else x), np.zeros(x.shape, dtype=bool)
        x = x + points
        return x, x >= self.rules.target_score

    def _made(self, name: str, combination: Combination, sirop: bool | None, grelottine: bool) -> bool:
        return _made(name, RollOutcome((), combination, 0, sirop), sirop_counts_for_cul=grelottine)

    def next_state(self, combination: Combination, x: np.ndarray, won: Any, items: Any,
                   sirop: bool | None) -> np.ndarray:
        """Settle the Civet, then the Grelottine (as in the engine); the next state's index."""
        if self.civet:
            made = self._made(self.civet, combination, sirop, False)
            x = self.o.gain(x, self.stakes) if made else self.o.lose(x, self.stakes)
        if self.grelottine:
            made = self._made(self.grelottine, combination, sirop, True)
            x = self.o.gain(x, self.grelottine_stake) if made else self.o.lose(x, self.grelottine_stake)
        index = np.where(won, self.o.win, self.o.index(x, items))
        return np.broadcast_to(index, self.shape)

    def next_value(self, combination: Combination, x: np.ndarray, won: Any, items: Any,
                   sirop: bool | None) -> np.ndarray:
        if self.civet_table is None:
            return self.known[self.next_state(combination, x, won, items, sirop)]
        made = int(self._made(self.civet, combination, sirop, False))  # type: ignore[arg-type]
        return self.table_value(made, x, won, items)

    def table_value(self, made: int, x: np.ndarray, won: Any, items: Any) -> np.ndarray:
        """From the Civet table: the value of an outcome once a Civet, made or not, is settled
        (for every stake)."""
        assert self.civet_table is not None
        rows = (np.clip(x, self.o.floor, self.rules.target_score - 1) - self.o.floor).ravel()
        if np.ndim(items) == 0:
            values = self.civet_table[items, made][rows]
        else:
            values = self.civet_table[np.ravel(items), made, rows]
        won = np.ravel(won)
        if won.any():
            values[won] = 0.0
        return values

    def _outcomes(self) -> list[tuple[Any, ...]]:
        """Every roll class's outcome but the Chouettes': (probability, combination, x, won,
        items, sirop)."""
        rules = self.rules
        outcomes = []
        for roll in self.o.classes:
            c = roll.combination
            if c.name == "chouette" and rules.sirotage.enabled:
                continue
            x, won = self.own(self.s, c.value if c.name in _OWN_POINTS else 0)
            items: Any = self.items
            if c.name == "neant" and rules.neant_gives_grelottine and not self.grelottine_held:
                gets = rules.negative_scores or self.s >= rules.minimum_scores.grelottine
                items = self.items + np.where(gets, 1, 0)
            outcomes.append((roll.prob, c, x, won, items, None))
        return outcomes

    def chouette_outcomes(self, combination: Combination) -> tuple[Any, list[Any], list[Any] | None, list[Any] | None]:
        """A Chouette's outcomes: kept; siroted without a bet, per sirop die; siroted with a
        self-bet (S), per die, when the die is the bet's face and when it is not."""
        rules, sirotage = self.rules, self.rules.sirotage
        face = combination.face
        value = rules.scores.chouette[face - 1]
        keep = (combination, *self.own(self.s, value), self.items, None)
        may_bet = sirotage.bird_bets and sirotage.self_bet
        rows: dict[str, list[Any]] = {"none": [], "won": [], "lost": []}
        for die in range(1, 7):
            for bet in rows if may_bet else ("none",):
                x = self.s
                if bet == "won":
                    x = self.o.gain(x, sirotage.bet_win)
                elif bet == "lost" and sirotage.bet_loss:
                    x = self.o.lose(x, sirotage.bet_loss)
                if die == face:
                    rows[bet].append((combination, *self.own(x, rules.scores.cul_de_chouette[face - 1]),
                                      self.items, True))
                    continue
                x = self.o.lose(x, value)
                items = self.items
                if face == 6 and sirotage.civet_on_failed_six and not self.civet_held:
                    items += 2
                won = np.zeros(x.shape, dtype=bool)
                siroted = classify((face, face, die), rules)
                if siroted.name in sirotage.rescore_after:
                    x, won = self.own(x, siroted.value)  # its Chouette-Velute, shouted in time
                rows[bet].append((combination, x, won, items, False))
        if not may_bet:
            return keep, rows["none"], None, None
        return keep, rows["none"], rows["won"], rows["lost"]

    @staticmethod
    def option_values(keep: np.ndarray, plain: list[np.ndarray], won: list[np.ndarray] | None,
                      lost: list[np.ndarray] | None) -> np.ndarray:
        """The expected value of each option [keep, sirop, sirop betting on 1..6] from the
        values of the outcomes (each sirop die has probability 1/6)."""
        q = [keep, sum(plain) / 6]
        if won is not None and lost is not None:
            all_lost = sum(lost)
            q += [(all_lost - lost[bet] + won[bet]) / 6 for bet in range(6)]
        return np.stack(np.broadcast_arrays(*q))

    def chouette_options(self, combination: Combination) -> tuple[list[list[Any]], np.ndarray]:
        """Each option [keep, sirop, sirop betting on 1..6] as six equally likely outcomes (one
        per sirop die), and the options' expected values (inf where the rules refuse them)."""
        keep, plain, won, lost = self.chouette_outcomes(combination)
        options = [[keep] * 6, plain]
        if won is not None and lost is not None:
            options += [[won[d] if d == bet else lost[d] for d in range(6)] for bet in range(6)]
        value = {id(o): self.next_value(*o) for o in [keep, *plain, *(won or []), *(lost or [])]}
        q = self.option_values(value[id(keep)], [value[id(o)] for o in plain],
                               None if won is None else [value[id(o)] for o in won],
                               None if lost is None else [value[id(o)] for o in lost])
        return options, self._refuse(q, combination)

    def _refuse(self, q: np.ndarray, combination: Combination) -> np.ndarray:
        """Options the rules refuse at some scores get inf (F's minimums, which only apply
        without negative scores): q is [keep, sirop, sirop with a bet on 1..6]."""
        rules = self.rules
        if rules.negative_scores:
            return q
        q = q.copy()
        if rules.minimum_scores.sirotage_covers_chouette:
            value = rules.scores.chouette[combination.face - 1]
            q[1:] = np.where(np.broadcast_to(self.s >= value, self.shape), q[1:], np.inf)
        if len(q) > 2:
            allowed = np.broadcast_to(self.s >= rules.minimum_scores.sirop_bet, self.shape)
            q[2:] = np.where(allowed, q[2:], np.inf)
        return q

    def _chouettes(self) -> list[tuple[float, Combination]]:
        if not self.rules.sirotage.enabled:
            return []
        return [(r.prob, r.combination) for r in self.o.classes if r.combination.name == "chouette"]

    def expected(self) -> np.ndarray:
        """1 + the expected turns after the roll, with the best inner choices: shape `shape`."""
        total = np.zeros(self.shape)
        for prob, *outcome in self._outcomes():
            total = total + prob * self.next_value(*outcome)
        for prob, combination in self._chouettes():
            _, q = self.chouette_options(combination)
            total = total + prob * q.min(axis=0)
        return 1.0 + total

    def civet_expected(self, names: list[str]) -> dict[str, np.ndarray]:
        """`expected()` for a Civet on each of `names` at every stake, from the Civet table:
        the outcomes are the same for every combination, only whether it is made differs."""
        looked_up: dict[int, tuple[np.ndarray, np.ndarray]] = {}

        def values(outcome: tuple[Any, ...]) -> tuple[np.ndarray, np.ndarray]:
            if id(outcome) not in looked_up:
                _, x, won, items, _ = outcome
                looked_up[id(outcome)] = (self.table_value(0, x, won, items),
                                          self.table_value(1, x, won, items))
            return looked_up[id(outcome)]

        outcomes = [(prob, tuple(outcome)) for prob, *outcome in self._outcomes()]
        chouettes = [(prob, combination, self.chouette_outcomes(combination))
                     for prob, combination in self._chouettes()]
        expected = {}
        for name in names:
            def value(outcome: tuple[Any, ...], name: str = name) -> np.ndarray:
                return values(outcome)[int(self._made(name, outcome[0], outcome[4], False))]

            total = sum(prob * value(o) for prob, o in outcomes)
            for prob, combination, (keep, plain, won, lost) in chouettes:
                q = self.option_values(value(keep), [value(o) for o in plain],
                                       None if won is None else [value(o) for o in won],
                                       None if lost is None else [value(o) for o in lost])
                total = total + prob * self._refuse(q, combination).min(axis=0)
            expected[name] = 1.0 + total
        return expected

    def branches(self) -> list[tuple[float, np.ndarray]]:
        """[(probability, next-state index)] of the roll under the best inner choices."""
        branches = [(prob, self.next_state(*outcome)) for prob, *outcome in self._outcomes()]
        for prob, combination in self._chouettes():
            options, q = self.chouette_options(combination)
            choice = np.argmax(q <= q.min(axis=0) + _TIE, axis=0)
            for die in range(6):
                indices = [self.next_state(*option[die]) for option in options]
                branches.append((prob / 6, np.choose(choice, indices)))
        return branches


@dataclass(frozen=True)
class TurnStartChoice:
    """The best choice before a roll and its expected turns (this turn included)."""

    action: Action
    expected: float


def uncovered(rules: Ruleset) -> str | None:
    """What of `rules` the optimum does not model, or None. Solved anyway, its values would be
    another game's: a wrong "best play" and grade (Tichette's points make the game ~4 turns
    shorter), or a Civet at a stake the engine refuses (a stake within one's score)."""
    if rules.house_rules:
        return f"house rules ({', '.join(rules.house_rules)})"
    if rules.cap_holds != "all_but_own_dice":
        return f"cap_holds: {rules.cap_holds} (a gain on one's own turn passing the cap)"
    if rules.civet.enabled and rules.civet.stake_within_score:
        return "civet.stake_within_score (a Civet's stake within one's score)"
    return None


class SoloOptimum:
    """The optimum of one ruleset played alone. A state is (score, Civet held, Grelottine held)
    at the start of a turn: index = items × size + score − floor, items = 2 × civet + grelottine."""

    def __init__(self, rules: Ruleset, floor: int = FLOOR, values: np.ndarray | None = None) -> None:
        """Solve the optimum of `rules` (or take `values` solved before, from the cache)."""
        if floor >= 0:
            raise ValueError("the floor must be below 0")
        self.rules = rules
        self.floor = floor
        self.size = rules.target_score - floor
        self.states = 4 * self.size
        self.win = self.states  # "won": worth 0 more turns
        self.classes = _roll_classes(rules)
        self.civet_names = list(rules.civet.combinations) if rules.civet.enabled else []
        self.civet_stakes = np.arange(rules.civet.min_stake, rules.civet.max_stake + 1)
        grelottine = rules.grelottine
        self.grelottine_names = (list(grelottine.stake_limits)
                                 if grelottine.enabled and grelottine.use == "before_roll" else [])
        if any(name != "chouette_velute" for name in rules.sirotage.rescore_after):
            raise ValueError("the solo optimum covers only a Chouette-Velute after a sirop")
        if (why := uncovered(rules)) is not None:
            raise ValueError(f"the solo optimum does not cover {why}")
        self.scores = np.arange(floor, rules.target_score)
        self.iterations = 0
        self._memo: dict[tuple[Any, ...], Any] = {}  # the best choices asked so far
        if values is not None and values.shape != (4, self.size):
            raise ValueError(f"solved values of shape {values.shape}, expected {(4, self.size)}")
        self.values = self._solve() if values is None else values

    # ------------------------------------------------------------------ score arithmetic

    def gain(self, x: np.ndarray, points: Any) -> np.ndarray:
        """A gain that is not one's own dice stops at the cap and never lowers a score."""
        return np.maximum(x, np.minimum(x + points, self.rules.cap_score))

    def lose(self, x: np.ndarray, points: Any) -> np.ndarray:
        """A loss; scores below the floor count as the floor (see the module's docstring)."""
        return np.maximum(x - points, self.floor if self.rules.negative_scores else 0)

    def index(self, x: np.ndarray, items: Any) -> np.ndarray:
        return items * self.size + (np.clip(x, self.floor, self.rules.target_score - 1) - self.floor)

    def stake(self, scores: np.ndarray, name: str) -> np.ndarray:
        """A Grelottine's stake: floor(score × limit), and 0 for a score of 0 or less."""
        limit = Fraction(self.rules.grelottine.stake_limits[name])
        return np.where(scores > 0, (scores * limit.numerator) // limit.denominator, 0)

    def may_use_grelottine(self, scores: np.ndarray) -> np.ndarray:
        """Usable when every combination it may draw has a stake (as in the engine)."""
        usable = np.full(np.shape(scores), bool(self.grelottine_names))
        for name in self.grelottine_names:
            usable &= self.stake(scores, name) >= self.rules.grelottine.min_stake
        return usable

    # ------------------------------------------------------------------ choices

    def _civet_table(self, values: np.ndarray) -> np.ndarray:
        """[items, made, score − floor, stake number]: the expected turns once a Civet of that
        stake is settled, made or not, from that score."""
        x = self.scores[:, None]
        stakes = self.civet_stakes[None, :]
        table = np.empty((4, 2, self.size, len(self.civet_stakes)))
        for made, settled in enumerate((self.lose(x, stakes), self.gain(x, stakes))):
            rows = np.clip(settled, self.floor, self.rules.target_score - 1) - self.floor
            for items in range(4):
                table[items, made] = values[items][rows]
        return table

    def _choices(self, values: np.ndarray, s: np.ndarray, civet_held: int, grelottine_held: int,
                 civet_table: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per score: the best pre-roll choice (0 roll, 1 Civet, 2 Grelottine), its expected
        turns, and for the Civet its combination (number) and stake."""
        n = len(s)
        q = np.full((3, n), np.inf)
        q[0] = _Turn(self, values, s, civet_held, grelottine_held).expected()[:, 0]
        civet_name = np.zeros(n, dtype=int)
        civet_stake = np.zeros(n, dtype=int)
        if civet_held and self.civet_names:
            if civet_table is None:
                civet_table = self._civet_table(values)
            turn = _Turn(self, values, s, 0, grelottine_held, civet=self.civet_names[0],
                         stakes=self.civet_stakes[None, :], civet_table=civet_table)
            expected_by_name = turn.civet_expected(self.civet_names)
            for number, name in enumerate(self.civet_names):
                by_stake = expected_by_name[name]
                best = np.argmax(by_stake <= by_stake.min(axis=1, keepdims=True) + _TIE, axis=1)
                expected = by_stake[np.arange(n), best]
                better = expected < q[1] - _TIE
                q[1] = np.where(better, expected, q[1])
                civet_name = np.where(better, number, civet_name)
                civet_stake = np.where(better, self.civet_stakes[best], civet_stake)
        if grelottine_held and self.grelottine_names:
            total = np.zeros(n)
            for name in self.grelottine_names:
                total += _Turn(self, values, s, civet_held, 0, grelottine=name).expected()[:, 0]
            q[2] = np.where(self.may_use_grelottine(s), total / len(self.grelottine_names), np.inf)
        choice = np.argmax(q <= q.min(axis=0) + _TIE, axis=0)
        return choice, q[choice, np.arange(n)], civet_name, civet_stake

    def best_turn_start(self, score: int, civet: bool = False, grelottine: bool = False) -> TurnStartChoice:
        """The best choice before a roll: Roll, DeclareCivet(combination, stake) or UseGrelottine."""
        key = ("turn_start", score, bool(civet), bool(grelottine))
        if key not in self._memo:
            self._memo[key] = self._best_turn_start(score, civet, grelottine)
        return self._memo[key]

    def _best_turn_start(self, score: int, civet: bool, grelottine: bool) -> TurnStartChoice:
        s = np.array([max(score, self.floor)])
        choice, expected, name, stake = self._choices(self.values, s, int(civet), int(grelottine))
        action: Action = Roll()
        if choice[0] == 1:
            action = DeclareCivet(self.civet_names[name[0]], int(stake[0]))
        elif choice[0] == 2:
            action = UseGrelottine()
        return TurnStartChoice(action, float(expected[0]))

    def roll_expected(self, score: int, civet: bool = False, grelottine: bool = False,
                      civet_bet: tuple[str, int] | None = None, grelottine_bet: str | None = None) -> float:
        """Expected turns (this one included) of rolling now from `score`, holding `civet` and
        `grelottine` once the bet is made, with the turn's bet, and playing on optimally."""
        name, stake = civet_bet if civet_bet else (None, None)
        turn = _Turn(self, self.values, np.array([max(score, self.floor)]), int(civet), int(grelottine),
                     civet=name, stakes=stake, grelottine=grelottine_bet)
        return float(turn.expected()[0, 0])

    def best_sirop(self, score: int, face: int, civet: bool = False, grelottine: bool = False,
                   civet_bet: tuple[str, int] | None = None, grelottine_bet: str | None = None
                   ) -> tuple[bool, int | None]:
        """On a Chouette of `face` rolled from `score` (holding `civet`, `grelottine` after the
        pre-roll choice, with the turn's bet): (sirop?, the face to bet on, or None)."""
        key = ("sirop", score, face, bool(civet), bool(grelottine), civet_bet, grelottine_bet)
        if key not in self._memo:
            self._memo[key] = self._best_sirop(score, face, civet, grelottine, civet_bet, grelottine_bet)
        return self._memo[key]

    def _best_sirop(self, score: int, face: int, civet: bool, grelottine: bool,
                    civet_bet: tuple[str, int] | None, grelottine_bet: str | None) -> tuple[bool, int | None]:
        name, stake = civet_bet if civet_bet else (None, None)
        turn = _Turn(self, self.values, np.array([max(score, self.floor)]), int(civet), int(grelottine),
                     civet=name, stakes=stake, grelottine=grelottine_bet)
        combination = next(r.combination for r in self.classes
                           if r.combination.name == "chouette" and r.combination.face == face)
        _, q = turn.chouette_options(combination)
        best = int(np.argmax(q[:, 0] <= q[:, 0].min() + _TIE))
        return best > 0, (best - 1 if best >= 2 else None)

    def expected_turns(self, score: int, civet: bool = False, grelottine: bool = False) -> float:
        """Expected turns from the start of a turn at `score` (0 once the target is reached)."""
        if score >= self.rules.target_score:
            return 0.0
        items = 2 * int(civet) + int(grelottine)
        return float(self.values[items, max(score, self.floor) - self.floor])

    # ------------------------------------------------------------------ policy iteration

    def _transitions(self, values: np.ndarray, policy: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The policy's transitions as (state, next state, probability), "won" left out."""
        rows: list[np.ndarray] = []
        cols: list[np.ndarray] = []
        probs: list[np.ndarray] = []
        for items, (choice, _, civet_name, civet_stake) in enumerate(policy):
            civet_held, grelottine_held = divmod(items, 2)
            states = items * self.size + np.arange(self.size)

            def add(mask: np.ndarray, turn: _Turn, weight: float = 1.0, states: np.ndarray = states) -> None:
                for prob, index in turn.branches():
                    rows.append(states[mask])
                    cols.append(index[:, 0])
                    probs.append(np.full(len(index), prob * weight))

            def turn(mask: np.ndarray, *args: Any, **kwargs: Any) -> _Turn:
                return _Turn(self, values, self.scores[mask], *args, **kwargs)

            mask = choice == 0
            if mask.any():
                add(mask, turn(mask, civet_held, grelottine_held))
            for number, name in enumerate(self.civet_names):
                mask = (choice == 1) & (civet_name == number)
                if mask.any():
                    add(mask, turn(mask, 0, grelottine_held, civet=name, stakes=civet_stake[mask][:, None]))
            mask = choice == 2
            if mask.any():
                for name in self.grelottine_names:
                    add(mask, turn(mask, civet_held, 0, grelottine=name), 1 / len(self.grelottine_names))
        row, col, prob = np.concatenate(rows), np.concatenate(cols), np.concatenate(probs)
        kept = col != self.win
        return row[kept], col[kept], prob[kept]

    def _evaluate(self, row: np.ndarray, col: np.ndarray, prob: np.ndarray) -> np.ndarray:
        """The policy's expected turns: the solution of (I − P) V = 1."""
        n = self.states
        try:  # scipy's sparse solver when it is installed: the same solution, faster
            from scipy.sparse import coo_matrix, identity
            from scipy.sparse.linalg import spsolve
        except ImportError:
            p = np.zeros((n, n))
            np.add.at(p, (row, col), prob)
            return np.linalg.solve(np.eye(n) - p, np.ones(n))
        system = (identity(n, format="csc") - coo_matrix((prob, (row, col)), shape=(n, n)).tocsc())
        return spsolve(system, np.ones(n))

    def _solve(self) -> np.ndarray:
        # A first guess that prefers higher scores: about 18 points a turn.
        guess = np.maximum(self.rules.target_score - self.scores, 0) / 18.0 + 1.0
        values = np.tile(guess, (4, 1))
        # A few Civet stakes first: their policy is nearly the optimum, so only a round or two
        # remain with every stake (each round costs much more).
        every_stake = self.civet_stakes
        few = np.unique(np.clip([1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 102], every_stake[0], every_stake[-1]))
        for self.civet_stakes in (few, every_stake):
            values = self._policy_iteration(values)
        return values

    def _policy_iteration(self, values: np.ndarray) -> np.ndarray:
        for _ in range(100):
            self.iterations += 1
            table = self._civet_table(values)
            policy = [self._choices(values, self.scores, *divmod(items, 2), civet_table=table)
                      for items in range(4)]
            best = np.stack([expected for _, expected, _, _ in policy])
            if np.max(np.abs(best - values)) < 1e-10:
                return values  # no choice improves: the values are the optimum's
            values = self._evaluate(*self._transitions(values, policy)).reshape(4, self.size)
        raise RuntimeError("policy iteration did not converge")


# Solved values are also kept on disk (CDC_CACHE_DIR, default ~/.cache/cdc; empty: off), keyed
# by the ruleset and by the source of the modules the model depends on, so that any change to
# the rules or to the code computes them again.
_CACHE_ENV = "CDC_CACHE_DIR"


def _cache_file(rules_json: str) -> Path | None:
    root = os.environ.get(_CACHE_ENV, str(Path.home() / ".cache" / "cdc"))
    if not root:
        return None
    digest = hashlib.sha256(f"{rules_json}|{FLOOR}".encode())
    sources: list[str | Path] = [__file__, combinations.__file__, game.__file__, *sorted(RULEBOOK.glob("*.py"))]
    for module in sources:
        digest.update(Path(module).read_bytes())
    return Path(root) / f"solo-optimum-{digest.hexdigest()[:24]}.npy"


@lru_cache(maxsize=8)
def _optimum_of(rules_json: str) -> SoloOptimum:
    rules = Ruleset.from_dict(json.loads(rules_json))
    path = _cache_file(rules_json)
    try:
        if path is not None and path.exists():
            return SoloOptimum(rules, values=np.load(path))
    except (OSError, ValueError):
        pass  # an unreadable cache is computed again
    optimum = SoloOptimum(rules)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(f".{os.getpid()}.tmp")
            with open(partial, "wb") as out:
                np.save(out, optimum.values)
            partial.replace(path)
        except OSError:
            pass  # no cache, no harm
    return optimum


_last: list[Any] = [None, None]  # the last (ruleset, optimum): decisions ask again and again


def solo_optimum(rules: Ruleset | str = "solo") -> SoloOptimum:
    """The optimum of a ruleset (by name or Ruleset), computed once per ruleset."""
    if isinstance(rules, str):
        rules = load_ruleset(rules)
    if _last[0] is not rules:
        _last[:] = [rules, _optimum_of(json.dumps(rules.to_dict()))]
    return _last[1]


def expected_turns(score: int = 0, civet: bool = False, grelottine: bool = False,
                   rules: Ruleset | str = "solo") -> float:
    """The exact expected number of turns to reach the target from `score` under optimal play."""
    return solo_optimum(rules).expected_turns(score, civet, grelottine)


def optimal_action(state: GameState, decision: Decision) -> Action:
    """The optimum's answer to a decision of a solo game (shouts at once: always in time)."""
    optimum = solo_optimum(state.rules)
    seat = decision.seat
    assert seat is not None, "chance decisions are the dice's"
    score, items = state.scores[seat], state.items[seat]
    if decision.kind == "turn_start":
        return optimum.best_turn_start(score, bool(items["civet"]), bool(items["grelottine"])).action
    if decision.kind in ("sirop", "sirop_bet"):
        civet = state.table.civet
        challenge = state.table.challenge
        dice = state.table.dice
        face = max(set(dice), key=dice.count)
        sirop, bet = optimum.best_sirop(
            score, face, bool(items["civet"]), bool(items["grelottine"]),
            (civet["combination"], civet["stake"]) if civet else None,
            challenge["combination"] if challenge else None)
        if decision.kind == "sirop":
            return Sirop() if sirop else Pass()
        return BirdBet(bet) if bet is not None else Pass()
    if decision.kind == "race":
        return Shout(decision.answers[0], 0.0)
    if decision.kind == "claim":
        return Shout(decision.reason, 0.0)
    return Roll() if Roll() in decision.options else Pass()


# ---------------------------------------------------------------------- the grade and the rank


@dataclass(frozen=True)
class SoloResult:
    turns: int
    expected: float  # the optimum's expected turns from 0
    grade: float  # out of 20
    rank: str

    def describe(self) -> str:
        return (f"{self.turns} turns (best play needs {self.expected:.2f} on average): "
                f"grade {self.grade:.1f}/20, rank {self.rank}")


def grade(turns: int, expected: float, par_grade: float = 10.0) -> float:
    """par_grade × expected / turns, at most 20, to one decimal: a game as long as the
    optimum's average gets par_grade; one twice as long, half of it."""
    return round(min(20.0, par_grade * expected / max(turns, 1)), 1)


def rank_of(grade_out_of_20: float, ranks: list[tuple[float, str]]) -> str:
    return next(name for lowest, name in ranks if grade_out_of_20 >= lowest)


def solo_result(state: GameState) -> SoloResult | None:
    """The rank and grade of a finished solo game; None where the optimum they are measured
    against does not cover its rules (`uncovered`)."""
    if not state.is_over or state.players != 1:
        raise ValueError("a rank and a grade are given at the end of a solo game")
    if uncovered(state.rules) is not None:
        return None
    solo = state.rules.solo
    expected = solo_optimum(state.rules).expected_turns(0)
    out_of_20 = grade(state.turn_number, expected, solo.par_grade)
    return SoloResult(state.turn_number, expected, out_of_20, rank_of(out_of_20, solo.ranks))
