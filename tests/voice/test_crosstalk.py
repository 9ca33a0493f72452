"""Whose voice it was, when phones at one table hear each other's players (voice/crosstalk.py).

The voices here are voiced bursts shaped like a shout (a pitch and its harmonics, a 10 ms
attack, 0.6 s long) over a room's noise: what the check reads is loudness on the host's clock
and whether a sound has a pitch, not words."""

from __future__ import annotations

import numpy as np
import pytest
from voice_helpers import make_clip

from voice.audio import RATE
from voice.crosstalk import CROWD_WAIT_S, Attribution, Crosstalk, LoudnessTrack, confirmed
from voice.recogniser import Detection, NotUnderstood

NOISE = 100.0  # the room's noise at every phone, int16 units (RMS)


def voice(rng: np.random.Generator, length_s: float = 0.6, dry: bool = False) -> np.ndarray:
    """A shout-like burst: a voiced sound (a pitch of 100-250 Hz and its harmonics up to 7.5 kHz,
    as loud as a noise of its level where the check listens, and a breath 20 dB under it), unit
    RMS, a 10 ms attack and a 50 ms release (`dry`: none, it starts and stops dead)."""
    n = round(length_s * RATE)
    envelope = np.minimum(1.0, np.minimum(np.arange(n) / (0.01 * RATE), (n - np.arange(n)) / (0.05 * RATE)))
    envelope = np.ones(n) if dry else envelope
    pitch, seconds = rng.uniform(100, 250), np.arange(n) / RATE
    harmonics = np.arange(1, int(7500 / pitch) + 1)
    phases = rng.uniform(0, 2 * np.pi, len(harmonics))
    voiced = np.sin(2 * np.pi * pitch * np.outer(seconds, harmonics) + phases).sum(axis=1)
    said = voiced / np.std(voiced) + rng.standard_normal(n) * 0.1
    return said / np.std(said) * envelope


def soft_voice(rng: np.random.Generator, rise_s: float, start: float = 0.0) -> np.ndarray:
    """A shout whose start is soft (a nasal, a whisper): from `start` of its level up to all of
    it over `rise_s`."""
    return voice(rng) * np.minimum(1.0, start + np.arange(round(0.6 * RATE)) / (rise_s * RATE))


def room(rng: np.random.Generator, seconds: float = 3.0) -> np.ndarray:
    return rng.standard_normal(round(seconds * RATE)) * NOISE


def add(stream: np.ndarray, burst: np.ndarray, at_s: float, snr_db: float) -> None:
    at = round(at_s * RATE)
    stream[at:at + len(burst)] += burst * NOISE * 10 ** (snr_db / 20)


def listen(crosstalk: Crosstalk, streams: dict[int, np.ndarray], t0: float = 100.0, chunk: int = 1600) -> None:
    """Feed every stream in 100 ms chunks; sample i reaches every phone at host time t0 + i/RATE."""
    for seat, samples in streams.items():
        track = crosstalk.track(seat)
        for first in range(0, len(samples), chunk):
            track.feed(samples[first:first + chunk], first, lambda i: t0 + i / RATE)


def listen_live(streams: dict[int, np.ndarray], t0: float = 100.0, chunk: int = 1600) -> Crosstalk:
    """As the room hears them: the streams' chunks in the order they come (each 100 ms, every
    phone's in turn), through an Attribution, which reads the margins as they come."""
    attribution: Attribution[Detection] = Attribution()
    for first in range(0, max(len(s) for s in streams.values()), chunk):
        for seat, samples in streams.items():
            attribution.feed(seat, samples[first:first + chunk], first, lambda i: t0 + i / RATE)
    return attribution.crosstalk


def table(ana_at: float | None, bob_at: float | None, ana_db: float = 22.0, bob_db: float = 25.0,
          under_db: float = 14.0, seed: int = 1) -> Crosstalk:
    """Ana's phone (seat 0) and Bob's (seat 1): each player loud at their own phone and
    `under_db` quieter at the other's; None: that player stays quiet."""
    rng = np.random.default_rng(seed)
    ana, bob = room(rng), room(rng)
    if ana_at is not None:
        said = voice(rng)
        add(ana, said, ana_at, ana_db)
        add(bob, said, ana_at + 0.003, ana_db - under_db)  # a metre further: 3 ms later
    if bob_at is not None:
        said = voice(rng)
        add(bob, said, bob_at, bob_db)
        add(ana, said, bob_at + 0.003, bob_db - under_db)
    crosstalk = Crosstalk()
    listen(crosstalk, {0: ana, 1: bob})
    return crosstalk


def test_a_track_places_a_sound_on_the_host_clock_over_its_floor() -> None:
    rng = np.random.default_rng(3)
    samples = room(rng)
    add(samples, voice(rng), 1.5, 20.0)
    track = LoudnessTrack()
    for first in range(0, len(samples), 1000):  # chunks that are not whole frames
        track.feed(samples[first:first + 1000], first, lambda i: 50.0 + i / RATE)
    times, level = track.window(50.0, 53.0)
    assert np.all(np.diff(times) > 0) and np.allclose(np.diff(times), 0.005, atol=1e-6)
    assert abs(float(np.median(level[times < 51.4]))) < 2.0  # the noise sits on the floor
    loud = times[level > 10.0]
    assert loud[0] == pytest.approx(51.5, abs=0.01) and loud[-1] == pytest.approx(52.1, abs=0.02)
    assert track.until == pytest.approx(53.0, abs=0.01)


