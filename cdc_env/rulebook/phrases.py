"""The phrases players shout, by the ids the voice lexicon uses as intent names."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cdc_env.combinations import (
    RACE_ARTICHETTE,
    RACE_CHOUETTE_VELUTE,
    RACE_NEANT_SOUFFLE,
    RACE_SUITE,
    RACE_SUITE_VELUTEE,
)

if TYPE_CHECKING:
    from cdc_env.rules import Ruleset

# The phrase that answers each race. A shout of another phrase in a race is a Bévue. Tie
# races are named after their phrase. (The phrase ids are the voice lexicon's intent names.)
RACE_PHRASES = {
    RACE_CHOUETTE_VELUTE: "pas_mou_le_caillou",
    RACE_SUITE: "grelotte_ca_picote",
    "suite_tie": "sans_fin",
    "pelican": "pelican",
    "passe_montagne": "passe_montagne",
    "zbradaraldjan": "zbradaraldjan",
    "fort_heureusement": "fort_heureusement",
    # Races with several phrases: the others' phrase here; each seat's own answers are in
    # `Decision.answers` (the thrower's differ).
    RACE_SUITE_VELUTEE: "velutee",
    RACE_ARTICHETTE: "artichette",
    RACE_NEANT_SOUFFLE: "mecreant",
}
# Races of the thrower against the others (F): (the thrower's phrase, the others' phrase).
THROWER_CALLS = {
    RACE_SUITE_VELUTEE: ("patte_de_canard", "velutee"),
    RACE_ARTICHETTE: ("raitournelle", "artichette"),
}
# The Néant Soufflé: anyone may shout either phrase; "Mécréant !" wins ties against the other.
NEANT_SOUFFLE_CALLS = ("mecreant", "je_suis_un_miserable")
# The phrases of each rare race's family (the race and its tie-breaks), offered together.
_PELICAN_CHAIN = ("pelican", "passe_montagne", "zbradaraldjan")
_NEANT_SOUFFLE_FAMILY = (*NEANT_SOUFFLE_CALLS, "fort_heureusement")
RACE_FAMILIES = {
    RACE_SUITE_VELUTEE: THROWER_CALLS[RACE_SUITE_VELUTEE],
    RACE_ARTICHETTE: THROWER_CALLS[RACE_ARTICHETTE],
    **{race: _PELICAN_CHAIN for race in _PELICAN_CHAIN},
    RACE_NEANT_SOUFFLE: _NEANT_SOUFFLE_FAMILY,
    "fort_heureusement": _NEANT_SOUFFLE_FAMILY,
}
# Shouts that claim a gain before the next throw (not races: only the claimant is asked).
CLAIM_PHRASES = ("a_kadoc", "sirop_gagnant")
# The phrases that start or answer a race. A person can shout one at any moment: outside a race
# it is a false shout, a Bévue where the ruleset plays Bévues (C: "« Grelotte ça picote »
# inapproprié (les dés ne sont pas de suite)").
RACE_SHOUTS: tuple[str, ...] = tuple(dict.fromkeys([
    *RACE_PHRASES.values(),
    *(phrase for calls in THROWER_CALLS.values() for phrase in calls),
    *NEANT_SOUFFLE_CALLS,
]))


# The rare rows of the combination table (`Combinations`' flags) and the race each starts,
# whose family of phrases (RACE_FAMILIES) its table may shout.
ROW_RACES = {"suite_velutee": RACE_SUITE_VELUTEE, "artichette": RACE_ARTICHETTE, "bleu_rouge": "pelican",
             "neant_souffle": RACE_NEANT_SOUFFLE}


def race_shouts_played(rules: Ruleset) -> tuple[str, ...]:
    """The race phrases of the rows `rules` play, in RACE_SHOUTS's order: what a front-end
    listens for between races. A phrase of a row the ruleset does not play (« Velutée ! » at
    `classic`) means nothing at its table: listening for it only lets an everyday word (« vélute »
    said in a Civet) be misheard as a false shout. (The engine still takes any race phrase as a
    false shout: saved games replay as they were played.)"""
    played = {RACE_PHRASES[RACE_CHOUETTE_VELUTE]}
    if rules.combinations.suite:
        played |= {RACE_PHRASES[RACE_SUITE], RACE_PHRASES["suite_tie"]}
    for row, race in ROW_RACES.items():
        if getattr(rules.combinations, row):
            played |= set(RACE_FAMILIES[race])
    return tuple(phrase for phrase in RACE_SHOUTS if phrase in played)


# "Grelottine !", the challenge, from a player who holds no Grelottine (C: "lancer un défi sans
# posséder de Grelottine") is a false shout too.
GRELOTTINE_SHOUT = "grelottine"
# Every phrase a player may shout, each once: what an interface or an action space must offer.
SHOUTABLE_PHRASES: tuple[str, ...] = tuple(dict.fromkeys([
    *RACE_PHRASES.values(),
    *(phrase for calls in THROWER_CALLS.values() for phrase in calls),
    *NEANT_SOUFFLE_CALLS,
    *CLAIM_PHRASES,
]))
