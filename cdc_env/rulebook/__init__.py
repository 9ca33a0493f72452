"""The rulebook: one module per rule family, registered here.

Each rule is a small generator over the game (`cdc_env.flow.Flow`): it says what it asks
(`yield Decision(...)`) and what it changes (score changes and events through the game), and
the game's flow in `cdc_env/game.py` calls it at its moment. A house rule is a new module plus
one line below: a combination's rule runs when that combination is shown, a race's rule when a
combination starts that race.
"""

from __future__ import annotations

from collections.abc import Callable

from cdc_env.combinations import (
    RACE_ARTICHETTE,
    RACE_CHOUETTE_VELUTE,
    RACE_NEANT_SOUFFLE,
    RACE_SUITE,
    RACE_SUITE_VELUTEE,
)
from cdc_env.flow import Flow, RollOutcome
from cdc_env.rulebook import grelottine, races, rare, scoring, sirop, soufflette
from cdc_env.rulebook.table import Game

CombinationRule = Callable[["Game", RollOutcome, bool], Flow]
RaceRule = Callable[["Game", RollOutcome], Flow]

# Each combination's rule: it scores the combination (and asks what it must ask). The
# combination's `bought` flag says whether the cul was bought (or the dice are another
# player's, off their turn).
COMBINATION_RULES: dict[str, CombinationRule] = {
    "cul_de_chouette": scoring.score_combination,
    "velute": scoring.score_combination,
    "chouette": sirop.chouette,
    "soufflette": soufflette.challenge,
    "neant": grelottine.neant,
    "bleu_rouge": rare.bleu_rouge,
    "flan": rare.flan,
    # These points go to a race's winner; the Suite and the Néant Soufflé are only races.
    "chouette_velute": scoring.no_effect,
    "suite": scoring.no_effect,
    "suite_velutee": scoring.no_effect,
    "artichette": scoring.no_effect,
    "neant_souffle": scoring.no_effect,
}

# Each race's rule, run after the combination's rule for every race the combination starts.
RACE_RULES: dict[str, RaceRule] = {
    RACE_CHOUETTE_VELUTE: races.chouette_velute_race,
    RACE_SUITE: races.suite_race,
    RACE_SUITE_VELUTEE: rare.suite_velutee_race,
    RACE_ARTICHETTE: rare.artichette_race,
    RACE_NEANT_SOUFFLE: rare.neant_souffle_race,
}
