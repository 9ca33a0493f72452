"""Heuristic bots that reason from expected values.

Two styles over the same arithmetic:
- `prudent` takes every bet whose expected value is positive and nothing else, and protects
  a lead: it keeps sure points near the end and shields itself from big challenges.
- `bold` plays for variance when behind: it sirops more Chouettes, bets birds, spends a Civet
  to catch up, and challenges at the maximum.
`patient` (a third bot) is bold except that it keeps its Grelottine for a challenge worth 10
points or more; `hedger` (a fourth) is bold except that its bird bet names a face other than
the thrower's.

The probabilities come from enumerating the 216 rolls under the game's ruleset, so the bots
follow any ruleset file (a changed value table changes their choices).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable
from fractions import Fraction
from functools import cache

from agents.simple import best_sum_bet, meets_minimum
from cdc_env.actions import (
    Action,
    BeauSirop,
    BetOnSuccess,
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
)
from cdc_env.combinations import classify
from cdc_env.game import RACE_PHRASES, Decision, GameState
from cdc_env.reaction import reaction_model
from cdc_env.rulebook.house import tichette, verdier
from cdc_env.rules import Ruleset

ROLLS = list(itertools.product(range(1, 7), repeat=3))

# The least value of a Grelottine challenge the `patient` bot spends its item on (bold: 1).
PATIENT_GRELOTTINE = 10.0


# ---------------------------------------------------------------------- the arithmetic


_TABLES: dict[int, tuple[Ruleset, dict[str, float], dict[tuple[int, ...], float]]] = {}


def _tables(rules: Ruleset) -> tuple[dict[str, float], dict[tuple[int, ...], float]]:
    """Per ruleset (kept while the ruleset object lives): the chance of each combination in one
    roll, and what each sorted roll is worth to its thrower. Bots ask these at every decision."""
    cached = _TABLES.get(id(rules))
    if cached is not None and cached[0] is rules:
        return cached[1], cached[2]
    counts: dict[str, int] = {}
    points: dict[tuple[int, ...], float] = {}
    for dice in ROLLS:
        combination = classify(dice, rules)
        counts[combination.name] = counts.get(combination.name, 0) + 1
        if "suite" in combination.races:
            counts["any_suite"] = counts.get("any_suite", 0) + 1
        value = float(combination.value)
        if combination.name == "chouette_velute":
            value *= 0.5  # a race the thrower wins about half the time
        if "suite" in combination.races:
            value -= rules.races.suite_penalty * 0.1  # the last of the Suite pays
        points[tuple(sorted(dice))] = value
    probabilities = {name: count / 216 for name, count in counts.items()}
    _TABLES[id(rules)] = (rules, probabilities, points)
    return probabilities, points


def probabilities(rules: Ruleset) -> dict[str, float]:
    """Chance that one roll makes each combination (and `any_suite`: three consecutive)."""
    return _tables(rules)[0]


def made_probability(rules: Ruleset, combination: str, sirop_helps: bool) -> float:
    """Chance a fresh roll makes `combination`; a Cul de Chouette may also come from siroting
    a Chouette (1 in 6)."""
    p = probabilities(rules)
    if combination == "suite":
        return p.get("any_suite", 0.0)
    if combination == "cul_de_chouette_sirote":
        return p.get("chouette", 0.0) / 6
    made = p.get(combination, 0.0)
    if combination == "cul_de_chouette" and sirop_helps:
        made += p.get("chouette", 0.0) / 6
    return made


@cache
def soufflette_chance(kept: tuple[int, ...], throws_left: int) -> Fraction:
    """Exact chance to make 1,2,4 from `kept` dice with `throws_left` throws, keeping the best
    dice each time (a small exact recursion over every outcome)."""
    if throws_left == 0:
        return Fraction(0)
    rolled_count = 3 - len(kept)
    total = Fraction(0)
    for rolled in itertools.product(range(1, 7), repeat=rolled_count):
        dice = tuple(sorted(kept + rolled))
        if dice == (1, 2, 4):
            total += 1
        else:
            total += best_soufflette_keep(dice, throws_left - 1)[1]
    return total / 6**rolled_count


def best_soufflette_keep(dice: tuple[int, ...], throws_left: int) -> tuple[tuple[int, ...], Fraction]:
    choices = {tuple(sorted(c)) for size in range(3) for c in itertools.combinations(dice, size)}
    return max(((c, soufflette_chance(c, throws_left)) for c in choices), key=lambda kc: (kc[1], -len(kc[0])))


def combination_points(rules: Ruleset, dice: Iterable[int]) -> float:
    """What a roll is worth to its thrower on average, races counted roughly: a Chouette-Velute
    won half the time, a Suite costing a tenth of its penalty."""
    return _tables(rules)[1][tuple(sorted(dice))]


# ---------------------------------------------------------------------- the bots


class HeuristicBot:
    """Expected-value play; `style` tilts the risk it takes (see the module's doc)."""

    def __init__(self, style: str = "prudent", seed: int | str = 0, reaction: str | None = None) -> None:
        if style not in ("prudent", "bold"):
            raise ValueError(f"unknown heuristic style {style!r}: prudent or bold")
        self.style = style
        self.name = style
        self.rng = random.Random(seed)
        self.reaction = reaction_model(reaction or "human")
        # The least a Grelottine challenge must be worth (stake × (1 − 2p)) to spend the item on.
        self.grelottine_threshold = 1.0 if style == "bold" else 3.0

    # What a seat plays for is `state.team_score`: its own score, or at a table in teams (the
    # Doublette) its team's sum, the score that wins there. The other sides' scores:
    @staticmethod
    def _other_sides(state: GameState, seat: int) -> list[int]:
        leaders = {min(state.teams[other]) for other in range(state.players) if other not in state.teams[seat]}
        return [state.team_score(leader) for leader in sorted(leaders)]

    # The lead over the best opponent (team): positive when ahead.
    @classmethod
    def _lead(cls, state: GameState, seat: int) -> int:
        others = cls._other_sides(state, seat)
        return state.team_score(seat) - max(others) if others else 0

    def _behind(self, state: GameState, seat: int) -> bool:
        others = self._other_sides(state, seat)
        return bool(others) and max(others) >= 250 and self._lead(state, seat) < -60

    def act(self, state: GameState, decision: Decision) -> Action:
        handler = getattr(self, f"_{decision.kind}", None)
        action = handler(state, decision) if handler else None
        if action is not None and decision.allows(action):
            return action
        # Anything this bot does not reason about: the harmless choice.
        for fallback in (Roll(), Pass()):
            if decision.allows(fallback):
                return fallback
        return decision.legal_actions()[0]

    # -- races: always the right phrase, as fast as this bot's reflexes allow
    def _race(self, state: GameState, decision: Decision) -> Action:
        phrase = decision.answers[0] if decision.answers else RACE_PHRASES[decision.reason]
        if phrase == "mecreant" and not meets_minimum(state, decision.seat, "grelottine"):
            # F without negative scores: « Mécréant ! » claims a Grelottine, a Bévue below its
            # minimum; « Je suis un misérable » is the race's other answer.
            phrase = "je_suis_un_miserable"
        if decision.reason == tichette.TICHETTE:
            # House rule Tichette: a claim alone wins V, but among several claimants the best
            # score pays n × V. Only the player strictly last claims (never the one who pays);
            # a Robobrol when offered (the rethrow is theirs).
            seat = decision.seat
            assert seat is not None
            if any(score <= state.scores[seat] for other, score in enumerate(state.scores) if other != seat):
                return Pass()
            phrase = decision.answers[-1]
        return Shout(phrase, self.reaction.sample(self.rng))

    # -- F's Bleu-Rouge: the likeliest sum worth most (the fallback bet 3, 1 way in 216)
    def _bleu_rouge_bet(self, state: GameState, decision: Decision) -> Action:
        return best_sum_bet(state, decision.options)

    # -- before the roll: a Civet only as a comeback
    def _turn_start(self, state: GameState, decision: Decision) -> Action:
        assert decision.seat is not None  # a bot is asked only a seat's decisions
        if decision.staked is None or self.style != "bold" or not self._behind(state, decision.seat):
            return Roll()
        stakes = dict(decision.stakes)
        best = max(stakes, key=lambda c: made_probability(state.rules, c, False))
        return DeclareCivet(best, stakes[best][-1])

    def _buy_cul(self, state: GameState, decision: Decision) -> Action:
        rules, seat = state.rules, decision.seat
        assert seat is not None  # a bot is asked only a seat's decisions
        chouettes = state.table.dice
        buyer_points = sum(combination_points(rules, (*chouettes, cul)) for cul in range(1, 7)) / 6
        # What the thrower would have had, against the Chouette they keep if we buy.
        thrower_now = buyer_points
        thrower_if_bought = rules.scores.chouette[chouettes[0] - 1] if chouettes[0] == chouettes[1] else 0
        thrower = state.table.thrower
        if thrower is not None and thrower in state.teams[seat]:
            return Pass()  # the cul bought from one's partner costs the team 30 and their throw
        opponents = max(1, state.players - 1)
        value = buyer_points - rules.dice_buying.cost + (thrower_now - thrower_if_bought) / opponents
        room = rules.cap_score - state.scores[seat]
        if buyer_points > room:  # gains stop at the cap
            value -= buyer_points - max(room, 0)
        margin = 0 if self.style == "bold" else 5
        return BuyCul() if value > margin else Pass()

    def _sirop(self, state: GameState, decision: Decision) -> Action:
        rules, seat = state.rules, decision.seat
        assert seat is not None  # a bot is asked only a seat's decisions
        dice = state.table.dice
        face = max(set(dice), key=dice.count)
        keep = rules.scores.chouette[face - 1]
        success = rules.scores.cul_de_chouette[face - 1]
        score = state.team_score(seat)  # at a Doublette the team's sum is what wins
        target = rules.target_score
        if score + keep >= target:
            return Pass()  # the Chouette wins the game
        if score + success >= target and self._lead(state, seat) < 0:
            return Sirop()  # only the sirop can win now, and we are behind
        civet_bonus = 15 if face == 6 and not state.items[seat]["civet"] else 0
        sirop = success / 6 - keep * 5 / 6 + civet_bonus * 5 / 6
        if self.style == "bold":
            sirop += 8 if self._lead(state, seat) < 0 else 0
        return Sirop() if sirop > keep else Pass()

    def _sirop_bet(self, state: GameState, decision: Decision) -> Action:
        # A bird bet is worth win/6 - loss·5/6 on average, 25/6 - 5·5/6 = 0 at most tables: only
        # the bold take a fair one, every style one that pays (solo's free bet, 25 and 0). On
        # the thrower's own face (the one they hope for), which is "Beau-Sirop !" where the
        # rules have it (naming that bird there is a Bévue). Not betting is said where silence
        # is a Bévue ("Couche-Sirop !"), and so is not betting below F's minimum score for a bet.
        seat = decision.seat
        assert seat is not None  # a bot is asked only a seat's decisions
        rules = state.rules
        value = rules.sirotage.bet_win / 6 - rules.sirotage.bet_loss * 5 / 6
        if value < 0 or (value == 0 and self.style != "bold") or state.scores[seat] >= rules.cap_score \
                or not meets_minimum(state, seat, "sirop_bet"):
            return CoucheSirop() if decision.allows(CoucheSirop()) else Pass()
        return BeauSirop() if rules.sirotage.beau_sirop else BirdBet(_chouette_face(state))

    def _claim(self, state: GameState, decision: Decision) -> Action:
        # A gain that counts only when claimed ("Sirop gagnant !", "À Kadoc !"): always claimed.
        return Shout(decision.reason, self.reaction.sample(self.rng))

    def _verdier_bet(self, state: GameState, decision: Decision) -> Action:
        # House rule Verdier: a bet is worth (win − 5·loss)/6, 0 with Kize's 25 and 5. Like a
        # bird bet, the bold take a fair bet (below the cap, where a gain still counts); the
        # prudent only one that pays.
        seat = decision.seat
        assert seat is not None
        value = verdier.expected_gain(state.table.dice[:2], state.rules.house_rules["verdier"])
        if state.scores[seat] >= state.rules.cap_score:
            return Pass()
        return BetOnSuccess() if value > 0 or (value == 0 and self.style == "bold") else Pass()

    def _attrape_oiseau(self, state: GameState, decision: Decision) -> Action:
        # House rule Attrape-oiseau: a caught sirop is worth Cul de Chouette/6 − Chouette·5/6 to
        # the catcher (positive on 1, 2, 3; 0 on 4; negative on 5, 6); bold take a fair one.
        seat = decision.seat
        assert seat is not None
        rules = state.rules
        dice = state.table.dice
        face = max(set(dice), key=dice.count)
        value = rules.scores.cul_de_chouette[face - 1] / 6 - rules.scores.chouette[face - 1] * 5 / 6
        if state.scores[seat] >= rules.cap_score:
            return Pass()
        return BetOnSuccess() if value > (0 if self.style == "bold" else 3) else Pass()

    def _flan_use(self, state: GameState, decision: Decision) -> Action:
        # House rule Flan's use: a flanned throw loses what it would have gained (about twice a
        # throw's mean points). Spend the Flan on the leader only, once they are near the end
        # (bold: from 250, prudent: from 300), when it can stop a win.
        thrower, seat = state.table.thrower, decision.seat
        if thrower is None or seat is None or thrower in state.teams[seat] or self._lead(state, thrower) < 0:
            return Pass()  # (never one's partner at a Doublette; the leader is a team's sum there)
        return BetOnSuccess() if state.team_score(thrower) >= (250 if self.style == "bold" else 300) else Pass()

    def _civet_double(self, state: GameState, decision: Decision) -> Action:
        # House rule Civet doublé: joining costs our Civet and doubles the declarer's result,
        # stake × (2p − 1) on average, which is a loss for every Civet combination (p < ½).
        # Join to double a leader's expected loss when it is worth more than a Civet of ours
        # (bold: 10 points, prudent: 20).
        civet = state.table.civet or {}
        declarer, seat = civet.get("seat"), decision.seat
        if declarer is None or seat is None or declarer in state.teams[seat] \
                or state.team_score(declarer) < state.team_score(seat):
            return Pass()  # (never one's partner's Civet at a Doublette)
        p = made_probability(state.rules, civet.get("combination", "chouette"), False)
        doubled_loss = civet.get("stake", 0) * civet.get("multiplier", 1) * (1 - 2 * p)
        return BetOnSuccess() if doubled_loss > (10 if self.style == "bold" else 20) else Pass()

    def _success_bet(self, state: GameState, decision: Decision, combination: str, sirop_helps: bool) -> Action:
        rules = state.rules
        p = made_probability(rules, combination, sirop_helps)
        bet_rules = rules.grelottine if decision.kind == "challenge_bet" else rules.civet
        value = p * bet_rules.bet_win - (1 - p) * bet_rules.bet_loss
        return BetOnSuccess() if value > 0 else Pass()

    def _civet_bet(self, state: GameState, decision: Decision) -> Action:
        civet = state.table.civet or {}
        return self._success_bet(state, decision, civet.get("combination", "chouette"), False)

    def _challenge_bet(self, state: GameState, decision: Decision) -> Action:
        challenge = state.table.challenge or {}
        return self._success_bet(state, decision, challenge.get("combination", "chouette"), True)

    def _grelottine(self, state: GameState, decision: Decision) -> Action:
        # The challenger wins the stake when the named combination is *not* made:
        # value = stake × (1 - 2p). Name the combination with the best value at its maximum.
        # A partner's Néant is never challenged: the stake would only move within the team.
        # (The Néant's thrower is the one its combination names: a bought cul's is the buyer.)
        seat = decision.seat
        assert seat is not None  # a bot is asked only a seat's decisions
        neant = next((event for event in reversed(state.log) if event["type"] == "combination"), None)
        if neant is not None and neant["seat"] in state.teams[seat]:
            return Pass()
        best, best_value = None, 0.0
        for combination, stakes in decision.stakes:
            p = made_probability(state.rules, combination, True)
            value = stakes[-1] * (1 - 2 * p)
            if value > best_value:
                best, best_value = ChallengeGrelottine(combination, stakes[-1]), value
        return best if best is not None and best_value >= self.grelottine_threshold else Pass()

    def _boucliette(self, state: GameState, decision: Decision) -> Action:
        challenge = state.table.challenge or {}
        seat = decision.seat
        p = made_probability(state.rules, challenge.get("combination", "chouette"), True)
        expected_loss = challenge.get("stake", 0) * (1 - 2 * p)
        assert seat is not None  # a bot is asked only a seat's decisions
        # One's own challenge, or a partner's at a Doublette (an opponent's challenge of them).
        team = state.teams[seat]
        shielded = challenge.get("challenged") in team and challenge.get("challenger") not in team
        if shielded and expected_loss >= (8 if self.style == "prudent" else 15):
            return UseBoucliette()
        return Pass()

    def _soufflette(self, state: GameState, decision: Decision) -> Action:
        # The challenger wins 30 when 1,2,4 is missed, far more often than not: always
        # challenge, and the strongest opponent (never one's partner at a Doublette: the 30
        # would only move within the team).
        seat = decision.seat
        assert seat is not None  # a bot is asked only a seat's decisions
        targets = [o for o in decision.options
                   if isinstance(o, ChallengeSoufflette) and o.target not in state.teams[seat]  # (F's minimums:)
                   and meets_minimum(state, seat, "soufflette") and meets_minimum(state, o.target, "soufflette")]
        return max(targets, key=lambda o: (state.scores[o.target], -o.target)) if targets else Pass()

    def _soufflette_keep(self, state: GameState, decision: Decision) -> Action:
        souffle = state.table.soufflette or {}
        throws_left = state.rules.soufflette.throws - souffle.get("throw", 1)
        keep, _ = best_soufflette_keep(tuple(sorted(state.table.dice)), throws_left)
        return KeepDice(keep)

    def _challenge_roll(self, state: GameState, decision: Decision) -> Action:
        return Roll()


class PatientBot(HeuristicBot):
    """bold's play, except that it keeps its Grelottine for a challenge worth
    `PATIENT_GRELOTTINE` points or more (stake × (1 − 2p)) where bold spends it on any challenge
    worth 1. A Grelottine is held one at a time and its stake grows with the scores, so a
    small early challenge costs the larger one the item could have made later. In v004 at 2
    seats it wins 51.1 % against bold (docs/agents.md has the sweep of this threshold)."""

    def __init__(self, seed: int | str = 0, reaction: str | None = None) -> None:
        super().__init__("bold", seed=seed, reaction=reaction)
        self.name = "patient"
        self.grelottine_threshold = PATIENT_GRELOTTINE


def _chouette_face(state: GameState) -> int:
    """The face of the Chouette being siroted: the pair among the dice on the table."""
    dice = state.table.dice
    return max(set(dice), key=dice.count)


class HedgerBot(HeuristicBot):
    """bold's play, except that its bird bet names a face other than the thrower's (the
    smallest other face). A bird bet is worth 0 on average whichever face it names; what the
    face changes is when it pays: on the thrower's face in the roll where the thrower makes the
    Cul de Chouette, on another face in a roll where the thrower's sirop fails. At 3 and 4
    seats of `v004` that wins more than bold's bet, at 2 it makes no difference (rollouts,
    then 12,000 games: docs/agents.md)."""

    def __init__(self, seed: int | str = 0, reaction: str | None = None) -> None:
        super().__init__("bold", seed=seed, reaction=reaction)
        self.name = "hedger"

    def _sirop_bet(self, state: GameState, decision: Decision) -> Action:
        bet = super()._sirop_bet(state, decision)
        if isinstance(bet, (BirdBet, BeauSirop)):
            thrower_face = _chouette_face(state)
            return BirdBet(next(face for face in range(1, 7) if face != thrower_face))
        return bet


def prudent(seed: int | str = 0, reaction: str | None = None) -> HeuristicBot:
    return HeuristicBot("prudent", seed=seed, reaction=reaction)


def bold(seed: int | str = 0, reaction: str | None = None) -> HeuristicBot:
    return HeuristicBot("bold", seed=seed, reaction=reaction)


def patient(seed: int | str = 0, reaction: str | None = None) -> PatientBot:
    return PatientBot(seed=seed, reaction=reaction)


def hedger(seed: int | str = 0, reaction: str | None = None) -> HedgerBot:
    return HedgerBot(seed=seed, reaction=reaction)
