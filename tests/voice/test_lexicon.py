"""The lexicon: loading, validation errors, normalisation, spellings, shared phrases, numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cdc_env.game import SHOUTABLE_PHRASES
from voice.lexicon import (
    LexiconError,
    french_number,
    load_lexicon,
    normalise,
    spell,
    usable_phrases,
    word_spellings,
)

ROOT = Path(__file__).resolve().parents[2]
FR = ROOT / "configs" / "voice" / "fr.yaml"

REQUIRED = """
pas_mou_le_caillou grelotte_ca_picote sans_fin patte_de_canard velutee raitournelle artichette
pelican passe_montagne zbradaraldjan mecreant je_suis_un_miserable fort_heureusement a_kadoc
en_garde_ma_mignonne bird_linotte bird_alouette bird_fauvette bird_mouette bird_bergeronnette
bird_chouette beau_sirop couche_sirop sirop_gagnant je_sirote achat_du_cul grelottine boucliette
civet je_lance oui non combo_chouette combo_velute combo_chouette_velute combo_suite
combo_cul_de_chouette combo_cul_de_chouette_sirote
vert_linette tichette robobrol j_apprecie_les_fruits_au_sirop cul_de_chouette attrape_oiseau
tatan_elle_fait_des_flans
""".split()


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "lexicon.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_french_lexicon_has_every_intent_the_front_end_uses() -> None:
    lexicon = load_lexicon(FR)
    expected = set(REQUIRED) | {f"nombre_{n}" for n in range(121)} | {f"joueur_{n}" for n in range(1, 9)}
    assert set(lexicon.intents) == expected
    assert set(SHOUTABLE_PHRASES) <= set(lexicon.intents)  # every phrase the engine takes can be said
    assert "sans fin est la moisissure des bières bretonnes" in lexicon.intents["sans_fin"]
    assert {"couche sirop", "file sirop"} <= set(lexicon.intents["couche_sirop"])
    assert {"j'achète le cul", "j'achète"} <= set(lexicon.intents["achat_du_cul"])
    assert "zbra dara l djan" in lexicon.intents["zbradaraldjan"]  # a sound-alike spelling
    assert lexicon.intents["joueur_3"] == ("joueur trois",)


def test_french_lexicon_is_only_intents_with_a_leading_comment() -> None:
    text = FR.read_text(encoding="utf-8")
    assert text.startswith("#")
    data = yaml.safe_load(text)
    assert all(isinstance(v, list) and all(isinstance(p, str) for p in v) for v in data.values())


def test_french_numbers_in_the_lexicon_match_the_generator() -> None:
    lexicon = load_lexicon(FR)
    for n in range(121):
        assert lexicon.intents[f"nombre_{n}"] == (normalise(french_number(n)),), n


@pytest.mark.parametrize("n, words", [
    (0, "zéro"), (1, "un"), (16, "seize"), (17, "dix-sept"), (21, "vingt et un"),
    (22, "vingt-deux"), (61, "soixante et un"), (70, "soixante-dix"), (71, "soixante et onze"),
    (72, "soixante-douze"), (80, "quatre-vingts"), (81, "quatre-vingt-un"),
    (91, "quatre-vingt-onze"), (92, "quatre-vingt-douze"), (99, "quatre-vingt-dix-neuf"),
    (100, "cent"), (101, "cent un"), (120, "cent vingt"),
])
def test_french_number(n: int, words: str) -> None:
    assert french_number(n) == words


def test_french_number_range() -> None:
    with pytest.raises(ValueError):
        french_number(200)


@pytest.mark.parametrize("written, normal", [
    ("Pas mou, le caillou !", "pas mou le caillou"),
    ("Grelotte ça picote !", "grelotte ça picote"),
    ("Quatre-vingt-douze", "quatre vingt douze"),
    ("J’achète le cul", "j'achète le cul"),
    ("Fort heureusement, je tiens à préciser que l'incident n'a fait aucune victime.",
     "fort heureusement je tiens à préciser que l'incident n'a fait aucune victime"),
    ("  Passe-Montagne  ", "passe montagne"),
    ("'quoted'", "quoted"),
    ("MÉCRÉANT", "mécréant"),
    ("j' achète le cul", "j'achète le cul"),  # an elision written apart: was « j achète le cul »
    ("l' incident n' a", "l'incident n'a"),
    ("'sans fin' est la moisissure", "sans fin est la moisissure"),  # a closing quote is no elision
    ("le 'pélican' du roi", "le pélican du roi"),
])
def test_normalise(written: str, normal: str) -> None:
    assert normalise(written) == normal


def test_apostrophe_spellings_are_tried_against_the_vocabulary() -> None:
    assert word_spellings("j'achète") == [["j'achète"], ["j'", "achète"], ["j", "achète"], ["jachète"]]
    split_vocabulary = {"j'", "achète", "le", "cul"}.__contains__
    assert spell("j'achète le cul", split_vocabulary) == (("j'", "achète", "le", "cul"), None)
    joined_vocabulary = {"j'achète", "le", "cul"}.__contains__
    assert spell("j'achète le cul", joined_vocabulary) == (("j'achète", "le", "cul"), None)
    assert spell("j'achète le cul", {"le", "cul"}.__contains__) == (None, "j'achète")
    # The lexicon's docstring spelling, the elision apart: its phrase was left out (« j » unknown).
    assert spell(normalise("j' achète le cul"), split_vocabulary) == (("j'", "achète", "le", "cul"), None)


def test_unknown_words_are_reported_and_left_out(tmp_path: Path) -> None:
    lexicon = load_lexicon(write(tmp_path, "zbradaraldjan: [zbradaraldjan, zbra dara l djan]\n"
                                           "pelican: [pélican]\nartichette: [artichette]\n"))
    vocabulary = {"zbra", "dara", "l", "djan", "pélican"}.__contains__
    phrases, unknown = usable_phrases(lexicon, lexicon.intents, vocabulary)
    assert [(p.intent, p.words) for p in phrases] == [
        ("zbradaraldjan", ("zbra", "dara", "l", "djan")), ("pelican", ("pélican",))]
    assert [(u.intent, u.phrase, u.word) for u in unknown] == [
        ("zbradaraldjan", "zbradaraldjan", "zbradaraldjan"), ("artichette", "artichette", "artichette")]
    assert "does not know 'artichette'" in str(unknown[1])


def test_shared_phrase_is_fine_unless_both_are_active(tmp_path: Path) -> None:
    lexicon = load_lexicon(write(tmp_path, "bird_chouette: [chouette]\ncombo_chouette: [Chouette !]\n"))
    knows = {"chouette"}.__contains__
    assert len(usable_phrases(lexicon, ["bird_chouette"], knows)[0]) == 1
    with pytest.raises(LexiconError, match="'bird_chouette' and 'combo_chouette'.*'chouette'"):
        usable_phrases(lexicon, ["bird_chouette", "combo_chouette"], knows)


def test_phrases_that_sound_the_same_conflict_too(tmp_path: Path) -> None:
    lexicon = load_lexicon(write(tmp_path, "a: [\"j'ai\"]\nb: [j ai]\n"))
    knows = {"j", "ai"}.__contains__  # both spell as "j ai"
    with pytest.raises(LexiconError, match="'a' and 'b'.*sound the same"):
        usable_phrases(lexicon, ["a", "b"], knows)


def test_unknown_active_intent_is_an_error(tmp_path: Path) -> None:
    lexicon = load_lexicon(write(tmp_path, "oui: [oui]\n"))
    with pytest.raises(LexiconError, match="no intent named peut_etre"):
        usable_phrases(lexicon, ["oui", "peut_etre"], lambda w: True)


@pytest.mark.parametrize("text, message", [
    ("- oui\n- non\n", "expected a mapping"),
    ("", "expected a mapping"),
    ("oui: []\n", "key 'oui': expected a non-empty list"),
    ("oui: oui\n", "key 'oui': expected a non-empty list"),
    ("oui: [oui, 3]\n", "key 'oui': phrase 3 is not a non-empty string"),
    ("oui: [oui, '!!']\n", "key 'oui': phrase '!!' is not a non-empty string"),
    ("Oui: [oui]\n", "key 'Oui': an intent name"),
    ("2x: [deux]\n", "key '2x': an intent name"),
    ("oui: [oui\n", "not valid YAML"),
])
def test_bad_lexicon_files_name_the_file_and_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(LexiconError) as error:
        load_lexicon(path)
    assert str(path) in str(error.value)
    assert message in str(error.value)


def test_missing_lexicon_file(tmp_path: Path) -> None:
    with pytest.raises(LexiconError, match="lexicon file not found"):
        load_lexicon(tmp_path / "nope.yaml")


def test_a_lexicon_that_cannot_be_read_says_why_and_what_to_pass(tmp_path: Path) -> None:
    # A folder is no file: the system's reason, then what to do, in one line.
    with pytest.raises(LexiconError) as error:
        load_lexicon(tmp_path)
    assert str(error.value) == (f"{tmp_path}: the lexicon cannot be read (Is a directory); "
                                "pass --lexicon with a YAML file")


def test_duplicate_phrases_collapse(tmp_path: Path) -> None:
    lexicon = load_lexicon(write(tmp_path, "oui: [Oui, oui !, ouais]\n"))
    assert lexicon.intents["oui"] == ("oui", "ouais")
