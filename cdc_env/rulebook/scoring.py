"""Scoring a combination, and judging whether a roll made a named combination (for the
Civet, the Grelottine and the solo optimum)."""

from __future__ import annotations

from cdc_env.combinations import RACE_SUITE
from cdc_env.flow import Flow, RollOutcome
from cdc_env.rulebook.table import Game

# Rows that also count as another combination for a Civet or a Grelottine (F: 1,2,3 "c'est
# également une Velute"). Artichette and Bleu-Rouge are not Chouettes (F: no sirop on them).
ALSO_COUNTS_AS = {"suite_velutee": "velute"}


def score_combination(game: Game, outcome: RollOutcome, _bought: bool) -> Flow:
    combination = outcome.combination
    game.change_score(outcome.scorer, combination.value, combination.name, own_dice=True)
    return
    yield  # a generator, like every combination rule


def no_effect(_state: Game, _outcome: RollOutcome, _bought: bool) -> Flow:
    return
    yield


def made(named: str, outcome: RollOutcome, *, sirop_counts_for_cul: bool) -> bool:
    """Whether a roll made the combination a Civet or a Grelottine named.

    Judged on the dice as thrown; a successful sirop also makes a Cul de Chouette for a
    Grelottine ("with sirotage" is its own Civet bet). A sirop never un-makes a Chouette."""
    thrown = outcome.combination.name
    if named == "suite":
        return RACE_SUITE in outcome.combination.races
    if named == "cul_de_chouette_sirote":
        return outcome.sirop_success is True
    if named == "cul_de_chouette" and sirop_counts_for_cul and outcome.sirop_success:
        return True
    return thrown == named or ALSO_COUNTS_AS.get(thrown) == named
