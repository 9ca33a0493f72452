"""Intent parsing on Vosk-shaped results, and the recogniser's streaming logic and clock,
driven by a scripted stand-in for Vosk (no model needed)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import voice.recogniser as recogniser_module
from voice.audio import add_noise
from voice.lexicon import Phrase, load_lexicon
from voice.model import VoskModel
from voice.recogniser import (
    Detection,
    NotUnderstood,
    Reading,
    Recogniser,
    Verdict,
    Word,
    find_phrases,
    intent_shares,
    its_tail,
    judge,
    may_grow,
    parse_words,
    pooled_choice,
    rate_clock,
    read_result,
    said_among_others,
    said_in_race,
    stumbles_into,
)
from voice.session import Heard

RATE = 16000


def word(text: str, start: float, end: float, conf: float = 1.0) -> dict:
    return {"word": text, "start": start, "end": end, "conf": conf}


def partial(*words: dict) -> dict:
    """A partial result as Vosk gives it (text only), with the words the scripted decoder's
    final result holds at that moment."""
    return {"partial": " ".join(w["word"] for w in words), "words": list(words)}


def test_parse_words_reads_partial_and_final_results() -> None:
    final = {"text": "oui", "result": [{"word": "oui", "start": 2.0, "end": 2.25}]}
    assert parse_words({"partial": "pas mou"}) == [Word("pas", 0, 0, 1.0), Word("mou", 0, 0, 1.0)]
    assert parse_words(final) == [Word("oui", 32000, 36000, 1.0)]
    assert parse_words({"partial": ""}) == [] and parse_words({"text": ""}) == []


PHRASES = [
    Phrase("combo_chouette", "chouette", ("chouette",)),
    Phrase("combo_chouette_velute", "chouette velute", ("chouette", "velute")),
    Phrase("pas_mou_le_caillou", "pas mou le caillou", ("pas", "mou", "le", "caillou")),
    Phrase("achat_du_cul", "j'achète", ("j'achète",)),
    Phrase("achat_du_cul", "j'achète le cul", ("j'achète", "le", "cul")),
]


def words(*texts: str) -> list[Word]:
    return [Word(t, i * 100, i * 100 + 90, 0.9) for i, t in enumerate(texts)]


def test_find_phrases_longest_first_without_overlap() -> None:
    found = find_phrases(words("chouette", "velute", "[unk]", "chouette"), PHRASES)
    assert [(m.phrase.intent, m.last) for m in found] == [
        ("combo_chouette_velute", False), ("combo_chouette", True)]
    found = find_phrases(words("j'achète", "le", "cul"), PHRASES)
    assert [m.phrase.text for m in found] == ["j'achète le cul"]


def test_a_garbage_word_breaks_a_phrase() -> None:
    assert find_phrases(words("pas", "mou", "[unk]", "caillou"), PHRASES) == []


def test_a_phrase_another_intent_may_extend_waits_for_the_next_word() -> None:
    [alone] = find_phrases(words("chouette"), PHRASES)
    assert may_grow(alone, PHRASES)  # "chouette" may still become "chouette velute"
    [followed, _] = find_phrases(words("chouette", "pas", "mou", "le", "caillou"), PHRASES)
    assert not may_grow(followed, PHRASES)
    [same_intent] = find_phrases(words("j'achète"), PHRASES)
    assert not may_grow(same_intent, PHRASES)  # "j'achète le cul" is the same intent


# --- the recogniser, with Vosk scripted ----------------------------------------------------------


class FakeVosk:
    def find_word(self, word: str) -> int:
        return 0 if word in {"pas", "mou", "le", "caillou", "oui", "non", "[unk]"} else -1


class ScriptedDecoder:
    """Answers like vosk.KaldiRecognizer: `partials` are (from this many samples fed, result),
    `finals` are (endpoint once this many samples are fed, result)."""

    def __init__(self, partials: list[tuple[float, dict]], finals: list[tuple[float, dict]]) -> None:
        self.partials = sorted(partials, key=lambda p: p[0])
        self.finals = sorted(finals, key=lambda f: f[0])
        self.fed = 0
        self.pending: dict | None = None
        self.alternatives = 0
        self.read = 0  # results read (each a lattice Vosk decodes)

    def AcceptWaveform(self, data: bytes) -> bool:
        self.fed += len(data) // 2
        if self.finals and self.fed >= self.finals[0][0] * RATE:
            self.pending = self.finals.pop(0)[1]
            self.partials = [p for p in self.partials if p[0] * RATE > self.fed]
            return True
        return False

    def PartialResult(self) -> str:
        current = [r for t, r in self.partials if t * RATE <= self.fed]
        return json.dumps(current[-1] if current else {"partial": ""})

    def Result(self) -> str:
        self.read += 1
        result, self.pending = self.pending or {"text": ""}, None
        if "alternatives" in result and not self.alternatives:  # Vosk gives the best one only
            result = {"result": result["alternatives"][0]["result"]}
        return json.dumps(result)

    def FinalResult(self) -> str:
        """Like Vosk: the utterance ends now; its result is what the partial had."""
        if self.pending is None:
            current = json.loads(self.PartialResult()).get("words")
            self.partials = [p for p in self.partials if p[0] * RATE > self.fed]
            if current:
                self.pending = {"result": current}
        return self.Result()

    def SetMaxAlternatives(self, count: int) -> None:
        self.alternatives = count

    def Reset(self) -> None:
        """Like Vosk: the utterance so far is dropped, unread."""
        self.pending = None
        self.partials = [p for p in self.partials if p[0] * RATE > self.fed]


@pytest.fixture
def lexicon(tmp_path: Path):
    path = tmp_path / "lexicon.yaml"
    path.write_text("pas_mou_le_caillou: [pas mou le caillou]\noui: [oui]\nnon: [non]\n", encoding="utf-8")
    return load_lexicon(path)


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch):
    """script(partials, finals): the next decoders the recogniser opens answer this way."""
    scripts: list[ScriptedDecoder] = []

    def set_script(partials, finals=()):
        scripts.clear()
        scripts.append(ScriptedDecoder(list(partials), list(finals)))
        return scripts[0]

    monkeypatch.setattr(recogniser_module, "open_decoder",
                        lambda model, rate, grammar: scripts[0] if scripts else ScriptedDecoder([], []))
    return set_script


def make(lexicon, **options) -> Recogniser:
    # The scripted decoder answers by the samples it was given, as if it heard all of them;
    # keeping silence from Vosk is tested on its own (test_silence_is_kept_from_vosk...).
    options.setdefault("skip_silence", False)
    return Recogniser(VoskModel(Path("fake"), FakeVosk()), lexicon, **options)


def tone(total_s: float, bursts: list[tuple[float, float]]) -> np.ndarray:
    """Silence with 400 Hz bursts (start_s, end_s): a stand-in for shouted words."""
    t = np.arange(int(total_s * RATE)) / RATE
    out = np.zeros_like(t)
    for a, b in bursts:
        on = (t >= a) & (t < b)
        out[on] = 8000 * np.sin(2 * np.pi * 400 * t[on])
    return np.rint(out).astype(np.int16)


def feed(recogniser: Recogniser, pcm: np.ndarray, start: int = 0, chunk: int = 800) -> list:
    found = []
    for i in range(0, len(pcm), chunk):
        found += recogniser.accept(pcm[i:i + chunk], start + i)
    return found + recogniser.flush()


CAILLOU = [word("pas", 0.96, 1.1), word("mou", 1.1, 1.2), word("le", 1.2, 1.3), word("caillou", 1.3, 1.5)]


def test_detection_from_partials_with_onset_on_the_callers_clock(lexicon, script) -> None:
    # Vosk says 0.96 s (early, on its 30 ms grid); the sound starts at 1.000 s.
    script(partials=[(1.6, partial(*CAILLOU))],
           finals=[(2.3, {"result": CAILLOU})])
    recogniser = make(lexicon, clock=rate_clock(RATE, t0=100.0))
    start = 3 * RATE  # the stream's sample 48000 is this chunk's first sample
    [found] = feed(recogniser, tone(3.0, [(1.0, 1.5)]), start=start)
    assert found.intent == "pas_mou_le_caillou" and found.phrase == "pas mou le caillou"
    assert found.onset_s == pytest.approx(100.0 + 3.0 + 1.0, abs=0.01)  # refined on the audio
    assert found.end_s == pytest.approx(100.0 + 3.0 + 1.54, abs=0.001)
    # Emitted from the partials (a stable phrase, speaker quiet), before the final result.
    assert 100.0 + 3.0 + 1.6 <= found.detected_at_s < 100.0 + 3.0 + 2.3


def test_a_text_only_partial_closes_the_utterance_before_vosks_endpoint(lexicon, script) -> None:
    # Vosk's partials carry no word times (SetPartialWords off: they doubled the decoder's
    # CPU); their text alone says the utterance is over.
    script(partials=[(1.6, partial(*CAILLOU))],
           finals=[(2.3, {"result": CAILLOU})])
    [found] = feed(make(lexicon), tone(3.0, [(1.0, 1.5)]))
    assert found.intent == "pas_mou_le_caillou" and found.onset_s == pytest.approx(1.0, abs=0.01)
    assert 1.6 <= found.detected_at_s < 2.3


def test_silence_is_ended_without_reading_its_result(lexicon, script) -> None:
    # Reading a final lattice costs as much as deciding on a shout; a stretch with no sound
    # over the room's floor can give nothing, so its result is not read.
    decoder = script(partials=[], finals=[(2.5, {"result": [word("oui", 0.96, 1.2)]})])
    assert feed(make(lexicon), tone(2.0, [])) == [] and decoder.read == 0
    # The same flush after a sound reads it (and finds the shout).
    decoder = script(partials=[], finals=[(2.5, {"result": [word("oui", 0.96, 1.2)]})])
    decoder.pending = {"result": [word("oui", 0.96, 1.2)]}
    assert [d.intent for d in feed(make(lexicon), tone(2.0, [(1.0, 1.2)]))] == ["oui"]
    assert decoder.read == 1


def test_onset_without_refinement_is_vosk_start_plus_bias(lexicon, script) -> None:
    script(partials=[], finals=[(2.0, {"result": CAILLOU})])
    recogniser = make(lexicon, refine=False, onset_bias_s=0.04, clock=rate_clock(RATE, t0=5.0))
    [found] = feed(recogniser, tone(2.5, [(1.0, 1.5)]), start=1600)
    assert found.onset_s == pytest.approx(5.0 + 0.1 + 0.96 + 0.04, abs=1e-9)


def test_a_flickering_guess_is_not_emitted(lexicon, script) -> None:
    oui = partial(word("oui", 0.96, 1.2))
    non = partial(word("non", 0.96, 1.2))
    # "oui" shows for 50 ms, then Vosk settles on "non".
    script(partials=[(1.55, oui), (1.6, non)], finals=[(2.3, {"result": [word("non", 0.96, 1.2)]})])
    found = feed(make(lexicon), tone(2.5, [(1.0, 1.2)]))
    assert [d.intent for d in found] == ["non"]


def in_noise(pcm: np.ndarray, speech: tuple[float, float], snr_db: float = 10.0) -> np.ndarray:
    """Pink noise over the whole clip, `snr_db` under the speech between the given times."""
    span = (int(speech[0] * RATE), int(speech[1] * RATE))
    noisy = add_noise(pcm.astype(np.float64), span, snr_db, np.random.default_rng(5))
    return np.rint(noisy).astype(np.int16)


def test_in_a_noisy_room_a_whole_phrase_among_the_n_best_wins(lexicon, script) -> None:
    # Noise turned "non" into "pas caillou" (words of another phrase); "non" is a close second.
    nbest = {"alternatives": [
        {"text": "pas caillou", "confidence": 100.0,
         "result": [word("pas", 0.96, 1.1), word("caillou", 1.1, 1.3)]},
        {"text": "non", "confidence": 99.0, "result": [word("non", 0.96, 1.3)]},
        {"text": "oui", "confidence": 90.0, "result": [word("oui", 0.96, 1.3)]},
    ]}
    shout = tone(2.5, [(1.0, 1.3)])
    decoder = script(partials=[], finals=[(2.0, nbest)])
    assert feed(make(lexicon), shout) == []  # quiet room: the best path only, strict
    decoder = script(partials=[], finals=[(2.0, nbest)])
    recogniser = make(lexicon)
    found = feed(recogniser, in_noise(shout, (1.0, 1.3)))
    assert recogniser.noisy() and decoder.alternatives > 0
    assert [d.intent for d in found] == ["non"]
    # A longer alternative is not taken: noise adds words, a repair only drops them.
    longer = {"alternatives": [nbest["alternatives"][0],
                               {"text": "oui pas caillou", "confidence": 99.5,
                                "result": [word("oui", 0.96, 1.0), word("pas", 1.0, 1.1),
                                           word("caillou", 1.1, 1.3)]}]}
    script(partials=[], finals=[(2.0, longer)])
    assert feed(make(lexicon), in_noise(shout, (1.0, 1.3))) == []


def test_in_a_noisy_room_a_guess_must_hold_longer(lexicon, script) -> None:
    # "non" shows for 0.15 s after the shout, then Vosk drops it.
    partials = [(1.35, partial(word("non", 0.96, 1.3))), (1.5, {"partial": ""})]
    shout = tone(2.5, [(1.0, 1.3)])
    script(partials=partials)
    assert [d.intent for d in feed(make(lexicon), shout)] == ["non"]
    script(partials=partials)
    assert feed(make(lexicon), in_noise(shout, (1.0, 1.3))) == []


def test_final_result_adds_what_partials_missed_and_filters_confidence(lexicon, script) -> None:
    script(partials=[], finals=[(2.0, {"result": [word("oui", 0.96, 1.2, 0.9)]}),
                                (4.0, {"result": [word("non", 2.96, 3.2, 0.2)]})])
    found = feed(make(lexicon), tone(4.5, [(1.0, 1.2), (3.0, 3.2)]))
    assert [(d.intent, round(d.confidence, 2)) for d in found] == [("oui", 0.9)]


def test_own_playback_is_masked(lexicon, script) -> None:
    script(partials=[], finals=[(2.0, {"result": [word("oui", 0.96, 1.2)]})])
    recogniser = make(lexicon)
    recogniser.mask_playback(0.9, 1.3)
    assert feed(recogniser, tone(2.5, [(1.0, 1.2)])) == []
    script(partials=[], finals=[(2.0, {"result": [word("oui", 0.96, 1.2)]})])
    recogniser = make(lexicon)
    recogniser.mask_playback(1.3, 2.0)  # playback after the shout: no effect
    assert [d.intent for d in feed(recogniser, tone(2.5, [(1.0, 1.2)]))] == ["oui"]


def test_a_phrase_inside_running_speech_is_not_a_shout(lexicon, script) -> None:
    result = {"result": [word("oui", 1.46, 1.7)]}
    talk = tone(3.0, [(a, a + 0.15) for a in np.arange(0.5, 1.6, 0.25)] + [(1.5, 1.7)])  # since 0.5 s
    script(partials=[], finals=[(2.5, result)])
    assert feed(make(lexicon), talk) == []
    script(partials=[], finals=[(2.5, result)])
    assert [d.intent for d in feed(make(lexicon, pause_s=0), talk)] == ["oui"]


def test_the_hosts_own_playback_just_before_a_shout_is_no_running_speech(lexicon, script) -> None:
    """The host played something (the chirp, a bot's shout) until just before the shout: the
    sound the phone heard then is the host's, not its player's talking, and the shout stands.
    Playback that ended earlier leaves the player's own talk before the shout: still no shout."""
    result = {"result": [word("oui", 1.46, 1.7)]}
    sound = tone(3.0, [(a, a + 0.15) for a in np.arange(0.5, 1.6, 0.25)] + [(1.5, 1.7)])  # since 0.5 s
    script(partials=[], finals=[(2.5, result)])
    recogniser = make(lexicon)
    recogniser.mask_playback(0.45, 1.45)
    assert [d.intent for d in feed(recogniser, sound)] == ["oui"]
    script(partials=[], finals=[(2.5, result)])
    recogniser = make(lexicon)
    recogniser.mask_playback(0.45, 0.9)
    assert feed(recogniser, sound) == []


def test_dropped_input_keeps_the_timeline(lexicon, script) -> None:
    script(partials=[], finals=[(2.5, {"result": [word("oui", 1.46, 1.7)]})])
    recogniser = make(lexicon, refine=False, onset_bias_s=0.0)
    audio = tone(3.0, [(1.5, 1.7)])
    found = recogniser.accept(audio[:8000], 0)
    found += recogniser.accept(audio[16000:], 16000)  # samples 8000..16000 never arrived
    found += recogniser.flush()
    # The hole was filled with silence, so Vosk's 1.46 s is still sample 1.46 * RATE.
    assert [round(d.onset_s, 3) for d in found] == [1.46]


def test_overlapping_chunks_are_refused(lexicon, script) -> None:
    script(partials=[])
    recogniser = make(lexicon)
    recogniser.accept(np.zeros(800, dtype=np.int16), 0)
    with pytest.raises(ValueError, match="must not overlap"):
        recogniser.accept(np.zeros(800, dtype=np.int16), 400)
    with pytest.raises(ValueError, match="mono"):
        recogniser.accept(np.zeros((800, 2), dtype=np.int16), 800)


def test_unknown_words_and_silent_intents_are_reported(tmp_path: Path, script) -> None:
    path = tmp_path / "lexicon.yaml"
    path.write_text("oui: [oui, ouais]\nmecreant: [mécréant]\n", encoding="utf-8")
    recogniser = make(load_lexicon(path))
    assert [(u.intent, u.phrase, u.word) for u in recogniser.unknown_words] == [
        ("oui", "ouais", "ouais"), ("mecreant", "mécréant", "mécréant")]
    assert recogniser.silent_intents == ["mecreant"]
    assert [p.text for p in recogniser.phrases] == ["oui"]


# --- one decision per utterance, and only a clear one -------------------------------------------


def nbest(*paths: tuple[float, list[dict]]) -> dict:
    """A Vosk n-best result: (score, words) per path, best first."""
    return {"alternatives": [{"confidence": score, "result": words,
                              "text": " ".join(w["word"] for w in words)} for score, words in paths]}


def readings(lexicon, result: dict) -> list[Reading]:
    phrases = [Phrase(i, t, tuple(t.split())) for i, texts in lexicon.intents.items() for t in texts]
    return read_result(result, phrases, "[unk]")


ACTIVE = {"pas_mou_le_caillou", "oui", "non"}


def present(verdict: Verdict | None) -> Verdict:
    assert verdict is not None
    return verdict


def test_a_phrase_must_clearly_beat_its_rivals(lexicon) -> None:
    oui, non = [word("oui", 1.0, 1.2)], [word("non", 1.0, 1.2)]
    close = readings(lexicon, nbest((100.0, oui), (99.5, non)))
    verdict = judge(close, ACTIVE, margin=1.0)
    assert verdict is not None and not verdict.understood and "non" in verdict.reason
    assert present(judge(close, ACTIVE, margin=0.0)).match.phrase.intent == "oui"  # margin off: a guess
    clear = present(judge(readings(lexicon, nbest((100.0, oui), (97.0, non))), ACTIVE, margin=1.0))
    assert clear.match.phrase.intent == "oui"
    assert clear.confidence == pytest.approx(1 / (1 + np.exp(-3.0)))  # oui against non
    # The garbage path is a rival too: "oui" barely over "something else".
    garbage = readings(lexicon, nbest((100.0, oui), (99.8, [word("[unk]", 1.0, 1.2)])))
    assert not present(judge(garbage, ACTIVE, margin=1.0)).understood
    # Vosk's empty path ("silence") where the audio has speech is no reading: not a rival.
    silence = readings(lexicon, nbest((100.0, []), (99.5, oui), (95.0, non)))
    assert present(judge(silence, ACTIVE, margin=1.0)).match.phrase.intent == "oui"
    # Nothing else in the n-best: nothing else was possible.
    alone = readings(lexicon, nbest((100.0, oui), (99.9, oui + [word("[unk]", 1.3, 1.4)])))
    assert present(judge(alone, ACTIVE, margin=1.0)).match.phrase.intent == "oui"


def test_never_two_intents_for_one_utterance(lexicon) -> None:
    both = readings(lexicon, nbest((100.0, [word("oui", 1.0, 1.2), word("non", 1.3, 1.5)])))
    assert judge(both, ACTIVE, margin=0.0) is None  # two phrases in one breath: table talk
    twice = readings(lexicon, nbest((100.0, [word("oui", 1.0, 1.2), word("oui", 1.3, 1.5)])))
    assert present(judge(twice, ACTIVE, margin=0.0)).match.words[0].start == RATE  # once, the first


def test_stray_words_are_noise_only_in_a_noisy_room(lexicon) -> None:
    stray = readings(lexicon, nbest((100.0, [word("pas", 0.8, 0.9), word("oui", 1.0, 1.2)]),
                                    (95.0, [word("non", 1.0, 1.2)])))
    assert judge(stray, ACTIVE, margin=1.0) is None  # among other words in a quiet room: talk
    assert present(judge(stray, ACTIVE, margin=1.0, strays=True)).match.phrase.intent == "oui"


def test_a_mix_of_two_phrases_words_on_top_is_a_close_call(lexicon) -> None:
    # Vosk's grammar lets any of its words follow another: "pas le mou caillou" (the phrase's
    # words, two swapped: no phrase) on top, « pas mou le caillou » just under it. That is a
    # close call for the second look (it used to be nothing: a missed shout), never a guess.
    mix = [word("pas", 1.0, 1.1), word("le", 1.1, 1.2), word("mou", 1.2, 1.3), word("caillou", 1.3, 1.5)]
    shout = [mix[0], mix[2], mix[1], mix[3]]
    close = readings(lexicon, nbest((100.0, mix), (98.6, shout), (90.0, [word("oui", 1.0, 1.5)])))
    verdict = present(judge(close, ACTIVE, margin=2.0))
    assert not verdict.understood and verdict.mixed and not verdict.ask_again
    assert verdict.match.phrase.intent == "pas_mou_le_caillou"
    assert judge(close, ACTIVE, margin=2.0, mixes=False) is None  # the rule off: as before
    assert judge(close, ACTIVE, margin=1.0) is None  # the phrase too far under the mix
    # Not for talk: the garbage word in the top path, or a phrase among other words.
    talk = readings(lexicon, nbest((100.0, [word("[unk]", 0.9, 1.0)] + mix), (99.0, shout)))
    assert judge(talk, ACTIVE, margin=2.0) is None
    among = readings(lexicon, nbest((100.0, [word("non", 0.8, 0.9)] + shout), (99.0, shout)))
    assert judge(among, ACTIVE, margin=2.0) is None
    # Another mix between them: the first reading that is no mix decides.
    other = [mix[1], mix[0], mix[2], mix[3]]
    two = readings(lexicon, nbest((100.0, mix), (99.5, other), (99.0, shout)))
    assert present(judge(two, ACTIVE, margin=2.0)).match.phrase.intent == "pas_mou_le_caillou"


def test_an_utterance_closed_early_is_not_decided_again(lexicon, script) -> None:
    # The partial "oui" settles after the first burst; the utterance is closed (one decision).
    # Vosk's own endpoint then reports the tail of the same shout: not a second decision.
    script(partials=[(1.25, partial(word("oui", 0.96, 1.2)))],
           finals=[(2.0, {"result": [word("oui", 1.29, 1.42)]})])
    found = feed(make(lexicon, pause_s=0), tone(2.5, [(1.0, 1.2), (1.32, 1.42)]))
    assert [d.intent for d in found] == ["oui"]
    assert found[0].detected_at_s < 2.0  # decided when the partial settled, not at the endpoint


def test_not_understood_is_reported_for_speech_never_for_noise(lexicon, script) -> None:
    close = nbest((100.0, [word("oui", 0.96, 1.2)]), (99.9, [word("non", 0.96, 1.2)]))
    script(partials=[], finals=[(2.0, close)])
    [again] = feed(make(lexicon), tone(2.5, [(1.0, 1.2)]))
    assert isinstance(again, NotUnderstood) and again.onset_s == pytest.approx(1.0, abs=0.01)
    assert again.as_json()["intent"] is None
    script(partials=[], finals=[(2.0, close)])
    noise = np.rint(np.random.default_rng(1).standard_normal(int(2.5 * RATE)) * 3000).astype(np.int16)
    assert feed(make(lexicon), noise) == []
    # Vosk's guess in noise alone, even with a clear margin, is no phrase: no speech under it.
    script(partials=[], finals=[(2.0, nbest((100.0, [word("oui", 0.96, 1.2)])))])
    assert feed(make(lexicon), noise) == []


def test_the_listener_hands_not_understood_to_the_session_as_no_intent() -> None:
    from voice.live import heard

    said = Detection("oui", "oui", 1.0, 1.2, 0.9, 1.5)
    unclear = NotUnderstood(2.0, 2.3, 2.6, "« oui » too close to non")
    assert heard(1, said) == Heard(1, "oui", 1.0)
    assert heard(1, unclear) == Heard(1, None, 2.0)


# --- the second look at a close call ------------------------------------------------------------


def looks(monkeypatch: pytest.MonkeyPatch, first: ScriptedDecoder, answers: list[dict]) -> list:
    """The recogniser's first decoder is `first`; each later one (a second look) answers the
    next of `answers` as its final result. Returns the looks' decoders, as they are opened."""
    opened: list[ScriptedDecoder] = []

    def open_decoder(model, rate, grammar):
        if first.fed == 0:  # the recogniser's own decoder, before any audio
            opened[:1] = [first]
            return first
        look = ScriptedDecoder([], [(0.0, answers[(len(opened) - 1) % len(answers)])])
        opened.append(look)
        return look

    monkeypatch.setattr(recogniser_module, "open_decoder", open_decoder)
    return opened


OUI, NON = [word("oui", 0.96, 1.2)], [word("non", 0.96, 1.2)]
CLOSE = nbest((100.0, OUI), (99.9, NON))


def test_a_close_call_is_decided_when_the_looks_pool_to_a_clear_share(lexicon, monkeypatch) -> None:
    opened = looks(monkeypatch, ScriptedDecoder([], [(2.0, CLOSE)]), [nbest((90.0, OUI), (87.0, NON))])
    [found] = feed(make(lexicon), tone(2.5, [(1.0, 1.2)]))
    assert isinstance(found, Detection) and found.intent == "oui"
    assert found.onset_s == pytest.approx(1.0, abs=0.01)  # from the audio, as for any detection
    # The confidence is the pooled share, over the first decode and four looks: here settled
    # after three (whatever the fourth says, "oui" stays over the bar and ahead), so the
    # fourth is never decoded and the share is the least it could have been.
    first, look = 1 / (1 + np.exp(-0.1)), 1 / (1 + np.exp(-3.0))
    assert found.confidence == pytest.approx((first + 3 * look) / 5)
    # One look per speed, each fed the utterance resampled: different lengths.
    fed = [d.fed for d in opened[1:]]
    assert len(fed) == 3 and len(set(fed)) == 3
    # Switched off, the same close call is "say it again".
    looks(monkeypatch, ScriptedDecoder([], [(2.0, CLOSE)]), [nbest((90.0, OUI), (87.0, NON))])
    [again] = feed(make(lexicon, second_look=False), tone(2.5, [(1.0, 1.2)]))
    assert isinstance(again, NotUnderstood)


def test_one_look_that_leans_the_other_way_does_not_sink_the_rest(lexicon, monkeypatch) -> None:
    # Three looks hear "oui" clearly, one hears "non" by a hair: pooled, "oui" holds 0.78 of
    # the probability (a vote needing every look would have asked again).
    answers = [nbest((90.0, OUI)), nbest((90.0, OUI)), nbest((90.0, NON), (89.5, OUI)),
               nbest((90.0, OUI))]
    looks(monkeypatch, ScriptedDecoder([], [(2.0, CLOSE)]), answers)
    [found] = feed(make(lexicon), tone(2.5, [(1.0, 1.2)]))
    assert isinstance(found, Detection) and found.intent == "oui"
    assert found.confidence == pytest.approx((1 / (1 + np.exp(-0.1)) + 3 + 1 / (1 + np.exp(0.5))) / 5)
    # The bar is look_share: raised over that share, the same looks leave "say it again".
    looks(monkeypatch, ScriptedDecoder([], [(2.0, CLOSE)]), answers)
    assert isinstance(feed(make(lexicon, look_share=0.8), tone(2.5, [(1.0, 1.2)]))[0], NotUnderstood)


def test_looks_split_between_phrases_leave_say_it_again(lexicon, monkeypatch) -> None:
    # Two looks "oui", two "non": "oui" holds about half the probability, under the bar.
    looks(monkeypatch, ScriptedDecoder([], [(2.0, CLOSE)]),
          [nbest((90.0, OUI)), nbest((90.0, NON))])
    [again] = feed(make(lexicon), tone(2.5, [(1.0, 1.2)]))
    assert isinstance(again, NotUnderstood)
    # Looks that hear garbage give "oui" no share either.
    looks(monkeypatch, ScriptedDecoder([], [(2.0, CLOSE)]),
          [nbest((90.0, OUI)), nbest((91.0, [word("[unk]", 0.96, 1.2)]))])
    assert isinstance(feed(make(lexicon), tone(2.5, [(1.0, 1.2)]))[0], NotUnderstood)


def test_intent_shares_weigh_the_n_best_by_likelihood(lexicon) -> None:
    two = [word("oui", 0.96, 1.1), word("non", 1.1, 1.2)]
    decode = readings(lexicon, nbest((100.0, OUI), (99.0, NON), (98.0, two), (97.0, [])))
    shares = intent_shares(decode, ACTIVE)
    weights = np.exp([0.0, -1.0, -2.0])  # the empty path ("silence") is no reading
    assert shares["oui"] == pytest.approx((weights[0] + weights[2]) / weights.sum())
    assert shares["non"] == pytest.approx((weights[1] + weights[2]) / weights.sum())
    assert intent_shares(readings(lexicon, nbest((100.0, []))), ACTIVE) == {}  # heard nothing
    # Pooled over decodes: the mean share; a decode that heard nothing counts as 0 for all.
    deaf = readings(lexicon, nbest((100.0, [])))
    chosen = pooled_choice([decode, deaf], 2, ACTIVE, bar=0.3)
    assert chosen is not None
    intent, share = chosen
    assert intent == "oui" and share == pytest.approx(shares["oui"] / 2)
    assert pooled_choice([decode, deaf], 2, ACTIVE, bar=0.5) is None  # under the bar
    # An intent only ever heard beside another is no candidate.
    assert pooled_choice([readings(lexicon, nbest((100.0, two)))], 1, ACTIVE, bar=0.1) is None


def test_pooling_stops_reading_looks_once_the_outcome_is_settled(lexicon) -> None:
    oui, non = readings(lexicon, nbest((100.0, OUI))), readings(lexicon, nbest((100.0, NON)))
    read: list[int] = []

    def decodes(answers):
        for i, decode in enumerate(answers):
            read.append(i)
            yield decode

    # Three "oui" of five: 3.0 of the 3.0 the bar needs, and "non" cannot catch up.
    assert pooled_choice(decodes([oui, oui, oui, non, non]), 5, ACTIVE, bar=0.6) == ("oui", 0.6)
    assert read == [0, 1, 2]
    # One "oui" and one "non": neither can reach 0.9 of five any more. Nothing, after two.
    read.clear()
    assert pooled_choice(decodes([oui, non, oui, oui, oui]), 5, ACTIVE, bar=0.9) is None
    assert read == [0, 1]
    # Read to the end, the same outcomes: stopping early changes none.
    assert pooled_choice([oui, oui, oui, non, non], 5, ACTIVE, bar=0.6) == ("oui", 0.6)
    assert pooled_choice(iter([oui, non, oui, oui, oui]), 5, ACTIVE, bar=0.9) is None
    assert pooled_choice(iter([oui, non, oui, oui, oui]), 5, ACTIVE, bar=0.8) == ("oui", 0.8)


def test_a_phrase_close_to_several_is_decided_by_a_second_look_or_nothing(lexicon, monkeypatch) -> None:
    # "oui" barely over "oui non": as likely two phrases in a row (table talk) as a call.
    both = nbest((100.0, OUI), (99.9, [word("oui", 0.96, 1.1), word("non", 1.1, 1.2)]))
    verdict = judge(readings(lexicon, both), ACTIVE, margin=1.0)
    assert verdict is not None and not verdict.understood and not verdict.ask_again
    looks(monkeypatch, ScriptedDecoder([], [(2.0, both)]), [nbest((90.0, OUI))])
    assert [d.intent for d in feed(make(lexicon), tone(2.5, [(1.0, 1.2)]))] == ["oui"]
    # Without an agreeing second look: nothing, not even "say it again".
    looks(monkeypatch, ScriptedDecoder([], [(2.0, both)]), [nbest((90.0, OUI))])
    assert feed(make(lexicon, second_look=False), tone(2.5, [(1.0, 1.2)])) == []


def test_no_second_look_is_paid_for_noise(lexicon, monkeypatch) -> None:
    noise = np.rint(np.random.default_rng(1).standard_normal(int(2.5 * RATE)) * 3000).astype(np.int16)
    opened = looks(monkeypatch, ScriptedDecoder([], [(2.0, CLOSE)]), [nbest((90.0, OUI))])
    assert feed(make(lexicon), noise) == []
    assert len(opened) == 1  # the recogniser's own decoder only: no speech, no look


# --- silence kept from Vosk ---------------------------------------------------------------------


class ListeningDecoder:
    """Hears what it is fed, like Vosk: a loud stretch followed by 0.15 s of quiet is "oui"
    (partial, then final), its word times counted in samples fed since creation."""

    def __init__(self) -> None:
        self.audio = np.zeros(0)
        self.utterance = 0  # fed index where the utterance under way began

    def AcceptWaveform(self, data: bytes) -> bool:
        self.audio = np.concatenate([self.audio, np.frombuffer(data, dtype=np.int16)])
        return False

    def _word(self) -> dict | None:
        loud = np.flatnonzero(np.abs(self.audio[self.utterance:]) > 1000)
        if len(loud) == 0 or len(self.audio) - self.utterance - loud[-1] < 0.15 * RATE:
            return None
        a, b = (self.utterance + loud[0]) / RATE, (self.utterance + loud[-1]) / RATE
        return word("oui", a - 0.03, b)

    def PartialResult(self) -> str:
        return json.dumps({"partial": "oui" if self._word() else ""})

    finals = 0  # final results read, over all instances

    def FinalResult(self) -> str:
        ListeningDecoder.finals += 1
        said, self.utterance = self._word(), len(self.audio)
        return json.dumps({"result": [said]} if said else {"text": ""})

    def Result(self) -> str:
        return self.FinalResult()

    def Reset(self) -> None:
        self.utterance = len(self.audio)

    def SetMaxAlternatives(self, count: int) -> None:
        pass


def listening(monkeypatch: pytest.MonkeyPatch) -> list[ListeningDecoder]:
    opened: list[ListeningDecoder] = []

    def open_decoder(model, rate, grammar):
        opened.append(ListeningDecoder())
        return opened[-1]

    monkeypatch.setattr(recogniser_module, "open_decoder", open_decoder)
    return opened


def test_silence_is_kept_from_vosk_and_times_stay_right(lexicon, monkeypatch) -> None:
    shouts = [(3.0, 3.3), (9.0, 9.3), (26.0, 26.3)]  # past the 20 s the history holds at once
    pcm = tone(30.0, shouts)
    for skip in (True, False):
        opened = listening(monkeypatch)
        found = feed(make(lexicon, skip_silence=skip, clock=rate_clock(RATE, 100.0)), pcm, start=RATE)
        assert [d.intent for d in found] == ["oui"] * 3
        for detection, (a, _b) in zip(found, shouts, strict=True):
            assert detection.onset_s == pytest.approx(100.0 + 1.0 + a, abs=0.01)
        fed = sum(len(d.audio) for d in opened) / RATE
        if skip:  # each shout with the 1 s before it and a little after; not the silence
            assert fed < 8.0
        else:
            assert fed == pytest.approx(30.0)


def test_sound_comes_back_with_the_audio_just_before_it(lexicon, monkeypatch) -> None:
    opened = listening(monkeypatch)
    [found] = feed(make(lexicon, skip_silence=True), tone(6.0, [(4.0, 4.3)]))
    decoder = opened[-1]
    # Vosk heard the first 0.5 s (no floor known yet), then nothing until the shout came, then
    # the shout with the 1 s of silence before it (preroll_s): its start is no surprise to it.
    loud = np.flatnonzero(np.abs(decoder.audio) > 1000)
    assert loud[0] - (int(0.5 * RATE) + int(1.0 * RATE)) in (0, 1)  # the tone starts at sin(0)
    assert len(decoder.audio) < 2.5 * RATE
    assert found.onset_s == pytest.approx(4.0, abs=0.01)


def test_a_stream_ending_in_silence_kept_from_vosk_reads_no_final_result(lexicon, monkeypatch) -> None:
    listening(monkeypatch)
    recogniser = make(lexicon, skip_silence=True)
    pcm = tone(7.0, [(2.0, 2.3)])
    found = [d for i in range(0, len(pcm), 800) for d in recogniser.accept(pcm[i:i + 800], i)]
    assert [d.intent if isinstance(d, Detection) else d for d in found] == ["oui"]
    ListeningDecoder.finals = 0
    # The shout was decided, its utterance ended and the 4 s of silence after it kept from
    # Vosk: the end of the stream has nothing to read (reading costs as much as a decision).
    assert recogniser.flush() == []
    assert ListeningDecoder.finals == 0


def test_in_a_noisy_room_a_phrase_behind_two_is_a_close_call(lexicon) -> None:
    # Noise adds a phrase to a word: "oui non" just ahead of "non" alone.
    added = readings(lexicon, nbest((100.0, [word("oui", 0.8, 0.9), word("non", 1.0, 1.2)]),
                                    (99.0, [word("non", 1.0, 1.2)])))
    assert judge(added, ACTIVE, margin=1.0) is None  # a quiet room: two phrases, table talk
    verdict = present(judge(added, ACTIVE, margin=1.5, strays=True))
    assert verdict.match.phrase.intent == "non" and not verdict.understood and not verdict.ask_again
    # Far behind, it is no contender: nothing.
    assert judge(added, ACTIVE, margin=0.5, strays=True) is None


def test_default_onset_bias_is_40_ms_after_vosks_start(lexicon, script) -> None:
    """Hand-worked: Vosk places "pas" at 0.96 s; with no onset from the audio (refine off) the
    onset is 0.96 + 0.04 (the default bias) = 1.00 s, and the end 1.50 + 0.04 = 1.54 s."""
    script(partials=[], finals=[(2.0, {"result": CAILLOU})])
    recogniser = make(lexicon, refine=False)
    assert recogniser.onset_bias == 640  # 0.04 s at 16 kHz
    [found] = feed(recogniser, tone(2.5, [(1.0, 1.5)]))
    assert found.onset_s == pytest.approx(1.0, abs=1e-9)
    assert found.end_s == pytest.approx(1.54, abs=1e-9)


def test_a_word_before_the_kept_audio_gets_the_bias(lexicon, script) -> None:
    """Hand-worked: when the audio under the word is no longer kept (no onset to find in it),
    the onset is Vosk's start plus the bias: 1.000 s + 0.025 s = sample 16000 + 400."""
    script(partials=[])
    recogniser = make(lexicon, onset_bias_s=0.025)
    recogniser.accept(np.zeros(3 * RATE, dtype=np.int16), 0)
    recogniser._history, recogniser._history_start = recogniser._history[2 * RATE:], 2 * RATE
    assert recogniser._onset(Word("pas", RATE, RATE + 1600, 1.0)) == (RATE + 400, 0.0)
    assert make(lexicon, onset_bias_s=0.0)._onset(Word("pas", RATE, RATE + 1600, 1.0)) == (RATE, 0.0)


# --- the race-time look: a grammar of only the race's phrase ---------------------------------------

UNK = [word("[unk]", 0.96, 1.2)]
# The race look decodes the utterance's audio from 0.3 s before Vosk's first word (0.66 s), after
# 0.1 s of padding: the tone at 1.0 s is at 0.44 s there.
OUI_IN_CUT, NON_IN_CUT = [word("oui", 0.42, 0.66)], [word("non", 0.42, 0.66)]


def in_a_race(lexicon, monkeypatch, race: bool = True, intent: str = "oui",
              **options) -> tuple[Recogniser, list, list]:
    """A race for « oui » (`intent` the one active intent, the others decoys); its shout comes out
    of the first decode as the garbage word alone. The race look decodes the cut with the race's
    grammar (« oui » heard) and then the whole grammar, which hears `whole` (set by the caller).
    Returns the recogniser, the decoders opened after the first, and their answers (to fill)."""
    opened: list[ScriptedDecoder] = []
    answers: list[dict] = []
    first = ScriptedDecoder([], [(2.0, nbest((100.0, UNK)))])

    def open_decoder(model, rate, grammar):
        if first.fed == 0:
            return first
        look = ScriptedDecoder([], [(0.0, answers[len(opened) % len(answers)])])
        look.grammar = grammar  # type: ignore[attr-defined]
        opened.append(look)
        return look

    monkeypatch.setattr(recogniser_module, "open_decoder", open_decoder)
    recogniser = make(lexicon, intents=[intent], **options)
    if race:
        recogniser.set_race([intent])
    return recogniser, opened, answers


def test_in_a_race_an_utterance_heard_as_nothing_is_decoded_again_with_the_race_phrase_alone(
        lexicon, monkeypatch) -> None:
    recogniser, opened, answers = in_a_race(lexicon, monkeypatch)
    answers += [nbest((90.0, OUI_IN_CUT)), nbest((89.0, OUI_IN_CUT))]  # the whole grammar: « oui » too
    [found] = feed(recogniser, tone(2.5, [(1.0, 1.2)]))
    assert isinstance(found, Detection) and found.intent == "oui"
    assert found.onset_s == pytest.approx(1.0, abs=0.01)  # from the audio, as for any detection
    # First the race's phrase and the garbage word alone (a checked grammar), then the whole one.
    assert [json.loads(d.grammar) for d in opened] == [["oui", "[unk]"], json.loads(recogniser._grammar or "")]
    # No race open, or the look turned off: the same utterance gives nothing.
    recogniser, opened, answers = in_a_race(lexicon, monkeypatch, race=False)
    answers += [nbest((90.0, OUI_IN_CUT))]
    assert feed(recogniser, tone(2.5, [(1.0, 1.2)])) == [] and opened == []
    recogniser, opened, answers = in_a_race(lexicon, monkeypatch, race_look=False)
    answers += [nbest((90.0, OUI_IN_CUT))]
    assert feed(recogniser, tone(2.5, [(1.0, 1.2)])) == [] and opened == []


def test_the_race_look_gives_nothing_where_other_words_fit_the_audio_better(lexicon, monkeypatch) -> None:
    # The race's grammar can only say « oui »; the whole grammar hears « non » 3 log-likelihood
    # better on the same audio: someone said something else, forced into the race's phrase.
    recogniser, opened, answers = in_a_race(lexicon, monkeypatch)
    answers += [nbest((90.0, OUI_IN_CUT)), nbest((93.0, NON_IN_CUT), (89.0, OUI_IN_CUT))]
    assert feed(recogniser, tone(2.5, [(1.0, 1.2)])) == []
    assert len(opened) == 2
    # Allowed that much (race_ratio 3), it is taken.
    recogniser, opened, answers = in_a_race(lexicon, monkeypatch, race_ratio=3.0)
    answers += [nbest((90.0, OUI_IN_CUT)), nbest((93.0, NON_IN_CUT), (89.0, OUI_IN_CUT))]
    assert [d.intent for d in feed(recogniser, tone(2.5, [(1.0, 1.2)]))] == ["oui"]


def test_the_race_look_takes_only_the_phrase_alone_and_clear(lexicon, monkeypatch) -> None:
    # The race's grammar puts the garbage word with the phrase, or the garbage word within
    # race_margin of it: nothing (the whole grammar is never asked).
    for race_answer in (nbest((90.0, OUI_IN_CUT + [word("[unk]", 0.7, 0.9)])),
                        nbest((90.0, OUI_IN_CUT), (89.0, [word("[unk]", 0.42, 0.66)]))):
        recogniser, opened, answers = in_a_race(lexicon, monkeypatch)
        answers += [race_answer, nbest((80.0, OUI_IN_CUT))]
        assert feed(recogniser, tone(2.5, [(1.0, 1.2)])) == []
        assert len(opened) == 1


def test_how_a_reading_of_the_race_grammar_says_the_race_phrase() -> None:
    caillou = Phrase("pas_mou_le_caillou", "pas mou le caillou", ("pas", "mou", "le", "caillou"))

    def said(*texts: str):
        return said_in_race(words(*texts), caillou, "[unk]")

    placed = said("pas", "mou", "le", "caillou")
    assert placed is not None and [w.start for w in placed] == [0, 100, 200, 300]
    # A word unclear inside it: its words where they were.
    placed = said("pas", "mou", "[unk]", "le", "caillou")
    assert placed is not None and [(w.text, w.start) for w in placed] == [
        ("pas", 0), ("mou", 100), ("le", 300), ("caillou", 400)]
    # Not the phrase: its end alone (a single word said alone sounds so), unfinished, its
    # middle, the garbage word around it, said twice, a stumble into it, nothing else.
    for other in (("le", "caillou"), ("caillou",), ("pas", "mou"), ("mou", "le"),
                  ("[unk]", "pas", "mou", "le", "caillou"),
                  ("pas", "mou", "le", "caillou", "[unk]"), ("pas", "mou", "le", "caillou") * 2,
                  ("pas", "pas", "mou", "le", "caillou"), ("[unk]",), ("caillou", "le")):
        assert said(*other) is None, other
    # A stumble into it: its start, then the whole of it.
    assert stumbles_into(words("pas", "pas", "mou", "le", "caillou"), caillou)
    assert stumbles_into(words("pas", "mou", "pas", "mou", "le", "caillou"), caillou)
    for plain in (("pas", "mou", "le", "caillou"), ("pas", "mou", "le", "caillou") * 2,
                  ("mou", "pas", "mou", "le", "caillou")):
        assert not stumbles_into(words(*plain), caillou), plain
    # A one-word phrase said twice is neither.
    oui = Phrase("oui", "oui", ("oui",))
    assert said_in_race(words("oui", "oui"), oui, "[unk]") is None
    assert said_in_race(words("oui", "[unk]", "oui"), oui, "[unk]") is None
    assert not stumbles_into(words("oui", "oui"), oui)


# « pas mou le caillou » in the race look's cut: the tone at 1.0-1.6 s is at 0.44-1.04 s there.
CAILLOU_IN_CUT = [word("pas", 0.42, 0.6), word("mou", 0.6, 0.75), word("le", 0.75, 0.85),
                  word("caillou", 0.85, 1.04)]


def test_a_race_phrase_with_its_end_alone_close_under_it_is_not_taken(lexicon, monkeypatch) -> None:
    # "caillou" alone is what a single word said alone sounds like: a rival, whichever is on top.
    for race_answer in (nbest((90.0, CAILLOU_IN_CUT[3:]), (89.5, CAILLOU_IN_CUT)),
                        nbest((90.0, CAILLOU_IN_CUT), (89.5, CAILLOU_IN_CUT[3:]))):
        recogniser, opened, answers = in_a_race(lexicon, monkeypatch, intent="pas_mou_le_caillou")
        answers += [race_answer, nbest((89.0, CAILLOU_IN_CUT))]
        assert feed(recogniser, tone(2.5, [(1.0, 1.6)])) == [] and len(opened) == 1
    # Far enough under it, the phrase is taken.
    recogniser, opened, answers = in_a_race(lexicon, monkeypatch, intent="pas_mou_le_caillou")
    answers += [nbest((90.0, CAILLOU_IN_CUT), (87.5, CAILLOU_IN_CUT[3:])), nbest((89.0, CAILLOU_IN_CUT))]
    [found] = feed(recogniser, tone(2.5, [(1.0, 1.6)]))
    assert isinstance(found, Detection) and found.onset_s == pytest.approx(1.0, abs=0.01)


def test_how_a_reading_says_only_the_end_of_the_race_phrase() -> None:
    caillou = Phrase("pas_mou_le_caillou", "pas mou le caillou", ("pas", "mou", "le", "caillou"))
    for tail in (("caillou",), ("le", "caillou"), ("mou", "le", "caillou"), ("[unk]", "caillou"),
                 ("[unk]", "[unk]", "le", "caillou")):
        assert its_tail(words(*tail), caillou, "[unk]"), tail
    # The phrase whole, its start, its middle, something unclear inside or after its end, other
    # words, nothing: not its end alone.
    for other in (("pas", "mou", "le", "caillou"), ("pas", "mou"), ("mou", "le"), ("le", "[unk]", "caillou"),
                  ("caillou", "[unk]"), ("caillou", "caillou"), ("oui",), ("[unk]",), ()):
        assert not its_tail(words(*other), caillou, "[unk]"), other
    # A one-word phrase has no end of its own.
    assert not its_tail(words("oui"), Phrase("oui", "oui", ("oui",)), "[unk]")


def test_a_race_phrase_under_its_own_end_is_a_crowded_shout(lexicon, monkeypatch) -> None:
    # Its first word soft, lost in the room's noise: "caillou" alone on top, the phrase whole
    # just under it (or the other way round). At a table whose phones hear each other (the
    # other players shout it too) that is the phrase, placed by its whole reading: its onset at
    # "pas", and crowded (the host takes it only where another phone heard the phrase plainly).
    for race_answer in (nbest((90.0, CAILLOU_IN_CUT[3:]), (89.5, CAILLOU_IN_CUT)),
                        nbest((90.0, [word("[unk]", 0.42, 0.8)] + CAILLOU_IN_CUT[3:]), (89.5, CAILLOU_IN_CUT)),
                        nbest((90.0, CAILLOU_IN_CUT), (89.5, CAILLOU_IN_CUT[3:]))):
        recogniser, opened, answers = in_a_race(lexicon, monkeypatch, intent="pas_mou_le_caillou", crowded=True)
        answers += [race_answer, nbest((89.0, CAILLOU_IN_CUT))]
        [found] = feed(recogniser, tone(2.5, [(1.0, 1.6)]))
        assert isinstance(found, Detection) and found.intent == "pas_mou_le_caillou" and found.crowded
        assert found.onset_s == pytest.approx(1.0, abs=0.01)
    # Its end alone, the phrase not there or race_margin under it, or another reading within
    # race_margin: no shout.
    for race_answer in (nbest((90.0, CAILLOU_IN_CUT[3:])),
                        nbest((90.0, CAILLOU_IN_CUT[3:]), (87.5, CAILLOU_IN_CUT)),
                        nbest((90.0, CAILLOU_IN_CUT[3:]), (89.8, [word("[unk]", 0.42, 1.04)]),
                              (89.5, CAILLOU_IN_CUT))):
        recogniser, opened, answers = in_a_race(lexicon, monkeypatch, intent="pas_mou_le_caillou", crowded=True)
        answers += [race_answer, nbest((89.0, CAILLOU_IN_CUT)), nbest((80.0, [word("[unk]", 0.1, 0.3)]))]
        assert [d for d in feed(recogniser, tone(2.5, [(1.0, 1.6)])) if isinstance(d, Detection)] == []
    # The whole grammar hearing other words far better still refuses it.
    recogniser, opened, answers = in_a_race(lexicon, monkeypatch, intent="pas_mou_le_caillou", crowded=True)
    answers += [nbest((90.0, CAILLOU_IN_CUT[3:]), (89.5, CAILLOU_IN_CUT)), nbest((95.0, [word("oui", 0.42, 1.04)]))]
    assert [d for d in feed(recogniser, tone(2.5, [(1.0, 1.6)])) if isinstance(d, Detection)] == []


def test_a_race_shout_with_a_word_unclear_or_a_stumble_under_it_is_taken(lexicon, monkeypatch) -> None:
    unclear = CAILLOU_IN_CUT[:2] + [word("[unk]", 0.75, 0.8), word("le", 0.8, 0.85), CAILLOU_IN_CUT[3]]
    stumble = [word("pas", 0.42, 0.5), word("pas", 0.5, 0.6)] + CAILLOU_IN_CUT[1:]
    for race_answer in (nbest((90.0, unclear), (87.5, CAILLOU_IN_CUT[3:])),  # a word unclear, on top
                        nbest((90.0, CAILLOU_IN_CUT), (89.5, unclear)),  # the phrase, then with a word unclear
                        nbest((90.0, CAILLOU_IN_CUT), (89.5, stumble))):  # the phrase, then a stumble into it
        recogniser, opened, answers = in_a_race(lexicon, monkeypatch, intent="pas_mou_le_caillou")
        answers += [race_answer, nbest((89.0, CAILLOU_IN_CUT))]
        [found] = feed(recogniser, tone(2.5, [(1.0, 1.6)]))
        assert isinstance(found, Detection) and found.intent == "pas_mou_le_caillou"
        assert found.onset_s == pytest.approx(1.0, abs=0.01)
    # A stumble on top is not taken; nor is anything with the garbage word alone 1 under it.
    for race_answer in (nbest((90.0, stumble), (88.0, CAILLOU_IN_CUT)),
                        nbest((90.0, unclear), (89.0, [word("[unk]", 0.42, 1.04)]))):
        recogniser, opened, answers = in_a_race(lexicon, monkeypatch, intent="pas_mou_le_caillou")
        answers += [race_answer, nbest((89.0, CAILLOU_IN_CUT))]
        assert feed(recogniser, tone(2.5, [(1.0, 1.6)])) == [] and len(opened) == 1


def test_another_phrase_said_whole_in_a_race_is_not_looked_at(lexicon, monkeypatch) -> None:
    # « non » (a decoy in a race for « oui »), heard clearly: someone said it; no look.
    opened: list = []
    first = ScriptedDecoder([], [(2.0, nbest((100.0, NON)))])

    def open_decoder(model, rate, grammar):
        if first.fed == 0:
            return first
        opened.append(grammar)
        return ScriptedDecoder([], [(0.0, nbest((90.0, OUI_IN_CUT)))])

    monkeypatch.setattr(recogniser_module, "open_decoder", open_decoder)
    recogniser = make(lexicon, intents=["oui"])
    recogniser.set_race(["oui"])
    assert feed(recogniser, tone(2.5, [(1.0, 1.2)])) == [] and opened == []


def test_a_race_is_of_active_intents_and_ends_with_the_moment(lexicon, script) -> None:
    recogniser = make(lexicon, intents=["oui"])
    with pytest.raises(ValueError, match="not active"):
        recogniser.set_race(["non"])
    recogniser.set_race(["oui"])
    assert recogniser.race == ("oui",)
    recogniser.set_intents(["oui", "non"])  # the next moment: no race until one is opened
    assert recogniser.race == ()
    recogniser.set_intents(["non", "oui"], race=True)  # a moment that is a race for its intents
    assert recogniser.race == ("non", "oui")
    recogniser.set_intents(["oui"])
    assert recogniser.race == ()


def test_how_a_reading_says_the_race_phrase_among_other_voices_saying_it() -> None:
    caillou = Phrase("pas_mou_le_caillou", "pas mou le caillou", ("pas", "mou", "le", "caillou"))

    def among(*texts: str):
        return said_among_others(words(*texts), caillou, "[unk]")

    # Several players shouting it tens of ms apart, as one phone hears them: the phrase whole,
    # with more of its words around it (the garbage word left out).
    for crowd in (("pas", "pas", "mou", "le", "caillou"), ("pas", "mou", "le", "caillou") * 2,
                  ("caillou", "pas", "mou", "le", "caillou"), ("pas", "mou", "le", "caillou", "caillou"),
                  ("pas", "[unk]", "pas", "mou", "le", "caillou"), ("[unk]", "pas", "mou", "le", "caillou"),
                  ("pas", "mou", "le", "caillou", "[unk]")):
        placed = among(*crowd)
        assert placed is not None and [w.text for w in placed] == [t for t in crowd if t != "[unk]"], crowd
    # Not among others: the phrase alone (said_in_race's), the phrase not whole, other words.
    for other in (("pas", "mou", "le", "caillou"), ("pas", "mou", "le"), ("pas", "pas", "mou", "le"),
                  ("pas", "mou", "le", "caillou", "oui"), ("caillou", "le", "mou", "pas", "pas"), ("[unk]",)):
        assert among(*other) is None, other


def test_a_crowded_race_reading_is_taken_only_by_a_recogniser_told_phones_hear_each_other(
        lexicon, monkeypatch) -> None:
    stumble = [word("pas", 0.42, 0.5), word("pas", 0.5, 0.6)] + CAILLOU_IN_CUT[1:]
    recogniser, opened, answers = in_a_race(lexicon, monkeypatch, intent="pas_mou_le_caillou", crowded=True)
    answers += [nbest((90.0, stumble), (88.0, CAILLOU_IN_CUT)), nbest((89.0, CAILLOU_IN_CUT))]
    [found] = feed(recogniser, tone(2.5, [(1.0, 1.6)]))
    assert isinstance(found, Detection) and found.intent == "pas_mou_le_caillou" and found.crowded
    assert found.onset_s == pytest.approx(1.0, abs=0.01)
    # A reading of the phrase alone stays a plain detection.
    recogniser, opened, answers = in_a_race(lexicon, monkeypatch, intent="pas_mou_le_caillou", crowded=True)
    answers += [nbest((90.0, CAILLOU_IN_CUT)), nbest((89.0, CAILLOU_IN_CUT))]
    [found] = feed(recogniser, tone(2.5, [(1.0, 1.6)]))
    assert isinstance(found, Detection) and not found.crowded
    # Said plainly, with the phrase after something unclear just under it (another's voice before
    # it): plainly, no; among others, yes.
    unclear_before = [word("[unk]", 0.3, 0.42)] + CAILLOU_IN_CUT
    for crowded, taken in ((False, False), (True, True)):
        recogniser, opened, answers = in_a_race(lexicon, monkeypatch, intent="pas_mou_le_caillou", crowded=crowded)
        answers += [nbest((90.0, CAILLOU_IN_CUT), (89.5, unclear_before)), nbest((89.0, CAILLOU_IN_CUT))]
        found = [d for d in feed(recogniser, tone(2.5, [(1.0, 1.6)])) if isinstance(d, Detection)]
        assert [d.crowded for d in found] == ([True] if taken else []), crowded
    # The whole grammar hearing other words far better still refuses it.
    recogniser, opened, answers = in_a_race(lexicon, monkeypatch, intent="pas_mou_le_caillou", crowded=True)
    answers += [nbest((90.0, stumble)), nbest((95.0, [word("oui", 0.42, 1.04)]))]
    assert feed(recogniser, tone(2.5, [(1.0, 1.6)])) == []


def test_a_race_reading_a_little_over_the_ratio_is_a_crowded_shout(lexicon, monkeypatch) -> None:
    # The whole grammar fits other words 3 better than the race's phrase (race_ratio is 2):
    # among several voices that is a mixture, so a crowded recogniser takes it as crowded
    # (the host then needs another phone's plain reading); a lone microphone refuses it, and
    # so does a crowded one past crowd_ratio (4), as talk forced into the phrase fits.
    for crowded, whole, taken in ((True, 93.0, True), (False, 93.0, False), (True, 95.0, False)):
        recogniser, opened, answers = in_a_race(lexicon, monkeypatch, intent="pas_mou_le_caillou", crowded=crowded)
        answers += [nbest((90.0, CAILLOU_IN_CUT)), nbest((whole, [word("oui", 0.42, 1.04)]))]
        found = [d for d in feed(recogniser, tone(2.5, [(1.0, 1.6)])) if isinstance(d, Detection)]
        assert [(d.intent, d.crowded) for d in found] == ([("pas_mou_le_caillou", True)] if taken else []), whole
        assert not taken or found[0].onset_s == pytest.approx(1.0, abs=0.01)


def others_then_own_voice() -> tuple[np.ndarray, list[dict]]:
    """A phone's audio: other players' voices, faint, from 1.0 s; its own player's, 20 dB
    louder, from 1.3 s to 1.9 s. And « pas mou le caillou » where it lies in the cut the race
    look reads from the rise: 0.1 s of padding, then 50 ms before the own voice."""
    t = np.arange(int(2.5 * RATE)) / RATE
    audio = np.where((t >= 1.0) & (t < 1.9), 800 * np.sin(2 * np.pi * 300 * t), 0.0)
    audio = audio + np.where((t >= 1.3) & (t < 1.9), 8000 * np.sin(2 * np.pi * 400 * t), 0.0)
    own = [word("pas", 0.15, 0.3), word("mou", 0.3, 0.4), word("le", 0.4, 0.5), word("caillou", 0.5, 0.7)]
    return np.rint(audio).astype(np.int16), own


def test_a_crowded_race_look_reads_again_from_where_the_players_own_voice_rises(lexicon, monkeypatch) -> None:
    # Other players' voices, faint at this phone, from 1.0 s; its own player's, 20 dB louder,
    # from 1.3 s. The race look's reading of the whole utterance finds nothing; read again
    # from 50 ms before the rise, the phrase: a crowded detection at the own voice's onset.
    pcm, own = others_then_own_voice()
    recogniser, opened, answers = in_a_race(lexicon, monkeypatch, intent="pas_mou_le_caillou", crowded=True)
    answers += [nbest((90.0, [word("[unk]", 0.4, 1.2)])), nbest((90.0, own)), nbest((89.0, own))]
    [found] = feed(recogniser, pcm)
    assert isinstance(found, Detection) and found.crowded and found.intent == "pas_mou_le_caillou"
    assert found.onset_s == pytest.approx(1.3, abs=0.02)
    assert len(opened) == 3  # the utterance, the cut, the whole grammar on the cut
    # Told nothing of other phones, the recogniser does not look again: nothing.
    recogniser, opened, answers = in_a_race(lexicon, monkeypatch, intent="pas_mou_le_caillou")
    answers += [nbest((90.0, [word("[unk]", 0.4, 1.2)])), nbest((90.0, own)), nbest((89.0, own))]
    assert feed(recogniser, pcm) == [] and len(opened) == 1


def test_the_phrase_under_its_own_end_is_taken_only_where_the_own_voice_read_finds_nothing(
        lexicon, monkeypatch) -> None:
    # As above: others' voices from 1.0 s, the player's own from 1.3 s. The first read gives
    # "caillou" alone over the phrase (from the others' voices' start), the read from the own
    # voice's rise the phrase: that one is taken, at the rise, not the phrase under its end.
    pcm, own = others_then_own_voice()
    under_its_end = nbest((90.0, [word("caillou", 0.9, 1.2)]),
                          (89.5, [*CAILLOU_IN_CUT[:3], word("caillou", 0.85, 1.2)]))
    recogniser, opened, answers = in_a_race(lexicon, monkeypatch, intent="pas_mou_le_caillou", crowded=True)
    answers += [under_its_end, nbest((90.0, own)), nbest((89.0, own))]
    [found] = feed(recogniser, pcm)
    assert isinstance(found, Detection) and found.crowded
    assert found.onset_s == pytest.approx(1.3, abs=0.02)
    # The read from the rise finding nothing, the phrase under its end is taken: its onset
    # where the phrase's first word is heard.
    recogniser, opened, answers = in_a_race(lexicon, monkeypatch, intent="pas_mou_le_caillou", crowded=True)
    answers += [under_its_end, nbest((90.0, [word("[unk]", 0.15, 0.7)])), nbest((89.0, own))]
    [found] = feed(recogniser, pcm)
    assert isinstance(found, Detection) and found.crowded and found.intent == "pas_mou_le_caillou"
    assert found.onset_s < 1.2
