"""The voice lexicon: which phrases a player may say for each intent.

A lexicon file is a YAML mapping ``intent name -> list of phrases``. The recogniser reports the
intent names unchanged; the play front-end maps them to engine actions. Phrases are normalised
(lower case, accents kept, punctuation and hyphens to spaces) and then *spelled* against the
model's vocabulary: French Vosk vocabularies write elisions differently ("j'achète", "j' achète",
"j achète"), so each word with an apostrophe is tried in those forms. A phrase whose words the
model does not know is reported and left out; sound-alike spellings are just extra phrases.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from cdc_env.yamlfile import YamlFileError, read_yaml

INTENT_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
# Typographic apostrophes people type in French text; the model spells them "'".
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
# Anything that is not a letter, a digit or an apostrophe separates words ("-" included:
# "quatre-vingt-douze" is said as three words and Vosk vocabularies list them apart).
_SEPARATORS = re.compile(r"[^\w']+|_")
# An elision written apart: one letter, or qu' ("j' achète", "qu' il"); a closing quote is none.
_SPACED_ELISION = re.compile(r"(?<![\w'])(\w|qu)'\s+(?=\w)")

KnowsWord = Callable[[str], bool]


class LexiconError(ValueError):
    """A lexicon file or an intent set that cannot be used; the message names file and key."""


@dataclass(frozen=True)
class Phrase:
    """One way of saying an intent: the text as written and the words the model will hear."""

    intent: str
    text: str  # normalised, as written in the lexicon
    words: tuple[str, ...]  # spelled in the model's vocabulary


@dataclass(frozen=True)
class UnknownWord:
    """A phrase left out of the grammar because the model does not know one of its words."""

    intent: str
    phrase: str
    word: str

    def __str__(self) -> str:
        return f"{self.intent}: '{self.phrase}' is left out, the model does not know '{self.word}'"


@dataclass(frozen=True)
class Lexicon:
    """Intent name -> normalised phrases, as loaded from one file."""

    path: Path
    intents: Mapping[str, tuple[str, ...]]

    def __contains__(self, intent: object) -> bool:
        return intent in self.intents

    def check_intents(self, intents: Iterable[str]) -> list[str]:
        """The intents, in order, after checking that each is in this lexicon."""
        chosen = list(dict.fromkeys(intents))
        missing = [name for name in chosen if name not in self.intents]
        if missing:
            raise LexiconError(
                f"{self.path}: no intent named {', '.join(missing)}; "
                f"known intents are {', '.join(sorted(self.intents))}"
            )
        return chosen

    def check_shared_phrases(self, intents: Iterable[str]) -> None:
        """Two active intents with the same phrase could never be told apart: an error."""
        owner: dict[str, str] = {}
        for intent in self.check_intents(intents):
            for phrase in self.intents[intent]:
                other = owner.setdefault(phrase, intent)
                if other != intent:
                    raise LexiconError(
                        f"{self.path}: intents '{other}' and '{intent}' are both active and "
                        f"share the phrase '{phrase}'; activate only one of them at a time"
                    )


    def without_shared(self) -> tuple[list[str], list[str]]:
        """Every intent that can be active with the ones before it (lexicon order), and the
        ones left out because an earlier intent has the same phrase ("combo_chouette" after
        "bird_chouette"): a set that can be listened for all at once."""
        owner: dict[str, str] = {}
        kept: list[str] = []
        left_out: list[str] = []
        for intent, phrases in self.intents.items():
            if any(owner.get(phrase, intent) != intent for phrase in phrases):
                left_out.append(intent)
                continue
            kept.append(intent)
            for phrase in phrases:
                owner.setdefault(phrase, intent)
        return kept, left_out


def normalise(phrase: str) -> str:
    """Lower case, accents kept (NFC), punctuation and hyphens to single spaces."""
    text = unicodedata.normalize("NFC", phrase).translate(_APOSTROPHES).lower()
    # "j' achète", as a vocabulary may write the elision apart, is the word "j'achète": stripped
    # of its apostrophe, "j" alone was looked for, and the phrase left out.
    text = _SPACED_ELISION.sub(r"\1'", text)
    words = [w.strip("'") for w in _SEPARATORS.split(text)]
    # An apostrophe is kept only inside a word ("j'achète"), never as a word of its own.
    return " ".join(w for w in words if w)


def load_lexicon(path: str | Path) -> Lexicon:
    """Read and check a lexicon file; every problem names the file and the key."""
    if not str(path).strip():  # Path("") is the folder ".": it was ".: ... (Is a directory)"
        raise LexiconError("no lexicon given (an empty name): pass --lexicon with a YAML file, "
                           "such as configs/voice/fr.yaml")
    path = Path(path)
    try:
        data = read_yaml(path)
    except FileNotFoundError:
        raise LexiconError(f"{path}: lexicon file not found; pass --lexicon with a YAML file") from None
    except OSError as error:
        raise LexiconError(f"{path}: the lexicon cannot be read ({error.strerror}); "
                           "pass --lexicon with a YAML file") from None
    except YamlFileError as error:
        raise LexiconError(str(error)) from None
    if not isinstance(data, dict) or not data:
        raise LexiconError(f"{path}: expected a mapping 'intent: [phrases]' with at least one intent")
    intents: dict[str, tuple[str, ...]] = {}
    for key, phrases in data.items():
        if not isinstance(key, str) or not INTENT_NAME.match(key):
            raise LexiconError(
                f"{path}: key {key!r}: an intent name is lower-case letters, digits and '_', "
                "starting with a letter"
            )
        if not isinstance(phrases, list) or not phrases:
            raise LexiconError(f"{path}: key '{key}': expected a non-empty list of phrases")
        normalised: list[str] = []
        for phrase in phrases:
            if not isinstance(phrase, str) or not normalise(phrase):
                raise LexiconError(
                    f"{path}: key '{key}': phrase {phrase!r} is not a non-empty string"
                )
            if normalise(phrase) not in normalised:
                normalised.append(normalise(phrase))
        intents[key] = tuple(normalised)
    return Lexicon(path=path, intents=intents)


def word_spellings(word: str) -> list[list[str]]:
    """The ways a vocabulary may spell one written word, most likely first.

    "j'achète" may be one vocabulary entry, or "j'" + "achète", or "j" + "achète".
    """
    if "'" not in word:
        return [[word]]
    head, _, tail = word.partition("'")
    rest = word_spellings(tail)
    options = [[word], *([f"{head}'", *r] for r in rest), *([head, *r] for r in rest)]
    options.append([word.replace("'", "")])
    return options


def spell(phrase: str, knows: KnowsWord) -> tuple[tuple[str, ...] | None, str | None]:
    """The phrase in the model's words, or (None, first unknown word)."""
    words: list[str] = []
    for written in phrase.split():
        for option in word_spellings(written):
            if all(knows(w) for w in option):
                words.extend(option)
                break
        else:
            return None, written
    return tuple(words), None


