"""End to end: a human's shout played into the virtual microphone races a bot in a real game
session, and the race goes by the shout's audio onset, not by when it was recognised."""

from __future__ import annotations

import threading
import time

from doubles import FixedBot
from voice_helpers import make_clip

from cdc_env.dice import InjectedDice
from cdc_env.rules import load_ruleset
from voice.live import open_listener
from voice.session import Keyboard, PlaySession, SeatPlayer


class ShoutsWhenTheRaceOpens:
    """A view that plays the human's clip into the microphone as soon as the race is shown."""

    def __init__(self, microphone, clip) -> None:
        self.microphone, self.clip = microphone, clip
        self.said: list[tuple[float, str]] = []
        self.played_at: float | None = None

    def show(self, session) -> None:
        pass

    def ask(self, session, decision, options) -> None:
        pass

    def voice(self, seat: int, status: str) -> None:
        pass

    def say(self, text: str) -> None:
        self.said.append((time.monotonic(), text))
        if text.startswith("RACE") and self.played_at is None:
            self.played_at = time.monotonic()
            threading.Thread(target=lambda: self.microphone.play(self.clip.path).wait(), daemon=True).start()


def test_human_voice_beats_a_bot_by_onset_though_recognised_later(virtual_microphone, ko_model,
                                                                  ko_lexicon, ko_phrases) -> None:
    # The human starts "Pas mou le caillou" (its Korean test phrase) 0.2 s into the race; the
    # bot shouts at 0.9 s. Recognising the whole phrase takes longer than 0.9 s.
    clip = make_clip(ko_phrases["pas_mou_le_caillou"], lead_s=0.2, tail_s=1.0)
    listener = open_listener(ko_model, ko_lexicon, [0], ["pulse"])
    read, write = __import__("os").pipe()
    typed = __import__("os").fdopen(write, "w")
    typed.write("1\n")  # the human rolls by keyboard
    typed.flush()
    view = ShoutsWhenTheRaceOpens(virtual_microphone, clip)
    # Seat 0 (the human) rolls 1,1,2, a Chouette-Velute of 8; then the bot rolls 6,6,6 and wins.
    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(900))],
                          view=view, keyboard=Keyboard(__import__("os").fdopen(read, "r")),
                          listener=listener, dice=InjectedDice([1, 6, 1, 1, 2, 6, 6, 6]),
                          setup={"scores": [0, 300]})
    try:
        state = session.run()
    finally:
        listener.close()
    shouts = {s.seat: s for s in session.race_log[0]}
    assert shouts[0].by == "voice", view.said
    assert shouts[1].by == "bot" and shouts[1].onset_ms == 900
    # The clip's speech starts 0.2 s after it is played (plus the sound server's latency).
    assert 150 <= shouts[0].onset_ms <= 600, shouts[0]
    said = [text for _, text in view.said]
    bot_line = next(i for i, text in enumerate(said) if "(bot)" in text)
    voice_line = next(i for i, text in enumerate(said) if "(voice)" in text)
    assert bot_line < voice_line, "the bot's shout was shown before the human's was recognised"
    assert state.scores[0] == 8  # the human won the Chouette-Velute
    assert state.winner == 1
