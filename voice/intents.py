"""From what a player said (the lexicon's intent names) to the engine's action.

An utterance is a list of intents in the order they were heard: "Grelottine ! Velute, vingt"
is `["grelottine", "combo_velute", "nombre_20"]`. What it means depends on the moment, so
the mapping takes the pending decision and returns a legal action, or None with the reason.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from cdc_env.actions import (
    Action,
    BeauSirop,
    BetOnSuccess,
    BetSum,
    BirdBet,
    BuyCul,
    ChallengeGrelottine,
    ChallengeSoufflette,
    CoucheSirop,
    DeclareCivet,
    KeepDice,
    Pass,
    Roll,
    Shout,
    Sirop,
    UseBoucliette,
    UseGrelottine,
)
from cdc_env.game import SHOUTABLE_PHRASES, Decision
from cdc_env.rulebook.house import REGISTRY as HOUSE_RULES
from cdc_env.rulebook.phrases import CLAIM_PHRASES, RACE_SHOUTS
from cdc_env.rules import Ruleset
from voice.lexicon import Lexicon, LexiconError

BIRD_INTENTS = {
    "bird_linotte": 1, "bird_alouette": 2, "bird_fauvette": 3,
    "bird_mouette": 4, "bird_bergeronnette": 5, "bird_chouette": 6,
}
COMBINATION_INTENTS = {
    "combo_chouette": "chouette",
    "combo_velute": "velute",
    "combo_chouette_velute": "chouette_velute",
    "combo_suite": "suite",
    "combo_cul_de_chouette": "cul_de_chouette",
    "combo_cul_de_chouette_sirote": "cul_de_chouette_sirote",
}
NO = {"non", "couche_sirop"}


def number(intent: str) -> int | None:
    if intent.startswith("nombre_") and intent[7:].isdigit():
        return int(intent[7:])
    return None


def seat_of(intent: str) -> int | None:
    """`joueur_3` is the third seat, 0-based 2."""
    if intent.startswith("joueur_") and intent[7:].isdigit():
        return int(intent[7:]) - 1
    return None


LARGEST_NUMBER = 120  # the lexicon says nombre_0 .. nombre_120: every stake of the shipped rulesets (114 at most)
NUMBERS = {f"nombre_{n}" for n in range(0, LARGEST_NUMBER + 1)}
SEATS = {f"joueur_{n}" for n in range(1, 9)}
# The intents worth listening for at each kind of moment (races: the decision's phrases).
INTENTS_BY_KIND: dict[str, set[str]] = {
    "turn_start": {"je_lance", "civet", *COMBINATION_INTENTS, *NUMBERS},
    "challenge_roll": {"je_lance"},
    "buy_cul": {"achat_du_cul", "non"},
    "sirop": {"je_sirote", "oui", "non"},
    "sirop_bet": {*BIRD_INTENTS, "couche_sirop", "beau_sirop", "non"},
    "soufflette": {"en_garde_ma_mignonne", *SEATS, "non"},
    "soufflette_keep": {*NUMBERS, "non"},
    "bleu_rouge_bet": {f"nombre_{n}" for n in range(3, 19)},  # « je relance de quinze »: every seat bets
    "grelottine": {"grelottine", *COMBINATION_INTENTS, *NUMBERS, "non"},
    "boucliette": {"boucliette", "oui", "non"},
    "challenge_bet": {"oui", "non"},
    "civet_bet": {"oui", "non"},
    # House rules (cdc_env/rulebook/house/)
    "verdier_bet": {"vert_linette", "oui", "non"},
    "civet_double": {"civet", "oui", "non"},
    "attrape_oiseau": {"attrape_oiseau", "oui", "non"},
    "flan_use": {"tatan_elle_fait_des_flans", "oui", "non"},
}
# Every intent the game can ask for: a game lexicon's keys must be among them.
# (With the shouts every house rule may add: a table chooses its house rules.)
HOUSE_PHRASES = frozenset(phrase for rule in HOUSE_RULES.values() for phrase in rule.phrases)
GAME_INTENTS = frozenset({"oui", "non", *SHOUTABLE_PHRASES, *HOUSE_PHRASES}.union(*INTENTS_BY_KIND.values()))
# The moments `python -m voice.detect --moment` knows: each kind's intents, and for "race"
# (whose phrases a game takes from the decision) every shout.
MOMENT_INTENTS: dict[str, set[str]] = {**INTENTS_BY_KIND, "race": set(SHOUTABLE_PHRASES) | HOUSE_PHRASES,
                                       "claim": {*CLAIM_PHRASES, "non"}}


def intents_for(decision: Decision) -> set[str]:
    """The intents worth listening for at this moment (the recogniser's active set)."""
    if decision.kind == "race":
        return {a.phrase for a in decision.options if isinstance(a, Shout)}
    if decision.kind == "claim":  # « À Kadoc ! »: the claim is its shout; « non » lets it go
        return {decision.reason, "non"}
    listened = set(INTENTS_BY_KIND.get(decision.kind, {"oui", "non"}))
    if UseGrelottine() in decision.options:  # S: one's Grelottine played before one's roll
        listened.add("grelottine")
    return listened


def largest_stake(rules: Ruleset) -> int:
    """The largest stake a player may have to say at this table: a Civet's (its max_stake, or
    one's own points where the stake is within the score), a Grelottine challenge's (the limit
    times the smaller score). A score that reaches the target ends the game: target − 1 is the
    highest one to stake from."""
    highest = rules.target_score - 1
    stakes = [0]
    if rules.civet.enabled:
        stakes.append(min(rules.civet.max_stake, highest) if rules.civet.stake_within_score else rules.civet.max_stake)
    if rules.grelottine.enabled and rules.grelottine.use == "challenge":  # before_roll: the game sets it
        stakes.append(int(highest * max(rules.grelottine.stake_limits.values())))
    return max(stakes)


def unsayable_stakes(rules: Ruleset) -> str | None:
    """Start-up's warning where the table's stakes go past the numbers a player can say (a
    user's ruleset: a larger Civet max_stake, a Grelottine limit of a half), or None. Such a
    stake was simply never heard, the player left to wonder why."""
    largest = largest_stake(rules)
    if largest <= LARGEST_NUMBER:
        return None
    return (f"stakes up to {largest} can be asked at {rules.name}, and the voice hears numbers up to "
            f"{LARGEST_NUMBER}: type a larger stake (« N STAKE » from the menu) or enter it on the phone")


def check_game_lexicon(lexicon: Lexicon) -> Lexicon:
    """The lexicon, after checking that each key is an intent the game asks for (a key with a
    typo would otherwise be a phrase nobody can ever use), and that no two intents listened for
    at one moment share a phrase (found only when that moment came, it stopped the game)."""
    for key in lexicon.intents:
        if key not in GAME_INTENTS:
            near = difflib.get_close_matches(key, sorted(GAME_INTENTS), n=1)
            hint = f"did you mean '{near[0]}'?" if near else "see configs/voice/fr.yaml for the intents"
            raise LexiconError(f"{lexicon.path}: key '{key}' is not an intent of the game; {hint}")
    for kind, intents in MOMENT_INTENTS.items():
        # A race listens for its own phrases; every other moment for the race shouts too (false shouts).
        listened = intents if kind == "race" else {*intents, *RACE_SHOUTS}
        if kind == "turn_start":
            listened.add("grelottine")  # where one's own Grelottine may be played before a roll (S)
        lexicon.check_shared_phrases(i for i in sorted(listened) if i in lexicon.intents)
    return lexicon


def unsayable(lexicon: Lexicon) -> list[str]:
    """The game's intents the lexicon has no phrase for: they cannot be said (start-up's report)."""
    return sorted(GAME_INTENTS - set(lexicon.intents))


def answer_in_parts(decision: Decision, before: Sequence[str], intent: str,
                    onset_ms: float | None = None) -> tuple[list[str], Action | None, str, bool]:
    """`intent` heard from the player asked, after `before` (their parts of an answer so far):
    (the parts now, the action they ask for or None, why not, whether more may come). The
    recogniser decides one phrase an utterance, so an answer of several (« civet », « velute »,
    « quarante »; « en garde ma mignonne », « joueur deux »; two dice kept, « trois », « cinq »)
    comes in parts. A part that does not go on with `before` starts the answer again. More may
    come after a begun answer (a Civet without its stake) and after one die kept where two may
    be: the caller waits a moment for the second (`KEEP_MORE_S`)."""
    parts = [*before, intent] if before and intent in _going_on(decision, before[0]) else [intent]
    action, why = action_for(decision, parts, onset_ms)
    if action is None:
        # More may come only to an answer still missing a part: a whole one refused (a stake
        # above what is allowed) is said so, and the player starts again.
        return parts, None, why, (decision.kind, parts[0]) in BEGUN and not _whole(parts)
    more = (isinstance(action, KeepDice) and len(action.keep) == 1
            and any(isinstance(o, KeepDice) and len(o.keep) == 2 and action.keep[0] in o.keep
                    for o in decision.options))
    return parts, action, why, more


# The first parts of answers said in parts, at their moment: (the decision's kind, the intent).
BEGUN = {("turn_start", "civet"), ("grelottine", "grelottine"), ("soufflette", "en_garde_ma_mignonne")}
# How long a die kept alone waits for a second one named after it.
KEEP_MORE_S = 1.5


def _whole(parts: Sequence[str]) -> bool:
    """Whether an answer begun in parts has all of them: a combination and a stake (a Civet, a
    Grelottine), or the player challenged (a Soufflette)."""
    if parts[0] == "en_garde_ma_mignonne":
        return any(seat_of(p) is not None for p in parts)
    return any(p in COMBINATION_INTENTS for p in parts) and any(number(p) is not None for p in parts)


def _going_on(decision: Decision, first: str) -> set[str]:
    """The intents that go on with an answer begun by `first` at this moment."""
    if (decision.kind, first) in (("turn_start", "civet"), ("grelottine", "grelottine")):
        return {*COMBINATION_INTENTS, *NUMBERS}
    if (decision.kind, first) == ("soufflette", "en_garde_ma_mignonne"):
        return SEATS
    if decision.kind == "soufflette_keep" and number(first) is not None:
        return NUMBERS
    return set()


def action_for(decision: Decision, intents: Sequence[str],
               onset_ms: float | None = None) -> tuple[Action | None, str]:
    """The legal action these intents ask for, or (None, why not)."""
    said = list(intents)
    if not said:
        return None, "nothing was heard"
    kind = decision.kind
    first = said[0]
    numbers = [n for n in map(number, said) if n is not None]
    # An answer said in parts takes the last combination and stake said: a player corrects
    # themself (« civet, chouette… velute, quarante »); the first one said is what they took back.
    combination = next((COMBINATION_INTENTS[i] for i in reversed(said) if i in COMBINATION_INTENTS), None)
    action: Action | None = None
    if first == "couche_sirop" and CoucheSirop() in decision.options:
        action = CoucheSirop()  # the pass announced, where saying nothing is a Bévue (F)
    elif first == "non" and CoucheSirop() in decision.options:
        # Not the announcement F asks for: taken as the silent pass, it cost the Bévue of one who
        # said nothing (where Bévues are played). The player is told the words, and says them.
        return None, "to pass on the sirop, say « couche sirop »: here the pass is announced"
    elif first in NO:
        action = KeepDice(()) if kind == "soufflette_keep" else Pass()
    elif kind in ("race", "claim"):
        action = Shout(first, onset_ms)
    elif kind in ("turn_start", "challenge_roll") and first == "je_lance":
        action = Roll()
    elif kind == "turn_start" and first == "grelottine":
        action = UseGrelottine()
    elif kind == "turn_start" and first == "civet":
        if combination is None or not numbers:
            return None, "a Civet needs a combination and a stake: « civet, velute, quarante »"
        action = DeclareCivet(combination, numbers[-1])
    elif kind == "grelottine" and first == "grelottine":
        if combination is None or not numbers:
            return None, "a Grelottine needs a combination and a stake: « grelottine, chouette, vingt »"
        action = ChallengeGrelottine(combination, numbers[-1])
    elif kind == "buy_cul" and first == "achat_du_cul":
        action = BuyCul()
    elif kind == "sirop" and first in ("je_sirote", "oui"):
        action = Sirop()
    elif kind == "sirop_bet" and first in BIRD_INTENTS:
        action = BirdBet(BIRD_INTENTS[first])
    elif kind == "sirop_bet" and first == "beau_sirop":
        action = BeauSirop()
    elif kind == "bleu_rouge_bet" and numbers:
        action = BetSum(numbers[0])
    elif kind == "soufflette" and first == "en_garde_ma_mignonne":
        seats = [s for s in map(seat_of, said) if s is not None]
        if not seats:
            return None, "name the player you challenge: « en garde ma mignonne, joueur deux »"
        action = ChallengeSoufflette(seats[-1])
    elif kind == "soufflette_keep" and numbers:
        action = KeepDice(tuple(numbers))
    elif kind == "boucliette" and first in ("boucliette", "oui"):
        action = UseBoucliette()
    elif kind in ("challenge_bet", "civet_bet") and first == "oui":
        action = BetOnSuccess()
    elif kind == "verdier_bet" and first in ("vert_linette", "oui"):
        action = BetOnSuccess()
    elif kind == "civet_double" and first in ("civet", "oui"):
        action = BetOnSuccess()  # « Civet ! »: one joins with one's own
    elif kind == "attrape_oiseau" and first in ("attrape_oiseau", "oui"):
        action = BetOnSuccess()
    elif kind == "flan_use" and first in ("tatan_elle_fait_des_flans", "oui"):
        action = BetOnSuccess()
    if action is None:
        return None, f"« {' '.join(said)} » does not answer this moment ({decision.describe()})"
    if not decision.allows(action):
        return None, f"{action} is not allowed now ({decision.describe()})"
    return action, ""
