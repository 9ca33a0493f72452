"""House rules: rules a table chooses to play, each switched on in a ruleset's `house_rules:`.

Each is a module of this package and ONE line below; a house rule from elsewhere (a test) is one
call to `register`. What a house rule is and when it acts: `cdc_env/rulebook/house/registry.py`.
"""

from __future__ import annotations

from cdc_env.rulebook.house import (
    attrape_oiseau,
    chante_sloubi,
    civet_double,
    contre_sirop,
    cul_de_chouette_contre,
    doublette,
    flan_use,
    tichette,
    verdier,
)
from cdc_env.rulebook.house.registry import (
    MOMENTS,
    REGISTRY,
    RULESET_PARTS,
    HouseRule,
    added_names,
    chosen,
    late_join_rule,
    moment_rules,
    parameters_of,
    plays_teams,
    register,
    teams_of,
    unregister,
)

__all__ = ["MOMENTS", "REGISTRY", "RULESET_PARTS", "HouseRule", "added_names", "chosen", "late_join_rule",
           "moment_rules", "parameters_of", "plays_teams", "register", "teams_of", "unregister"]

register(verdier.RULE)
register(civet_double.RULE)
register(tichette.RULE)
register(contre_sirop.RULE)
register(attrape_oiseau.RULE)
register(cul_de_chouette_contre.RULE)
register(doublette.RULE)
register(flan_use.RULE)
register(chante_sloubi.RULE)
