"""Every intent a player may say, at every moment, pinned to the engine action it means.

The bird table comes from the rules (RULES.md, "Sirotage": Linotte 1, Alouette 2, Fauvette 3,
Mouette 4, Bergeronnette 5, Chouette 6; the same line in docs/rules.md): a player who says
« Mouette ! » bets on 4, whatever order the code's own tables are in.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cdc_env.actions import (
    BIRDS,
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
from cdc_env.game import Decision
from voice.intents import (
    BIRD_INTENTS,
    COMBINATION_INTENTS,
    GAME_INTENTS,
    INTENTS_BY_KIND,
    MOMENT_INTENTS,
    action_for,
    check_game_lexicon,
    intents_for,
    number,
    seat_of,
)
from voice.lexicon import Lexicon, LexiconError, load_lexicon

ROOT = Path(__file__).resolve().parents[2]
# The rules' table, as RULES.md writes it.
RULES_BIRDS = {"linotte": 1, "alouette": 2, "fauvette": 3, "mouette": 4, "bergeronnette": 5, "chouette": 6}


def decision(kind: str, options: list[Action], **extra: object) -> Decision:
    return Decision(0, kind, tuple(options), **extra)  # type: ignore[arg-type]


def test_the_rules_table_is_the_one_docs_rules_md_states() -> None:
    text = (ROOT / "docs" / "rules.md").read_text()
    start = text.index("Linotte 1")
    text = text[start:text.index("Chouette", start) + len("Chouette 6")]
    found = {bird.lower(): int(face) for bird, face in
             re.findall(r"(Linotte|Alouette|Fauvette|Mouette|Bergeronnette|Chouette) (\d)", text)}
    assert found == RULES_BIRDS


@pytest.mark.parametrize("bird, face", sorted(RULES_BIRDS.items()))
def test_each_bird_said_bets_on_its_face(bird: str, face: int) -> None:
    birds = decision("sirop_bet", [Pass()] + [BirdBet(f) for f in range(1, 7)])
    assert action_for(birds, [f"bird_{bird}"]) == (BirdBet(face), "")
    assert BIRD_INTENTS[f"bird_{bird}"] == face
    assert BIRDS[face - 1] == bird  # the engine's names (observations, logs) agree


def test_the_lexicon_words_reach_the_same_faces() -> None:
    """From the word a player says (configs/voice/fr.yaml) to the face bet on."""
    lexicon = load_lexicon(ROOT / "configs" / "voice" / "fr.yaml")
    for bird, face in RULES_BIRDS.items():
        assert list(lexicon.intents[f"bird_{bird}"]) == [bird]
        assert BIRD_INTENTS[f"bird_{bird}"] == face


def test_fauvette_and_mouette_are_not_swapped() -> None:
    birds = decision("sirop_bet", [Pass(), BirdBet(3), BirdBet(4)])
    assert action_for(birds, ["bird_fauvette"])[0] == BirdBet(3)
    assert action_for(birds, ["bird_mouette"])[0] == BirdBet(4)


# Per decision kind: its options, and what each intent said first (alone) means there.
CIVET_STAKES = (("velute", range(1, 51)), ("suite", range(1, 103)))
GRELOTTINE_STAKES = (("chouette", range(1, 34)), ("cul_de_chouette_sirote", range(1, 20)))
MOMENTS: dict[str, tuple[list[Action], dict[str, Action], dict[str, object]]] = {
    "turn_start": ([Roll()], {"je_lance": Roll()}, {"staked": DeclareCivet, "stakes": CIVET_STAKES}),
    "buy_cul": ([BuyCul(), Pass()], {"achat_du_cul": BuyCul(), "non": Pass()}, {}),
    "sirop": ([Sirop(), Pass()], {"je_sirote": Sirop(), "oui": Sirop(), "non": Pass()}, {}),
    "boucliette": ([UseBoucliette(), Pass()],
                   {"boucliette": UseBoucliette(), "oui": UseBoucliette(), "non": Pass()}, {}),
    "challenge_bet": ([BetOnSuccess(), Pass()], {"oui": BetOnSuccess(), "non": Pass()}, {}),
    "civet_bet": ([BetOnSuccess(), Pass()], {"oui": BetOnSuccess(), "non": Pass()}, {}),
    "challenge_roll": ([Roll()], {"je_lance": Roll()}, {}),
    "sirop_bet": ([Pass()] + [BirdBet(f) for f in range(1, 7)],
                  {"couche_sirop": Pass(), "non": Pass(),
                   **{f"bird_{bird}": BirdBet(face) for bird, face in RULES_BIRDS.items()}}, {}),
    "grelottine": ([Pass()], {"non": Pass()}, {"staked": ChallengeGrelottine, "stakes": GRELOTTINE_STAKES}),
    "soufflette": ([Pass(), ChallengeSoufflette(1)], {"non": Pass()}, {}),
    "soufflette_keep": ([KeepDice(()), KeepDice((2,))],
                        {"non": KeepDice(()), "couche_sirop": KeepDice(()), "nombre_2": KeepDice((2,))}, {}),
}
# A first word that starts the right answer but says too little: the reason asks for the rest.
INCOMPLETE = {
    ("turn_start", "civet"): "a Civet needs a combination and a stake: « civet, velute, quarante »",
    ("grelottine", "grelottine"):
        "a Grelottine needs a combination and a stake: « grelottine, chouette, vingt »",
    ("soufflette", "en_garde_ma_mignonne"): "name the player you challenge: « en garde ma mignonne, joueur deux »",
}


# Answers of these moments that only some tables offer (F's Beau-Sirop, S's Grelottine before
# the roll): where they are not on offer, they are refused as such.
NOT_ON_OFFER = {("sirop_bet", "beau_sirop"), ("turn_start", "grelottine")}


@pytest.mark.parametrize("kind", sorted(MOMENTS))
def test_every_intent_of_a_moment_maps_to_its_action(kind: str) -> None:
    options, meaning, staked = MOMENTS[kind]
    if Pass() in options:  # « couche sirop » is a pass wherever a pass is allowed (it is heard at a sirop bet)
        meaning = {**meaning, "couche_sirop": Pass()}
    moment = decision(kind, options, **staked)
    for intent, meant in meaning.items():
        assert action_for(moment, [intent]) == (meant, ""), (kind, intent)
    assert set(meaning) - {"couche_sirop"} <= intents_for(moment)
    # Anything else is refused with the reason, never turned into an action.
    for intent in sorted(GAME_INTENTS - set(meaning)):
        action, why = action_for(moment, [intent])
        assert action is None, (kind, intent)
        if (kind, intent) in INCOMPLETE:
            assert why == INCOMPLETE[kind, intent]
        elif (intent in ("non", "couche_sirop") or (kind == "soufflette_keep" and number(intent) is not None)
              or (kind, intent) in NOT_ON_OFFER):
            assert "is not allowed now" in why, (kind, intent, why)  # a pass (a keep) not on offer
        else:
            assert why == f"« {intent} » does not answer this moment ({moment.describe()})", (kind, intent)


def test_oui_is_a_bet_on_a_civet() -> None:
    civet_bet = decision("civet_bet", [BetOnSuccess(), Pass()])
    assert action_for(civet_bet, ["oui"]) == (BetOnSuccess(), "")
    assert action_for(civet_bet, ["non"]) == (Pass(), "")


def test_turn_start_roll_civet_and_refusals() -> None:
    start = decision("turn_start", [Roll()], staked=DeclareCivet,
                     stakes=(("velute", range(1, 51)), ("suite", range(1, 103))))
    assert action_for(start, ["je_lance"]) == (Roll(), "")
    for said, combination in COMBINATION_INTENTS.items():
        if combination in ("velute", "suite"):
            assert action_for(start, ["civet", said, "nombre_40"]) == (DeclareCivet(combination, 40), "")
    # The stake is the last number heard, the combination the last one named: a player who names
    # another one corrects themself.
    assert action_for(start, ["civet", "nombre_7", "combo_suite", "combo_velute", "nombre_9"]) == (
        DeclareCivet("velute", 9), "")
    assert action_for(start, ["civet", "combo_velute"])[0] is None
    assert action_for(start, ["civet", "nombre_20"])[0] is None
    assert "not allowed" in action_for(start, ["civet", "combo_velute", "nombre_51"])[1]
    assert action_for(start, ["non"])[0] is None  # Pass is not an option at the turn's start
    # "je lance" is no Civet, and a Civet is no answer at a challenge throw.
    assert action_for(decision("challenge_roll", [Roll()]), ["civet", "combo_suite", "nombre_5"])[0] is None


def test_grelottine_challenge_names_combination_and_stake() -> None:
    moment = decision("grelottine", [Pass()], staked=ChallengeGrelottine,
                      stakes=(("chouette", range(1, 34)), ("cul_de_chouette_sirote", range(1, 20))))
    assert action_for(moment, ["grelottine", "combo_cul_de_chouette_sirote", "nombre_12"]) == (
        ChallengeGrelottine("cul_de_chouette_sirote", 12), "")
    assert action_for(moment, ["non"]) == (Pass(), "")
    assert action_for(moment, ["combo_chouette", "nombre_12"])[0] is None  # "grelottine" comes first
    for said in (["grelottine", "combo_chouette"], ["grelottine", "nombre_12"]):  # one of the two is missing
        assert action_for(moment, said) == (
            None, "a Grelottine needs a combination and a stake: « grelottine, chouette, vingt »")
    assert action_for(decision("turn_start", [Roll()]), ["grelottine", "combo_chouette", "nombre_3"])[0] is None


def test_soufflette_names_the_seat_and_keeps_the_dice_said() -> None:
    moment = decision("soufflette", [Pass()] + [ChallengeSoufflette(s) for s in (1, 2, 3)])
    for spoken, seat in (("joueur_2", 1), ("joueur_3", 2), ("joueur_4", 3)):
        assert action_for(moment, ["en_garde_ma_mignonne", spoken]) == (ChallengeSoufflette(seat), "")
    # The seat named last: a player who names another corrects themself.
    assert action_for(moment, ["en_garde_ma_mignonne", "joueur_4", "joueur_2"])[0] == ChallengeSoufflette(1)
    action, why = action_for(moment, ["en_garde_ma_mignonne"])
    assert action is None and "name the player" in why
    assert action_for(moment, ["non"]) == (Pass(), "")
    assert action_for(moment, ["joueur_2"])[0] is None
    keep = decision("soufflette_keep", [KeepDice(()), KeepDice((3,)), KeepDice((3, 5))])
    assert action_for(keep, ["nombre_3"]) == (KeepDice((3,)), "")
    assert action_for(keep, ["nombre_3", "nombre_5"]) == (KeepDice((3, 5)), "")
    assert action_for(keep, ["non"]) == (KeepDice(()), "")
    assert action_for(keep, ["couche_sirop"]) == (KeepDice(()), "")
    assert action_for(keep, ["oui"])[0] is None
    # Numbers mean kept dice only at a keep, not at a Soufflette challenge.
    assert action_for(moment, ["nombre_3"])[0] is None


def test_race_shout_is_the_first_intent_with_its_onset() -> None:
    race = decision("race", [Pass(), Shout("velutee"), Shout("pas_mou_le_caillou")], reason="chouette_velute")
    assert action_for(race, ["velutee", "pas_mou_le_caillou"], onset_ms=310.0) == (Shout("velutee", 310.0), "")
    assert action_for(race, ["non"]) == (Pass(), "")
    assert intents_for(race) == {"velutee", "pas_mou_le_caillou"}
    action, why = action_for(race, ["a_kadoc"], onset_ms=10.0)
    assert action is None and "not allowed" in why


def test_every_choice_of_f_s_sirop_claims_and_bets_can_be_said() -> None:
    """The choices only `complete` (F) and the house rules offer, each said by its own phrase:
    before, « à Kadoc » was not listened for, « couche sirop » passed in silence (a Bévue where
    the pass must be announced), « beau sirop » and a Bleu-Rouge sum answered nothing."""
    kadoc = decision("claim", [Pass(), Shout("a_kadoc")], reason="a_kadoc")
    assert intents_for(kadoc) == {"a_kadoc", "non"}
    assert action_for(kadoc, ["a_kadoc"], onset_ms=420.0) == (Shout("a_kadoc", 420.0), "")
    assert action_for(kadoc, ["non"]) == (Pass(), "")
    assert action_for(kadoc, ["sirop_gagnant"], onset_ms=5.0)[0] is None  # another claim's phrase
    announced = decision("sirop_bet", [Pass(), CoucheSirop(), BeauSirop(), BirdBet(2)])
    assert action_for(announced, ["couche_sirop"]) == (CoucheSirop(), "")
    assert action_for(announced, ["beau_sirop"]) == (BeauSirop(), "")
    assert action_for(announced, ["non"])[0] is None  # no announcement: the silent pass is a Bévue
    assert action_for(decision("sirop_bet", [Pass(), BirdBet(2)]), ["beau_sirop"])[0] is None
    sums = decision("bleu_rouge_bet", [BetSum(t) for t in range(3, 19) if t != 11])
    assert intents_for(sums) == {f"nombre_{n}" for n in range(3, 19)}
    assert action_for(sums, ["nombre_15"]) == (BetSum(15), "")
    assert action_for(sums, ["nombre_11"])[0] is None  # another player bet it already
    grelottine = decision("turn_start", [Roll(), UseGrelottine()])
    assert "grelottine" in intents_for(grelottine) and "grelottine" not in intents_for(decision("turn_start", [Roll()]))
    assert action_for(grelottine, ["grelottine"]) == (UseGrelottine(), "")


def test_intents_listened_for_at_each_moment() -> None:
    for kind, listened in INTENTS_BY_KIND.items():
        assert intents_for(decision(kind, [Pass()])) == listened
    assert intents_for(decision("civet_bet_x", [Pass()])) == {"oui", "non"}  # a kind without its own list
    assert MOMENT_INTENTS["race"] <= GAME_INTENTS
    assert {"oui", "non", "civet", "je_lance", "bird_mouette", "joueur_8", "nombre_120"} <= GAME_INTENTS


def test_numbers_and_seats_are_read_only_from_their_own_intents() -> None:
    assert number("nombre_40") == 40
    assert number("nombre_0") == 0
    assert number("joueur_3") is None and number("nombre_x") is None and number("nombre_") is None
    assert seat_of("joueur_1") == 0 and seat_of("joueur_8") == 7
    assert seat_of("nombre_3") is None and seat_of("joueur_x") is None and seat_of("joueur_") is None


def test_a_lexicon_key_that_is_no_intent_is_named_with_a_hint() -> None:
    good = Lexicon(path=Path("fr.yaml"), intents={"oui": ("oui",), "bird_mouette": ("mouette",)})
    assert check_game_lexicon(good) is good
    with pytest.raises(LexiconError, match=r"fr\.yaml: key 'bird_mouete' is not an intent of the game; "
                                           r"did you mean 'bird_mouette'\?"):
        check_game_lexicon(Lexicon(path=Path("fr.yaml"), intents={"bird_mouete": ("mouette",)}))
    with pytest.raises(LexiconError, match=r"key 'xyzzy' is not an intent of the game; see configs/voice/fr\.yaml"):
        check_game_lexicon(Lexicon(path=Path("fr.yaml"), intents={"xyzzy": ("xyzzy",)}))


def test_refusals_say_what_was_heard_and_what_the_moment_asks() -> None:
    moment = decision("buy_cul", [BuyCul(), Pass()])
    action, why = action_for(moment, ["bird_linotte", "oui"])
    assert action is None
    assert why == f"« bird_linotte oui » does not answer this moment ({moment.describe()})"
    only_pass = decision("buy_cul", [Pass()])
    assert action_for(only_pass, ["achat_du_cul"]) == (None, f"{BuyCul()} is not allowed now ({only_pass.describe()})")


def _said_for(option: Action) -> list[str]:
    """The words a player says for an option that takes more than one (a Soufflette's challenge
    names the seat, a keep the dice, a staked choice its combination and stake)."""
    if isinstance(option, ChallengeSoufflette):
        return ["en_garde_ma_mignonne", f"joueur_{option.target + 1}"]
    if isinstance(option, KeepDice) and option.keep:
        return [f"nombre_{face}" for face in option.keep]
    if isinstance(option, (DeclareCivet, ChallengeGrelottine)):
        combination = next(i for i, name in COMBINATION_INTENTS.items() if name == option.combination)
        first = "civet" if isinstance(option, DeclareCivet) else "grelottine"
        return [first, combination, f"nombre_{option.stake}"]
    return []


def test_every_choice_of_every_ruleset_can_be_said_and_chosen_from_the_menu() -> None:
    """Random games of every ruleset, every decision a human meets but a race (shouted, not
    chosen): each option, and each staked choice at its smallest stake, is taken from the menu
    once the session has timed it (a claim's shout has no onset on the menu: it killed the live
    table), and said aloud by the phrases listened for at that moment, one or a few words."""
    from doubles import FixedBot

    from agents.bots import make_bot
    from cdc_env.dice import SeededDice
    from cdc_env.game import GameState
    from cdc_env.rules import load_ruleset
    from voice.session import PlaySession, SeatPlayer

    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(500))],
                          view=None, keyboard=None, seed=0)  # type: ignore[arg-type]  # only its timing is used
    unsaid: set[tuple[str, str, str]] = set()
    kinds: set[str] = set()
    for name in ("basic", "classic", "v004", "complete", "maison", "solo"):
        rules = load_ruleset(name)
        for seed in range(12):
            players = 1 if name == "solo" else 2 + seed % 3
            state = GameState(rules, players, dice=SeededDice(seed))
            bots = [make_bot("random", seed=10 * seed + s) for s in range(players)]
            for _ in range(1500):
                decision = state.pending
                if decision is None:
                    break
                assert decision.seat is not None
                if decision.kind != "race":
                    kinds.add(decision.kind)
                    listened = intents_for(decision)
                    staked = [decision.staked(combination, stakes.start)  # type: ignore[misc]
                              for combination, stakes in decision.stakes]
                    for option in [*decision.options, *staked]:
                        meant = session._timed(option, session._moment + 0.4)  # a claim: its shout at 400 ms
                        assert decision.allows(meant), (name, option)
                        words = _said_for(option)
                        sayings = [words] if words else [[intent] for intent in listened]
                        if not any(set(said) <= listened and action_for(decision, said, onset_ms=400.0)[0] == meant
                                   for said in sayings):
                            unsaid.add((name, decision.kind, str(option)))
                state.apply_action(bots[decision.seat].act(state, decision), seat=decision.seat)
    assert {"claim", "sirop_bet", "bleu_rouge_bet", "soufflette", "soufflette_keep", "grelottine"} <= kinds
    # F's silent pass on a sirop (a Bévue: saying nothing) is not said, it is the menu's; by voice
    # the pass is announced, « couche sirop ».
    assert unsaid <= {(name, "sirop_bet", "pass") for name in ("complete", "maison")}
