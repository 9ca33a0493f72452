"""Rulesets: every rule of the game as a switch or a number, read from a YAML file.

A ruleset file lives in `configs/rules/NAME.yaml`; a user copies one and changes what their
table plays differently. Unknown keys and bad values are errors that name the key and the file,
because a silently ignored typo would train agents on a game nobody meant.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from cdc_env.yamlfile import YamlFileError, read_yaml, shown, wrong_kind

PACKAGE = Path(__file__).resolve().parent


def shipped_configs(kind: str, package: Path = PACKAGE) -> Path:
    """The shipped configs/KIND folder (rules, voice). An installed package (`pip install .`, a
    wheel) carries them inside it (pyproject.toml maps configs/ to cdc_env/configs); a checkout,
    or an editable install, has them beside the package. The package's own copy first: beside an
    installed package is site-packages, where another distribution's configs/ may be."""
    inside = package / "configs" / kind
    return inside if inside.is_dir() else package.parent / "configs" / kind


RULES_DIR = shipped_configs("rules")
RULESET_NAMES = ("basic", "classic", "v004", "complete", "solo")
# Every ruleset shipped by name (configs/rules/): the five above and `maison`, complete with the
# house rules (a user's choice of rules, left out of the engine's own checks over RULESET_NAMES).
SHIPPED_RULESETS = (*RULESET_NAMES, "maison")
FIX_THE_FILE = "Fix the file, or start again from a copy of configs/rules/classic.yaml."

# The combinations a Grelottine challenge may name (S adds the Sirop-Grelot, a Cul de Chouette
# made by a sirop), and those a Civet may bet on.
GRELOTTINE_COMBINATIONS = (
    "chouette", "velute", "cul_de_chouette", "chouette_velute", "cul_de_chouette_sirote",
)
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
    def _six_faces(self) -> Scores:
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
    # A Chouette-Velute nobody shouts in time: nothing happens (B, C, V, F), or the thrower
    # loses its value (S: the lone player who is too slow "les perd").
    chouette_velute_missed: Literal["nothing", "lose_value"] = "nothing"
    # Offer the wrong phrases in a race even without Bévues (S: the player has two buttons and
    # may press the wrong one; it counts as no shout). Unset: offered when Bévues are played.
    wrong_phrases_offered: bool | None = None


class Sirotage(_Section):
    enabled: bool = True
    bird_bets: bool = True
    bet_win: int = Field(default=25, ge=0)
    bet_loss: int = Field(default=5, ge=0)
    # A failed sirop of a Chouette of 6 gives a Civet ("Civet siroté").
    civet_on_failed_six: bool = True
    # S: the thrower bets on their own sirop die (there is nobody else).
    self_bet: bool = False
    # F: "Beau-Sirop !" bets on the sirop's success; naming the chouette's own bird is a Bévue.
    beau_sirop: bool = False
    # F: not betting is announced ("Couche-Sirop !" / "File-Sirop !"); silence is a Bévue.
    announce_pass: bool = False
    # F: a winning bet pays only when claimed with "Sirop gagnant !" before the next throw.
    claim_winning_bets: bool = False
    # F: combinations whose rule applies to the siroted dice ("toute combinaison réalisée après
    # le Sirotage est valable"): RULES.md reads it as the Chouette-Velute, the Artichette and the
    # Bleu-Rouge (complete.yaml lists the three).
    rescore_after: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _rescorable(self) -> Sirotage:
        # A siroted die keeps the pair, so only these can differ from a Chouette.
        allowed = ("chouette_velute", "artichette", "bleu_rouge")
        for name in self.rescore_after:
            if name not in allowed:
                raise ValueError(f"rescore_after: {name!r} cannot follow a sirop; choose from {', '.join(allowed)}")
        return self


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
    # challenge (B, C, V, F): another holder challenges the thrower of a Néant. before_roll (S):
    # the holder uses it before their own roll; the game draws the combination (uniformly among
    # stake_limits) and the stake is the maximum from their own score.
    use: Literal["challenge", "before_roll"] = "challenge"

    @model_validator(mode="after")
    def _known_combinations(self) -> Grelottine:
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
    # C: "il mise alors un certain nombre de ses points": the stake is the holder's own points,
    # so it never exceeds their score (and a player with fewer than min_stake points has no
    # Civet to bet).
    stake_within_score: bool = False
    combinations: list[str] = Field(default_factory=lambda: list(CIVET_COMBINATIONS))
    bets: bool = False
    bet_win: int = Field(default=25, ge=0)
    bet_loss: int = Field(default=5, ge=0)

    @model_validator(mode="after")
    def _check(self) -> Civet:
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
    # F: when the challenge fails, the points of the last throw's combination go to the
    # challenged after the failure is paid.
    failed_throw_scores: bool = False

    @model_validator(mode="after")
    def _one_reward_per_throw(self) -> Soufflette:
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


