"""scripts/bench_voice.py's clip-by-clip table: each clip counted once, under the right outcomes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def bench_script():
    spec = importlib.util.spec_from_file_location(
        "bench_voice", Path(__file__).resolve().parents[2] / "scripts" / "bench_voice.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    sys.modules["bench_voice"] = script  # its dataclasses look their module up there
    spec.loader.exec_module(script)
    return script


def test_clip_by_clip_pairs_each_single_word_clip_outcome() -> None:
    bench = bench_script()

    def clip(intent: str, noisy: bool = False, kind: str = "words"):
        return bench.Clip(kind, noisy, "lexicon.yaml", "clip.wav", intent, 0.5, 1.0, 2.0)

    clips = [clip("a"), clip("b"), clip("c"), clip("d"), clip("a", noisy=True), clip("a", kind="shouts")]
    heard = lambda intent: (intent, 0.5, 1.0, 1.2)  # noqa: E731
    ours = {"results": [[heard("a")], [heard(None)], [], [heard("d"), heard("a")], [heard("b")], [heard("x")]]}
    vosk = {"results": [[heard("a")], [heard("b")], [heard("a")], [], [heard("a")], [heard("a")]]}
    table = bench.clip_by_clip(clips, ours, vosk)
    clean, noisy = table["clean"], table["noisy"]
    assert clean["right"]["right"] == 1 and clean["again"]["right"] == 1
    assert clean["nothing"]["wrong"] == 1 and clean["wrong"]["nothing"] == 1  # two intents: wrong
    assert noisy["wrong"]["right"] == 1
    assert sum(sum(row.values()) for row in clean.values()) == 4  # the shout is left out
