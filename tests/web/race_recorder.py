"""A measurement, not a test (issue 26): record what the host gets from the phones in a browser
test, then replay it through any version of voice/phone_clock.py.

Record (a pytest plugin: every PhoneClock's pings, chunk headers with their arrival, samples and
chirps, and the tests' PulseAudio plays, written at the end to REC.json and REC.npz):

    REC_OUT=/tmp/rec-1 PYTHONPATH=$PWD:$PWD/tests/web .venv/bin/python -m pytest -q \
        -p race_recorder tests/web/test_browser.py -k two_phones

Replay (the PhoneClock that PYTHONPATH gives; the race test's two phones): each phone's shout
is found in its own samples, and its host_time is read as the host would have it 0.5 to 12 s
after the shout's samples came; printed: the onset gap's error against the true 130 ms.

    PYTHONPATH=$PWD .venv/bin/python tests/web/race_recorder.py /tmp/rec-1 [/tmp/rec-2 ...]
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import numpy as np

from voice import phone_clock

AHEAD_MS = 130.0  # the race test's true gap, once each phone's delay is taken out
LAGS_S = (0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0)
LOUD = 1000  # the tests' room is digital silence under the sounds played

_rec: dict[str, Any] = {"clocks": {}, "plays": []}


def _of(clock: phone_clock.PhoneClock) -> dict[str, Any]:
    return _rec["clocks"].setdefault(str(id(clock)), {"chunks": [], "pcm": [], "chirps": [], "pings": []})


def _wrap(name: str, note: Any) -> None:
    method = getattr(phone_clock.PhoneClock, name)

    def wrapped(self: phone_clock.PhoneClock, *args: Any) -> Any:
        note(_of(self), *args)
        return method(self, *args)
    setattr(phone_clock.PhoneClock, name, wrapped)


def pytest_configure(config: Any) -> None:
    _wrap("ping", lambda rec, *t: rec["pings"].append(t))
    _wrap("chunk", lambda rec, first, frames, ms: rec["chunks"].append((first, frames, ms, time.monotonic())))
    _wrap("feed", lambda rec, pcm, first: rec["pcm"].append((first, np.asarray(pcm).copy())))
    _wrap("expect_chirp", lambda rec, at: rec["chirps"].append(at))


def pytest_runtest_setup(item: Any) -> None:
    helpers = sys.modules["web_helpers"]
    play = helpers.Pulse.play
    if getattr(play, "recorded", False):
        return

    def recorded(self: Any, sound: Any, path: Any) -> Any:
        _rec["plays"].append((time.monotonic(), str(path)))
        return play(self, sound, path)
    recorded.recorded = True  # type: ignore[attr-defined]
    helpers.Pulse.play = recorded


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    out = os.environ.get("REC_OUT")
    if not out:
        return
    meta: dict[str, Any] = {"plays": _rec["plays"], "exit": int(exitstatus), "clocks": {}}
    arrays: dict[str, np.ndarray] = {}
    for key, rec in _rec["clocks"].items():
        meta["clocks"][key] = {k: rec[k] for k in ("chunks", "chirps", "pings")}
        if rec["pcm"]:
            first = rec["pcm"][0][0]
            audio = np.zeros(rec["pcm"][-1][0] + len(rec["pcm"][-1][1]) - first, np.int16)
            for at, pcm in rec["pcm"]:
                audio[at - first:at - first + len(pcm)] = pcm
            arrays[f"pcm_{key}"] = audio
            meta["clocks"][key]["pcm_first"] = first
    with open(out + ".json", "w") as file:
        json.dump(meta, file)
    np.savez_compressed(out + ".npz", **arrays)  # type: ignore[arg-type]


def replay(rec: dict[str, Any], audio: np.ndarray, upto_s: float) -> phone_clock.PhoneClock:
    """A PhoneClock given what the host had from this phone by host time upto_s."""
    clock = phone_clock.PhoneClock()
    events = sorted([(p[1] / 1000, 0, p) for p in rec["pings"]] + [(c[3], 1, c) for c in rec["chunks"]],
                    key=lambda e: e[0])
    chirps = sorted(rec["chirps"])
    first = rec["pcm_first"]
    for at, kind, event in events:
        if at > upto_s:
            break
        while chirps and chirps[0] <= at:
            clock.expect_chirp(chirps.pop(0))
        if kind == 0:
            clock.ping(*event)
            continue
        start, frames = event[0], event[1]
        clock.chunk(start, frames, event[2])
        clock.feed(audio[start - first:start - first + frames], start)
        clock.host_time(start)  # the recogniser asks as it decodes
    return clock


def gap_errors(path: str) -> tuple[list[float], list[str]] | None:
    """The onset gap's error (ms) at each of LAGS_S, and each phone's calibration state then."""
    with open(path + ".json") as file:
        meta = json.load(file)
    arrays = np.load(path + ".npz")
    shouts = [t for t, name in meta["plays"] if name.endswith("shouts.wav")]
    phones = [(k, c) for k, c in meta["clocks"].items() if c["chirps"] and f"pcm_{k}" in arrays][-2:]
    if not shouts or len(phones) != 2:
        return None
    times: list[list[float]] = []
    states: list[str] = []
    for key, rec in phones:
        audio, first = arrays[f"pcm_{key}"], rec["pcm_first"]
        after = next(c[0] for c in rec["chunks"] if c[3] >= shouts[0]) - 8000  # before the file began
        onset = after + int(np.argmax(np.abs(audio[after - first:].astype(np.int32)) > LOUD))
        came = next(c[3] for c in rec["chunks"] if c[0] + c[1] > onset)
        clocks = [replay(rec, audio, came + lag) for lag in LAGS_S]
        times.append([clock.host_time(onset) for clock in clocks])
        states.append(clocks[-1].calibration_state)
    return [(a - b) * 1000 - AHEAD_MS for a, b in zip(*times, strict=True)], states


def main(paths: list[str]) -> int:
    if not paths:
        print("give one recording or more: the REC_OUT the race test was run with (REC.json and REC.npz)",
              file=sys.stderr)
        return 2
    for path in paths:
        if not (os.path.isfile(path + ".json") and os.path.isfile(path + ".npz")):
            print(f"{path}: not a recording ({path}.json and {path}.npz are made by the pytest plugin, "
                  "see this file's top)", file=sys.stderr)
            return 2
    print("onset gap error (ms) with host_time read", "/".join(map(str, LAGS_S)), "s after the shout came")
    for path in paths:
        try:
            found = gap_errors(path)
        except (ValueError, KeyError, OSError, StopIteration) as error:
            print(f"{path}: not a recording this replay can read ({error!r})", file=sys.stderr)
            return 2
        if found is None:
            print(f"{path}: no race recorded")
            continue
        errors, states = found
        print(f"{path}: {' '.join(f'{e:.1f}' for e in errors)}  states {states}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
