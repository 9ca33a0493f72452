"""The Vosk grammar: the active phrases plus a garbage word, as a checked JSON array.

Vosk turns the list into a small bigram language model. A malformed grammar string crashes the
native library (segfault) instead of raising, so the string is checked here before Vosk sees it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from voice.lexicon import KnowsWord, Phrase

# The model's word for "anything else". Vosk models name it differently ("[unk]" in the usual
# Vosk recipes, "<UNK>" in some); without it every sound is forced into one of the phrases.
GARBAGE_WORDS = ("[unk]", "<unk>", "<UNK>")


class GrammarError(ValueError):
    """A grammar Vosk must not be given."""


def garbage_word(knows: KnowsWord) -> str | None:
    """The model's own word for unknown speech, or None if it has none."""
    return next((w for w in GARBAGE_WORDS if knows(w)), None)


def build_grammar(phrases: Iterable[Phrase], garbage: str | None) -> str:
    """The JSON array Vosk takes: each distinct phrase once, the garbage word last."""
    entries = list(dict.fromkeys(" ".join(p.words) for p in phrases))
    if not entries:
        raise GrammarError("no usable phrase is active: the grammar would be empty")
    if garbage:
        entries.append(garbage)
    return json.dumps(entries, ensure_ascii=False)


def validate_grammar(grammar: str, knows: KnowsWord) -> list[str]:
    """Check a grammar string and return its entries; GrammarError says what is wrong."""
    try:
        entries = json.loads(grammar)
    except json.JSONDecodeError as error:
        raise GrammarError(f"grammar is not JSON ({error}): {grammar[:80]!r}") from None
    if not isinstance(entries, list) or not entries:
        raise GrammarError(f"grammar must be a non-empty JSON array of strings: {grammar[:80]!r}")
    for entry in entries:
        if not isinstance(entry, str) or not entry.strip():
            raise GrammarError(f"grammar entry {entry!r} is not a non-empty string")
        # Vosk splits on single spaces; any other spacing yields empty or unknown tokens.
        words = entry.split(" ")
        if any(not w for w in words) or entry != entry.strip():
            raise GrammarError(f"grammar entry {entry!r} must be words separated by single spaces")
        unknown = [w for w in words if not knows(w)]
        if unknown:
            raise GrammarError(
                f"grammar entry {entry!r}: the model does not know {', '.join(map(repr, unknown))}"
            )
    return entries