class SuiteVelutee(_Section):
    """F: 1,2,3. The thrower's "Patte de canard !" against the others' "Velutée !"."""

    # A tie between the thrower and a "Velutée !" goes to the thrower (F: catching at least
    # one of the chouettes is enough).
    thrower_wins_ties: bool = True


class Artichette(_Section):
    """F: 3,4,4. The thrower's "Raitournelle !" against the others' "Artichette !"."""

    thrower_wins_ties: bool = True


class BleuRouge(_Section):
    """F: 3,3,4. Everyone bets a different sum of a compulsory relaunch of the three dice."""

    # The right bet wins bet_base + bet_per_point × the sum (36 + twice the sum).
    bet_base: int = Field(default=36, ge=0)
    bet_per_point: int = Field(default=2, ge=0)
    # Pélican: a relaunch of this sum starts the "Pélican !" race for pelican_points.
    pelican_sum: int = Field(default=18, ge=3, le=18)
    pelican_points: int = Field(default=28, ge=0)


class MinimumScores(_Section):
    """F's minimum scores; they apply only when negative_scores is false."""

    # Both the souffleur and the challenged need this much for a Soufflette.
    soufflette: int = Field(default=0, ge=0)
    # To receive a Grelottine (from a Néant, or by "Mécréant !").
    grelottine: int = Field(default=0, ge=0)
    # To bet a bird or Beau-Sirop on a sirop; below it the bet is a Bévue that drops the
    # bettor to 0 and the bet is void.
    sirop_bet: int = Field(default=0, ge=0)
    # To sirop, the thrower's score must cover the Chouette's points at stake.
    sirotage_covers_chouette: bool = False
    # To buy the cul, the buyer's score must cover its cost: held at 0, a buyer with less
    # would have it for nothing (F asks the sirop to be covered in the same way).
    achat_covers_cost: bool = True


def _default_ranks() -> list[tuple[float, str]]:
    return [(17.0, "Légende"), (14.0, "Maître"), (11.0, "Chevalier"), (8.0, "Écuyer"),
            (5.0, "Paysan"), (0.0, "Péquenaud")]


