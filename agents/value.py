"""What a position is worth between turns: each seat's chance to win, fitted to games of bold.

Between turns, the scores, the items and who plays next are nearly the whole state of a game
(as in backgammon or Pig). `features` describes that state from one seat's side; a logistic
model per table (ruleset and seat count) turns them into that seat's chance to win, and the
seats' chances are scaled to sum to one. The weights are fitted by `scripts/fit_value.py` on
self-play games of `bold` (seeds apart from every evaluation) and shipped as
`agents/values/RULESET_Np.json`; the searcher (agents/search.py) reads them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from cdc_env.cli import parse_json
from cdc_env.flow import ITEMS
from cdc_env.game import GameState

VALUES_DIR = Path(__file__).resolve().parent / "values"

FEATURES = (
    "bias", "me", "best_other", "mean_other", "lead", "me_squared", "best_squared", "me_times_best",
    "plays_next", "me_if_next", "best_plays_next", "seats_to_wait",
    *(f"my_{item}" for item in ITEMS), *(f"others_{item}" for item in ITEMS),
)


def features(state: GameState, seat: int, clip: bool = True) -> list[float]:
    """The position from `seat`'s side, at the start of a turn (or any moment: the next to play
    is the pending decision's seat, else the thrower's next). `clip` False: the scores as they
    are (before session 36; the shipped `v004` 2-seat champion was measured so)."""
    players, target = state.players, float(state.rules.target_score)
    # Scores as shares of the target, within ±1. The fitted curve is a quadratic in them, which
    # turns back beyond about −1 (scores that games of bold hardly reach): unclipped, a score
    # of −2000 was worth more than one of −343, and the searcher dug for it (games ended at
    # −2600). Below −target a seat's chances are as good as gone: clipped, deeper is no better.
    bound = 1.0 if clip else math.inf
    scores = [max(-bound, min(bound, score / target)) for score in state.scores]
    me = scores[seat]
    others = [scores[s] for s in range(players) if s != seat] or [0.0]
    best = max(others)
    next_seat = state.pending.seat if state.pending is not None and state.pending.seat is not None else (
        0 if state.turn_seat is None else (state.turn_seat + 1) % players)
    wait = (seat - next_seat) % players
    best_seat = max((s for s in range(players) if s != seat), key=lambda s: scores[s], default=seat)
    mine = state.items[seat]
    theirs = [state.items[s] for s in range(players) if s != seat]
    return [
        1.0, me, best, sum(others) / len(others), me - best, me * me, best * best, me * best,
        float(wait == 0), me * (wait == 0), best * (best_seat == next_seat), wait / players,
        *(float(mine[item] > 0) for item in ITEMS),
        *(sum(h[item] > 0 for h in theirs) / max(1, len(theirs)) for item in ITEMS),
    ]


class ValueModel:
    """Each seat's chance to win from a position, for one table."""

    def __init__(self, weights: list[float], meta: dict[str, Any] | None = None) -> None:
        if len(weights) != len(FEATURES):
            raise ValueError(f"a value model has {len(FEATURES)} weights, got {len(weights)}")
        self.weights = weights
        self.meta = meta or {}

    def win_chances(self, state: GameState, clip: bool = True) -> list[float]:
        """Every seat's chance to win (summing to one); a finished game gives its result.
        `clip`: see `features`."""
        if state.winner is not None:
            return [float(s == state.winner) for s in range(state.players)]
        raw = []
        for seat in range(state.players):
            z = sum(w * x for w, x in zip(self.weights, features(state, seat, clip), strict=True))
            raw.append(1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z)))))
        total = sum(raw)
        return [r / total for r in raw]

    def to_json(self) -> dict[str, Any]:
        return {"features": list(FEATURES), "weights": self.weights, **self.meta}


def value_path(ruleset: str, players: int, directory: Path = VALUES_DIR, base: str | None = None) -> Path:
    """`RULESET_Np.json` (fitted to bold's games), or `RULESET_Np_BASE.json`: fitted to the games
    of a searcher's base bot (`network`: the table's network against bold), the positions a
    search over that base meets."""
    return directory / f"{ruleset}_{players}p{'_' + base if base else ''}.json"


_LOADED: dict[tuple[str, int, str | None], ValueModel | None] = {}