def test_a_track_tells_a_voice_from_a_sound_with_no_pitch_whatever_its_chunks() -> None:
    """A voice (a pitch) and then a handling noise as loud: the voice's frames are voiced and a
    voice's, the noise's neither; fed in chunks that are not whole frames or in one piece, the
    track reads the same."""
    rng = np.random.default_rng(5)
    samples = room(rng, 4.0)
    add(samples, voice(rng), 1.0, 25.0)
    add(samples, rng.standard_normal(round(0.6 * RATE)), 2.5, 25.0)
    pieces, whole = LoudnessTrack(), LoudnessTrack()
    for first in range(0, len(samples), 1000):
        pieces.feed(samples[first:first + 1000], first, lambda i: i / RATE)
    whole.feed(samples, 0, lambda i: i / RATE)
    times, level, voiced, voice_ = pieces.voices(0.0, 4.0)
    whole_times, _, whole_voiced, whole_voice = whole.voices(0.0, 4.0)  # (its floor, read once, differs)
    assert np.allclose(times, whole_times, atol=1e-9)
    assert np.array_equal(voiced, whole_voiced) and np.array_equal(voice_, whole_voice)
    said, noise = (times > 1.05) & (times < 1.55), (times > 2.55) & (times < 3.05)
    assert level[said].min() > 20.0 and level[noise].min() > 20.0  # both loud
    assert voiced[said].mean() > 0.9 and voice_[said].all()
    assert not voiced[noise].any() and not voice_[noise].any()
    assert not voice_[times < 0.9].any()  # the room


def test_a_track_forgets_what_is_older_than_it_keeps() -> None:
    track = LoudnessTrack(keep_s=1.0)
    samples = room(np.random.default_rng(4), 4.0)
    for first in range(0, len(samples), 1600):
        track.feed(samples[first:first + 1600], first, lambda i: i / RATE)
    times, _ = track.window(0.0, 4.0)
    assert times[0] > 2.8 and times[-1] == pytest.approx(4.0, abs=0.01)


def test_the_first_voice_keeps_the_recognisers_onset_to_the_sample() -> None:
    crosstalk = table(ana_at=1.05, bob_at=1.0)
    onset = 101.0 - 0.004  # the recogniser's own reading of Bob's onset, a little early
    assert crosstalk.own_voice(1, onset, 101.6) == onset


def test_a_voice_heard_first_from_another_player_moves_the_onset_to_the_players_own() -> None:
    """Bob shouts 50 ms before Ana: Ana's phone hears him first, and its recogniser dates her
    shout at his onset. Her own voice begins 50 ms later, and that is her onset."""
    crosstalk = table(ana_at=1.05, bob_at=1.0)
    onset = crosstalk.own_voice(0, 101.0, 101.65)
    assert onset is not None and onset == pytest.approx(101.05, abs=0.01)
    assert onset > 101.0 + 0.03  # Bob, who was first, stays first


@pytest.mark.parametrize("gap_s", [0.03, 0.1])
def test_the_later_player_is_found_later_whatever_the_gap(gap_s: float) -> None:
    crosstalk = table(ana_at=1.0 + gap_s, bob_at=1.0, ana_db=21.0, bob_db=28.0)  # a quiet Ana, a loud Bob
    onset = crosstalk.own_voice(0, 101.0, 101.0 + gap_s + 0.6)
    assert onset is not None and onset == pytest.approx(101.0 + gap_s, abs=0.015)


def test_another_players_voice_alone_is_nobodys_utterance_at_this_phone() -> None:
    """Ana says nothing; her phone hears Bob 14 dB under his own phone: not hers."""
    crosstalk = table(ana_at=None, bob_at=1.0)
    assert crosstalk.own_voice(0, 101.0, 101.6) is None
    assert crosstalk.own_voice(1, 101.0, 101.6) == 101.0


def test_a_phone_alone_keeps_every_utterance_as_it_is() -> None:
    rng = np.random.default_rng(5)
    samples = room(rng)
    add(samples, voice(rng), 1.0, 6.0)  # even a soft one
    crosstalk = Crosstalk()
    listen(crosstalk, {2: samples})
    assert crosstalk.own_voice(2, 101.0, 101.6) == 101.0
    assert Crosstalk().own_voice(0, 5.0, 6.0) == 5.0  # no stream at all: nothing to compare


def test_the_margin_decides_between_a_quiet_player_and_crosstalk() -> None:
    """A player heard only 4 dB under their own phone (sitting between two phones) is taken
    for the phone's own player when the table's margin is set under that."""
    crosstalk = table(ana_at=None, bob_at=1.0, under_db=4.0)
    assert crosstalk.own_voice(0, 101.0, 101.6) is not None  # the default margin (12 dB) takes it
    crosstalk.under_db = 3.0
    assert crosstalk.own_voice(0, 101.0, 101.6) is None


def detection(onset: float, end: float, crowded: bool = False, intent: str = "pas_mou_le_caillou") -> Detection:
    return Detection(intent, "pas mou le caillou", onset, end, 0.9, end + 0.3, crowded=crowded)


def test_attribution_waits_for_the_other_phones_then_settles_each_utterance() -> None:
    rng = np.random.default_rng(6)
    ana, bob = room(rng), room(rng)
    said = voice(rng)
    add(bob, said, 1.0, 25.0)
    add(ana, said, 1.003, 11.0)
    attribution: Attribution[Detection | NotUnderstood] = Attribution()
    clock = lambda i: 100.0 + i / RATE  # noqa: E731 - one line's clock
    for first in range(0, 2 * RATE, 1600):  # Ana's phone has sent 2 s, Bob's only 1.2 s
        attribution.feed(0, ana[first:first + 1600], first, clock)
        if first < 1.2 * RATE:
            attribution.feed(1, bob[first:first + 1600], first, clock)
    attribution.hold(0, detection(101.0, 101.6), now=5.0)  # Ana's phone heard Bob's phrase
    attribution.hold(0, NotUnderstood(101.8, 101.9, 102.0, "close call"), now=5.0)
    assert attribution.settled(5.1, streaming=[0, 1]) == []  # Bob's audio of that moment is not in yet
    for first in range(round(1.2 * RATE) + 400, 2 * RATE, 1600):
        attribution.feed(1, bob[first:first + 1600], first, clock)
    attribution.hold(1, detection(101.0, 101.6), now=5.2)
    settled = attribution.settled(5.2, streaming=[0, 1])
    assert [(seat, type(u).__name__, u.onset_s) for seat, u in settled] == [
        (0, "NotUnderstood", 101.8), (1, "Detection", 101.0)]  # Ana's phrase was Bob's voice: dropped
    assert attribution.dropped == 1