def usable_phrases(
    lexicon: Lexicon, intents: Iterable[str], knows: KnowsWord
) -> tuple[list[Phrase], list[UnknownWord]]:
    """Active phrases the model can hear, and the ones it cannot (with the breaking word).

    Raises LexiconError when two active intents share a phrase, as written or as spelled.
    """
    chosen = lexicon.check_intents(intents)
    lexicon.check_shared_phrases(chosen)
    phrases: list[Phrase] = []
    unknown: list[UnknownWord] = []
    owner: dict[tuple[str, ...], str] = {}
    for intent in chosen:
        for text in lexicon.intents[intent]:
            words, bad = spell(text, knows)
            if words is None:
                unknown.append(UnknownWord(intent, text, bad or text))
                continue
            other = owner.setdefault(words, intent)
            if other != intent:
                raise LexiconError(
                    f"{lexicon.path}: intents '{other}' and '{intent}' are both active and "
                    f"sound the same ('{' '.join(words)}'); activate only one of them at a time"
                )
            phrases.append(Phrase(intent, text, words))
    return phrases, unknown


def spell_all(lexicon: Lexicon, knows: KnowsWord) -> tuple[list[Phrase], list[UnknownWord]]:
    """Every phrase of the lexicon the model can hear, and the ones it cannot (no conflict
    check: this is for the start-up report and for decoys, not for the active set)."""
    phrases: list[Phrase] = []
    unknown: list[UnknownWord] = []
    for intent, texts in lexicon.intents.items():
        for text in texts:
            words, bad = spell(text, knows)
            if words is None:
                unknown.append(UnknownWord(intent, text, bad or text))
            else:
                phrases.append(Phrase(intent, text, words))
    return phrases, unknown


# --- French numbers: the lexicon's nombre_N phrases were written out with this function -------

_UNITS = (
    "zéro un deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze "
    "seize dix-sept dix-huit dix-neuf"
).split()
_TENS = {2: "vingt", 3: "trente", 4: "quarante", 5: "cinquante", 6: "soixante"}


def french_number(n: int) -> str:
    """0 <= n < 200 in French words, traditional spelling ("quatre-vingt-douze")."""
    if not 0 <= n < 200:
        raise ValueError(f"french_number covers 0..199, not {n}")
    if n >= 100:
        return "cent" if n == 100 else f"cent {french_number(n - 100)}"
    if n < 20:
        return _UNITS[n]
    tens, unit = divmod(n, 10)
    if tens in (7, 9):  # soixante-dix, quatre-vingt-dix: counted on from 60 and 80
        base = "soixante" if tens == 7 else "quatre-vingt"
        rest = n - (60 if tens == 7 else 80)
        joiner = " et " if rest == 11 and tens == 7 else "-"
        return f"{base}{joiner}{_UNITS[rest]}"
    if tens == 8:
        return "quatre-vingts" if unit == 0 else f"quatre-vingt-{_UNITS[unit]}"
    if unit == 0:
        return _TENS[tens]
    if unit == 1:
        return f"{_TENS[tens]} et un"
    return f"{_TENS[tens]}-{_UNITS[unit]}"