# No fit comes near this: a fitted weight is a few units (a regularised logistic over features
# within about ±1). A file's weight beyond it is damage, and one near the float limit (1e308)
# turns the weighted sum infinite, every seat's chance then equal.
MAX_WEIGHT = 1e6


def read_value_file(path: Path) -> dict[str, Any]:
    """A value file's content, or a ValueError naming the file and what is wrong with it (a
    damaged file used to be a JSONDecodeError or a KeyError at the searcher's first move)."""
    fix = "restore it (git checkout it) or fit it again with scripts/fit_value.py"
    try:
        data = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} cannot be read as a fitted value ({error}); {fix}") from None
    weights = data.get("weights") if isinstance(data, dict) else None
    if not isinstance(weights, list) or not all(isinstance(w, int | float) and not isinstance(w, bool)
                                                for w in weights):
        raise ValueError(f"{path} is damaged: its 'weights' must be a list of numbers; {fix}")
    # Python reads NaN and Infinity as JSON: such a weight made every sample of a search score
    # alike, and the searcher played its base without a word. (NaN is within no bound, and an
    # integer of 400 digits is compared without overflow.)
    wrong = [w for w in weights if not abs(w) <= MAX_WEIGHT]
    if wrong:
        shown = f"{wrong[0]:g}" if isinstance(wrong[0], float) else f"an integer of {len(str(abs(wrong[0])))} digits"
        raise ValueError(f"{path} is damaged: its weights must be finite numbers within ±{MAX_WEIGHT:g}, and one "
                         f"is {shown}; {fix}")
    if isinstance(data.get("features"), list) and len(data["features"]) != len(weights):
        raise ValueError(f"{path} is damaged: {len(weights)} weights for {len(data['features'])} features; {fix}")
    return data


def load_value(ruleset: str, players: int, directory: Path = VALUES_DIR,
               base: str | None = None) -> ValueModel | None:
    """The fitted value of a table, or None where none was fitted (the searcher then plays its
    samples out to the end of the game). `base`: a searcher's base bot, whose own value file
    (`value_path`) is read where there is one, else the table's."""
    key = (str(directory / ruleset), players, base)
    if key not in _LOADED:  # the searcher asks at every decision: the files are looked for once
        own = base if base and value_path(ruleset, players, directory, base).exists() else None
        path = value_path(ruleset, players, directory, own)
        model = None
        if path.exists():
            data = read_value_file(path)
            # A table's file found by its name and made for another (copied or renamed): its
            # chances would be read at a table they were never fitted to.
            made_for = (data.get("ruleset", ruleset), data.get("players", players))
            if made_for != (ruleset, players):
                # (the file is there: a fit into its folder replaces it only with --overwrite)
                refit = " ".join(["scripts/fit_value.py --tables", f"{ruleset}_{players}p",
                                  *(["--base", own] if own else []),
                                  *(["--out", str(directory)] if directory != VALUES_DIR else []), "--overwrite"])
                raise ValueError(f"{path} was fitted for {made_for[0]} at {made_for[1]} seats, and is read for "
                                 f"{ruleset} at {players}: put this table's own file back (git checkout it) or "
                                 f"fit one with {refit}")
            if data.get("features") != list(FEATURES):
                raise ValueError(f"{path}: fitted on other features; fit it again with scripts/fit_value.py")
            model = ValueModel([float(w) for w in data["weights"]],
                               {k: v for k, v in data.items() if k not in ("features", "weights")})
        _LOADED[key] = model
    return _LOADED[key]


def fit_logistic(rows: list[list[float]], outcomes: list[int], l2: float = 1e-3,
                 iterations: int = 25) -> list[float]:
    """Logistic regression by Newton's method (a few hundred thousand rows, 20 features)."""
    import numpy as np

    x = np.asarray(rows, dtype=float)
    y = np.asarray(outcomes, dtype=float)
    w = np.zeros(x.shape[1])
    ridge = l2 * len(y) * np.eye(x.shape[1])
    ridge[0, 0] = 0.0  # the bias is not shrunk
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30, 30)))
        gradient = x.T @ (p - y) + ridge @ w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + ridge
        step = np.linalg.solve(hessian + 1e-9 * np.eye(len(w)), gradient)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return [float(v) for v in w]