def test_attribution_does_not_wait_past_its_limit_for_a_silent_stream() -> None:
    attribution: Attribution[Detection] = Attribution(wait_s=0.4)
    rng = np.random.default_rng(7)
    samples = room(rng)
    for first in range(0, len(samples), 1600):
        attribution.feed(0, samples[first:first + 1600], first, lambda i: i / RATE)
    attribution.feed(1, samples[:1600], 0, lambda i: i / RATE)  # seat 1's stream stalled at 0.1 s
    attribution.hold(0, detection(1.0, 1.5), now=10.0)
    attribution.hold(0, detection(2.0, 2.5), now=10.1)
    assert attribution.settled(10.3, streaming=[0, 1]) == []
    assert [u.onset_s for _, u in attribution.settled(10.45, streaming=[0, 1])] == [1.0]  # waited long enough
    assert [u.onset_s for _, u in attribution.settled(10.55, streaming=[0, 1])] == [2.0]
    attribution.hold(0, detection(2.6, 2.9), now=11.0)
    assert len(attribution.settled(11.0, streaming=[0])) == 1  # seat 1 no longer streams: no wait


def test_a_phone_that_hardly_hears_the_others_keeps_its_onsets_once_that_shows() -> None:
    """Headset microphones, or phones far apart: Ana's phone never hears Bob. Once Bob has
    spoken alone (0.5 s in), the check knows it, and Ana's own onset 30 ms after Bob's stands
    though her voice starts soft (the table's margin, 12 dB, would give it to Bob)."""
    rng = np.random.default_rng(8)
    ana, bob = room(rng, 4.0), room(rng, 4.0)
    add(bob, voice(rng), 0.5, 30.0)  # Bob alone
    add(bob, voice(rng), 2.0, 30.0)
    soft = soft_voice(rng, 0.06)
    add(ana, soft, 2.03, 20.0)
    heard = Crosstalk()
    listen(heard, {0: ana, 1: bob})
    assert heard.margin_db(0, 1, 102.6) >= 24.0
    assert heard.own_voice(0, 102.03, 102.6) == 102.03
    # At a table (Bob 14 dB under at Ana's phone) the margin stays the table's.
    assert table(ana_at=None, bob_at=1.0).margin_db(0, 1, 101.6) == Crosstalk().under_db


def test_a_phone_that_hears_only_its_player_keeps_its_first_onset_to_the_sample() -> None:
    """Phones apart (or headsets), and no past yet to show it: Bob shouts 50 ms before Ana,
    whose shout starts soft. The table's margin says Ana's phone hears Bob 12 dB under his own
    phone, loud enough to explain her soft start; but her phone heard nothing of him before
    she began, so it does not hear him, and her onset stands."""
    rng = np.random.default_rng(9)
    ana, bob = room(rng), room(rng)
    add(bob, voice(rng), 1.0, 23.0)  # not loud enough for the margin to learn from
    soft = soft_voice(rng, 0.1, start=0.05)
    add(ana, soft, 1.05, 18.0)
    heard = Crosstalk()
    listen(heard, {0: ana, 1: bob})
    assert heard.margin_db(0, 1, 101.6) == heard.under_db  # nothing has shown it yet
    assert heard.own_voice(0, 101.05, 101.65) == 101.05


def test_the_hosts_own_sound_shows_nothing_of_how_well_a_phone_hears_a_player() -> None:
    """The chirp is loud at Bob's phone (near the laptop) and faint at Ana's: were it a
    player's voice, Ana's phone would seem not to hear Bob, and his crosstalk would go to her."""
    rng = np.random.default_rng(10)
    ana, bob = room(rng), room(rng)
    chirp = voice(rng, 0.3)
    add(bob, chirp, 0.5, 35.0)
    add(ana, chirp, 0.5, 5.0)
    played = Crosstalk()
    listen(played, {0: ana, 1: bob})
    assert played.margin_db(0, 1, 101.0) >= 22.0  # unmasked: taken for a player Ana's phone cannot hear
    masked = Crosstalk()
    masked.mask_playback(100.4, 101.0)
    listen(masked, {0: ana, 1: bob})
    assert masked.margin_db(0, 1, 101.0) == masked.under_db


def test_a_phone_found_not_to_hear_a_player_stays_so_while_both_speak_at_once() -> None:
    """Bob spoke alone once; after that a quiet Ana and a loud Bob always shout together (a
    race each time), so for 15 s her phone never hears him alone. Where her own voice covers
    his, the streams show less than what they showed before, which is kept."""
    rng = np.random.default_rng(11)
    ana, bob = room(rng, 20.0), room(rng, 20.0)
    add(bob, voice(rng), 0.5, 38.0)  # Bob alone
    for at in np.arange(3.0, 19.0, 3.0):
        add(ana, voice(rng, 0.7), at - 0.03, 20.0)  # Ana a little first, and longer
        add(bob, voice(rng), at, 38.0)
    heard = Crosstalk(keep_s=30.0)
    listen(heard, {0: ana, 1: bob})
    margins = [heard.margin_db(0, 1, 100.0 + until) for until in np.arange(1.5, 19.7, 0.5)]  # as time goes
    assert min(margins) >= 22.0


def test_a_phone_found_not_to_hear_a_player_stays_so_while_its_own_player_covers_them() -> None:
    """As above, but Ana is as loud as Bob and her shouts cover his from start to end (a table
    where everybody shouts every round): where her phone hears her, it shows nothing of how
    well it hears him, however many such frames there are. At a table where her phone does
    hear him (17 dB under: a wide margin), it is never taken for one that does not."""
    for bob_under_db, apart in ((None, True), (17.0, False)):
        rng = np.random.default_rng(14)
        ana, bob = room(rng, 20.0), room(rng, 20.0)
        shouts = [(0.5, voice(rng))] + [(at, voice(rng)) for at in np.arange(3.0, 19.0, 3.0)]  # Bob alone first
        for at, said in shouts:
            add(bob, said, at, 34.0)
            if bob_under_db is not None:
                add(ana, said, at + 0.003, 34.0 - bob_under_db)
            if at > 1.0:
                add(ana, voice(rng, 0.8), at - 0.1, 34.0)
        heard = Crosstalk(keep_s=30.0)
        listen(heard, {0: ana, 1: bob})
        margins = [heard.margin_db(0, 1, 100.0 + until) for until in np.arange(1.5, 19.7, 0.5)]
        assert (min(margins) >= 22.0) if apart else (max(margins) < 22.0)


