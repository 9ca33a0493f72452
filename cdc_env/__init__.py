"""cdc_env: the Cul de Chouette rules engine and its reinforcement-learning environments."""

from cdc_env.actions import Action, IllegalActionError, action_from_json
from cdc_env.combinations import Combination, classify
from cdc_env.dice import InjectedDice, SeededDice
from cdc_env.game import Decision, GameLoadError, GameState
from cdc_env.rules import Ruleset, RulesetError, load_ruleset

__all__ = [
    "Action", "Combination", "Decision", "GameLoadError", "GameState", "IllegalActionError",
    "InjectedDice", "Ruleset", "RulesetError", "SeededDice", "action_from_json", "classify",
    "load_ruleset",
]
