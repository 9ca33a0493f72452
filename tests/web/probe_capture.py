"""A measurement, not a test (pytest collects it only when named): two headless Chromium phones
on the tests' private PulseAudio hear ten chirps 1.5 s apart; each page keeps, per chunk, its
stamp, the sample index of the first loud sample, the track's `stats` and the context's
`getOutputTimestamp()`. Printed per phone: where each chirp's onset lands against its play
time (the true sample clock, common delays taken out at the first chirp) and where a
PhoneClock fed the stamps up to 1 s after it puts it; then the two phones' difference, the
onset gap error the race test checks (issue 26, docs/web.md).

    PYTHONPATH=$PWD .venv/bin/python -m pytest -q -s tests/web/probe_capture.py
"""

from __future__ import annotations

import json
import os
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from web_helpers import SOURCES, wait_for

from voice.phone_clock import PhoneClock, make_chirp
from voice.session import SeatPlayer

RECORD = """
const a = window.cdcPhoneAudio(), track = a.media.getAudioTracks()[0];
window.probe = [];
a.node.port.addEventListener("message", (event) => {
  const now = performance.now(), pcm = event.data.pcm, out = a.ctx.getOutputTimestamp();
  let loud = -1;
  for (let i = 0; i < pcm.length; i++) if (Math.abs(pcm[i]) > 3000) { loud = i; break; }
  window.probe.push({first: event.data.first, frames: pcm.length, now, loud,
    stats: track.stats ? track.stats.toJSON() : null, out_ms: out.performanceTime - 1000 * out.contextTime});
});
"""


def seated(driver: Any, seat: int) -> bool:
    return bool(driver.execute_script("return window.cdcPhone.seat") == seat)


def onsets(rows: list[dict[str, Any]]) -> list[int]:
    found: list[int] = []
    for row in rows:
        at = row["first"] + row["loud"]
        if row["loud"] >= 0 and (not found or at - found[-1] > 8000):
            found.append(at)
    return found


def errors_ms(rows: list[dict[str, Any]], plays_ms: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """Per chirp: the true sample clock's move and the PhoneClock's error, both against the first."""
    true, error = [], []
    for play, onset in zip(plays_ms, onsets(rows), strict=False):
        clock = PhoneClock()
        for row in rows:
            if row["first"] > onset + 16000:
                break  # what the host has 1 s after the sound
            clock.chunk(row["first"], row["frames"], row["now"])
        true.append(play - onset / 16)
        error.append(clock.phone_time(onset) - play)
    t, e = np.array(true), np.array(error)
    return t - t[0], e - e[0]


def test_probe_capture(web_table: Any, room_browsers: Any, pulse: Any, tmp_path: Path) -> None:
    table = web_table([SeatPlayer("Alice"), SeatPlayer("Bruno")], ruleset="basic", play=lambda s, r: None)
    phones = [room_browsers.open(source=source) for source in SOURCES]
    for seat, phone in enumerate(phones):
        phone.get(f"{table.phone_url}&seat={seat + 1}")
        wait_for("seated", partial(seated, phone, seat))
    for phone in phones:
        phone.find_element("css selector", "#mic-button").click()
    wait_for("both on", lambda: all(p.execute_script("return window.cdcPhone.mic") == "on" for p in phones))
    for phone in phones:
        phone.execute_script(RECORD)
    chirp, plays = make_chirp(), []
    for k in range(10):
        time.sleep(1.5)
        sound = np.zeros((16000, 2))
        sound[:len(chirp)] = chirp[:, None]
        plays.append(time.monotonic())
        pulse.play(sound, tmp_path / f"chirp{k}.wav")
    time.sleep(2.0)
    runs = [p.execute_script("return window.probe") for p in phones]
    plays_ms = [[table.room.seats[s].clock.to_phone(t) for t in plays] for s in (0, 1)]
    Path(os.environ.get("PROBE_OUT", tmp_path / "probe.json")).write_text(json.dumps([runs, plays_ms]))
    results = [errors_ms(rows, p) for rows, p in zip(runs, plays_ms, strict=True)]
    for s, (true, error) in enumerate(results):
        print(f"phone {s + 1}: true sample clock {np.round(true)} ms; PhoneClock error {np.round(error)} ms")
    print("onset gap error (phone 1 - phone 2):", np.round(results[0][1] - results[1][1]), "ms")
    print("true sample clocks apart by:", np.round(results[0][0] - results[1][0], 1), "ms")
