"""Phones checked against each other from the sounds they all hear (voice/alignment.py)."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest

from voice.alignment import Alignment, lag_s
from voice.audio import pink_noise, rms, synthesise
from voice.phone_clock import PhoneClock

RATE = 16000
NOISE = 100.0  # the room's noise at every phone (int16 units)
SLIP_S = 1024 / 44100  # a capture buffer of 1024 frames at 44.1 kHz, as a real Chromium's slipped
CHUNK = 1600


@cache
def said(k: int) -> np.ndarray:
    """Four players' voices (espeak-ng, other words and pitches), unit RMS."""
    text, pitch = [("pas mou le caillou", 30), ("grelotte ça picote", 70), ("sans fin", 50), ("je lance", 90)][k]
    speech = synthesise(text, "fr", pitch=pitch)
    return speech / rms(speech)


def hear(lag_s_: float, near_db: float = 30.0, far_db: float = 16.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """One second at two phones, the same player's words at both: 30 dB over the room at their
    own phone (b), 16 dB at the other (a), reaching a `lag_s_` later."""
    rng = np.random.default_rng(seed)
    a, b = (pink_noise(RATE, rng) * NOISE for _ in range(2))
    words = said(0)[:round(0.7 * RATE)]
    at = round(0.15 * RATE)
    b[at:at + len(words)] += words * NOISE * 10 ** (near_db / 20)
    shifted = at + round(lag_s_ * RATE)
    a[shifted:shifted + len(words)] += words[:len(a) - shifted] * NOISE * 10 ** (far_db / 20)
    return a, b


@pytest.mark.parametrize("lag", [0.0, 0.004, -0.004, SLIP_S, -SLIP_S, 0.045])
def test_two_phones_lag_is_read_to_a_sample_from_one_players_words(lag: float) -> None:
    found = lag_s(*hear(lag))
    assert found is not None
    assert found[0] == pytest.approx(lag, abs=1.5 / RATE)
    assert found[1] > 3.0  # a clear peak


def test_no_lag_is_read_where_a_phone_heard_only_the_room() -> None:
    rng = np.random.default_rng(1)
    a, b = hear(0.01)
    assert lag_s(a, pink_noise(RATE, rng) * NOISE) is None
    assert lag_s(pink_noise(RATE, rng) * NOISE, pink_noise(RATE, rng) * NOISE) is None


class Table:
    """Phones on the host's clock as their chains place them, all hearing every player: each
    player's voice reaches their own phone 0.3 m away and the others 0.5-2 m away. A phone's
    capture slips (`slips`: from host s, by s) and the host takes off what the alignment finds
    (`taken`)."""

    def __init__(self, n: int, seconds: float, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.n, self.seconds = n, seconds
        self.start = 1000.0
        self.slips: dict[int, list[tuple[float, float]]] = {i: [] for i in range(n)}
        self.taken = [0.0] * n
        metres = rng.uniform(0.5, 2.0, size=(n, n))
        np.fill_diagonal(metres, 0.3)
        self.sounds = []  # (who, host s leaving the mouth)
        at = self.start + 0.5
        while at < self.start + seconds - 1.5:
            self.sounds.append((int(rng.integers(n)), at))
            at += rng.uniform(1.0, 2.0)
        self.metres = metres
        self.rng = rng

    def audio(self, phone: int) -> np.ndarray:
        stream = pink_noise(round(self.seconds * RATE), self.rng) * NOISE
        for who, at in self.sounds:
            heard = at + self.metres[who, phone] / 343.0
            moved = sum(by for since, by in self.slips[phone] if since <= heard)
            index = round((heard - self.start + moved) * RATE)
            words = said(who)[:round(0.8 * RATE)]
            loud = 30.0 if who == phone else 16.0
            stream[index:index + len(words)] += words[:max(0, len(stream) - index)] * NOISE * 10 ** (loud / 20)
        return stream

    def run(self, alignment: Alignment) -> list[tuple[float, int, float]]:
        """Every phone's chunks, in turn, as the room takes them; the slips found applied."""
        streams = [self.audio(i) for i in range(self.n)]
        for first in range(0, len(streams[0]) - CHUNK + 1, CHUNK):
            for i in range(self.n):
                def placed(index: float, i: int = i) -> float:
                    return self.start + index / RATE - self.taken[i]
                for seat, seconds in alignment.feed(i, streams[i][first:first + CHUNK], first, placed):
                    self.taken[seat] += seconds
        return list(alignment.slips)


def test_phones_that_keep_time_are_left_alone() -> None:
    for n, seed in ((2, 0), (3, 1), (4, 2)):
        table = Table(n, 40.0, seed)
        assert table.run(Alignment()) == []


@pytest.mark.parametrize("by", [SLIP_S, -SLIP_S])
def test_a_phone_whose_capture_slipped_is_found_and_set_right(by: float) -> None:
    table = Table(3, 40.0, seed=3)
    table.slips[1] = [(table.start + 15.0, by)]
    found = table.run(Alignment())
    assert [seat for _, seat, _ in found] == [1]
    at, _, seconds = found[0]
    assert table.start + 15.0 < at < table.start + 25.0  # within ten seconds of talk
    assert seconds == pytest.approx(by, abs=0.003)
    assert table.taken == pytest.approx([0.0, by, 0.0], abs=0.003)


def test_two_phones_that_slipped_alike_against_two_that_did_not_are_not_set_right_backwards() -> None:
    """Four phones, two of them slipped the same way: two in step against two in step, a tie
    no phone can break. Neither of the phones that kept time is moved (a greedy rule moved one),
    and every phone of the tie is flagged for the chirp (0 s), which measures them all."""
    table = Table(4, 40.0, seed=5)
    table.slips[1] = table.slips[2] = [(table.start + 12.0, SLIP_S)]
    found = table.run(Alignment())
    assert all(seconds == 0.0 or seat in (1, 2) and seconds > 0 for _, seat, seconds in found)
    assert table.taken[0] == table.taken[3] == 0.0
    tie = [seat for at, seat, seconds in found if seconds == 0.0]
    assert sorted(set(tie)) == [0, 1, 2, 3]
    assert min(at for at, seat, _ in found if seat in (0, 3)) < table.start + 25.0  # within ten seconds or so


def test_two_phones_out_of_step_move_no_onset_and_are_both_to_be_checked() -> None:
    """Two phones alone: nobody can tell whose capture slipped, nor a slip from two players saying
    one recording. Both are flagged (0 s: "rechecking", the chirp measures both) and no onset
    moves."""
    table = Table(2, 30.0, seed=4)
    table.slips[0] = [(table.start + 10.0, SLIP_S)]
    found = table.run(Alignment())
    assert sorted(seat for _, seat, _ in found[:2]) == [0, 1]
    assert all(seconds == 0.0 for _, _, seconds in found)
    assert table.taken == [0.0, 0.0]


def test_phones_out_of_step_are_flagged_once_until_the_chirp_measures_them_again() -> None:
    """A flag asks for the chirp; said again at every reading, it would ask again right after the
    chirp from readings made before it. Flagged once, and again only after `measured` (the chirp
    found: here it did not set the slip right, so the pair is still out of step)."""
    table = Table(2, 40.0, seed=4)
    table.slips[0] = [(table.start + 10.0, SLIP_S)]
    alignment = Alignment()
    measured_at = round(25.0 * RATE)
    streams = [table.audio(i) for i in range(2)]
    for first in range(0, len(streams[0]) - CHUNK + 1, CHUNK):
        if first == measured_at - measured_at % CHUNK:
            assert sorted(seat for _, seat, _ in alignment.slips) == [0, 1]  # once each, not at every reading
            alignment.measured(0)
            alignment.measured(1)
        for i in range(2):
            alignment.feed(i, streams[i][first:first + CHUNK], first, lambda index: table.start + index / RATE)
    flags = [(at - table.start, seat) for at, seat, seconds in alignment.slips if not seconds]
    assert len(flags) == len(alignment.slips) == 4
    assert all(at > 25.0 for at, _ in flags[2:])
    assert sorted(seat for _, seat in flags[2:]) == [0, 1]


def test_a_stream_before_its_chirp_is_not_compared() -> None:
    alignment = Alignment()
    a, b = hear(0.03)
    for _ in range(20):  # the same second again and again: a lag of 30 ms each time
        assert alignment.feed(0, a, 0, lambda i: 1000.0 + i / RATE, timed=False) == []
        assert alignment.feed(1, b, 0, lambda i: 1000.0 + i / RATE) == []
    assert alignment.readings == {}


def test_two_phones_hearing_only_their_own_players_saying_one_recording_are_left_alone() -> None:
    """Each phone hears only its own player, and both players say the same recording 30 ms apart,
    again and again (the bench's shout clips are shared by its players): one sound to GCC-PHAT,
    always louder at the same phone. A capture that slipped moves every sound the pair hears,
    louder at either phone; this is not one."""
    rng = np.random.default_rng(6)
    seconds = 20
    a, b = (pink_noise(seconds * RATE, rng) * NOISE for _ in range(2))
    words = said(1)[:round(0.8 * RATE)]
    for start in range(0, seconds - 2, 2):
        at = round((start + 0.3) * RATE)
        a[at:at + len(words)] += words * NOISE * 10 ** (30 / 20)
        b[at + 480:at + 480 + len(words)] += words * NOISE * 10 ** (24 / 20)
    alignment = Alignment()
    for first in range(0, len(a) - CHUNK + 1, CHUNK):
        for seat, stream in ((0, a), (1, b)):
            assert alignment.feed(seat, stream[first:first + CHUNK], first, lambda i: 1000.0 + i / RATE) == []
    lags = [lag for _, lag, _ in alignment.readings[(0, 1)]]
    assert lags and all(lag == pytest.approx(-0.03, abs=0.001) for lag in lags)  # read, and consistent
    assert not alignment.slips


def test_a_slip_taken_off_a_phones_clock_moves_its_onsets_until_a_chirp_measures_it_again() -> None:
    clock = PhoneClock()
    clock.ping(0.0, 5000.0, 5000.0, 0.0)  # phone ms 0 is host s 5
    clock.chunk(0, CHUNK, 100.0)
    clock.input_delay_s, clock.calibration_state = 0.05, "ok"
    before = clock.host_time(800)
    clock.slip(SLIP_S)
    assert clock.host_time(800) == pytest.approx(before - SLIP_S)
    assert clock.calibration_state == "rechecking"  # the host plays the chirp again when it may
    with pytest.raises(ValueError):
        clock.slip(float("nan"))
    clock.reset_stream()
    assert clock.slip_s == 0.0  # a new capture: the old one's slip went with it


def _bench_web() -> Any:
    from doubles import script

    return script("bench_web", "bench_web")


def test_bench_web_draws_captures_slipping_a_buffer_either_way_and_back() -> None:
    """--capture-slips: a buffer (1024 frames at 44.1 kHz) either way, never more than one from
    where the capture began, SLIP_EVERY_S apart on average; the sounds after a slip sit that
    much further on in the phone's samples."""
    bench = _bench_web()
    slips = bench.capture_slips(np.random.default_rng(4), 100.0, 3700.0)
    assert abs(len(slips) - 3600 / bench.SLIP_EVERY_S) < 20
    moved = [m for _, m in slips]
    assert set(np.round(moved, 6)) <= {round(-bench.SLIP_FRAMES, 6), 0.0, round(bench.SLIP_FRAMES, 6)}
    assert all(abs(b - a) == pytest.approx(bench.SLIP_FRAMES) for a, b in zip([0.0, *moved], moved, strict=False))
    assert bench.SLIP_FRAMES / RATE == pytest.approx(SLIP_S)
    phone = bench.make_phone(np.random.default_rng(1), 500.0)
    phone.slips = [(phone.stream_start + 10.0, bench.SLIP_FRAMES)]
    before, after = phone.index_heard_at(phone.stream_start + 5.0), phone.index_heard_at(phone.stream_start + 15.0)
    assert after - before == pytest.approx(10.0 * RATE * (1 + phone.audio_ppm * 1e-6) + bench.SLIP_FRAMES)
    assert bench.parse_args(["--capture-slips"]).capture_slips and not bench.parse_args([]).capture_slips
    assert bench.parse_args(["--no-align"]).no_align and not bench.parse_args([]).no_align
    assert bench.parse_args(["--no-recheck"]).no_recheck and not bench.parse_args([]).no_recheck


def _one_slip_at_the_bench(bench: Any, ko_lexicon: Any, monkeypatch: pytest.MonkeyPatch, phone: int,
                           after_s: float) -> list[tuple[str, np.ndarray]]:
    """The bench's captures made to slip once: `phone`'s (in the order the table draws them),
    a buffer `after_s` into its stream; the shouts: three voices to each of two phrases."""
    calls: list[float] = []

    def one_slip(rng: np.random.Generator, since: float, until: float) -> list[tuple[float, float]]:
        calls.append(since)
        return [(since + after_s, bench.SLIP_FRAMES)] if len(calls) == phone + 1 else []

    monkeypatch.setattr(bench, "capture_slips", one_slip)
    return [(intent, synthesise(ko_lexicon.intents[intent][0], "ko", speed, pitch))
            for intent in ("pas_mou_le_caillou", "non") for speed, pitch in ((165, 40), (185, 70), (150, 55))]


def test_the_bench_sets_right_a_phone_whose_capture_slipped_as_the_room_does(ko_model: Any, ko_lexicon: Any,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A table of three phones hearing each other; the second phone's capture slips a buffer 12 s
    into the game. The bench hands every phone's chunks to the host in the order they arrive,
    and the alignment finds that phone and takes the slip off its onsets. (Three voices to each
    phrase: with two, two players said one recording in most rounds, which paired at the wrong
    lag was once taken for a slip of 40 ms.)"""
    bench = _bench_web()
    shouts = _one_slip_at_the_bench(bench, ko_lexicon, monkeypatch, phone=1, after_s=16.0)
    table = bench.run_table(3, 10, shouts, ko_model, ko_lexicon, np.random.default_rng(8), crosstalk_db=14.0,
                            slips=np.random.default_rng(0))
    assert len(table.slipped) == 1 and table.slipped[0][1] == 1
    found = table.alignment.slips
    assert [seat for _, seat, _ in found] == [1]
    assert found[0][2] == pytest.approx(SLIP_S, abs=0.004)
    figures = bench.figures(table)
    assert figures["slips_found"] == 1 and figures["capture_slips"] == 1


def test_the_bench_plays_the_chirp_again_for_two_phones_out_of_step_and_it_sets_the_slip_right(
        ko_model: Any, ko_lexicon: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two phones hearing each other; the first one's capture slips a buffer 14 s into the game.
    Two phones cannot tell whose it was: both are flagged, and the host plays the chirp again as
    soon as a race closes (no sooner than 30 s after the first), as the room does. Its shouts
    sit a buffer late on the host's clock until then, and in place after it."""
    bench = _bench_web()
    shouts = _one_slip_at_the_bench(bench, ko_lexicon, monkeypatch, phone=0, after_s=14.0)
    table = bench.run_table(2, 13, shouts, ko_model, ko_lexicon, np.random.default_rng(3), crosstalk_db=14.0,
                            slips=np.random.default_rng(0), recheck=np.random.default_rng(1))
    assert len(table.slipped) == 1 and table.slipped[0][1] == 0
    slipped_at = table.slipped[0][0]
    flags = list(table.alignment.slips)
    assert sorted(seat for _, seat, _ in flags) == [0, 1] and all(seconds == 0.0 for _, _, seconds in flags)
    assert len(table.rechecks) == 1
    chirp_at = table.rechecks[0]
    assert slipped_at < max(at for at, _, _ in flags) < chirp_at
    first_shouts = table.heard_by[0][1]
    late = [s.chain_error_ms for s in first_shouts if slipped_at + 1 < s.mouth_s < chirp_at]
    after = [s.chain_error_ms for s in first_shouts if s.mouth_s > chirp_at + 1]
    assert late and after
    assert all(abs(e - SLIP_S * 1000) < 8 for e in late)  # a buffer late until the chirp...
    assert all(abs(e) < 8 for e in after)  # ...and in place after it
    figures = bench.figures(table)
    assert (figures["slips_found"], figures["slips_flagged"], figures["rechecks"]) == (0, 2, 1)
