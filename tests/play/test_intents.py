"""What players say, mapped to the engine's actions at each moment."""

from __future__ import annotations

from cdc_env.actions import (
    BetOnSuccess,
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
)
from cdc_env.game import Decision
from voice.intents import action_for, answer_in_parts, intents_for


def decision(kind: str, options, **extra) -> Decision:
    return Decision(0, kind, tuple(options), **extra)


def test_simple_moments() -> None:
    assert action_for(decision("turn_start", [Roll()]), ["je_lance"]) == (Roll(), "")
    assert action_for(decision("buy_cul", [BuyCul(), Pass()]), ["achat_du_cul"]) == (BuyCul(), "")
    assert action_for(decision("sirop", [Sirop(), Pass()]), ["je_sirote"]) == (Sirop(), "")
    assert action_for(decision("sirop", [Sirop(), Pass()]), ["non"]) == (Pass(), "")
    birds = [Pass()] + [BirdBet(f) for f in range(1, 7)]
    assert action_for(decision("sirop_bet", birds), ["bird_bergeronnette"]) == (BirdBet(5), "")
    assert action_for(decision("sirop_bet", birds), ["couche_sirop"]) == (Pass(), "")
    assert action_for(decision("boucliette", [UseBoucliette(), Pass()]), ["boucliette"])[0] == UseBoucliette()
    assert action_for(decision("challenge_bet", [BetOnSuccess(), Pass()]), ["oui"])[0] == BetOnSuccess()


def test_staked_choices_need_combination_and_stake() -> None:
    grelottine = decision("grelottine", [Pass()], staked=ChallengeGrelottine,
                          stakes=(("velute", range(1, 26)), ("chouette", range(1, 34))))
    assert (action_for(grelottine, ["grelottine", "combo_velute", "nombre_20"])
            == (ChallengeGrelottine("velute", 20), ""))
    action, why = action_for(grelottine, ["grelottine", "combo_velute", "nombre_30"])
    assert action is None and "not allowed" in why
    action, why = action_for(grelottine, ["grelottine"])
    assert action is None and "combination and a stake" in why
    civet = decision("turn_start", [Roll()], staked=DeclareCivet, stakes=(("suite", range(1, 103)),))
    assert action_for(civet, ["civet", "combo_suite", "nombre_102"])[0] == DeclareCivet("suite", 102)


def test_a_non_where_the_pass_must_be_announced_is_no_pass() -> None:
    # F's sirop bet (complete): « non » was the silent pass, and cost the Bévue of one who said nothing.
    bets = decision("sirop_bet", [Pass(), CoucheSirop()] + [BirdBet(f) for f in range(1, 7)])
    action, why = action_for(bets, ["non"])
    assert action is None and "couche sirop" in why
    assert action_for(bets, ["couche_sirop"]) == (CoucheSirop(), "")


def test_an_answer_in_parts_takes_the_combination_and_stake_said_last() -> None:
    # « civet, chouette… velute, quarante »: the Civet was declared on the Chouette taken back.
    civet = decision("turn_start", [Roll()], staked=DeclareCivet,
                     stakes=(("chouette", range(1, 103)), ("velute", range(1, 103))))
    parts: list[str] = []
    for said in ("civet", "combo_chouette", "combo_velute", "nombre_40"):
        parts, action, why, more = answer_in_parts(civet, parts, said)
    assert action == DeclareCivet("velute", 40)
    grelottine = decision("grelottine", [Pass()], staked=ChallengeGrelottine,
                          stakes=(("velute", range(1, 26)), ("chouette", range(1, 34))))
    assert action_for(grelottine, ["grelottine", "combo_velute", "combo_chouette", "nombre_20"])[0] \
        == ChallengeGrelottine("chouette", 20)
    souffle = decision("soufflette", [Pass(), ChallengeSoufflette(1), ChallengeSoufflette(2)])
    assert action_for(souffle, ["en_garde_ma_mignonne", "joueur_2", "joueur_3"])[0] == ChallengeSoufflette(2)


def test_soufflette_target_and_keeps() -> None:
    souffle = decision("soufflette", [Pass(), ChallengeSoufflette(1), ChallengeSoufflette(2)])
    assert action_for(souffle, ["en_garde_ma_mignonne", "joueur_3"])[0] == ChallengeSoufflette(2)
    keep = decision("soufflette_keep", [KeepDice(()), KeepDice((1,)), KeepDice((1, 2))])
    assert action_for(keep, ["nombre_2", "nombre_1"])[0] == KeepDice((1, 2))
    assert action_for(keep, ["non"])[0] == KeepDice(())


