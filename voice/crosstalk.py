"""Whose voice was it: phones at one table hear each other's players (pure computation, no I/O).

Each phone's recogniser takes the first voice it hears as its player's. At a real table the
other players reach every phone too, typically 8 to 20 dB quieter than at their own phone (a
player sits 0.2-0.5 m from their phone, 0.5-2 m from the others'). So when Bob shouts 50 ms
before Ana, Ana's phone hears Bob first and its recogniser dates her shout at his onset; and
when Ana says nothing at all, her phone may still hear Bob's phrase and shout for her (a
Bévue outside a race, a wrong winner or loser in one).

All streams are on the host's clock (voice/phone_clock.py), so the host compares what the
phones heard at the same moment. Each stream's loudness is tracked in dB over its own noise
floor (phones with other microphone gains compare fairly: the room's noise reaches them all),
and each phone is taken to hear every other player `under_db` quieter than that player's own
phone does (the table's crosstalk margin; wider where the streams show a phone hardly hears a
player: headsets, phones far apart; and lower, for one utterance, by what the phone did not hear
of them just before it), their voices there dying away no faster than the room's reverberation
does (in a quiet room, tens of dB over the floor after they stopped at their own phones). Only a
voice counts (`LoudnessTrack.voices`: a sound with a pitch, and what lies near it): a tap on a
phone's screen, the phone handled or a bag beside it is loud at that phone and heard at no
other, and taken for its player's voice it showed the others hardly hearing that player (their
own players' words then let through as theirs) or explained away another phone's own player.
For an utterance a phone's recogniser heard from onset_s:
- if the others' voices, as this phone hears them, do not explain its start, it stands as the
  recogniser dated it, to the sample;
- if they do, its onset moves to where this phone's own voice rises over them (Ana's own
  onset, 50 ms after Bob's);
- if they explain it whole, it was another player's voice: nobody's utterance at this phone;
  and so it is where they would explain it whole with the streams moved against each other by
  as much as their clocks may be off (TIMING_S; UNTIMED_S more for a stream not calibrated).

Where several players shout a race's phrase at once, a phone's recogniser may read the phrase
only out of the mixture ("내일 내일 점심": `Detection.crowded`, voice/recogniser.py); such a
reading is given to the player only where another phone heard the phrase plainly within
CROWD_S (`confirmed`), then checked as any other.

What it cannot tell: a quiet player shouting at once with a much louder one, where the quiet
one's phone hears the loud one within `own_db` of its own player (then the quiet player is
heard where the loud one pauses); and a soft start (a nasal, a whisper) under another's voice,
found a little late, when the phone does hear them. Figures: scripts/bench_web.py (--crosstalk-db)
and docs/web.md.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import numpy as np
from scipy.ndimage import maximum_filter1d, minimum_filter1d

from voice.audio import ONSET_DB, QUIET_DB, RATE, pre_emphasis

FRAME = RATE // 100  # 10 ms frames...
HOP = FRAME // 2  # ...every 5 ms
HOP_S = HOP / RATE
FLOOR_BLOCK_S = 0.5  # the noise floor: the quiet end (20th percentile) of each half second...
FLOOR_S = 10.0  # ...the quietest of this much audio's
SILENCE_DB = 1.0  # a frame's energy (10 log10(mean square + 1)) under this: digital silence, no room
LOUD_DB = 25.0  # a voice this loud at its own phone is well over the floor at a phone that hears it
LOUD_SPAN_DB = 25.0  # ...and, in a quiet room, this close to the loudest it was lately (margin_db)
MARGIN_S = 15.0  # a pair's margin is read from this much of the past...
MARGIN_FRAMES = 40  # ...once it holds this many frames of such a voice (0.2 s)
MARGIN_PERCENTILE = 98.0
ISOLATED_DB = 22.0  # a margin this wide: the phone hardly hears that player (crosstalk at a table: 6-20 dB)...
HEARD_DB = 16.0  # ...and it stays so until the difference falls under this (it hears that player again)
COVERED_DB = 6.0  # a frame where the phone heard within this of another player's own level shows nothing
BEFORE_S = 0.5  # how much of a phone's stream before an utterance shows whether it hears the others
WAIT_S = 0.4  # an utterance waits at most this long for the other phones' audio of its time
KEEP_S = 15.0  # a track keeps this much of its past: utterances are judged within a second or two
CROWD_S = 1.0  # a crowded reading stands when another phone heard its phrase starting this near it...
CROWD_WAIT_S = 0.8  # ...and waits this long (from when it came) for that phone's recogniser to say so
LEARN_EVERY_S = 1.0  # every pair's margin is read again from the streams this often (`learn`)
TAIL_DB_PER_S = 100.0  # a room's sound dies away this fast at most (60 dB in 0.6 s: a furnished room's RT60)
VOICED_DB = 12.0  # a frame this far over the floor, the host's own sounds aside: a voice near the phone
PITCH_WINDOW = RATE * 30 // 1000  # a frame's periodicity: the 30 ms up to its end...
PITCH_LAGS = (RATE // 400, RATE // 80)  # ...repeating at a voice's pitch period (80-400 Hz)
PERIODIC = 0.45  # a frame repeating this well is voiced (the bench's voices: median 0.67; noises: under 0.35)
EDGE_DB = 6.0  # a margin is read where the other phone's level holds within this over the clocks' slack
VOICE_REACH_S = 0.1  # a voice's unvoiced sounds (a consonant, a breath) lie this near its voiced ones
# How far two streams may sit apart on the host's clock when an utterance is judged
# (`Crosstalk.own_voice`): timed streams by TIMING_S (a capture slip of one 1024-frame buffer at
# 44.1 kHz, 23.2 ms, which voice/alignment.py cannot place at two phones), and a stream whose
# input delay is not measured yet (its chirp failed) up to UNTIMED_S later than it should
# (input delays of 20-120 ms: docs/web.md).
TIMING_S = 0.03
UNTIMED_S = 0.15

SampleClock = Callable[[float], float]
"""A stream's sample index -> host seconds (when that sound reached the phone's microphone)."""


class LoudnessTrack:
    """One stream's loudness on the host's clock: 10 ms frames every 5 ms, in dB over the
    stream's own noise floor (FLOOR_S), and each frame's pitch (`periodicity`, read by
    `voices`). Pre-emphasised (`pre_emphasis`) as the recogniser's level tracker is, to keep the
    room's low rumble out."""

    def __init__(self, keep_s: float = KEEP_S) -> None:
        self.keep_s = keep_s  # how much of its past the track keeps
        self._tail = np.zeros(0)  # pre-emphasised samples not yet in a whole hop
        self._tail_first = 0  # the absolute sample index of _tail[0]
        self._last = 0.0  # the previous chunk's last raw sample, for the pre-emphasis
        self._half = np.zeros(0)  # the last hop's energy sum: a frame is two hops
        self._energies: list[float] = []  # this half second's frames (dB), for the floor
        self._floors: deque[float] = deque(maxlen=round(FLOOR_S / FLOOR_BLOCK_S))  # each earlier one's
        # Each chunk's frames: host times, dB over the floor, periodicity (`periodicity`).
        self._blocks: deque[tuple[np.ndarray, np.ndarray, np.ndarray]] = deque()
        self._recent = np.zeros(0)  # the pre-emphasised samples up to the last whole hop...
        self._recent_first = 0  # ...from this absolute sample index
        self._next: int | None = None
        # Host time from which the stream has been placed with its input delay known (a phone's,
        # once the chirp measured it): before that its sounds sit tens of ms off the others'.
        self.timed_since = math.inf

    @property
    def since(self) -> float:
        """Host time of the oldest frame kept (inf before any)."""
        return float(self._blocks[0][0][0]) if self._blocks else math.inf

    @property
    def until(self) -> float:
        """Host time of the newest frame (-inf before any)."""
        return float(self._blocks[-1][0][-1]) if self._blocks else -math.inf

    def feed(self, pcm: np.ndarray, first_sample: int, clock: SampleClock, timed: bool = True) -> None:
        """A chunk of the stream (int16 units) whose first sample is `first_sample`; `clock`
        places samples on the host's clock (as known now), `timed`: with the stream's input
        delay known (see timed_since). A gap restarts the frames."""
        chunk = np.asarray(pcm, dtype=np.float64)
        if len(chunk) == 0:
            return
        if not timed:
            self.timed_since = math.inf
        elif self.timed_since == math.inf:
            self.timed_since = clock(float(first_sample))
        if self._next != first_sample:
            self._tail, self._tail_first, self._last, self._half = np.zeros(0), first_sample, 0.0, np.zeros(0)
            self._recent, self._recent_first = np.zeros(0), first_sample
        self._next = first_sample + len(chunk)
        emphasised = pre_emphasis(chunk, self._last)
        self._last = float(chunk[-1])
        buffer = np.concatenate([self._tail, emphasised])
        count = len(buffer) // HOP
        first = self._tail_first
        self._tail, self._tail_first = buffer[count * HOP:], first + count * HOP
        if count == 0:
            return
        hops = np.einsum("ij,ij->i", *(2 * [buffer[:count * HOP].reshape(count, HOP)]))
        sums = np.concatenate([self._half, hops])
        self._half = hops[-1:]
        energy = (sums[1:] + sums[:-1]) / FRAME  # frame k = hops k and k + 1
        recent = np.concatenate([self._recent, buffer[:count * HOP]])
        recent_first = self._recent_first
        self._recent = recent[-PITCH_WINDOW:]
        self._recent_first = recent_first + len(recent) - len(self._recent)
        if len(energy) == 0:
            return
        ends = first + HOP * (np.arange(count) + 1)[len(hops) - len(energy):] - recent_first
        periodic = periodicity(recent, ends)
        db = 10 * np.log10(energy + 1.0)
        # The floor is the quietest half second's of the last FLOOR_S: a long sound at this phone
        # (its player talking on, the phone handled for two seconds) filled the 3 s the floor
        # was once read from, which then stood 20-30 dB high, and every other player's voice
        # here seemed that much quieter (this phone taken for one that hardly hears them).
        # (A half second of digital silence, a capture starting or stopping, is no room: left out.)
        for frame_db in db.tolist():
            self._energies.append(frame_db)
            if len(self._energies) * HOP_S >= FLOOR_BLOCK_S:
                quiet_end = float(np.percentile(self._energies, 20))
                if quiet_end > SILENCE_DB:
                    self._floors.append(quiet_end)
                self._energies = []
        if self._floors:
            floor = min(self._floors)
        else:  # the stream's first half second
            floor = float(np.percentile(self._energies, 20)) if self._energies else float(np.percentile(db, 20))
        # Frame centres: the boundary between its two hops.
        centres = first + HOP * (np.arange(len(energy)) + (0 if len(sums) > len(hops) else 1))
        lo, hi = clock(float(centres[0])), clock(float(centres[-1]))
        times = np.linspace(lo, hi, len(centres)) if len(centres) > 1 else np.array([lo])
        # The clock may place this chunk before frames already kept: the chirp measured the
        # input delay (now taken off: tens to hundreds of ms back), or a better fit moved the
        # stream. Those frames sat that far off: dropped, so a track's times only go forward
        # (read in order by np.interp: overlapping, they read another moment's level, and a
        # phone hearing a player 14 dB under showed 30-45 dB, one that does not hear them).
        while self._blocks and self._blocks[-1][0][-1] >= lo:
            earlier = self._blocks[-1][0] < lo
            last = self._blocks.pop()
            if earlier.any():
                self._blocks.append((last[0][earlier], last[1][earlier], last[2][earlier]))
        self._blocks.append((times, db - floor, periodic))
        while self._blocks and self._blocks[0][0][-1] < hi - self.keep_s:
            self._blocks.popleft()

    def window(self, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
        """The frames (host times, dB over the floor) between lo and hi."""
        times, levels, _ = self._frames(lo, hi)
        return times, levels

    def voices(self, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The frames between lo and hi (host times, dB over the floor), which of them are voiced
        (`PERIODIC`: a pitch), and which are a voice's: over ONSET_DB and within VOICE_REACH_S of
        a voiced frame (a consonant, a breath or a soft start beside its vowels). Not a voice:
        a sound with no pitch, such as a tap on the phone's screen, the phone handled, a bag
        beside it, which this phone alone hears (a voice reaches every phone at the table)."""
        reach = round(VOICE_REACH_S / HOP_S)
        times, levels, periodic = self._frames(lo - VOICE_REACH_S, hi + VOICE_REACH_S)
        # A frame's window reaches 30 ms back: where a voice stops under a noise, the frames
        # after it still repeat. So a frame is voiced where the window 15 ms after it does too.
        ahead = round(0.015 / HOP_S)
        periodic_ahead = np.concatenate([periodic[ahead:], np.zeros(min(ahead, len(periodic)))])
        voiced = (periodic >= PERIODIC) & (periodic_ahead >= PERIODIC)
        near = maximum_filter1d(voiced.astype(np.uint8), 2 * reach + 1) > 0 if len(times) else voiced
        voice = (levels > ONSET_DB) & near
        keep = (times >= lo) & (times <= hi)
        return times[keep], levels[keep], voiced[keep], voice[keep]

    def _frames(self, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        parts = [block for block in self._blocks if block[0][-1] >= lo and block[0][0] <= hi]
        if not parts:
            return np.zeros(0), np.zeros(0), np.zeros(0)
        times, levels, periodic = (np.concatenate(column) for column in zip(*parts, strict=True))
        keep = (times >= lo) & (times <= hi)
        return times[keep], levels[keep], periodic[keep]


class Crosstalk:
    """The table's phones' loudness, and whose voice each phone's utterance was.

    Parameters (tuned on the bench's tuning set, scripts/bench_web.py --set tune):
    `under_db`, how much quieter a player is at another's phone than at their own (the phones
    hear the others' voices as that phone's level less this); `own_db`, how far a phone's sound
    must rise over the noise and the others' voices to be its own player's; `min_own_s`, how
    much own voice an utterance needs to be the player's; `rise_db`, where the own voice's start
    is traced back to; `keep_onset_s`, how soon after the recogniser's onset the own voice may
    begin for that onset to stand; `slack_s`, the clocks' error and the sound's travel between
    phones; `unheard_db`, how much less than the others' voices a phone may hear before an
    utterance and still be taken to hear them; `keep_s`, how much of each stream is kept."""

    def __init__(self, under_db: float = 12.0, own_db: float = 3.0, min_own_s: float = 0.03,
                 rise_db: float = 2.0, keep_onset_s: float = 0.03, slack_s: float = 0.015,
                 unheard_db: float = 3.0, keep_s: float = KEEP_S) -> None:
        self.under_db, self.own_db, self.min_own_s, self.rise_db = under_db, own_db, min_own_s, rise_db
        self.unheard_db = unheard_db
        self.keep_onset_s, self.slack_s, self.keep_s = keep_onset_s, slack_s, keep_s
        self.tracks: dict[int, LoudnessTrack] = {}
        self._margins: dict[tuple[int, int], float] = {}  # (seat, other): see margin_db
        self._learned: dict[tuple[int, int], float] = {}  # (seat, other): up to when `learn` read it
        self._host_sounds: list[tuple[float, float]] = []  # what the host played: see mask_playback

    def track(self, seat: int) -> LoudnessTrack:
        """The seat's track (a new stream of the same seat goes on in the same one)."""
        return self.tracks.setdefault(seat, LoudnessTrack(self.keep_s))

    def heard_until(self, seats: Iterable[int]) -> float:
        """The latest host time all of these seats' streams have been heard to (inf: none)."""
        return min((self.tracks[s].until for s in seats if s in self.tracks), default=math.inf)

    def mask_playback(self, start_s: float, end_s: float) -> None:
        """The host's own sound (the chirp, a bot's shout) between these host times: every phone
        hears it, each at its own distance from the loudspeaker, so it shows nothing of how well
        a phone hears a player."""
        self._host_sounds = [m for m in self._host_sounds if m[1] > start_s - MARGIN_S - 2] + [(start_s, end_s)]

    @property
    def _slack_frames(self) -> int:
        """The clocks' slack (`slack_s`) in frames, one at least."""
        return max(1, round(self.slack_s / HOP_S))

    def _not_played(self, times: np.ndarray) -> np.ndarray:
        """Which of these host times fall outside the host's own sounds (`mask_playback`)."""
        outside = np.ones(len(times), dtype=bool)
        for start, end in self._host_sounds:
            outside &= (times < start) | (times > end)
        return outside

    def margin_db(self, seat: int, other: int, until: float) -> float:
        """How much quieter `other`'s player is at `seat`'s phone than at their own:
        `under_db`, unless the last MARGIN_S show this phone hardly hears that player (phones
        far apart, a headset's microphone): where the other phone heard a loud voice (LOUD_DB,
        voiced frames only: `LoudnessTrack.voices`, and where its level holds within EDGE_DB
        over the clocks' slack), this one heard it ISOLATED_DB quieter or more (the
        MARGIN_PERCENTILE-th percentile of the difference, over the frames where this phone heard
        little else: COVERED_DB); then that difference. A phone found so stays so
        while the difference stays over HEARD_DB.
        What a quiet spell cannot show is kept, and so is what frames where its own player
        covers the other's voice cannot (at a table where everybody shouts every round, they
        can be all there is: the margin then flipped back to `under_db`). Only audio placed
        with both streams timed counts, and the host's own sounds are left out."""
        pair = (seat, other)
        # Only where both streams were timed: a phone's onsets sit up to its input delay (0.1 s)
        # off the others' before the chirp measured it, and every syllable of a player's words
        # would then show a frame or two this phone seems not to hear (a phone beside that
        # player's taken for one that hardly hears them: crosstalk let through).
        since = max(until - MARGIN_S, self.tracks[other].timed_since, self.tracks[seat].timed_since)
        # Only the other phone's voices (`LoudnessTrack.voices`): a sound with no pitch there (a
        # tap, a bag) is most likely heard there alone, and read as its player's it showed this
        # phone hardly hearing them.
        t, loud, voiced, _ = self.tracks[other].voices(since, until)
        # A loud voice at the other phone: LOUD_DB over its floor, and in a quiet room (voices
        # 50-70 dB over it) within LOUD_SPAN_DB of the loudest: the words' strong parts, as in a
        # busy room. Their weak parts (a consonant, a tail) reach this phone from further off,
        # through more of the room, and under its floor: there they showed a difference of 22 dB
        # or more for a phone 14 dB from that player, taken for one that hardly hears them.
        loud_enough = max(LOUD_DB, float(loud.max()) - LOUD_SPAN_DB) if len(loud) else LOUD_DB
        keep = (loud > loud_enough) & voiced & self._not_played(t)
        # Only where the other phone's level holds over the clocks' slack: at a word's edge a dry
        # voice falls 30 dB in 10 ms, and two streams a few ms apart showed 25-35 dB there (a
        # recorded real run: a phone 14 dB from that player taken for one that hardly hears it).
        reach = self._slack_frames
        keep &= minimum_filter1d(loud, 2 * reach + 1) > loud - EDGE_DB
        tm, lm = self.tracks[seat].window(until - MARGIN_S - 1, until + 1)
        if len(tm) < 2:
            return self._margins.get(pair, self.under_db)
        # Each frame bounds the margin from below (the phone hears at least the other's voice
        # less it), and only where the phone heard little else does the bound say much: where
        # it heard within COVERED_DB of the other's own level, its own player was speaking.
        shown = loud[keep] - np.interp(t[keep], tm, lm)
        shown = shown[shown >= COVERED_DB]
        if len(shown) >= MARGIN_FRAMES:
            seen = float(np.percentile(shown, MARGIN_PERCENTILE))
            before = self._margins.get(pair, self.under_db)
            if seen >= ISOLATED_DB:
                self._margins[pair] = seen
            elif before < ISOLATED_DB or seen < HEARD_DB:
                self._margins[pair] = self.under_db
        return self._margins.get(pair, self.under_db)

    def learn(self, until: float = math.inf) -> None:
        """Read every pair's margin (`margin_db`) from the streams as heard up to `until`, each
        pair at most every LEARN_EVERY_S of its two streams. Without it a margin is read only
        when that phone's own utterance is judged, from the MARGIN_S before it: what a player
        said alone earlier (the microphone test when their phone joins, a bet, talk) was lost
        by the time of the first race, where everybody shouts at once and shows little."""
        for seat, mine in self.tracks.items():
            for other, theirs in self.tracks.items():
                heard = min(until, mine.until, theirs.until)
                if other == seat or heard == -math.inf:
                    continue
                if heard >= self._learned.get((seat, other), -math.inf) + LEARN_EVERY_S:
                    self._learned[(seat, other)] = heard
                    self.margin_db(seat, other, heard)

    def voiced_s(self, seat: int, since: float, until: float = math.inf) -> float:
        """How long the seat's phone heard its own player's voice near it after host time
        `since`, up to `until` (within the track's past): frames VOICED_DB over its floor and
        `own_db` over the other players' voices as it hears them (`others_at`: a neighbour's
        loud words are not this player's), the host's own sounds left out. Its microphone test
        (voice/web/room.py, through `Attribution.voiced_between`)."""
        track = self.tracks.get(seat)
        if track is None:
            return 0.0
        times, level = track.window(since, until)
        voiced = (times > since) & (level > VOICED_DB) & self._not_played(times)
        if voiced.any():
            # The margins as `learn` last read them (Attribution.feed, on every chunk: at most
            # LEARN_EVERY_S old): reading every pair's margin anew from MARGIN_S of audio at
            # each of the room's looks cost twice the look itself (scripts/bench_crosstalk.py).
            voiced &= level > self.others_at(seat, times, read=False) + self.own_db
        return float(voiced.sum()) * HOP_S

    def others_at(self, seat: int, times: np.ndarray, read: bool = True) -> np.ndarray:
        """The other players' voices as the seat's phone hears them at these host times, in dB
        over its floor: each other phone's level (the loudest within the slack), less that
        pair's margin (`margin_db` read up to the last of them; `read` False: as last read),
        added up as powers (-inf: no other phone). A player the
        phone is found not to hear (a margin of ISOLATED_DB or more) adds nothing: that margin
        is a bound, what the phone's own noise let show, and seven players at their bound would
        add up to a voice 8 dB over it."""
        reach = self._slack_frames
        carried = np.zeros(len(times))
        for other, track in self.tracks.items():
            if other == seat:
                continue
            margin = self.margin_db(seat, other, times[-1]) if read else self._margins.get((seat, other), self.under_db)
            if margin >= ISOLATED_DB:
                continue  # not heard at this phone: the margin is only what its own noise floor let show
            # Only its voices: a sound with no pitch at that phone (a tap on its screen, a bag
            # beside it) is heard there alone, and would explain away this phone's own player.
            t, v, _, voice = track.voices(times[0] - 2 * self.slack_s, times[-1] + 2 * self.slack_s)
            v = np.where(voice | (v <= ONSET_DB), v, -np.inf)  # (its quiet floor as before)
            if len(t) >= 2:
                heard = np.interp(times, t, maximum_filter1d(v, 2 * reach + 1), left=-np.inf, right=-np.inf)
                carried += 10 ** ((heard - margin) / 10)
        with np.errstate(divide="ignore"):
            return 10 * np.log10(carried)  # -inf: no other voice

    def placed(self, seat: int, onset_s: float, end_s: float, rise_s: float | None = None) -> float | None:
        """The onset of an utterance the seat's phone heard, given to its own player
        (`own_voice`), or None: another player's voice. `rise_s`: where its sound first stood
        ONSET_DB over the floor, when the recogniser traced its onset further back to a soft
        start (an "h", a few dB over the floor: `voice.audio.soft_start`). Another player's
        voice, just before, is as faint at this phone, so the check runs from the rise, and
        the soft start stands only where no other player, as this phone hears them, could make
        that sound (within 3 dB of it, half of it or more)."""
        if rise_s is None:
            return self.own_voice(seat, onset_s, end_s)
        own = self.own_voice(seat, rise_s, end_s)
        if own != rise_s:
            return own
        mine = self.tracks.get(seat)
        times, level = mine.window(onset_s - self.slack_s, rise_s) if mine else (np.zeros(0), np.zeros(0))
        if len(times) and np.any(self.others_at(seat, times) > level - 3.0):
            return rise_s
        return onset_s

    def own_voice(self, seat: int, onset_s: float, end_s: float) -> float | None:
        """When the seat's own player's voice begins in an utterance its phone heard from
        onset_s to end_s (host seconds): onset_s itself when the others' voices do not explain
        its start; later, where its own voice rises over them, when they do; None when they
        explain it all (another player's voice, heard from afar)."""
        mine = self.tracks.get(seat)
        if mine is None:
            return onset_s
        lo, hi = onset_s - 2 * HOP_S, max(end_s, onset_s + self.min_own_s)
        times, level = mine.window(lo - BEFORE_S, hi)
        if not np.any(times >= lo):
            return onset_s  # nothing to compare on (its stream restarted): the recogniser stands
        others = self.others_at(seat, times)
        if self._explained_off_time(seat, onset_s, times[times >= lo], level[times >= lo]):
            return None
        # The others' voices as this phone is taken to hear them, against what it heard before
        # the utterance: where they would have been heard, it heard less (their median
        # shortfall, beyond `unheard_db`)? Then it does not hear them that well (players
        # starting together at a table where phones hear only their own: the first rounds,
        # before the margins show it), and they are lowered by that much.
        reach = self._slack_frames
        heard = maximum_filter1d(level, 2 * reach + 1)  # what it heard, within the clocks' slack
        # And during it: where they would reach this phone well over its floor (QUIET_DB +
        # unheard_db) it heard no sound at all (under QUIET_DB), by far (90th percentile of the
        # shortfall) more than a table's crosstalk can be off (ISOLATED_DB - under_db)? Then it
        # does not hear them, whatever the table's margin says: a soft start under voices that
        # began with it, in the first rounds. (A smaller shortfall is a table's margin a few dB
        # wider than under_db, where lowering the others would let their voice through.)
        shift = 0.0
        before = (times <= onset_s - self.slack_s) & (others > QUIET_DB)
        if before.sum() >= 3:
            shift = float(np.median(others[before] - heard[before])) - self.unheard_db
        short = (others > QUIET_DB + self.unheard_db) & (heard < QUIET_DB)
        if short.sum() >= 3:
            shortfall = float(np.percentile(others[short] - heard[short], 90))
            if shortfall >= ISOLATED_DB - self.under_db:
                shift = max(shift, shortfall - self.unheard_db)
        # The others' voices reach this phone from afar, through the room: their sound there
        # dies away no faster than the room's reverberation (TAIL_DB_PER_S), even where it
        # stopped short at their own phones. In a quiet room that tail stays tens of dB over the
        # floor, and without it its last 30 ms were taken for this phone's own player.
        others = _room_tail(others - max(0.0, shift), times)
        times, level, others = times[times >= lo], level[times >= lo], others[times >= lo]
        excess = level - 10 * np.log10(1 + 10 ** (others / 10))  # dB over the noise and the others' voices
        own = excess > self.own_db
        # Where the others' voices, loud enough to be heard (QUIET_DB), make at least half of
        # what this phone heard.
        explained = (others > QUIET_DB) & (level < others + 3.0)
        if not np.any(explained):
            return onset_s  # nobody else spoke: the recogniser's utterance as it is
        if own.sum() * HOP_S < self.min_own_s:
            return None
        if not np.any(explained[times <= onset_s + self.keep_onset_s]):
            return onset_s  # its own player began it
        # The own voice: the first 15 ms of own frames in a row...
        run = np.convolve(own.astype(int), np.ones(3, dtype=int), mode="valid") == 3
        starts = np.flatnonzero(run)
        if len(starts) == 0:
            return None
        first = int(starts[0])
        if times[first] <= onset_s + self.keep_onset_s:
            return onset_s
        # ...reached on its way up: it starts where it first rose over the rest.
        while first > 0 and excess[first - 1] > self.rise_db:
            first -= 1
        return float(times[first])

    def _explained_off_time(self, seat: int, at: float, times: np.ndarray, level: np.ndarray) -> bool:
        """Whether the others' voices, as this phone is taken to hear them (not lowered by any
        shortfall), explain the utterance whole (too little own voice: `own_voice`'s None) with
        the other streams moved against this one by any lag the clocks may have wrong
        (`_lags`). A phone whose stream sits 15 ms or more late hears nothing at the start of a
        neighbour's voice where its own copy of it is yet to come: read as "it heard less than
        those voices before", that lowered them by ~10 dB and the neighbour's voice, 14 dB
        under at this phone, was given to its silent player; a neighbour's stream sitting late
        left the start of their voice here unexplained, taken for this player's own. A phone
        that truly hears only its own player still has its own voice at every lag: the
        loosening stays for it."""
        ahead, behind = self._lags(seat, at)
        grid = np.arange(times[0] - behind, times[-1] + ahead + HOP_S, HOP_S)
        # (Clipped: np.interp between -inf and a level reads nan.)
        others = np.maximum(_room_tail(self.others_at(seat, grid, read=False), grid), -100.0)
        for lag in np.arange(-ahead, behind + HOP_S / 2, HOP_S):  # lag > 0: this stream sits late
            heard = np.interp(times - lag, grid, others)
            explained = (heard > QUIET_DB) & (level < heard + 3.0)
            own = level - 10 * np.log10(1 + 10 ** (heard / 10)) > self.own_db
            if explained.any() and own.sum() * HOP_S < self.min_own_s:
                return True
        return False

    def _lags(self, seat: int, at: float) -> tuple[float, float]:
        """How far (seconds) the seat's stream may sit ahead of the others' and behind them at
        host time `at`: TIMING_S either way, and UNTIMED_S more where a stream was not timed
        then (it sits up to its input delay late: the seat's behind, another's ahead)."""
        def untimed(track: LoudnessTrack) -> float:
            return UNTIMED_S if track.timed_since > at else 0.0

        others = [untimed(track) for other, track in self.tracks.items() if other != seat]
        return TIMING_S + max(others, default=0.0), TIMING_S + untimed(self.tracks[seat])


def periodicity(samples: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """How well the PITCH_WINDOW of (pre-emphasised) samples up to each of these ends repeats
    itself at a voice's pitch period (PITCH_LAGS): the highest normalised autocorrelation
    there, 0-1 (a vowel 0.7-1, a noise's under 0.35). Windows reaching before the samples are
    cut short."""
    padded = np.concatenate([np.zeros(PITCH_WINDOW), samples])
    frames = np.lib.stride_tricks.sliding_window_view(padded, PITCH_WINDOW)[np.asarray(ends, dtype=int)]
    spectrum = np.fft.rfft(frames * _HANN, _PITCH_FFT)
    power = spectrum.real ** 2 + spectrum.imag ** 2
    correlation = np.fft.irfft(power, _PITCH_FFT)[:, :PITCH_LAGS[1] + 1] / _HANN_CORRELATION
    return np.max(correlation[:, PITCH_LAGS[0]:], axis=1) / np.maximum(correlation[:, 0], 1e-9)


_HANN = np.hanning(PITCH_WINDOW)
_PITCH_FFT = 1024  # no wrap-around: PITCH_WINDOW + the longest lag
_HANN_CORRELATION = np.fft.irfft(np.abs(np.fft.rfft(_HANN, _PITCH_FFT)) ** 2, _PITCH_FFT)[:PITCH_LAGS[1] + 1]
_HANN_CORRELATION = _HANN_CORRELATION / _HANN_CORRELATION[0]  # the window's own fall with the lag


def _room_tail(level_db: np.ndarray, times: np.ndarray) -> np.ndarray:
    """A level (dB) held up as a room's reverberation holds a sound up: after a peak, never
    falling faster than TAIL_DB_PER_S."""
    held = np.array(level_db, dtype=float)
    for k in range(1, len(held)):
        held[k] = max(held[k], held[k - 1] - TAIL_DB_PER_S * (times[k] - times[k - 1]))
    return held


def confirmed(intent: str, onset_s: float, others: Iterable[tuple[str, float]]) -> bool:
    """Whether a crowded reading (`Detection.crowded`: a race's phrase read out of several
    voices at once) of `intent` from onset_s is borne out by the other phones: one of them
    heard that phrase, plainly (others: their (intent, onset_s)), starting within CROWD_S of
    it. Alone, such a reading may be talk forced into the phrase."""
    return any(other == intent and abs(at - onset_s) <= CROWD_S for other, at in others)


class Utterance(Protocol):
    """What a recogniser decides on an utterance (a Detection or a NotUnderstood: dataclasses)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def onset_s(self) -> float: ...

    @property
    def end_s(self) -> float: ...


U = TypeVar("U", bound=Utterance)


class Attribution(Generic[U]):
    """Every stream's utterances held until the other streams have been heard past their end,
    then given to their own player (Crosstalk.own_voice): as they were, with a later onset, or
    to no one. A crowded reading (`Detection.crowded`) is given only once another phone's
    plain one confirms it (`confirmed`), waiting up to CROWD_WAIT_S for it; else to no one.
    Streams feed it from their own threads; the game takes what is settled."""

    def __init__(self, crosstalk: Crosstalk | None = None, wait_s: float = WAIT_S) -> None:
        self.crosstalk = crosstalk or Crosstalk()
        self.wait_s = wait_s
        self.dropped = 0  # utterances that were another player's voice
        self.unconfirmed = 0  # crowded readings no other phone bore out
        self._lock = threading.Lock()
        self._held: list[tuple[int, U, float]] = []
        self._plain: deque[tuple[int, str, float]] = deque(maxlen=256)  # (seat, intent, onset_s) heard plainly

    def feed(self, seat: int, pcm: np.ndarray, first_sample: int, clock: SampleClock, timed: bool = True) -> None:
        """A chunk of the seat's stream, before its recogniser hears it (timed: its input delay
        known, LoudnessTrack.feed); the margins are read again from what every stream has
        brought (`Crosstalk.learn`)."""
        with self._lock:
            self.crosstalk.track(seat).feed(pcm, first_sample, clock, timed)
            self.crosstalk.learn()

    def mask_playback(self, start_s: float, end_s: float) -> None:
        """The host plays a sound between these host times (Crosstalk.mask_playback)."""
        with self._lock:
            self.crosstalk.mask_playback(start_s, end_s)

    def voiced_between(self, seat: int, since: float, streaming: Iterable[int]) -> tuple[float, float]:
        """Crosstalk.voiced_s from `since` up to the time every streaming seat's audio has come
        to (the other players' voices there known, within the clocks' slack), and that time, from
        any thread. The room adds these up look after look: each look reads only the new frames
        (looking again at all since the test began cost 8.6 ms a look at 8 talking phones)."""
        with self._lock:
            until = self.crosstalk.heard_until({*streaming, seat}) - 2 * self.crosstalk.slack_s
            if not since < until < math.inf:
                return 0.0, since
            return self.crosstalk.voiced_s(seat, since, until), until

    def hold(self, seat: int, utterance: U, now: float) -> None:
        with self._lock:
            self._held.append((seat, utterance, now))
            intent = getattr(utterance, "intent", None)
            if intent is not None and not getattr(utterance, "crowded", False):
                self._plain.append((seat, intent, utterance.onset_s))

    def holding(self) -> bool:
        """Whether an utterance is still held (not yet given to a player or dropped)."""
        with self._lock:
            return bool(self._held)

    def settled(self, now: float, streaming: Iterable[int]) -> list[tuple[int, U]]:
        """The utterances ready to go (in the order they came, each seat's own kept in order):
        those whose time every other streaming seat has been heard past, or that waited
        `wait_s`, each given to its own player; another player's voice is left out."""
        live = set(streaming)
        out: list[tuple[int, U]] = []
        with self._lock:
            waiting: list[tuple[int, U, float]] = []
            blocked: set[int] = set()
            for seat, utterance, since in self._held:
                heard = self.crosstalk.heard_until(live - {seat}) >= utterance.end_s + self.crosstalk.slack_s
                if seat in blocked or not (heard or now - since >= self.wait_s):
                    waiting.append((seat, utterance, since))
                    blocked.add(seat)
                    continue
                if getattr(utterance, "crowded", False) and not confirmed(
                        getattr(utterance, "intent", ""), utterance.onset_s,
                        [(intent, at) for other, intent, at in self._plain if other != seat]):
                    if now - since < CROWD_WAIT_S and live - {seat}:  # no other stream: none will
                        waiting.append((seat, utterance, since))
                        blocked.add(seat)
                    else:
                        self.unconfirmed += 1
                    continue
                onset = self.crosstalk.placed(seat, utterance.onset_s, utterance.end_s,
                                              getattr(utterance, "rise_s", None))
                if onset is None:
                    self.dropped += 1
                else:
                    out.append((seat, utterance if onset == utterance.onset_s else replace(utterance, onset_s=onset)))
            self._held = waiting
        return out