def test_a_soft_start_under_voices_the_phone_did_not_hear_keeps_its_onset() -> None:
    """The first round, no past to learn from: Bob shouts loud 10 ms before Ana (within the
    clocks' slack: nothing before her onset shows what her phone hears), and her shout starts
    soft. At the table's margin his voice would reach her phone 18 dB over its floor, yet her
    phone heard under 10 dB there: it does not hear him that well, and her onset stands. (His
    shout is short: too little of it for the margin to learn from.) At a table where her phone
    does hear him (14 dB under), her soft start is his voice, and her onset moves."""
    rng = np.random.default_rng(12)
    ana, bob = room(rng), room(rng)
    shout = voice(rng, 0.18)
    add(bob, shout, 1.01, 30.0)
    soft = soft_voice(rng, 0.08, start=0.02)
    add(ana, soft, 1.02, 22.0)
    apart = Crosstalk()
    listen(apart, {0: ana, 1: bob})
    assert apart.margin_db(0, 1, 101.6) == apart.under_db  # nothing has shown it yet
    assert apart.own_voice(0, 101.02, 101.62) == 101.02
    add(ana, shout, 1.013, 30.0 - 14.0)  # now Ana's phone hears Bob
    together = Crosstalk()
    listen(together, {0: ana, 1: bob})
    moved = together.own_voice(0, 101.02, 101.62)
    assert moved is not None and moved > 101.04


def test_players_a_phone_does_not_hear_do_not_add_up_to_a_voice() -> None:
    """Eight phones, each hearing only its own player (headsets, or phones far apart), as each
    player's shout alone showed: each pair's margin (27 dB) is then only a bound, what the
    phone's own noise let show. In a race the seven others shout louder, 10 ms after Ana, whose
    shout starts soft: seven voices at that bound would add up to one 13 dB over her phone's
    floor, enough to explain her start; players her phone does not hear add nothing."""
    rng = np.random.default_rng(13)
    streams = {seat: room(rng, 5.0) for seat in range(8)}
    for seat in range(1, 8):
        add(streams[seat], voice(rng), 0.5 + 0.4 * seat, 26.0)  # each alone once
        add(streams[seat], voice(rng), 4.01, 34.0)  # then all together, just after Ana
    soft = soft_voice(rng, 0.08, start=0.02)
    add(streams[0], soft, 4.0, 22.0)
    heard = listen_live(streams)  # the margins read as the streams come, as the room does
    assert all(heard.margin_db(0, other, 104.6) >= 22.0 for other in range(1, 8))
    assert heard.own_voice(0, 104.0, 104.6) == 104.0


def test_a_stream_placed_before_its_input_delay_is_known_shows_nothing_of_the_margin() -> None:
    """Ana's phone hears Bob 14 dB under. Bob talks (ten short syllables) before the chirp
    measured the input delay of Ana's phone, so her stream sits 80 ms late on the host's clock:
    his syllables then fall in the pauses of what her phone heard, and show a margin of 22 dB or
    more (a phone that does not hear him: his voice let through as hers). Until a stream is
    timed, nothing is read from it."""
    rng = np.random.default_rng(0)
    ana, bob = room(rng, 4.0), room(rng, 4.0)
    pause = np.zeros(round(0.06 * RATE))
    said = np.concatenate([part for _ in range(10) for part in (voice(rng, 0.08) * (0.5 + rng.random()), pause)])
    add(bob, said, 0.5, 30.0)
    add(ana, said, 0.503, 30.0 - 14.0)
    margins = []
    for ana_timed in (True, False):  # True: as if the misplaced stream were timed (the code before)
        crosstalk = Crosstalk()
        for seat, samples, late_s, timed in ((0, ana, 0.08, ana_timed), (1, bob, 0.0, True)):
            track = crosstalk.track(seat)

            def clock(index: float, late: float = late_s) -> float:
                return 100.0 + late + index / RATE

            for first in range(0, len(samples), 1600):
                track.feed(samples[first:first + 1600], first, clock, timed)
        margins.append(crosstalk.margin_db(0, 1, 102.5))
    assert margins[0] >= 22.0
    assert margins[1] == Crosstalk().under_db
    aligned = Crosstalk()
    listen(aligned, {0: ana, 1: bob})
    assert aligned.margin_db(0, 1, 102.5) == aligned.under_db


@pytest.mark.parametrize(("ana_late_s", "bob_late_s", "timed"), [
    (0.015, 0.0, True), (0.0232, 0.0, True), (-0.0232, 0.0, True), (-0.03, 0.0, True),  # timed, a few ms off
    (0.02, 0.0, False), (0.05, 0.0, False), (0.1, 0.0, False),  # Ana's phone not calibrated (its chirp failed)
    (0.0, 0.05, False), (0.0, 0.1, False),  # Bob's phone not calibrated
])
def test_a_stream_a_few_tens_of_ms_off_never_takes_a_neighbours_shout_for_its_silent_player(
        ana_late_s: float, bob_late_s: float, timed: bool) -> None:
    """Bob shouts alone; Ana, silent, is heard by nobody, and her phone hears Bob 14 dB under his.
    One stream sits off on the host's clock: timed, by a capture slip (a 1024-frame buffer at
    44.1 kHz: 23.2 ms) or the chain's error, or not yet calibrated, by its input delay. Ana's
    phone late by 15 ms or more heard nothing of Bob's first frames where his voice, as it was
    taken to reach her phone, already sounded: read as "her phone hears less than that", his
    voice was lowered 10 dB and given to her. Bob's phone late, the start of his voice at hers
    came before his own stream showed it, and stood as hers. A silent player is never credited
    with a shout; Bob's own stays his."""
    rng = np.random.default_rng(1)
    ana, bob = room(rng, 4.0), room(rng, 4.0)
    said = voice(rng)
    add(bob, said, 2.0, 25.0)
    add(ana, said, 2.003, 25.0 - 14.0)
    crosstalk = Crosstalk()
    for first in range(0, 4 * RATE, 1600):  # as the room hears them: margins read as they come
        for seat, samples, late_s in ((0, ana, ana_late_s), (1, bob, bob_late_s)):
            def clock(index: float, late: float = late_s) -> float:
                return 100.0 + late + index / RATE

            crosstalk.track(seat).feed(samples[first:first + 1600], first, clock, timed or not late_s)
        crosstalk.learn()
    assert crosstalk.own_voice(0, 102.003 + ana_late_s, 102.603 + ana_late_s) is None
    assert crosstalk.own_voice(1, 102.0 + bob_late_s, 102.6 + bob_late_s) == 102.0 + bob_late_s


