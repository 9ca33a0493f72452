"""How far the phones' timing chain places onsets on a real browser's chunk stamps.

    python scripts/bench_stamps.py [--set report|tune] [--drift-ppm 0,100,-150]

tests/voice/data/chromium_stamps.npz holds the audio chunks' stamps (`performance.now()` as the
page received each 100 ms chunk) of headless Chromium phones, logged from `play.py --web` on a
loaded 2-core machine (session 52; docs/web.md, "The capture's buffer in a real browser"): 7
streams of 2 to 6 minutes to tune on, 4 to report on. Their floor steps by 10-12 ms every tens
of seconds, the capture's buffer growing with no sample lost.

Each stream is replayed through voice/phone_clock.PhoneClock with a round trip of zero (a phone
ms is a host ms), room noise as its samples and the chirp heard 3 s in. Every second from 5 s
on, host_time's error at the chunk's last sample is read against the truth: the chirp's time as
calibrated plus the samples since at the audio clock's rate. These phones' audio clocks did not
drift against their pages' clocks; `--drift-ppm` adds a drift to the stamps. Prints the error's
median, p95 and largest, in ms, for each drift.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cdc_env.ctrl_c_at_start  # noqa: F401, I001 - first: a Ctrl+C while the libraries load is one line

from cdc_env.cli import number_between, run_command, standard_output
from voice.phone_clock import PhoneClock, make_chirp

RATE = 16000
CHUNK = 1600  # every recorded chunk: 100 ms, as the page sends
STAMPS = Path(__file__).resolve().parent.parent / "tests" / "voice" / "data" / "chromium_stamps.npz"
CHIRP_AT = 3 * RATE + 123  # the chirp's first sample in each stream
CHIRP_LEVEL = 8000.0  # over room noise of RMS 300: 25 dB
FROM_S = 5  # errors are read from here on (the chirp found, 2 s into the stream)
MAX_DRIFT_PPM = 1000.0


def streams(which: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The set's streams: each chunk's first sample (every chunk is CHUNK samples) and stamp (ms
    from the stream's first)."""
    data = np.load(STAMPS)
    count = len([key for key in data.files if key.startswith(f"{which}_") and key.endswith("_first")])
    return [(data[f"{which}_{k}_first"].astype(np.int64), data[f"{which}_{k}_ms"].astype(np.float64))
            for k in range(count)]


def onset_errors(firsts: np.ndarray, stamps: np.ndarray, drift_ppm: float = 0.0, seed: int = 7) -> list[float]:
    """One stream through a PhoneClock, the chirp heard CHIRP_AT and played 60 ms before the
    stamp of the chunk that holds it: host_time's error (ms) every second from FROM_S on."""
    clock = PhoneClock()
    clock.ping(0.0, 0.0, 0.0, 0.0)  # phone ms are host ms / 1000
    rng = np.random.default_rng(seed)
    chirp = make_chirp() * CHIRP_LEVEL
    heard: float | None = None
    errors: list[float] = []
    for first, ms in zip(firsts.tolist(), stamps.tolist(), strict=True):
        last = first + CHUNK - 1
        stamp = ms + drift_ppm * 1e-6 * last * 1000.0 / RATE
        clock.chunk(first, CHUNK, stamp)
        pcm = rng.normal(0.0, 300.0, CHUNK)
        if first <= CHIRP_AT <= last:
            clock.expect_chirp((stamp - 60.0) / 1000.0)
        lo, hi = max(CHIRP_AT, first), min(CHIRP_AT + len(chirp), last + 1)
        if lo < hi:
            pcm[lo - first:hi - first] += chirp[lo - CHIRP_AT:hi - CHIRP_AT]
        clock.feed(np.clip(np.rint(pcm), -32768, 32767).astype(np.int16), first)
        if last >= FROM_S * RATE and (last + 1) % RATE == 0:
            if heard is None:
                if clock.input_delay_s is None:
                    raise RuntimeError("the chirp was not found: the replay itself is broken")
                heard = clock.host_time(CHIRP_AT)  # where the chirp was placed when calibrated
            truth = heard + (last - CHIRP_AT) / RATE * (1 + drift_ppm * 1e-6)
            errors.append((clock.host_time(last) - truth) * 1000.0)
    return errors


def drifts(text: str) -> list[float]:
    """--drift-ppm: comma-separated drifts, each within ±MAX_DRIFT_PPM."""
    parse = number_between(-MAX_DRIFT_PPM, MAX_DRIFT_PPM)
    return [parse(part) for part in text.split(",")]


def bench(which: str, drift_list: list[float]) -> int:
    chosen = streams(which)
    seconds = [round(len(firsts) / 10) for firsts, _ in chosen]
    print(f"real Chromium stamps, {which} set: {len(chosen)} streams of {seconds} s; a chirp heard 3 s in")
    print(f"{'added drift (ppm)':>18} {'onset error median / p95 / max (ms)':>38}")
    for drift in drift_list:
        errors = np.abs(np.concatenate([onset_errors(firsts, stamps, drift) for firsts, stamps in chosen]))
        figures = f"{np.median(errors):.1f} / {np.percentile(errors, 95):.1f} / {errors.max():.1f}"
        print(f"{drift:>+18.0f} {figures:>38}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=("report", "tune"), default="report",
                        help="the streams to report on, or those the chain was tuned on")
    parser.add_argument("--drift-ppm", type=drifts, default=[0.0, 100.0, -150.0], metavar="PPM,...",
                        help=f"drifts added to the stamps, comma-separated, each within ±{MAX_DRIFT_PPM:g} "
                             "(default: 0,100,-150)")
    args = parser.parse_args(argv)
    def figures() -> int:
        with standard_output("the figures"):  # `| head`: quiet, not a BrokenPipeError traceback
            return bench(args.set, args.drift_ppm)

    return run_command(figures, ())  # Ctrl+C: one line, not a traceback


if __name__ == "__main__":
    sys.exit(main())
