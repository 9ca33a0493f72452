"""The combination table: which combination three dice make under a ruleset, and its value.

The table is data: rows in the order the rules check them, the first match wins. A row that
the ruleset switches off falls through to the next one (1,2,3 without Suite-Velutée is a
Velute of 3 that also starts the Suite race; 1,2,4 without Soufflette is a Néant).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cdc_env.rules import Ruleset

# Race names, as used in events and by the environment.
RACE_CHOUETTE_VELUTE = "chouette_velute"
RACE_SUITE = "suite"
# complete (F): the thrower against the others, and the Néant Soufflé's race for a Grelottine.
RACE_SUITE_VELUTEE = "suite_velutee"
RACE_ARTICHETTE = "artichette"
RACE_NEANT_SOUFFLE = "neant_souffle"


@dataclass(frozen=True)
class Combination:
    name: str
    value: int
    # The face that names the combination: the pair's face (Chouette, Chouette-Velute's pair),
    # the largest die (Velute), the triple's face (Cul de Chouette); 0 when none.
    face: int
    races: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {"combination": self.name, "value": self.value, "races": list(self.races)}


Dice = tuple[int, int, int]


def _cul_de_chouette(d: Dice) -> int:
    return d[0] if d[0] == d[1] == d[2] else 0


def _exact(faces: Dice, face: int) -> Callable[[Dice], int]:
    return lambda d: face if d == faces else 0


def _chouette_velute(d: Dice) -> int:
    return d[1] if d[0] == d[1] and d[0] + d[1] == d[2] else 0


def _velute(d: Dice) -> int:
    return d[2] if d[0] + d[1] == d[2] and d[0] != d[1] else 0


def _chouette(d: Dice) -> int:
    if d[0] == d[1]:
        return d[0]
    if d[1] == d[2]:
        return d[1]
    return 0


def _suite(d: Dice) -> int:
    return d[2] if d[1] == d[0] + 1 and d[2] == d[1] + 1 else 0


@dataclass(frozen=True)
class _Row:
    name: str
    enabled: Callable[[Ruleset], bool]
    match: Callable[[Dice], int]  # face (> 0) when the dice match
    value: Callable[[Ruleset, int], int]


def _always(_: Ruleset) -> bool:
    return True


def _zero(_: Ruleset, __: int) -> int:
    return 0


ROWS: tuple[_Row, ...] = (
    _Row("cul_de_chouette", _always, _cul_de_chouette, lambda r, f: r.scores.cul_de_chouette[f - 1]),
    _Row("suite_velutee", lambda r: r.combinations.suite_velutee, _exact((1, 2, 3), 3),
         lambda r, f: r.scores.velute[f - 1]),
    # Artichette and Bleu-Rouge are worth the Chouette of their pair.
    _Row("artichette", lambda r: r.combinations.artichette, _exact((3, 4, 4), 4),
         lambda r, f: r.scores.chouette[f - 1]),
    _Row("bleu_rouge", lambda r: r.combinations.bleu_rouge, _exact((3, 3, 4), 3),
         lambda r, f: r.scores.chouette[f - 1]),
    _Row("chouette_velute", _always, _chouette_velute, lambda r, f: r.scores.velute[2 * f - 1]),
    _Row("velute", _always, _velute, lambda r, f: r.scores.velute[f - 1]),
    _Row("chouette", _always, _chouette, lambda r, f: r.scores.chouette[f - 1]),
    _Row("suite", lambda r: r.combinations.suite, _suite, _zero),
    _Row("soufflette", lambda r: r.combinations.soufflette, _exact((1, 2, 4), 4), _zero),
    _Row("flan", lambda r: r.combinations.flan, _exact((2, 5, 6), 6), _zero),
    _Row("neant_souffle", lambda r: r.combinations.neant_souffle, _exact((1, 4, 6), 6), _zero),
)

COMBINATION_NAMES: tuple[str, ...] = tuple(row.name for row in ROWS) + ("neant",)


_TABLES: dict[int, tuple[Ruleset, dict[tuple[int, ...], Combination]]] = {}


def classify(dice: Sequence[int], rules: Ruleset) -> Combination:
    """The combination of three dice; their order never matters."""
    key = tuple(sorted(dice))
    cached = _TABLES.get(id(rules))
    if cached is None or cached[0] is not rules:
        # Each ruleset's 56 sorted rolls are classified once (kept while the ruleset lives).
        cached = (rules, {})
        _TABLES[id(rules)] = cached
    combination = cached[1].get(key)
    if combination is None:
        combination = _classify(key, rules)
        cached[1][key] = combination
    return combination


def _classify(dice: tuple[int, ...], rules: Ruleset) -> Combination:
    if len(dice) != 3 or any(not 1 <= d <= 6 for d in dice):
        raise ValueError(f"a combination needs three dice of 1..6, got {list(dice)}")
    d: Dice = dice
    for row in ROWS:
        if not row.enabled(rules):
            continue
        face = row.match(d)
        if face:
            return Combination(row.name, row.value(rules, face), face, _races(row.name, d, rules))
    return Combination("neant", 0, 0)


def _races(name: str, d: Dice, rules: Ruleset) -> tuple[str, ...]:
    races: list[str] = []
    if name == "chouette_velute":
        races.append(RACE_CHOUETTE_VELUTE)
    # Three consecutive dice start the Suite race whatever row they matched (1,2,3 is a
    # Velute too, and in `complete` a Suite-Velutée, and "la combinaison Suite s'applique").
    if rules.combinations.suite and _suite(d):
        races.append(RACE_SUITE)
    if name in (RACE_SUITE_VELUTEE, RACE_ARTICHETTE, RACE_NEANT_SOUFFLE):
        races.append(name)
    return tuple(races)
