"""The flat action space and the observation vector, shared by the AEC and the Gymnasium env.

Actions. Every decision of the game is answered by one index of a single `Discrete` space,
masked to the decision's legal options. The space is a list of *blocks*, one per action type;
each block lists what its indices mean (a bird, a phrase, a seat, kept faces, a stake level):

    pass · roll · buy_cul · sirop · bet_on_success · boucliette · bird_bet ×6 · shout ×phrases ·
    soufflette ×(players−1) · keep ×28 · civet ×(combinations × levels) ·
    grelottine ×(combinations × levels) · then the kinds of `complete` and `solo` where the
    engine defines them: beau_sirop · couche_sirop · use_grelottine · bet_sum ×16

A staked choice (Civet, Grelottine) names a combination and a *stake level*: a fraction of the
allowed range, 0 % being its minimum and 100 % its maximum, rounded to a legal integer stake;
levels that round to the stake of the level before are masked out, so each masked-in index is
a distinct action. A Soufflette names its target relative to the acting seat (+1 is the next
seat in play order), like the observation. A new action type is one line of the layout in
`ActionCodec.__init__`; a new decision kind, a new race or a new phrase of the engine gets its
place in the observation and the action space by itself (appended, so older indices stay).

Observations. A float32 vector in [-1, 1] of public information only, seat-relative (the
observing seat first, then the others in play order): per seat its score, items, role in the
turn, bets; then the dice, the combination, the pending decision, the race, the stake ranges on
offer, the Civet, the Grelottine challenge, the Soufflette, and the turn count; then what a
table's house rules add (its team mate, who bet on the throw in play). Shouts of a race
in progress are left out (a race is simultaneous: the engine asks the seats one after another,
but none may hear the others before deciding), and so is everything the dice have not shown.
`ObservationEncoder.layout` names every slice; docs/environment.md lists them.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cdc_env.actions import (
    ACTION_TYPES,
    BIRDS,
    Action,
    BirdBet,
    ChallengeGrelottine,
    DeclareCivet,
    IllegalActionError,
)
from cdc_env.combinations import COMBINATION_NAMES, classify
from cdc_env.game import DECISION_TEXT, ITEMS, RACE_PHRASES, SHOUTABLE_PHRASES, Decision, GameState
from cdc_env.rulebook.house import added_names, plays_teams, teams_of
from cdc_env.rules import CIVET_COMBINATIONS, GRELOTTINE_COMBINATIONS, Ruleset

# Stake levels, as fractions of the allowed range [min, max]: always the minimum and the maximum.
STAKE_LEVELS: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)


def _extended(known: tuple[str, ...], found: Sequence[str]) -> tuple[str, ...]:
    """`known` in its fixed order (indices that saved models rely on), then anything new the
    engine defines, appended so that older indices never move."""
    return known + tuple(name for name in dict.fromkeys(found) if name not in known)


# Decision kinds, in observation order; kinds the engine adds later are appended automatically.
DECISION_KINDS: tuple[str, ...] = _extended(
    ("turn_start", "civet_bet", "buy_cul", "sirop", "sirop_bet", "race", "soufflette",
     "soufflette_keep", "grelottine", "boucliette", "challenge_bet", "challenge_roll"),
    [kind for kind in DECISION_TEXT if kind != "chance"],
)
# Races (a race decision's `reason`) and the phrases one may shout.
RACES: tuple[str, ...] = _extended(("chouette_velute", "suite", "suite_tie"), list(RACE_PHRASES))


PHRASES: tuple[str, ...] = _extended(
    ("pas_mou_le_caillou", "grelotte_ca_picote", "sans_fin"), SHOUTABLE_PHRASES
)
# Kept faces between Soufflette throws: none, one, or two (sorted), whatever the dice show.
KEEPS: tuple[tuple[int, ...], ...] = (
    ((),)
    + tuple((face,) for face in range(1, 7))
    + tuple(itertools.combinations_with_replacement(range(1, 7), 2))
)
# Combinations with a stake range in some decision (Civet's and Grelottine's, in that order).
STAKED_COMBINATIONS: tuple[str, ...] = _extended(CIVET_COMBINATIONS, GRELOTTINE_COMBINATIONS)


def stake_at(allowed: range, level: float) -> int:
    """The legal integer stake at `level` (0..1) of the range: min at 0, max at 1."""
    low, high = allowed.start, allowed.stop - 1
    return low + int(level * (high - low) + 0.5)


# ---------------------------------------------------------------------------------- actions


@dataclass(frozen=True)
class Block:
    """A run of action indices for one action type. `field` is the action's field that picks
    the index within the block (None: a block of one index); `choices` are its values, index by
    index (for a Soufflette, seat offsets; for a staked action, (combination, level) pairs)."""

    name: str
    action: type[Action]
    field: str | None
    start: int
    choices: tuple[Any, ...]

    @property
    def stop(self) -> int:
        return self.start + len(self.choices)


class ActionCodec:
    """Maps action indices to engine actions and back, and computes legal-action masks."""

    def __init__(self, players: int, stake_levels: Sequence[float] = STAKE_LEVELS,
                 house_phrases: Sequence[str] = ()) -> None:
        """`house_phrases`: the shouts a table's house rules add (`cdc_env.rulebook.house.
        added_names(rules.house_rules, "phrases")`), appended to the shout block: the indices
        after it move for such a table, and only for it."""
        levels = tuple(float(level) for level in stake_levels)
        # (NaN compares false both ways: it slipped through the order check and failed later.)
        if not levels or levels[0] != 0.0 or levels[-1] != 1.0 or list(levels) != sorted(set(levels)) \
                or not all(0.0 <= level <= 1.0 for level in levels):
            raise ValueError(
                f"stake_levels must rise from 0.0 (the minimum stake) to 1.0 (the maximum), "
                f"got {stake_levels!r}"
            )
        self.players = players
        self.stake_levels = levels
        # The whole action space, in index order: (action kind, field, choices). A kind the
        # engine does not define (yet) is left out; a new action type is one more line here.
        layout: list[tuple[str, str | None, tuple[Any, ...]]] = [
            ("pass", None, (None,)),
            ("roll", None, (None,)),
            ("buy_cul", None, (None,)),
            ("sirop", None, (None,)),
            ("bet_on_success", None, (None,)),
            ("boucliette", None, (None,)),
            ("bird_bet", "face", tuple(range(1, 7))),
            ("shout", "phrase", PHRASES + tuple(p for p in house_phrases if p not in PHRASES)),
            ("soufflette", "target", tuple(range(1, players))),  # seat offsets
            ("keep", "keep", KEEPS),
            ("civet", "stake", tuple(itertools.product(CIVET_COMBINATIONS, levels))),
            ("grelottine", "stake", tuple(itertools.product(GRELOTTINE_COMBINATIONS, levels))),
            # complete and solo (F, S)
            ("beau_sirop", None, (None,)),
            ("couche_sirop", None, (None,)),
            ("use_grelottine", None, (None,)),
            ("bet_sum", "total", tuple(range(3, 19))),
        ]
        self.blocks: dict[str, Block] = {}
        start = 0
        for name, field, choices in layout:
            if name in ACTION_TYPES:
                self.blocks[name] = Block(name, ACTION_TYPES[name], field, start, choices)
                start += len(choices)
        self.size = start
        # Per action type: its block's start, field and {field value: offset}. Finding an option's
        # index is a dict lookup on its type (cheap: no hashing of the action itself).
        self._by_type: dict[type[Action], tuple[int, str | None, dict[Any, int]]] = {}
        # Staked choices: the first index of each (action type, combination).
        self._staked: dict[tuple[type[Action], str], int] = {}
        for block in self.blocks.values():
            offsets = {choice: offset for offset, choice in enumerate(block.choices)}
            self._by_type[block.action] = (block.start, block.field, offsets)
            if block.field == "stake":
                for offset, (combination, _) in enumerate(block.choices):
                    self._staked.setdefault((block.action, combination), block.start + offset)
        # What each index means, for decoding without a search.
        self._entries: list[tuple[Block, Any]] = [
            (block, choice) for block in self.blocks.values() for choice in block.choices
        ]
        self.names: tuple[str, ...] = tuple(self._name(i) for i in range(self.size))
        self._mask_cache: tuple[Decision | None, int, np.ndarray] = (None, -1, np.zeros(0, np.int8))

    # ---------------------------------------------------------------- masks

    def mask(self, decision: Decision | None, seat: int) -> np.ndarray:
        """The legal indices (int8 0/1) of `decision` for `seat`; all zeros when it is not that
        seat's decision. The array is shared: copy it before changing it."""
        if decision is None or decision.seat != seat:
            return np.zeros(self.size, np.int8)
        cached, cached_seat, mask = self._mask_cache
        if cached is decision and cached_seat == seat:
            return mask
        mask = np.zeros(self.size, np.int8)
        for option in decision.options:
            mask[self.index_of(option, seat, decision)] = 1
        for combination, allowed in decision.stakes:
            start = self._staked_start(decision, combination)
            previous = None
            for level_index, level in enumerate(self.stake_levels):
                stake = stake_at(allowed, level)
                if stake != previous:  # levels that round to the same stake: only the first
                    mask[start + level_index] = 1
                previous = stake
        self._mask_cache = (decision, seat, mask)
        return mask

    def index_of(self, option: Action, seat: int, decision: Decision | None = None) -> int:
        """The index of an unstaked option (a shout: of its phrase, whatever its onset)."""
        entry = self._by_type.get(type(option))
        if entry is None or entry[1] == "stake":
            what = f"decision {decision.kind!r} offers " if decision is not None else ""
            raise ValueError(f"{what}{option}, which has no action index here: add a block for "
                             f"{type(option).__name__} to ActionCodec in cdc_env/spaces.py")
        start, field, offsets = entry
        if field is None:
            return start
        value = getattr(option, field)
        if field == "target":  # seats are named relative to the acting seat
            value = (value - seat) % self.players
        try:
            return start + offsets[value]
        except KeyError:
            raise ValueError(f"{option} has no action index: its {field} {value!r} is not among "
                             f"the choices of block {type(option).__name__} in cdc_env/spaces.py"
                             ) from None

    def _staked_start(self, decision: Decision, combination: str) -> int:
        start = self._staked.get((decision.staked, combination))  # type: ignore[arg-type]
        if start is None:
            raise ValueError(
                f"decision {decision.kind!r} offers {decision.staked} on {combination!r}, which "
                f"has no action index: add it to the staked blocks of cdc_env/spaces.py"
            )
        return start

    # ---------------------------------------------------------------- decoding

    def decode(self, index: Any, decision: Decision, seat: int) -> Action:
        """The engine action of a legal index. A shout comes back without its onset (the
        caller adds the seat's own). An illegal index raises, naming the legal choices."""
        try:
            i = int(index)
        except (TypeError, ValueError):
            raise IllegalActionError(
                f"an action is an index in 0..{self.size - 1}, got {index!r}"
            ) from None
        if i != index or not 0 <= i < self.size:
            raise IllegalActionError(f"action index {index!r} is outside 0..{self.size - 1}")
        if not self.mask(decision, seat)[i]:
            raise IllegalActionError(
                f"action {i} ({self.names[i]}) is not legal now: {decision.describe()}; "
                f"legal: {self.describe_legal(decision, seat)}"
            )
        block, choice = self._entries[i]
        if block.field is None:
            return block.action()
        if block.field == "target":
            return block.action((seat + choice) % self.players)  # type: ignore[call-arg]
        if block.field == "stake":
            combination, level = choice
            allowed = dict(decision.stakes)[combination]
            return block.action(combination, stake_at(allowed, level))  # type: ignore[call-arg]
        return block.action(choice)  # type: ignore[call-arg]

    def encode(self, action: Action, decision: Decision, seat: int) -> int:
        """The index that plays `action` (a staked action: the level nearest its stake)."""
        if isinstance(action, (DeclareCivet, ChallengeGrelottine)):
            start = self._staked_start(decision, action.combination)
            allowed = dict(decision.stakes)[action.combination]
            stakes = [stake_at(allowed, level) for level in self.stake_levels]
            nearest = min(range(len(stakes)), key=lambda k: (abs(stakes[k] - action.stake), k))
            return start + nearest
        return self.index_of(action, seat, decision)

    def block_of(self, index: int) -> Block:
        return self._entries[index][0]

    def describe_legal(self, decision: Decision, seat: int) -> str:
        legal = np.flatnonzero(self.mask(decision, seat))
        return ", ".join(f"{i} {self.names[i]}" for i in legal)

    def _name(self, index: int) -> str:
        block, choice = self._entries[index]
        if block.field is None:
            return block.name
        if block.action is BirdBet:
            return f"bird_bet {BIRDS[choice - 1]} ({choice})"
        if block.field == "target":
            return f"{block.name} seat+{choice}"
        if block.field == "keep":
            return f"keep {list(choice)}"
        if block.field == "stake":
            return f"{block.name} {choice[0]} stake {choice[1]:.0%}"
        return f"{block.name} {choice}"


# ---------------------------------------------------------------------------------- observations

SEAT_FEATURES: tuple[str, ...] = (
    ("score",)
    + ITEMS
    + ("thrower", "buyer", "deciding", "civet_declared", "grelottine_challenger",
       "grelottine_challenged", "soufflette_challenger", "soufflette_target")
    + tuple(f"bird_bet_{face}" for face in range(1, 7))
    + ("bet_on_success", "sum_bet")  # sum_bet: a Bleu-Rouge bet (complete), its sum / 18
    # The chance that one fresh roll of this seat's takes it to the target. Scores are linear
    # in the vector, but whether a roll can end the game is a sharp step that a small network
    # finds hard to learn from ±1 outcomes; near the end it decides what a cul is worth.
    + ("win_reach",)
)


class ObservationEncoder:
    """Encodes the public state as seen from one seat into a float32 vector in [-1, 1]."""

    def __init__(self, rules: Ruleset, players: int, max_turns: int) -> None:
        self.rules = rules
        self.players = players
        self.max_turns = max_turns
        # A table's house rules append their decision kinds and races (the five texts' tables
        # keep their layout).
        decision_kinds = DECISION_KINDS + tuple(k for k in added_names(rules.house_rules, "decisions")
                                                if k not in DECISION_KINDS)
        races = RACES + tuple(r for r in added_names(rules.house_rules, "races") if r not in RACES)
        sections: list[tuple[str, int]] = [
            ("seats", players * len(SEAT_FEATURES)),
            ("dice", 3 * 6),  # one-hot per die, in the table's order (the two chouettes first)
            ("combination", len(COMBINATION_NAMES)),
            ("decision", len(decision_kinds)),
            ("race", len(races)),
            ("stakes", 2 * len(STAKED_COMBINATIONS)),  # (min, max) on offer, / target
            ("civet", len(CIVET_COMBINATIONS) + 1),  # declared combination, stake / target
            ("challenge", len(GRELOTTINE_COMBINATIONS) + 1),  # named combination, stake / target
            ("soufflette", 1),  # throw / throws
            ("turn", 1),  # turn number / max_turns
            ("throw_reach", 1),  # chance the throw in progress, from the dice shown, wins for its thrower
        ]
        # House rules' sections, appended for such a table only (the five texts' tables keep
        # their layout): a team mode's team mates, then each rule's shown seats (the Verdier's
        # bettors), each one value per seat, seat-relative like the seats' blocks.
        shown_seats = added_names(rules.house_rules, "shown_seats")
        if plays_teams(rules.house_rules):
            sections.append(("team", players))
        sections += [(key, players) for key in shown_seats]
        self.layout: dict[str, slice] = {}
        start = 0
        for name, size in sections:
            self.layout[name] = slice(start, start + size)
            start += size
        self.size = start
        self._feature = {name: i for i, name in enumerate(SEAT_FEATURES)}
        self._index = {name: {value: self.layout[name].start + i for i, value in enumerate(values)}
                       for name, values in (("combination", COMBINATION_NAMES),
                                            ("decision", decision_kinds), ("race", races),
                                            ("civet", CIVET_COMBINATIONS),
                                            ("challenge", GRELOTTINE_COMBINATIONS))}
        self._stake_index = {name: self.layout["stakes"].start + 2 * i
                             for i, name in enumerate(STAKED_COMBINATIONS)}
        self._scale = 1.0 / rules.target_score
        width = len(SEAT_FEATURES)
        self._seat_base = [tuple(((other - seat) % players) * width for other in range(players))
                           for seat in range(players)]
        self._item_offset = {item: self._feature[item] for item in ITEMS}
        self._dice_start = self.layout["dice"].start
        self._civet_stake = self.layout["civet"].stop - 1
        self._challenge_stake = self.layout["challenge"].stop - 1
        self._soufflette_throw = self.layout["soufflette"].start
        self._turn = self.layout["turn"].start
        self._throw_reach = self.layout["throw_reach"].start
        # Per observing seat: the indices that mark its team mates (none without a team mode).
        self._team_marks: list[tuple[int, ...]] = [() for _ in range(players)]
        if "team" in self.layout:
            teams, team_start = teams_of(rules.house_rules, players), self.layout["team"].start
            self._team_marks = [tuple(team_start + (mate - seat) % players for mate in teams[seat] if mate != seat)
                                for seat in range(players)]
        self._shown_seats = tuple((key, self.layout[key].start) for key in shown_seats)
        # In teams (the Doublette) the game is won on the team's sum: the reaches read it.
        self._teamed = "team" in self.layout
        # P(a fresh roll is worth ≥ n points to its thrower), for every n up to the best roll.
        values = [classify(dice, rules).value for dice in itertools.product(range(1, 7), repeat=3)]
        self._reach = [sum(v >= need for v in values) / len(values) for need in range(max(values) + 2)]
        self._shown_reach: dict[tuple[tuple[int, ...], int], float] = {}

    def reach(self, need: int) -> float:
        """Chance that one fresh roll is worth at least `need` points to its thrower."""
        return 1.0 if need <= 0 else self._reach[min(need, len(self._reach) - 1)]

    def throw_reach(self, shown: Sequence[int], need: int) -> float:
        """Chance that a throw showing `shown` so far ends worth at least `need` points."""
        key = (tuple(sorted(shown)), max(0, min(need, len(self._reach) - 1)))
        chance = self._shown_reach.get(key)
        if chance is None:
            rest = list(itertools.product(range(1, 7), repeat=3 - len(key[0])))
            chance = sum(classify(key[0] + r, self.rules).value >= key[1] for r in rest) / len(rest)
            self._shown_reach[key] = chance
        return chance

    def encode(self, state: GameState, seat: int) -> np.ndarray:
        # Speed matters (one observation per step): plain scalar writes into a fresh zero
        # vector, offsets computed once in __init__, nothing allocated but the vector.
        obs = np.zeros(self.size, np.float32)
        base = self._seat_base[seat]  # other seat -> start of its block in this view
        scale = self._scale
        limit = self.rules.target_score
        reach_offset = self._feature["win_reach"]
        totals = [state.team_score(s) for s in range(self.players)] if self._teamed else state.scores
        for other, score in enumerate(state.scores):
            if score:
                # (min/max builtins would cost more than the rest of the loop)
                obs[base[other]] = score * scale if -limit < score < limit else (score > 0) - (score < 0)
            obs[base[other] + reach_offset] = self.reach(limit - totals[other])
        item_offset = self._item_offset
        for other, held in enumerate(state.items):
            for item, count in held.items():
                if count:
                    obs[base[other] + item_offset[item]] = 1.0
        f = self._feature
        table = state.table
        if table.thrower is not None:
            obs[base[table.thrower] + f["thrower"]] = 1.0
        if table.buyer is not None:
            obs[base[table.buyer] + f["buyer"]] = 1.0
        for bettor, face in table.sirop_bets.items():
            obs[base[bettor] + f["bird_bet_1"] + face - 1] = 1.0
        for bettor in table.success_bets:
            obs[base[bettor] + f["bet_on_success"]] = 1.0
        for bettor, total in table.sum_bets.items():
            obs[base[bettor] + f["sum_bet"]] = total / 18
        if table.civet:
            civet = table.civet
            obs[base[civet["seat"]] + f["civet_declared"]] = 1.0
            obs[self._index["civet"][civet["combination"]]] = 1.0
            obs[self._civet_stake] = min(1.0, civet["stake"] * scale)
        if table.challenge:
            challenge = table.challenge
            obs[base[challenge["challenger"]] + f["grelottine_challenger"]] = 1.0
            obs[base[challenge["challenged"]] + f["grelottine_challenged"]] = 1.0
            obs[self._index["challenge"][challenge["combination"]]] = 1.0
            obs[self._challenge_stake] = min(1.0, challenge["stake"] * scale)
        if table.soufflette:
            soufflette = table.soufflette
            obs[base[soufflette["challenger"]] + f["soufflette_challenger"]] = 1.0
            obs[base[soufflette["target"]] + f["soufflette_target"]] = 1.0
            obs[self._soufflette_throw] = soufflette["throw"] / self.rules.soufflette.throws
        position = self._dice_start - 1
        for face in table.dice[:3]:
            obs[position + face] = 1.0
            position += 6
        if table.combination:
            obs[self._index["combination"][table.combination]] = 1.0
        pending = state.pending
        race = table.race
        if pending is not None and pending.seat is not None:
            obs[base[pending.seat] + f["deciding"]] = 1.0
            kind = self._index["decision"].get(pending.kind)
            if kind is None:
                raise ValueError(f"unknown decision kind {pending.kind!r}: append it to "
                                 f"DECISION_KINDS in cdc_env/spaces.py")
            obs[kind] = 1.0
            for combination, allowed in pending.stakes:
                index = self._stake_index.get(combination)
                if index is None:
                    raise ValueError(f"decision {pending.kind!r} stakes on {combination!r}: add it "
                                     f"to STAKED_COMBINATIONS in cdc_env/spaces.py")
                obs[index] = min(1.0, allowed.start * scale)
                obs[index + 1] = min(1.0, (allowed.stop - 1) * scale)
            if pending.kind == "race":
                race = pending.reason
        if race:
            obs[self._index["race"][race]] = 1.0
        obs[self._turn] = min(1.0, state.turn_number / self.max_turns)
        for index in self._team_marks[seat]:
            obs[index] = 1.0
        for key, start in self._shown_seats:
            for other in table.house.get(key, ()):
                obs[start + (other - seat) % self.players] = 1.0
        # While an ordinary throw is in progress (before or between its dice; a challenge's or a
        # Soufflette's dice score otherwise): the buy-the-cul decision's key number near the end.
        if (table.thrower is not None and len(table.dice) < 3 and not table.challenge
                and not table.soufflette):
            obs[self._throw_reach] = self.throw_reach(table.dice[:3], limit - totals[table.thrower])
        return obs
