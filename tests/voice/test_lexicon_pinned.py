"""The lexicon's start-up report (every phrase spelled, the unknown ones with the word that breaks
them), the set of intents that can be listened for at once, and the exact messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from voice.lexicon import (
    Lexicon,
    LexiconError,
    Phrase,
    UnknownWord,
    french_number,
    load_lexicon,
    spell_all,
    usable_phrases,
    word_spellings,
)

VOCABULARY = {"pas", "mou", "le", "caillou", "j'", "achète", "chouette", "oui", "non"}


def knows(word: str) -> bool:
    return word in VOCABULARY


def lexicon(**intents: tuple[str, ...]) -> Lexicon:
    return Lexicon(path=Path("fr.yaml"), intents=intents)


def test_spell_all_reports_every_phrase_with_the_breaking_word() -> None:
    words = lexicon(pas_mou_le_caillou=("pas mou le caillou", "pas dur le caillou"),
                    achat_du_cul=("j'achète",), oui=("oui", "ouais"))
    phrases, unknown = spell_all(words, knows)
    assert phrases == [
        Phrase("pas_mou_le_caillou", "pas mou le caillou", ("pas", "mou", "le", "caillou")),
        Phrase("achat_du_cul", "j'achète", ("j'", "achète")),
        Phrase("oui", "oui", ("oui",)),
    ]
    assert unknown == [UnknownWord("pas_mou_le_caillou", "pas dur le caillou", "dur"),
                       UnknownWord("oui", "ouais", "ouais")]
    assert str(unknown[0]) == "pas_mou_le_caillou: 'pas dur le caillou' is left out, the model does not know 'dur'"


def test_spell_all_keeps_phrases_shared_between_intents() -> None:
    """No conflict check in the report: both intents' "chouette" are spelled."""
    phrases, unknown = spell_all(lexicon(bird_chouette=("chouette",), combo_chouette=("chouette",)), knows)
    assert [(p.intent, p.text) for p in phrases] == [("bird_chouette", "chouette"), ("combo_chouette", "chouette")]
    assert unknown == []


def test_usable_phrases_keep_the_text_and_name_the_breaking_word() -> None:
    words = lexicon(pas_mou_le_caillou=("pas mou le caillou", "pas dur le caillou"), oui=("oui",))
    phrases, unknown = usable_phrases(words, ["oui", "pas_mou_le_caillou"], knows)
    assert phrases == [Phrase("oui", "oui", ("oui",)),
                       Phrase("pas_mou_le_caillou", "pas mou le caillou", ("pas", "mou", "le", "caillou"))]
    assert unknown == [UnknownWord("pas_mou_le_caillou", "pas dur le caillou", "dur")]


def test_phrases_that_sound_the_same_are_named_with_the_words_heard() -> None:
    words = lexicon(achat_du_cul=("j'achète",), achat=("j' achète",))
    with pytest.raises(LexiconError) as error:
        usable_phrases(words, ["achat_du_cul", "achat"], knows)
    assert str(error.value) == ("fr.yaml: intents 'achat_du_cul' and 'achat' are both active and sound the "
                                "same ('j' achète'); activate only one of them at a time")


def test_without_shared_keeps_the_first_owner_of_a_phrase() -> None:
    words = lexicon(bird_chouette=("chouette",), oui=("oui",), combo_chouette=("chouette",),
                    combo_chouette_velute=("chouette velute",), non=("non", "oui"), velute=("velute",))
    kept, left_out = words.without_shared()
    assert kept == ["bird_chouette", "oui", "combo_chouette_velute", "velute"]
    assert left_out == ["combo_chouette", "non"]
    assert lexicon(oui=("oui",), non=("non",)).without_shared() == (["oui", "non"], [])
    words.check_shared_phrases(kept)  # the kept ones can all be active at once


def test_check_intents_names_the_missing_and_the_known() -> None:
    words = lexicon(oui=("oui",), non=("non",))
    assert words.check_intents(["non", "oui", "non"]) == ["non", "oui"]
    with pytest.raises(LexiconError) as error:
        words.check_intents(["oui", "peut_etre", "jamais"])
    assert str(error.value) == "fr.yaml: no intent named peut_etre, jamais; known intents are non, oui"


def test_a_word_with_two_apostrophes_is_split_at_the_first() -> None:
    assert word_spellings("qu'aujourd'hui") == [
        ["qu'aujourd'hui"],
        ["qu'", "aujourd'hui"], ["qu'", "aujourd'", "hui"], ["qu'", "aujourd", "hui"], ["qu'", "aujourdhui"],
        ["qu", "aujourd'hui"], ["qu", "aujourd'", "hui"], ["qu", "aujourd", "hui"], ["qu", "aujourdhui"],
        ["quaujourdhui"],
    ]


def test_french_number_out_of_range_says_so() -> None:
    with pytest.raises(ValueError, match=r"^french_number covers 0\.\.199, not 200$"):
        french_number(200)


def test_a_loaded_lexicon_keeps_its_path_and_accents(tmp_path: Path) -> None:
    path = tmp_path / "lexicon.yaml"
    path.write_text("velutee: [Vélutée, « vélutée ! »]\n", encoding="utf-8")
    loaded = load_lexicon(path)
    assert loaded.path == path
    assert loaded.intents == {"velutee": ("vélutée",)}


def test_a_bad_intent_name_is_explained(tmp_path: Path) -> None:
    path = tmp_path / "lexicon.yaml"
    path.write_text("Oui: [oui]\n", encoding="utf-8")
    with pytest.raises(LexiconError) as error:
        load_lexicon(path)
    assert str(error.value) == (f"{path}: key 'Oui': an intent name is lower-case letters, digits and '_', "
                                "starting with a letter")
