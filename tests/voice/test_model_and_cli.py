"""Finding the model (and saying what to do when there is none), and `python -m voice.detect`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import voice.model as model_module
from voice.model import (
    ModelNotFoundError,
    find_model,
    packaged_model_path,
)

ROOT = Path(__file__).resolve().parents[2]
KO_LEXICON = ROOT / "tests" / "voice" / "data" / "ko.yaml"


@pytest.fixture
def no_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home with no Vosk model anywhere."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("VOSK_MODEL_PATH", raising=False)
    monkeypatch.delenv("CDC_VOSK_MODEL", raising=False)
    monkeypatch.setattr(model_module, "_vosk_dirs", lambda: [tmp_path / ".cache" / "vosk"])
    return tmp_path


def test_missing_model_says_what_was_tried_and_what_to_do(no_models: Path) -> None:
    with pytest.raises(ModelNotFoundError) as error:
        find_model()
    message = str(error.value)
    assert str(no_models / ".cache" / "vosk") in message
    for hint in ("vosk-model-small-fr-0.22", "https://alphacephei.com/vosk/models", "--model",
                 "CDC_VOSK_MODEL", "--keyboard"):
        assert hint in message


def test_a_bad_explicit_path_is_an_error_even_if_others_exist(no_models: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CDC_VOSK_MODEL", str(packaged_model_path()))
    with pytest.raises(ModelNotFoundError, match="--model: .*nope .no such folder."):
        find_model(no_models / "nope")


def test_model_from_environment_configuration_or_vosk_folder(no_models: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    korean = packaged_model_path()
    assert find_model(configured=korean) == korean
    monkeypatch.setenv("CDC_VOSK_MODEL", str(korean))
    assert find_model() == korean
    monkeypatch.delenv("CDC_VOSK_MODEL")
    vosk_dir = no_models / ".cache" / "vosk"
    vosk_dir.mkdir(parents=True)
    (vosk_dir / "vosk-model-small-fr-0.22").symlink_to(korean)
    assert find_model() == vosk_dir / "vosk-model-small-fr-0.22"


def test_the_small_model_is_found_before_a_large_one_and_a_large_one_is_refused(
        no_models: Path, tmp_path: Path) -> None:
    # « vosk-model-fr-0.22 » sorted before « vosk-model-small-fr-0.22 » and was taken: a large
    # model takes no grammar at run time, so Vosk heard every word (its log line was hidden).
    from voice.model import load_model

    vosk_dir = no_models / ".cache" / "vosk"
    for name, graph in (("vosk-model-fr-0.22", False), ("vosk-model-small-fr-0.22", True),
                        ("vosk-model-fr-0.6", False)):
        (vosk_dir / name / "am").mkdir(parents=True)
        (vosk_dir / name / "am" / "final.mdl").write_text("")
        if graph:
            (vosk_dir / name / "graph").mkdir()
            for part in ("HCLr.fst", "Gr.fst"):
                (vosk_dir / name / "graph" / part).write_text("")
    assert find_model() == vosk_dir / "vosk-model-small-fr-0.22"
    with pytest.raises(ModelNotFoundError, match="takes no grammar at run time .*use a small model such as "
                                                 "vosk-model-small-fr-0.22"):
        load_model(vosk_dir / "vosk-model-fr-0.22")


def test_failed_download_is_reported(no_models: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import vosk

    def offline(self, name, lang):
        raise ConnectionError("no network")

    monkeypatch.setattr(vosk.Model, "get_model_path", offline)
    with pytest.raises(ModelNotFoundError, match="download of vosk-model-small-fr-0.22 .ConnectionError"):
        find_model(download=True)


# --- the command line ------------------------------------------------------------------------


def detect(*args: str, tmp_path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, XDG_CACHE_HOME=str(ROOT / "tests" / "voice" / ".cache" / "xdg"), **(env or {}))
    if "HOME" in (env or {}):  # a home without models: no model from the environment either
        env.pop("VOSK_MODEL_PATH", None)
        env.pop("CDC_VOSK_MODEL", None)
    if str(KO_LEXICON) in args:  # the Korean test lexicon has its own intents, not the game's
        args = ("--free-intents", *args)
    return subprocess.run([sys.executable, "-m", "voice.detect", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_detect_prints_json_lines_for_any_rate_and_channels(tmp_path: Path, clip_maker, ko_phrases) -> None:
    clip = clip_maker(ko_phrases["grelotte_ca_picote"], lead_s=1.3)
    stereo = tmp_path / "clip-44k-stereo.wav"
    subprocess.run(["sox", str(clip.path), "-r", "44100", "-c", "2", str(stereo)], check=True)
    done = detect("--model", str(packaged_model_path()), "--lexicon", str(KO_LEXICON), str(stereo),
                  tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    found = json.loads(line)
    assert set(found) == {"intent", "phrase", "onset_s", "end_s", "confidence"}
    assert found["intent"] == "grelotte_ca_picote" and found["phrase"] == "마지막 게임"
    assert found["onset_s"] == pytest.approx(clip.onset_s, abs=0.1)
    assert found["end_s"] == pytest.approx(clip.end_s, abs=0.3)

    done = detect("--model", str(packaged_model_path()), "--lexicon", str(KO_LEXICON),
                  "--intents", "oui,non", str(stereo), tmp_path=tmp_path)
    assert done.returncode == 0 and done.stdout == "", done.stderr


def test_detect_errors_are_clear(tmp_path: Path) -> None:
    done = detect("--model", str(packaged_model_path()), "--lexicon", str(KO_LEXICON),
                  str(tmp_path / "missing.wav"), tmp_path=tmp_path)
    assert done.returncode == 2 and "missing.wav: no such audio file" in done.stderr

    not_audio = tmp_path / "notes.wav"
    not_audio.write_text("hello")
    done = detect("--model", str(packaged_model_path()), str(not_audio), tmp_path=tmp_path)
    assert done.returncode == 2 and "not a readable WAV file" in done.stderr

    clip = tmp_path / "silence.wav"
    subprocess.run(["sox", "-n", "-r", "16000", "-c", "1", "-b", "16", str(clip), "trim", "0", "0.5"],
                   check=True)
    done = detect("--model", str(tmp_path / "no-model"), str(clip), tmp_path=tmp_path)
    assert done.returncode == 2 and "No Vosk model found" in done.stderr and "--keyboard" in done.stderr

    done = detect("--model", str(packaged_model_path()), "--lexicon", str(KO_LEXICON),
                  "--intents", "oui,peut_etre", str(clip), tmp_path=tmp_path)
    assert done.returncode == 2 and "no intent named peut_etre" in done.stderr


FR_LEXICON = ROOT / "configs" / "voice" / "fr.yaml"
KO_WORDS = ROOT / "tests" / "voice" / "data" / "ko_words.yaml"


def test_detect_takes_the_shipped_french_lexicon(tmp_path: Path, no_models: Path) -> None:
    # No French model here: the lexicon is read and the listened set chosen (no "share the
    # phrase" stop), then the model search fails with its own message, never a traceback.
    clip = tmp_path / "silence.wav"
    subprocess.run(["sox", "-n", "-r", "16000", "-c", "1", "-b", "16", str(clip), "trim", "0", "0.5"],
                   check=True)
    env_home = {"HOME": str(no_models)}
    for moment in ([], ["--moment", "sirop_bet"], ["--moment", "race"], ["--moment", "grelottine"]):
        done = detect("--lexicon", str(FR_LEXICON), *moment, str(clip), tmp_path=tmp_path, env=env_home)
        assert done.returncode == 2, done.stderr
        assert "No Vosk model found" in done.stderr and "share the phrase" not in done.stderr
        assert "Traceback" not in done.stderr
        # Listening for everything leaves out (and names) what an earlier intent already says.
        assert ("combo_chouette" in done.stderr) == (moment == [])
    done = detect("--lexicon", str(KO_WORDS), "--moment", "race", str(clip), tmp_path=tmp_path)
    assert done.returncode == 2 and "no intent of the moment 'race'" in done.stderr


@pytest.mark.slow
def test_detect_listens_for_a_moment_with_the_korean_model(tmp_path: Path, clip_maker) -> None:
    clip = clip_maker("나비", lead_s=1.0, voice="ko+f2")
    done = detect("--model", str(packaged_model_path()), "--lexicon", str(KO_WORDS),
                  "--moment", "sirop_bet", str(clip.path), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    found = json.loads(line)
    assert found["intent"] == "bird_alouette"
    assert found["onset_s"] == pytest.approx(clip.onset_s, abs=0.1)