def bob_says_a_few_words() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ana's and Bob's phones' streams (4 s) as Bob says his few words loud (30 dB at his phone,
    six syllables) and Ana's phone hears them 14 dB under, 3 ms later: 16 dB over its floor, a
    voice near a phone by level alone. Also what he said."""
    rng = np.random.default_rng(6)
    ana, bob = room(rng, 4.0), room(rng, 4.0)
    said = np.concatenate([voice(rng, 0.15) * (0.5 + rng.random()) for _ in range(6)])
    add(bob, said, 0.5, 30.0)
    add(ana, said, 0.503, 30.0 - 14.0)
    return ana, bob, said


def test_the_microphone_test_hears_the_phones_own_player_not_a_loud_neighbour() -> None:
    """Bob says his few words loud, and Ana's phone hears them 14 dB under
    (`bob_says_a_few_words`). Only Bob's test passes; Ana's does once she speaks."""
    ana, bob, said = bob_says_a_few_words()
    heard = Crosstalk()
    listen(heard, {0: ana, 1: bob})
    assert heard.voiced_s(1, 100.0) >= 0.4
    assert heard.voiced_s(0, 100.0) < 0.1
    add(ana, said, 2.5, 22.0)  # now Ana speaks
    heard = Crosstalk()
    listen(heard, {0: ana, 1: bob})
    assert heard.voiced_s(0, 100.0) >= 0.4


def test_the_microphone_test_reads_the_margins_as_learnt_not_anew_at_every_look(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The room looks at every waiting seat's test ten times a second. Reading each pair's
    margin anew from MARGIN_S of audio at every look cost twice the look itself
    (scripts/bench_crosstalk.py); the test uses the margins `learn` keeps (read at most every
    LEARN_EVERY_S), and still tells Bob's voice from Ana's."""
    ana, bob, _said = bob_says_a_few_words()
    heard = Crosstalk()
    listen(heard, {0: ana, 1: bob})
    heard.learn()
    reads: list[tuple[int, int, float]] = []
    read = heard.margin_db

    def counted(seat: int, other: int, until: float) -> float:
        reads.append((seat, other, until))
        return read(seat, other, until)

    monkeypatch.setattr(heard, "margin_db", counted)
    looks = [heard.voiced_s(seat, 100.0) for _ in range(10) for seat in (0, 1)]
    assert reads == []
    assert looks[1] >= 0.4 and looks[0] < 0.1


def test_the_rooms_looks_at_a_microphone_test_add_up_to_the_whole_and_wait_for_the_others_audio() -> None:
    """The room looks at a waiting test ten times a second, each look reading only the audio
    come since the last (`Attribution.voiced_between`): the looks add up to what one look at
    all of it finds, Bob's words passing his test and not Ana's. A look reads no further than
    every streaming phone's audio has come: Bob's phone 1 s behind, Ana's look stops where his
    stream is (his voice at her phone, at those times, is not known yet)."""
    ana, bob, _said = bob_says_a_few_words()
    attribution: Attribution[Detection] = Attribution()
    looked = {0: (0.0, 100.0), 1: (0.0, 100.0)}  # seat: (voice added up, looked up to)
    for first in range(0, len(ana), 1600):
        for seat, samples in ((0, ana), (1, bob)):
            attribution.feed(seat, samples[first:first + 1600], first, lambda i: 100.0 + i / RATE)
        for seat, (voiced, since) in looked.items():
            more, until = attribution.voiced_between(seat, since, [0, 1])
            looked[seat] = (voiced + more, until)
    whole = {seat: attribution.crosstalk.voiced_s(seat, 100.0, looked[seat][1]) for seat in (0, 1)}
    assert looked[1][0] >= 0.4 and looked[0][0] < 0.1
    assert all(abs(looked[seat][0] - whole[seat]) <= 0.02 for seat in (0, 1)), (looked, whole)
    assert looked[0][1] > 103.9

    late: Attribution[Detection] = Attribution()
    for first in range(0, len(ana), 1600):
        late.feed(0, ana[first:first + 1600], first, lambda i: 100.0 + i / RATE)
        if first >= 16_000:  # Bob's stream 1 s behind
            late.feed(1, bob[first - 16_000:first - 14_400], first - 16_000, lambda i: 100.0 + i / RATE)
    _, until = late.voiced_between(0, 100.0, [0, 1])
    assert until <= late.crosstalk.tracks[1].until - 2 * late.crosstalk.slack_s < late.crosstalk.tracks[0].until - 0.9
    assert late.voiced_between(0, 100.0, [0])[1] > until + 0.9  # Bob's phone offline: not waited for