def test_race_shouts_carry_the_onset() -> None:
    race = decision("race", [Pass(), Shout("pas_mou_le_caillou"), Shout("grelotte_ca_picote")],
                    reason="chouette_velute")
    assert action_for(race, ["pas_mou_le_caillou"], onset_ms=420.0)[0] == Shout("pas_mou_le_caillou", 420.0)
    assert intents_for(race) == {"pas_mou_le_caillou", "grelotte_ca_picote"}


def test_words_that_do_not_fit_the_moment_are_explained() -> None:
    action, why = action_for(decision("buy_cul", [BuyCul(), Pass()]), ["bird_linotte"])
    assert action is None and "does not answer this moment" in why
    assert action_for(decision("buy_cul", [BuyCul(), Pass()]), [])[1] == "nothing was heard"


def test_house_rule_moments_take_their_word_or_oui() -> None:
    # Each house rule's join is a bet on success: its own shout or « oui » (the Verdier's
    # « Vert-Linette ! », the Civet doublé's « Civet ! », the Attrape-oiseau's, the Flan's
    # « Tatan, elle fait des flans ! »); another rule's word does not answer it.
    words = {"verdier_bet": "vert_linette", "civet_double": "civet", "attrape_oiseau": "attrape_oiseau",
             "flan_use": "tatan_elle_fait_des_flans"}
    for kind, word in words.items():
        moment = decision(kind, [BetOnSuccess(), Pass()])
        assert action_for(moment, [word]) == (BetOnSuccess(), ""), kind
        assert action_for(moment, ["oui"]) == (BetOnSuccess(), ""), kind
        assert action_for(moment, ["non"]) == (Pass(), ""), kind
        for other in set(words.values()) - {word}:
            action, why = action_for(moment, [other])
            assert action is None and "does not answer this moment" in why, (kind, other)


def test_two_intents_listened_for_at_one_moment_sharing_a_phrase_are_refused_at_start_up() -> None:
    # « ouais » for « oui » and « je sirote »: both listened for at a sirop. Only the moment found
    # it, and the game stopped on it; the start-up check let it through.
    import pytest

    from voice.intents import check_game_lexicon, unsayable
    from voice.lexicon import Lexicon, LexiconError, load_lexicon

    fine = load_lexicon("configs/voice/fr.yaml")
    assert check_game_lexicon(fine) is fine and unsayable(fine) == []  # the shipped lexicon says everything
    intents = dict(fine.intents)
    intents["je_sirote"] = (*intents["je_sirote"], "ouais")
    intents["oui"] = (*intents["oui"], "ouais")
    with pytest.raises(LexiconError, match="intents '(je_sirote|oui)' and '(oui|je_sirote)' are both active and "
                                           "share the phrase 'ouais'"):
        check_game_lexicon(Lexicon(fine.path, intents))
    # « grelottine » is listened for at a turn's start where one's own may be played (solo).
    clash = dict(fine.intents)
    clash["grelottine"] = (*clash["grelottine"], "je lance")
    with pytest.raises(LexiconError, match="share the phrase 'je lance'"):
        check_game_lexicon(Lexicon(fine.path, clash))
    # Intents left out of a copy cannot be said: named at start-up (before, nothing was said).
    del intents["non"]
    assert "non" in unsayable(Lexicon(fine.path, intents))


def test_stakes_past_the_numbers_a_player_can_say_are_warned_of_at_start_up() -> None:
    from cdc_env.rules import Ruleset, load_ruleset
    from voice.intents import LARGEST_NUMBER, largest_stake, unsayable_stakes

    # The shipped rulesets' stakes are all sayable: v004's Grelottine at a third of 342 is the largest.
    assert {name: largest_stake(load_ruleset(name)) for name in ("classic", "v004", "complete", "maison", "solo")} \
        == {"classic": 112, "v004": 114, "complete": 112, "maison": 112, "solo": 102}
    assert all(unsayable_stakes(load_ruleset(name)) is None for name in ("classic", "v004", "maison"))
    data = load_ruleset("classic").model_dump(mode="json")
    data["grelottine"]["stake_limits"]["chouette"] = "1/2"  # a user's table: half the smaller score
    halved = Ruleset.from_dict(data)
    assert largest_stake(halved) == 171 > LARGEST_NUMBER
    assert unsayable_stakes(halved) == (
        "stakes up to 171 can be asked at classic, and the voice hears numbers up to 120: type a larger stake "
        "(« N STAKE » from the menu) or enter it on the phone")
    data = load_ruleset("classic").model_dump(mode="json")
    data["civet"].update(max_stake=200, stake_within_score=True)  # within one's points: 342 at most
    assert largest_stake(Ruleset.from_dict(data)) == 200
    data["civet"]["enabled"] = False
    data["grelottine"]["use"] = "before_roll"  # S: the game sets the stake, nobody says it
    assert largest_stake(Ruleset.from_dict(data)) == 0
