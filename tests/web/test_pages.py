"""The pages' own texts (voice/web/static/i18n.js): every key in both languages."""

from __future__ import annotations

import re
from pathlib import Path

I18N = Path(__file__).resolve().parents[2] / "voice" / "web" / "static" / "i18n.js"


def keys(block: str) -> list[str]:
    """The keys of one language's block: `name:` or `"host:code":`."""
    return [a or b for a, b in re.findall(r'^\s{6}(?:"([^"]+)"|([a-z_0-9]+)):', block, re.MULTILINE)]


def test_every_text_of_the_pages_is_in_french_and_in_english() -> None:
    # A key in one language only shows its name to the other's players (CDC.t falls back to
    # English, then to the key itself).
    text = I18N.read_text(encoding="utf-8")
    french = text[text.index("    fr: {"):text.index("    en: {")]
    english = text[text.index("    en: {"):text.index("\n  };")]
    assert len(keys(french)) > 75
    assert sorted(keys(french)) == sorted(keys(english))
    used = set(re.findall(r'CDC\.t\("([a-z_0-9]+)"', "".join(
        p.read_text(encoding="utf-8") for p in I18N.parent.glob("*.js"))))
    assert used <= set(keys(french)), used - set(keys(french))
