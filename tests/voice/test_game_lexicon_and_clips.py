"""A game lexicon names only the game's intents; an empty clip is an error, not silence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.io import wavfile

from voice.detect import main as detect
from voice.intents import GAME_INTENTS, check_game_lexicon
from voice.lexicon import LexiconError, load_lexicon

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("path", sorted((ROOT / "configs" / "voice").glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_lexicon_names_only_game_intents(path: Path) -> None:
    lexicon = check_game_lexicon(load_lexicon(path))
    assert set(lexicon.intents) <= GAME_INTENTS and "pas_mou_le_caillou" in lexicon


def typo_lexicon(tmp_path: Path) -> Path:
    text = (ROOT / "configs" / "voice" / "fr.yaml").read_text(encoding="utf-8")
    typo = tmp_path / "fr-typo.yaml"
    typo.write_text(text.replace("\nje_sirote:", "\nje_sirotte:"), encoding="utf-8")
    return typo


def test_a_key_with_a_typo_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(LexiconError, match="key 'je_sirotte' is not an intent of the game; "
                                           "did you mean 'je_sirote'"):
        check_game_lexicon(load_lexicon(typo_lexicon(tmp_path)))


def test_detect_refuses_the_typo_and_an_empty_clip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clip = tmp_path / "empty.wav"
    wavfile.write(clip, 16000, np.zeros(0, dtype=np.int16))
    assert detect([str(clip)]) == 2
    assert "empty.wav: the WAV file holds no audio (0 samples)" in capsys.readouterr().err

    wavfile.write(clip, 16000, np.zeros(800, dtype=np.int16))
    assert detect(["--lexicon", str(typo_lexicon(tmp_path)), str(clip)]) == 2
    assert "key 'je_sirotte' is not an intent of the game" in capsys.readouterr().err
