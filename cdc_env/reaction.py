"""How fast a seat shouts in a race: reaction-time models by difficulty level.

A bot's onset is drawn from a log-normal distribution (reaction times are right-skewed and
never negative). The default level, `human`, is what a table of attentive players does when
the dice show a combination and they must start a phrase: about 0.8 s, rarely under 0.5 s.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class ReactionModel:
    level: str
    median_ms: float
    sigma: float  # of log(onset)
    floor_ms: float  # nobody starts a phrase faster than this

    def sample(self, rng: random.Random) -> float:
        onset = rng.lognormvariate(math.log(self.median_ms), self.sigma)
        return round(max(self.floor_ms, onset), 1)

    def describe(self) -> str:
        low = self.median_ms * math.exp(-1.645 * self.sigma)
        high = self.median_ms * math.exp(1.645 * self.sigma)
        return (f"{self.level}: log-normal, median {self.median_ms:.0f} ms, "
                f"90% between {max(low, self.floor_ms):.0f} and {high:.0f} ms")


REACTION_LEVELS: dict[str, ReactionModel] = {
    model.level: model
    for model in (
        ReactionModel("slow", median_ms=1300, sigma=0.35, floor_ms=400),
        ReactionModel("human", median_ms=800, sigma=0.30, floor_ms=300),
        ReactionModel("fast", median_ms=550, sigma=0.25, floor_ms=250),
        ReactionModel("expert", median_ms=380, sigma=0.20, floor_ms=200),
    )
}
DEFAULT_REACTION = "human"


def reaction_model(level: str = DEFAULT_REACTION) -> ReactionModel:
    try:
        return REACTION_LEVELS[level]
    except KeyError:
        raise ValueError(
            f"unknown reaction level {level!r}; choose from {', '.join(REACTION_LEVELS)}"
        ) from None
