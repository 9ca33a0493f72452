"""Rulesets: every rule of the game as a switch or a number, read from a YAML file.

A ruleset file lives in `configs/rules/NAME.yaml`; a user copies one and changes what their
table plays differently. Unknown keys and bad values are errors that name the key and the file,
because a silently ignored typo would train agents on a game nobody meant.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

RULES_DIR = Path(__file__).resolve().parent.parent / "configs" / "rules"
RULESET_NAMES = ("basic", "classic", "v004", "complete", "solo")

# The combinations a Grelottine challenge may name, and those a Civet may bet on.
GRELOTTINE_COMBINATIONS = ("chouette", "velute", "cul_de_chouette", "chouette_velute")
CIVET_COMBINATIONS = (
    "chouette",
    "velute",
    "chouette_velute",
    "suite",
    "cul_de_chouette",
    "cul_de_chouette_sirote",
)


class RulesetError(ValueError):
    """A ruleset file that cannot be played: says which file and which key."""


def _parse_fraction(value: Any) -> Fraction:
    """'33%' -> 33/100, '1/3' -> 1/3, 0.25 -> 1/4. Fractions keep stake limits exact:
    floor(300 * 0.33) must be 99 on every machine, not 98 from a float rounding."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool):
        raise ValueError("expected a fraction such as '33%' or '1/3'")
    if isinstance(value, (int, float)):
        return Fraction(str(value))
    if isinstance(value, str):
        text = value.strip()
        try:
            if text.endswith("%"):
                return Fraction(text[:-1].strip()) / 100
            return Fraction(text)
        except (ValueError, ZeroDivisionError):
            pass
    raise ValueError(f"expected a fraction such as '33%' or '1/3', got {value!r}")


Ratio = Annotated[Fraction, BeforeValidator(_parse_fraction)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)


class Scores(_Section):
    """Points of each combination, one value per face 1..6."""

    chouette: list[int] = Field(default=[1, 4, 9, 16, 25, 36])
    # Velute by its largest die; a Chouette-Velute scores its Velute (face 1 cannot happen).
    velute: list[int] = Field(default=[2, 8, 18, 32, 50, 72])
    cul_de_chouette: list[int] = Field(default=[50, 60, 70, 80, 90, 100])

    @model_validator(mode="after")
    def _six_faces(self) -> "Scores":
        for key in ("chouette", "velute", "cul_de_chouette"):
            if len(getattr(self, key)) != 6:
                raise ValueError(f"scores.{key} needs 6 values, one per face 1..6")
        return self


class Races(_Section):
    tie_window_ms: float = Field(default=100, ge=0)
    race_window_ms: float = Field(default=3000, gt=0)
    # dice_for_six (B, C, V) or subtract (F): what a tie for first in a Chouette-Velute does.
    chouette_velute_tie: Literal["dice_for_six", "subtract"] = "dice_for_six"
    suite_penalty: int = Field(default=10, ge=0)
    # Each die re-roll after a tie raises the stake by this much (10, 20, 30, ...).
    suite_penalty_step: int = Field(default=10, ge=0)
    # lowest (C, V) or highest (F): which die loses a Suite tie.
    suite_tie_die: Literal["lowest", "highest"] = "lowest"


class Sirotage(_Section):
    enabled: bool = True
    bird_bets: bool = True
    bet_win: int = Field(default=25, ge=0)
    bet_loss: int = Field(default=5, ge=0)
    # A failed sirop of a Chouette of 6 gives a Civet ("Civet siroté").
    civet_on_failed_six: bool = True


class Grelottine(_Section):
    enabled: bool = True
    # Max stake = floor(min(challenger score, challenged score) * limit); '33%' or '1/3'.
    stake_limits: dict[str, Ratio] = Field(
        default_factory=lambda: {
            "chouette": Fraction(33, 100),
            "velute": Fraction(25, 100),
            "cul_de_chouette": Fraction(16, 100),
            "chouette_velute": Fraction(8, 100),
        }
    )
    min_stake: int = Field(default=1, ge=1)
    bets: bool = True
    bet_win: int = Field(default=25, ge=0)
    bet_loss: int = Field(default=5, ge=0)

    @model_validator(mode="after")
    def _known_combinations(self) -> "Grelottine":
        for name, limit in self.stake_limits.items():
            if name not in GRELOTTINE_COMBINATIONS:
                raise ValueError(
                    f"stake_limits: unknown combination {name!r}; "
                    f"choose from {', '.join(GRELOTTINE_COMBINATIONS)}"
                )
            if not 0 < limit <= 1:
                raise ValueError(f"stake_limits.{name} must be in (0, 1], got {limit}")
        if not self.stake_limits:
            raise ValueError("stake_limits must name at least one combination")
        return self


