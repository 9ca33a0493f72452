#!/usr/bin/env python3
"""What the host's crosstalk check costs at a table of phones, in CPU.

    .venv/bin/python scripts/bench_crosstalk.py [--phones 8] [--seconds 20] [--seed 0]

N phones' streams (room noise, each player talking now and then, every phone hearing the
other players 14 dB under) go through the room's `Attribution.feed` chunk by chunk, as the
room does (voice/crosstalk.py: every phone's loudness, every pair's margin read again each
second). Then the room's look at every seat's microphone test (ten times a second while a
seat waits) is timed three ways in the same run: as the room looks (`Attribution.voiced_between`:
the 0.1 s come since the last look, the margins as `learn` last read them); looking again at
all the test's audio (15 s of talk) at each look; and that, reading every pair's margin anew
from MARGIN_S of audio (how it was first written). Printed: CPU ms per second of the table's
audio for the feed, ms per look at all seats and the share of a core it takes, and the two
older ways as ratios to the room's.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cdc_env.ctrl_c_at_start  # noqa: F401, I001 - first: a Ctrl+C while the libraries load is one line

from cdc_env.cli import count_at_most, run_command
from voice.audio import RATE, pink_noise
from voice.crosstalk import KEEP_S, Attribution

CHUNK = RATE // 10  # 100 ms, as a phone's page sends
UNDER_DB = 14.0  # how much quieter a player is at another's phone
LOOKS_PER_S = 10  # the room's watch, while a seat's microphone test waits


def streams(phones: int, seconds: int, rng: np.random.Generator) -> np.ndarray:
    """(phones, samples) int16-range audio: pink room noise at each phone; each player says
    something (a pitched sound shaped like a syllable train, 0.5-2 s) every 2-6 s, heard at their
    own phone 20-30 dB over the room and at every other phone UNDER_DB less."""
    n = seconds * RATE
    out = np.stack([pink_noise(n, rng) * rng.uniform(60, 300) for _ in range(phones)])
    for player in range(phones):
        at = rng.uniform(0, 3)
        while at < seconds - 2:
            length = round(rng.uniform(0.5, 2.0) * RATE)
            syllables = np.abs(np.sin(np.pi * np.arange(length) / RATE * rng.uniform(3, 6)))
            said = (pitched(length, rng) + 0.1 * pink_noise(length, rng)) * syllables
            first = round(at * RATE)
            for phone in range(phones):
                level = 300 * 10 ** ((rng.uniform(20, 30) - (0 if phone == player else UNDER_DB)) / 20)
                out[phone, first:first + length] += said * level
            at += rng.uniform(2, 6)
    return np.clip(out, -32768, 32767).astype(np.int16)


def pitched(length: int, rng: np.random.Generator) -> np.ndarray:
    """A voice's pitch (100-250 Hz) and its harmonics up to 7.5 kHz, unit RMS: the check takes
    a sound with no pitch for one only its own phone hears (a tap, a bag), not a voice."""
    pitch = rng.uniform(100, 250)
    harmonics = np.arange(1, int(7500 / pitch) + 1)
    phases = rng.uniform(0, 2 * np.pi, len(harmonics))
    voiced = np.sin(np.outer(2 * np.pi * pitch * np.arange(length) / RATE, harmonics) + phases).sum(axis=1)
    return voiced / np.std(voiced)


def look(attribution: Attribution, phones: int, since: float, way: str) -> None:
    """A look at every seat's microphone test, from host time `since`: "room", as the room looks
    (up to where every stream has come); "all", all the audio since; "anew", that with every
    pair's margin read anew (the other players' voices as each phone hears them, as first
    written)."""
    for seat in range(phones):
        if way == "room":
            attribution.voiced_between(seat, since, range(phones))
        elif way == "all":
            attribution.crosstalk.voiced_s(seat, since)
        else:
            times, _level = attribution.crosstalk.tracks[seat].window(since, float("inf"))
            attribution.crosstalk.others_at(seat, times, read=True)


def cpu_per_call(call: object, repeat: int) -> float:
    best = float("inf")
    for _ in range(3):  # the best of three rounds: the least disturbed by other work
        start = time.process_time()
        for _ in range(repeat):
            call()  # type: ignore[operator]
        best = min(best, (time.process_time() - start) / repeat)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--phones", type=count_at_most(16, "the web table's most seats", least=1), default=8,
                        help="phones at the table (2-16, default 8)")
    parser.add_argument("--seconds", type=count_at_most(120, "the streams are held whole in memory"), default=20,
                        help="seconds of the table's audio (5-120, default 20)")
    parser.add_argument("--seed", type=count_at_most(2**32 - 1, "a seed", least=0), default=0)
    args = parser.parse_args(argv)
    if args.phones < 2:
        parser.error(f"--phones {args.phones}: a crosstalk check needs 2 phones or more (2-16)")
    if args.seconds < 5:
        parser.error(f"--seconds {args.seconds}: give 5 to 120 (the margins need a few seconds of talk)")
    return run_command(lambda: bench(args), ())  # Ctrl+C: one line, not a traceback


def bench(args: argparse.Namespace) -> int:
    audio = streams(args.phones, args.seconds, np.random.default_rng(args.seed))
    attribution: Attribution = Attribution()
    clock = lambda index: 100.0 + index / RATE  # noqa: E731 - every phone on the host's clock
    start = time.process_time()
    for first in range(0, audio.shape[1] - CHUNK + 1, CHUNK):
        for seat in range(args.phones):
            attribution.feed(seat, audio[seat, first:first + CHUNK], first, clock)
    feed_ms = (time.process_time() - start) / args.seconds * 1000
    end = 100.0 + audio.shape[1] / RATE
    room = cpu_per_call(lambda: look(attribution, args.phones, end - 1 / LOOKS_PER_S, "room"), 10)
    since = max(100.0, end - KEEP_S)
    again = cpu_per_call(lambda: look(attribution, args.phones, since, "all"), 10)
    anew = cpu_per_call(lambda: look(attribution, args.phones, since, "anew"), 10)
    print(f"crosstalk check, {args.phones} phones, {args.seconds} s of talk, the others {UNDER_DB:g} dB under "
          f"(seed {args.seed})")
    print(f"  feed (loudness, margins read every second): {feed_ms:.1f} ms CPU per second of the table "
          f"({feed_ms / 10:.1f} % of a core)")
    print(f"  the microphone test's look at every seat, as the room looks: {room * 1000:.2f} ms "
          f"({room * LOOKS_PER_S * 100:.2f} % of a core at {LOOKS_PER_S} looks a second)")
    print(f"  looking again at all the test's audio ({end - since:.0f} s) at each look: "
          f"{again / room:.0f} times as much")
    print(f"  the same, every pair's margin read anew at each look: {anew / room:.0f} times as much")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