class Solo(_Section):
    """S: the grade out of 20 and the rank given at the end of a solo game."""

    # The grade of a game that took exactly the optimum's expected number of turns; the grade
    # is par_grade × expected / turns, at most 20.
    par_grade: float = Field(default=10.0, gt=0, le=20)
    # (lowest grade, rank), best first; the first whose grade is reached names the rank.
    ranks: list[tuple[float, str]] = Field(default_factory=_default_ranks)

    @model_validator(mode="after")
    def _ranks_cover_every_grade(self) -> Solo:
        grades = [grade for grade, _ in self.ranks]
        if not grades or grades != sorted(grades, reverse=True) or grades[-1] != 0:
            raise ValueError("ranks must go from the best down to a rank for grade 0")
        return self


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
    # Gains the cap holds stop at cap_score (a gain never lowers a score already above it).
    cap_score: int = Field(default=332, ge=0)
    # Which gains the cap holds. all_but_own_dice (C: "via un défi ou une mise"): every gain but
    # the combination of one's own dice on one's own turn. off_own_turn (V: "tant que ça n'est
    # pas son tour, on ne peut pas dépasser 332 points"): only gains off one's own turn, so an
    # own-turn Civet or Grelottine challenge may pass the cap and win.
    cap_holds: Literal["all_but_own_dice", "off_own_turn"] = "all_but_own_dice"
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
    suite_velutee: SuiteVelutee = Field(default_factory=SuiteVelutee)
    artichette: Artichette = Field(default_factory=Artichette)
    bleu_rouge: BleuRouge = Field(default_factory=BleuRouge)
    minimum_scores: MinimumScores = Field(default_factory=MinimumScores)
    solo: Solo = Field(default_factory=Solo)
    # House rules the table plays (cdc_env/rulebook/house/): name -> true, or its parameters.
    # Once loaded, every rule's full parameters (its defaults under what the file gives).
    house_rules: dict[str, Any] = Field(default_factory=dict)

    def players_refusal(self, players: int) -> str | None:
        """Why this ruleset cannot be played by `players`, in one phrase, or None where it can
        (every command and the engine say it the same way)."""
        if self.min_players <= players <= self.max_players:
            # A team mode seats only some counts (the Doublette: an even number, 4 to 8): said
            # here too, not by the game as it starts (a traceback at play.py's table).
            from cdc_env.rulebook.house import teams_of  # (the house rules' registry reads rulesets)

            try:
                teams_of(self.house_rules, players)
            except ValueError as error:
                return str(error)
            return None
        span = (f"exactly {self.min_players} player{'s' if self.min_players > 1 else ''}"
                if self.min_players == self.max_players else f"{self.min_players} to {self.max_players} players")
        return f"ruleset {self.name!r} is played by {span}, not {players}"

    @model_validator(mode="after")
    def _players(self) -> Ruleset:
        if self.min_players > self.max_players:
            raise ValueError("min_players is larger than max_players")
        if self.cap_score >= self.target_score:
            raise ValueError("cap_score must be below target_score")
        if self.neant_gives_grelottine and not self.grelottine.enabled:
            # (it handed out an item that nothing could use)
            raise ValueError("neant_gives_grelottine needs grelottine.enabled: true "
                             "(or set neant_gives_grelottine: false)")
        return self

    @model_validator(mode="after")
    def _house_rules(self) -> Ruleset:
        """Unknown house rules, unknown or mistyped parameters and missing dependencies (Civet
        doublé without the Civet) are errors naming the key. The registry is read here, not
        at import, so that a rule registered later (a test's) can be chosen."""
        from cdc_env.rulebook.house import parameters_of

        if self.house_rules:
            full = {name: parameters_of(name, given, self) for name, given in self.house_rules.items()}
            object.__setattr__(self, "house_rules", full)  # frozen: set once, while validating
        return self

    def with_house_rules(self, names: list[str], source: str = "--house") -> Ruleset:
        """This ruleset with the house rules `names` switched on at their defaults (a table
        choosing rules by name: `--house verdier civet_double`; one it plays already keeps its
        parameters). Its name says so, so that a
        champion trained without them is not taken for one trained with them."""
        if not names:
            return self
        chosen = {name.replace("-", "_"): True for name in names}
        data = self.to_dict()
        # A rule the ruleset already plays keeps its own parameters (a table's Verdier at 40/8
        # named again was set back to the defaults, under the table's own name).
        kept = data.get("house_rules", {})
        data["house_rules"] = {**kept, **{name: on for name, on in chosen.items() if name not in kept}}
        data["name"] = "+".join([self.name, *(n for n in chosen if n not in self.house_rules)])
        return Ruleset.from_dict(data, source=f"{self.name} with {source} {' '.join(names)}",
                                 fix=f"Give {source} other house rules (docs/rules.md: each rule and what it needs).")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data; fractions as 'n/d' strings so they load back exactly."""

        def plain(value: Any) -> Any:
            if isinstance(value, Fraction):
                return f"{value.numerator}/{value.denominator}"
            if isinstance(value, dict):
                return {k: plain(v) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [plain(v) for v in value]
            return value

        data = plain(self.model_dump())
        if not data["house_rules"]:
            del data["house_rules"]  # a ruleset of the five texts saves as it always did
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "<dict>", fix: str = FIX_THE_FILE) -> Ruleset:
        """`fix`: what to do, the error's last line (a ruleset not from a file is not fixed in one)."""
        try:
            return cls.model_validate(data)
        except ValidationError as error:
            raise RulesetError(_describe(error, source, fix)) from None