class Civet(_Section):
    enabled: bool = True
    min_stake: int = Field(default=1, ge=1)
    max_stake: int = Field(default=102, ge=1)
    combinations: list[str] = Field(default_factory=lambda: list(CIVET_COMBINATIONS))
    bets: bool = False
    bet_win: int = Field(default=25, ge=0)
    bet_loss: int = Field(default=5, ge=0)

    @model_validator(mode="after")
    def _check(self) -> "Civet":
        for name in self.combinations:
            if name not in CIVET_COMBINATIONS:
                raise ValueError(
                    f"combinations: unknown {name!r}; choose from {', '.join(CIVET_COMBINATIONS)}"
                )
        if self.min_stake > self.max_stake:
            raise ValueError("min_stake is larger than max_stake")
        return self


class Soufflette(_Section):
    enabled: bool = True
    throws: int = Field(default=3, ge=1, le=6)
    # Points the challenged takes from the challenger when making 1,2,4 on throw 1, 2, 3...
    rewards: list[int] = Field(default=[50, 40, 30])
    failure: int = Field(default=30, ge=0)

    @model_validator(mode="after")
    def _one_reward_per_throw(self) -> "Soufflette":
        if len(self.rewards) != self.throws:
            raise ValueError(f"rewards needs one value per throw ({self.throws}), got {len(self.rewards)}")
        return self


class DiceBuying(_Section):
    enabled: bool = True
    cost: int = Field(default=30, ge=0)


class Boucliette(_Section):
    enabled: bool = True
    per_player: int = Field(default=1, ge=0, le=1)


class Bevue(_Section):
    enabled: bool = True
    penalty: int = Field(default=10, ge=0)


class Combinations(_Section):
    """Which rows of the combination table are played. Disabled rows fall through to the next."""

    suite: bool = True
    soufflette: bool = True
    suite_velutee: bool = False
    artichette: bool = False
    bleu_rouge: bool = False
    flan: bool = False
    neant_souffle: bool = False


class Ruleset(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    name: str
    description: str = ""
    min_players: int = Field(default=2, ge=1, le=8)
    max_players: int = Field(default=8, ge=1, le=8)
    target_score: int = Field(default=343, ge=1)
    # Gains that are not the combination of one's own dice on one's own turn stop here.
    cap_score: int = Field(default=332, ge=0)
    negative_scores: bool = True
    # lowest_die: everyone rolls, lowest starts, ties roll again; random: a random seat.
    first_player: Literal["lowest_die", "random"] = "lowest_die"
    # Néant gives the thrower a Grelottine (if they hold none).
    neant_gives_grelottine: bool = True
    scores: Scores = Field(default_factory=Scores)
    combinations: Combinations = Field(default_factory=Combinations)
    races: Races = Field(default_factory=Races)
    sirotage: Sirotage = Field(default_factory=Sirotage)
    grelottine: Grelottine = Field(default_factory=Grelottine)
    civet: Civet = Field(default_factory=Civet)
    soufflette: Soufflette = Field(default_factory=Soufflette)
    dice_buying: DiceBuying = Field(default_factory=DiceBuying)
    boucliette: Boucliette = Field(default_factory=Boucliette)
    bevue: Bevue = Field(default_factory=Bevue)

    @model_validator(mode="after")
    def _players(self) -> "Ruleset":
        if self.min_players > self.max_players:
            raise ValueError("min_players is larger than max_players")
        if self.cap_score >= self.target_score:
            raise ValueError("cap_score must be below target_score")
        return self

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data; fractions as 'n/d' strings so they load back exactly."""

        def plain(value: Any) -> Any:
            if isinstance(value, Fraction):
                return f"{value.numerator}/{value.denominator}"
            if isinstance(value, dict):
                return {k: plain(v) for k, v in value.items()}
            if isinstance(value, list):
                return [plain(v) for v in value]
            return value

        return plain(self.model_dump())

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "<dict>") -> "Ruleset":
        try:
            return cls.model_validate(data)
        except ValidationError as error:
            raise RulesetError(_describe(error, source)) from None


def _describe(error: ValidationError, source: str) -> str:
    lines = [f"ruleset {source} is not valid:"]
    for problem in error.errors():
        key = ".".join(str(part) for part in problem["loc"]) or "(top level)"
        if problem["type"] == "extra_forbidden":
            lines.append(f"  - {key}: unknown key (a typo? see docs/rules.md for every key)")
        else:
            lines.append(f"  - {key}: {problem['msg']} (got {problem.get('input')!r})")
    lines.append("Fix the file, or start again from a copy of configs/rules/classic.yaml.")
    return "\n".join(lines)


def load_ruleset(name_or_path: str | Path) -> Ruleset:
    """Load a ruleset by name (`classic`) or by path to a YAML file."""
    path = Path(name_or_path)
    if not path.suffix and str(name_or_path) in RULESET_NAMES or (
        not path.exists() and (RULES_DIR / f"{name_or_path}.yaml").exists()
    ):
        path = RULES_DIR / f"{name_or_path}.yaml"
    if not path.exists():
        raise RulesetError(
            f"no ruleset {str(name_or_path)!r}: give one of {', '.join(RULESET_NAMES)} "
            f"or the path of a YAML file"
        )
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise RulesetError(f"ruleset {path} is not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise RulesetError(f"ruleset {path} must be a YAML mapping of keys to values")
    return Ruleset.from_dict(data, source=str(path))
