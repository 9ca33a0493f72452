"""scripts/bench_voice.py's clip-by-clip table: each clip counted once, under the right outcomes."""

from __future__ import annotations

from types import ModuleType

from doubles import script


def bench_script() -> ModuleType:
    return script("bench_voice", "bench_voice")


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