@pytest.mark.parametrize("under_db", [None, 14.0])
def test_what_a_player_said_alone_long_before_the_race_still_shows_how_well_each_phone_hears_them(
        under_db: float | None) -> None:
    """Eight phones; each player says a word alone when their phone joins (the microphone
    test), 20 s before the first race: longer ago than the MARGIN_S a judged utterance looks
    back. In the race the seven others shout together 10 ms after Ana, whose shout starts soft.
    Where each phone hears only its own player, what the tests showed is kept, and Ana's shout
    is hers (judged from the race alone it went to nobody). Where the phones hear each other
    (14 dB under), the tests keep the table's margin, and a quiet Ana's phone hearing the
    others' shouts gives her none."""
    rng = np.random.default_rng(14)
    streams = {seat: room(rng, 24.0) for seat in range(8)}

    def say(seat: int, burst: np.ndarray, at_s: float, snr_db: float) -> None:
        add(streams[seat], burst, at_s, snr_db)
        if under_db is not None:
            for other in set(streams) - {seat}:
                add(streams[other], burst, at_s + 0.003, snr_db - under_db)

    for seat in streams:
        say(seat, voice(rng), 0.5 + 0.8 * seat, 26.0)  # the microphone tests, one after another
    for seat in range(1, 8):
        say(seat, voice(rng), 22.01, 34.0)
    if under_db is None:
        add(streams[0], soft_voice(rng, 0.08, start=0.02), 22.0, 22.0)
    learned = listen_live(streams)
    if under_db is None:
        assert all(learned.margin_db(0, other, 122.6) >= 22.0 for other in range(1, 8))
        assert learned.own_voice(0, 122.0, 122.6) == 122.0
        judged_then = Crosstalk()  # the margins read only when Ana's shout is judged
        listen(judged_then, streams)
        assert judged_then.own_voice(0, 122.0, 122.6) is None
    else:
        assert all(learned.margin_db(0, other, 122.6) == learned.under_db for other in range(1, 8))
        assert learned.own_voice(0, 122.013, 122.6) is None


def shout_at(onset_s: float, end_s: float, rise_s: float | None) -> Detection:
    return Detection("pas_mou_le_caillou", "pas mou le caillou", onset_s, end_s, 0.9, end_s + 0.2, rise_s)


def test_a_soft_start_stands_only_where_no_other_voice_could_make_it() -> None:
    """The recogniser traces a shout's onset back from its rise (4 dB over the floor) to a soft
    start a few dB over it (an "h"). At Ana's phone, Bob began 50 ms before her: the faint sound
    before her rise is his voice, and her shout keeps its rise. Alone, the soft start stands."""
    attribution: Attribution[Detection] = Attribution(table(ana_at=1.05, bob_at=1.0))
    attribution.hold(0, shout_at(101.0, 101.65, rise_s=101.05), now=102.0)
    attribution.hold(1, shout_at(100.96, 101.6, rise_s=101.0), now=102.0)  # nobody before Bob
    (ana, ana_shout), (bob, bob_shout) = attribution.settled(now=103.0, streaming=[0, 1])
    assert (ana, bob) == (0, 1)
    assert ana_shout.onset_s == 101.05 and bob_shout.onset_s == 100.96
    alone = table(ana_at=1.0, bob_at=None)
    assert alone.placed(0, 100.95, 101.6, rise_s=101.0) == 100.95
    assert alone.placed(0, 100.95, 101.6) == alone.own_voice(0, 100.95, 101.6)


def test_a_crowded_reading_is_given_once_another_phone_heard_the_phrase_then() -> None:
    # No audio: the loudness check has nothing to say, only the confirmation decides.
    attribution: Attribution[Detection] = Attribution()
    assert not attribution.holding()
    attribution.hold(0, detection(1.0, 1.6, crowded=True), now=5.0)
    assert attribution.settled(5.1, streaming=[0, 1]) == []  # waits for the other phones' recognisers
    assert attribution.holding()  # the game's race waits on for it (voice/session.py)
    attribution.hold(1, detection(1.05, 1.7), now=5.3)  # Bob's phone heard it plainly
    settled = attribution.settled(5.3, streaming=[0, 1])
    assert [(seat, u.onset_s, u.crowded) for seat, u in settled] == [(0, 1.0, True), (1, 1.05, False)]
    assert attribution.unconfirmed == 0 and not attribution.holding()


def test_a_crowded_reading_nobody_else_bears_out_is_nobodys_after_its_wait() -> None:
    attribution: Attribution[Detection] = Attribution()
    # Not borne out by: its own phone's plain reading, another intent, a reading 2 s away,
    # another crowded reading.
    attribution.hold(0, detection(1.0, 1.6, crowded=True), now=5.0)
    attribution.hold(0, detection(2.3, 2.8), now=5.0)
    attribution.hold(1, detection(1.0, 1.6, intent="grelotte_ca_picote"), now=5.0)
    attribution.hold(2, detection(3.1, 3.6), now=5.0)
    attribution.hold(3, detection(1.1, 1.6, crowded=True), now=5.0)
    early = attribution.settled(5.0 + CROWD_WAIT_S / 2, streaming=[0, 1, 2, 3])
    assert [(seat, u.onset_s) for seat, u in early] == [(1, 1.0), (2, 3.1)]  # seat 0's plain one waits behind it
    late = attribution.settled(5.0 + CROWD_WAIT_S + 0.01, streaming=[0, 1, 2, 3])
    assert [(seat, u.onset_s) for seat, u in late] == [(0, 2.3)]
    assert attribution.unconfirmed == 2


def test_what_bears_out_a_crowded_reading() -> None:
    assert confirmed("oui", 10.0, [("oui", 10.9)]) and confirmed("oui", 10.0, [("non", 10.0), ("oui", 9.1)])
    assert not confirmed("oui", 10.0, []) and not confirmed("oui", 10.0, [("non", 10.0), ("oui", 11.2)])


def test_a_crowded_reading_with_no_other_stream_to_bear_it_out_is_dropped_at_once() -> None:
    attribution: Attribution[Detection] = Attribution()
    attribution.hold(0, detection(1.0, 1.6, crowded=True), now=5.0)
    attribution.hold(0, detection(2.3, 2.8), now=5.0)
    assert [(seat, u.onset_s) for seat, u in attribution.settled(5.0, streaming=[0])] == [(0, 2.3)]
    assert attribution.unconfirmed == 1


# ---------------------------------------------------------------- a quiet room

QUIET_NOISE = 3.0  # a quiet living room at every phone, int16 units (RMS): voices 50-60 dB over it


def reverberant(rng: np.random.Generator, burst: np.ndarray, rt60_s: float) -> np.ndarray:
    """A burst as a phone a metre or two away hears it: the direct sound, then the room's
    diffuse tail (as loud as the direct sound in sum), dying away 60 dB in rt60_s."""
    n = round(rt60_s * RATE)
    tail = rng.standard_normal(n) * 10 ** (-3 * np.arange(n) / n)
    response = np.concatenate([[1.0], tail / np.sqrt(np.sum(tail**2))])
    return np.convolve(burst, response)