def _describe(error: ValidationError, source: str, fix: str = FIX_THE_FILE) -> str:
    lines = [f"ruleset {source} is not valid:"]
    for problem in error.errors():
        key = ".".join(str(part) for part in problem["loc"]) or "(top level)"
        if problem["type"] == "extra_forbidden":
            lines.append(f"  - {key}: unknown key (a typo? see docs/rules.md for every key)")
        elif problem["type"] == "value_error" and not problem["loc"]:
            # A check of the whole ruleset (house_rules.NAME: ...) names its key itself; its
            # input is the whole file, too long to repeat.
            lines.append(f"  - {problem['msg'].removeprefix('Value error, ')}")
        elif problem["type"] == "missing":  # its input is the whole section, or the whole file
            lines.append(f"  - {key}: {problem['msg']}")
        else:
            lines.append(f"  - {key}: {problem['msg']} (got {shown(problem.get('input'))})")
    lines.append(fix)
    return "\n".join(lines)


def load_ruleset(name_or_path: str | Path) -> Ruleset:
    """Load a ruleset by name (`classic`) or by path to a YAML file."""
    try:
        return _load_ruleset(name_or_path)
    except OSError as error:  # a name too long for the file system: its stat fails
        # cdc_env.cli.short_path's cut, written here: the engine does not import the commands' helpers.
        name = str(name_or_path)
        given = name if len(name) <= 200 else f"{name[:60]}… ({len(name)} characters)"
        raise RulesetError(f"no ruleset {given!r}: {error.strerror}; give one of {', '.join(SHIPPED_RULESETS)} "
                           "or the path of a YAML file") from None


def _load_ruleset(name_or_path: str | Path) -> Ruleset:
    path = Path(name_or_path)
    if not str(name_or_path).strip():  # Path("") is the folder ".": it was "'' is a directory"
        raise RulesetError(f"no ruleset given (an empty name): give one of {', '.join(SHIPPED_RULESETS)} "
                           "or the path of a YAML file")
    # The five texts' names are always theirs; `maison` too, unless a file of the table's own by
    # that name is in the working folder (a folder there is no ruleset: it was refused by name).
    shipped = str(name_or_path) in RULESET_NAMES or (str(name_or_path) in SHIPPED_RULESETS and not path.is_file())
    if not path.suffix and shipped or (
        not path.exists() and (RULES_DIR / f"{name_or_path}.yaml").exists()
    ):
        path = RULES_DIR / f"{name_or_path}.yaml"
    if not path.exists():
        raise RulesetError(
            f"no ruleset {str(name_or_path)!r}: give one of {', '.join(SHIPPED_RULESETS)} "
            f"or the path of a YAML file"
        )
    if path.is_dir():
        raise RulesetError(f"ruleset {str(name_or_path)!r} is a directory, not a YAML file: give one of "
                           f"{', '.join(SHIPPED_RULESETS)} or the path of a ruleset's .yaml file")
    try:
        data = read_yaml(path)
    except OSError as error:
        raise RulesetError(f"ruleset {path} cannot be read: {error.strerror}") from None
    except YamlFileError as error:
        raise RulesetError(f"ruleset {error}") from None
    if (refusal := wrong_kind(path, data, "ruleset", Ruleset.model_fields,
                              "name: ..., target_score: ..., scores: ...; see configs/rules/classic.yaml")) is not None:
        raise RulesetError(refusal)
    return Ruleset.from_dict(data, source=str(path))
