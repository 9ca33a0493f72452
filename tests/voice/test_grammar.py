"""The Vosk grammar: built from active phrases, checked before Vosk sees it."""

from __future__ import annotations

import json

import pytest

from voice.grammar import GrammarError, build_grammar, garbage_word, validate_grammar
from voice.lexicon import Phrase

KNOWN = {"pas", "mou", "le", "caillou", "oui", "[unk]"}.__contains__


def test_build_grammar_lists_each_phrase_once_with_the_garbage_word_last() -> None:
    phrases = [Phrase("pas_mou_le_caillou", "pas mou le caillou", ("pas", "mou", "le", "caillou")),
               Phrase("oui", "oui", ("oui",)), Phrase("oui", "oui !", ("oui",))]
    grammar = build_grammar(phrases, "[unk]")
    assert json.loads(grammar) == ["pas mou le caillou", "oui", "[unk]"]
    assert validate_grammar(grammar, KNOWN) == ["pas mou le caillou", "oui", "[unk]"]


def test_no_phrase_no_grammar() -> None:
    with pytest.raises(GrammarError, match="empty"):
        build_grammar([], "[unk]")


def test_garbage_word_is_the_models_own() -> None:
    assert garbage_word({"[unk]"}.__contains__) == "[unk]"
    assert garbage_word({"<UNK>"}.__contains__) == "<UNK>"
    assert garbage_word(lambda w: False) is None


@pytest.mark.parametrize("grammar, message", [
    ("not json", "not JSON"),
    ('{"a": 1}', "non-empty JSON array"),
    ("[]", "non-empty JSON array"),
    ('["oui", 3]', "not a non-empty string"),
    ('["oui", ""]', "not a non-empty string"),
    ('["pas  mou"]', "single spaces"),
    ('[" oui"]', "single spaces"),
    ('["oui peut-être"]', "does not know 'peut-être'"),
])
def test_invalid_grammars_are_refused(grammar: str, message: str) -> None:
    with pytest.raises(GrammarError, match=message):
        validate_grammar(grammar, KNOWN)