def test_in_a_quiet_room_another_players_reverberant_tail_is_not_this_phones_player() -> None:
    """Bob shouts 55 dB over a quiet room at his phone; Ana, silent, 14 dB under, through the
    room: when Bob stops, his voice dies away at Ana's phone no faster than the room's tail
    (RT60 0.6 s), while his own phone hears it stop. That tail, 30-40 dB over her floor, was
    taken for Ana's own voice (the utterance given to her, from its end)."""
    rng = np.random.default_rng(21)
    ana, bob = (rng.standard_normal(3 * RATE) * QUIET_NOISE for _ in range(2))
    said = voice(rng)
    at = RATE
    bob[at:at + len(said)] += said * QUIET_NOISE * 10 ** (55 / 20)
    far = reverberant(rng, said, 0.6)[:len(ana) - at - 48] * QUIET_NOISE * 10 ** ((55 - 14) / 20)
    ana[at + 48:at + 48 + len(far)] += far  # a metre further: 3 ms later
    crosstalk = Crosstalk()
    listen(crosstalk, {0: ana, 1: bob})
    assert crosstalk.own_voice(1, 101.0, 101.6) == 101.0
    assert crosstalk.own_voice(0, 101.0, 101.75) is None


def test_in_a_quiet_room_a_players_faint_sounds_do_not_make_a_phone_seem_not_to_hear_them() -> None:
    """Bob talks 55 dB over a quiet room at his phone, his vowels reaching Ana's 14 dB under,
    and his faint sounds (a consonant, 27 dB under his vowels) 26 dB under, more directional
    and more absorbed on the way. Those faint sounds are still 28 dB over Bob's floor, loud
    enough to read a margin from, and they showed one of 26 dB: Ana's phone taken for one that
    hardly hears Bob (a headset's), and every word of his at her phone then hers."""
    rng = np.random.default_rng(22)
    ana, bob = (rng.standard_normal(12 * RATE) * QUIET_NOISE for _ in range(2))
    for k in range(8):  # eight words: a vowel (0.4 s) then a consonant (0.4 s)
        at = round((1.0 + 1.2 * k) * RATE)
        vowel, consonant = voice(rng, 0.4), voice(rng, 0.4)
        bob[at:at + len(vowel)] += vowel * QUIET_NOISE * 10 ** (55 / 20)
        ana[at:at + len(vowel)] += vowel * QUIET_NOISE * 10 ** ((55 - 14) / 20)
        at += len(vowel)
        bob[at:at + len(consonant)] += consonant * QUIET_NOISE * 10 ** (28 / 20)
        ana[at:at + len(consonant)] += consonant * QUIET_NOISE * 10 ** ((28 - 26) / 20)
    crosstalk = Crosstalk()
    listen(crosstalk, {0: ana, 1: bob})
    crosstalk.learn()
    assert crosstalk.margin_db(0, 1, 112.0) == crosstalk.under_db


@pytest.mark.parametrize("bob_under_db", [14.0, None])
def test_a_sound_only_the_other_phone_hears_does_not_make_this_phone_seem_not_to_hear_its_player(
        bob_under_db: float | None) -> None:
    """In a quiet room Bob says six words, 45 dB over his phone's floor, and a second after each
    a sound only his phone hears (his thumb on its screen, his bag beside it: 30 dB over its
    floor, nothing at Ana's). Ana's phone hears Bob 14 dB under: each of those sounds read as
    a frame of Bob's voice it did not hear, and it was taken for a phone that hardly hears him
    (a margin of 31 dB), so Bob's next word at Ana's phone was given to her. Where Ana's phone
    does not hear Bob at all, it is still found so."""
    rng = np.random.default_rng(23)
    ana, bob = (rng.standard_normal(14 * RATE) * QUIET_NOISE for _ in range(2))
    for k in range(6):
        at = round((1.0 + 2.0 * k) * RATE)
        said = voice(rng)
        bob[at:at + len(said)] += said * QUIET_NOISE * 10 ** (45 / 20)
        if bob_under_db is not None:
            ana[at:at + len(said)] += said * QUIET_NOISE * 10 ** ((45 - bob_under_db) / 20)
        thumb = rng.standard_normal(round(0.3 * RATE))
        bob[at + RATE:at + RATE + len(thumb)] += thumb * QUIET_NOISE * 10 ** (30 / 20)
    crosstalk = Crosstalk()
    listen(crosstalk, {0: ana, 1: bob})
    crosstalk.learn()
    if bob_under_db is None:
        assert crosstalk.margin_db(0, 1, 114.0) >= 22.0
    else:
        assert crosstalk.margin_db(0, 1, 114.0) == crosstalk.under_db
        assert crosstalk.own_voice(0, 111.0, 111.6) is None  # Bob's last word, at Ana's phone


@pytest.mark.parametrize("bag_at", [0.6, 1.0])
def test_a_sound_only_the_other_phone_hears_does_not_explain_away_this_phones_player(bag_at: float) -> None:
    """Ana shouts 30 dB over her phone's floor while Bob, silent, handles his phone: 50 dB over
    its floor there, nothing at hers. Taken for Bob's voice reaching her phone 12 dB under, it
    showed her phone hardly hearing Bob; and where it began with her shout (nothing before it to
    show her phone hearing less than that), it explained her whole shout (given to nobody)."""
    rng = np.random.default_rng(24)
    ana, bob = room(rng, 4.0), room(rng, 4.0)
    add(bob, rng.standard_normal(round(1.5 * RATE)), bag_at, 50.0)  # Bob's bag, before her shout or with it
    add(ana, voice(rng), 1.0, 30.0)
    crosstalk = Crosstalk()
    listen(crosstalk, {0: ana, 1: bob})
    assert crosstalk.own_voice(0, 101.0, 101.6) == 101.0
    assert crosstalk.margin_db(0, 1, 103.0) == crosstalk.under_db


def test_a_long_sound_at_this_phone_does_not_raise_its_floor() -> None:
    """Ana's phone is handled for 2.5 s (a sound only it hears, 30 dB over its floor), then Bob
    says two words, which reach it 14 dB under. Its floor was read from the last 3 s, which the
    sound had filled: it stood 25 dB high, Bob's words at Ana's phone seemed 39 dB under his, her
    phone was taken for one that hardly hears him, and his next word there was given to her."""
    rng = np.random.default_rng(26)
    ana, bob = room(rng, 6.0), room(rng, 6.0)
    add(ana, rng.standard_normal(round(2.5 * RATE)), 1.0, 30.0)
    for at in (3.6, 4.6):
        said = voice(rng, 0.5)
        add(bob, said, at, 40.0)
        add(ana, said, at + 0.003, 40.0 - 14.0)
    crosstalk = Crosstalk()
    listen(crosstalk, {0: ana, 1: bob})
    times, level = crosstalk.tracks[0].window(103.52, 103.58)  # the quiet just before Bob's first word
    assert abs(float(np.median(level))) < 3.0
    crosstalk.learn()
    assert crosstalk.margin_db(0, 1, 105.5) == crosstalk.under_db
    assert crosstalk.own_voice(0, 104.6, 105.1) is None



@pytest.mark.parametrize("seed", [2, 6])
def test_a_sound_with_no_pitch_right_after_a_word_is_not_read_as_that_word(
        seed: int, ko_phrases: dict[str, str]) -> None:
    """Two players take turns saying the test lexicon's phrases (espeak-ng, Korean) in a quiet
    room, each phone hearing the other player 12-15 dB under, and every phrase runs into a sound
    only the speaker's phone hears (2 s of rustling from just before it: a bag, the phone
    handled). A frame's pitch is read from the 30 ms up to its end, so at each word's end the
    first frames of the rustle still seemed voiced, and showed the other phone not hearing that
    player (margins of 22-24 dB, read every second as the room reads them)."""
    phrases = [make_clip(text, lead_s=0.0, tail_s=0.0).samples for _, text in sorted(ko_phrases.items())]
    rng = np.random.default_rng(seed)
    streams = [rng.normal(0, 10.0, 40 * RATE) for _ in range(2)]  # 0.0003 of full scale
    for k in range(12):
        at = round((1.0 + 3.2 * k) * RATE)
        phrase = phrases[rng.integers(len(phrases))] * rng.uniform(0.3, 0.7)
        mine, other = streams[k % 2], streams[1 - k % 2]
        mine[at + 1600:at + 1600 + len(phrase)] += phrase
        other[at + 1600:at + 1600 + len(phrase)] += phrase * 10 ** (-rng.uniform(12, 15) / 20)
        mine[at:at + 2 * RATE] += rng.normal(0, rng.uniform(65, 650), 2 * RATE)
    crosstalk = Crosstalk(keep_s=41.0)
    listen(crosstalk, dict(enumerate(streams)))
    for until in 100.0 + np.arange(2, 41):
        crosstalk.learn(until)
        assert crosstalk.margin_db(0, 1, until) == crosstalk.margin_db(1, 0, until) == crosstalk.under_db


@pytest.mark.parametrize("apart_ms", [-14.0, 14.0])
def test_dry_words_a_few_ms_apart_on_two_streams_show_no_margin_at_their_edges(apart_ms: float) -> None:
    """Bob's dry syllables (no room: each starts and stops dead) reach Ana's phone 14 dB under,
    and her stream sits 14 ms off his on the host's clock, within the clocks' slack (recorded
    real runs: 5-20 ms). Her stream ahead of his, each syllable's end at her phone came before
    his, and the margin read 29 dB: a phone beside Bob taken for one that hardly hears him (his
    words then let through as hers). Only frames where his level holds over the slack show it."""
    rng = np.random.default_rng(3)
    bob, ana = room(rng, 8.0), room(rng, 8.0)
    gap = np.zeros(round(0.04 * RATE))
    said = np.concatenate([part for _ in range(40) for part in (voice(rng, rng.uniform(0.06, 0.15), dry=True), gap)])
    add(bob, said, 0.5, 30.0)
    add(ana, said, 0.5 + apart_ms / 1000, 30.0 - 14.0)
    crosstalk = Crosstalk()
    listen(crosstalk, {0: ana, 1: bob})
    assert crosstalk.margin_db(0, 1, 108.0) == crosstalk.under_db


def test_a_stream_moved_back_by_its_calibration_keeps_its_frames_in_order() -> None:
    """Ana's phone hears Bob 14 dB under. Its stream is placed without its input delay (0.5 s,
    the host's output in it, as in the real pipeline) until the chirp measures it 2 s in; Bob's
    is timed all along. From then on Ana's samples sit 0.5 s earlier on the host's clock, and her
    track kept the half second of frames it had placed there over the new ones. Read in that
    order, her level while Bob said a word just then was her silence of half a second before:
    the margin read 30-45 dB (a recorded real run), her phone taken for one that does not hear
    him, his words let through as hers."""
    rng = np.random.default_rng(5)
    bob, ana = room(rng, 6.0), room(rng, 6.0)
    for at_s in (1.55, 2.6, 3.4, 4.2):  # words, the first while the chirp's measure comes
        word = voice(rng, 0.4)
        add(bob, word, at_s, 30.0)  # a sound at host time 100 + t: Bob's sample t (his clock timed all along)...
        add(ana, word, at_s + 0.5, 30.0 - 14.0)  # ...and Ana's sample t + 0.5 s
    crosstalk = Crosstalk()
    for first in range(0, len(bob), 1600):
        ana_timed = first >= 2 * RATE
        off = 0.5 if ana_timed else 0.0

        def ana_clock(index: float, off: float = off) -> float:
            return 100.0 + index / RATE - off

        crosstalk.track(1).feed(bob[first:first + 1600], first, lambda i: 100.0 + i / RATE, True)
        crosstalk.track(0).feed(ana[first:first + 1600], first, ana_clock, ana_timed)
    times, _ = crosstalk.track(0).window(0.0, 200.0)
    assert np.all(np.diff(times) > 0)
    assert crosstalk.margin_db(0, 1, 105.4) == crosstalk.under_db
