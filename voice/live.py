"""Live listening for a game: one microphone (or channel) and one recogniser per human.

Each microphone is read on its own thread and fed to its recogniser; what the recognisers
hear comes back to the game as `Heard(seat, intent, onset)` with onsets on the game's clock
(time.monotonic, from the audio's own sample count); `intent` is None for an utterance no
phrase clearly won (the player is asked to say it again). A device that fails mid-game raises
`InputLost` at the next poll, and the session goes on with the keyboard.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from voice.crosstalk import Attribution
from voice.intents import check_game_lexicon, unsayable
from voice.lexicon import Lexicon, load_lexicon
from voice.microphone import Microphone, MicrophoneError, devices_refusal, parse_device
from voice.model import find_model, load_model
from voice.recogniser import Detection, Outcome, Recogniser
from voice.session import Heard, InputLost


def heard(seat: int, outcome: Outcome) -> Heard:
    """What the session hears: the intent, or None for "not understood"."""
    intent = outcome.intent if isinstance(outcome, Detection) else None
    return Heard(seat, intent, outcome.onset_s)


@dataclass
class _Ear:
    seat: int
    microphone: Microphone
    recogniser: Recogniser
    lock: threading.Lock


class MicrophoneListener:
    def __init__(self, ears: list[_Ear]) -> None:
        self.ears = ears
        self.seats = [ear.seat for ear in ears]
        # Each microphone also hears the other humans: an utterance goes to the seat whose
        # microphone heard it loudest (voice/crosstalk.py), once the others have been read past it.
        self.attribution: Attribution[Outcome] = Attribution()
        self._problem: str | None = None
        self._running = True
        self._threads = [threading.Thread(target=self._listen, args=(ear,), daemon=True) for ear in ears]
        for thread in self._threads:
            thread.start()

    def _listen(self, ear: _Ear) -> None:
        try:
            while self._running:
                try:
                    block, start = ear.microphone.read()
                except MicrophoneError as error:
                    if self._running:
                        self._problem = f"seat {ear.seat + 1}'s microphone: {error}"
                    return
                self.attribution.feed(ear.seat, block, start, ear.microphone.clock)
                with ear.lock:
                    detections = ear.recogniser.accept(block, start)
                for outcome in detections:
                    self.attribution.hold(ear.seat, outcome, time.monotonic())
        except Exception as error:  # noqa: BLE001 - a fault of ours: the seat must not go deaf unsaid
            # Anything else ended this thread without a word: the seat deaf, the board saying
            # "listening", the microphone's queue growing. The game goes on at the keyboard.
            if self._running:
                self._problem = f"seat {ear.seat + 1}'s listening stopped ({type(error).__name__}: {error})"

    def listen_for(self, intents: set[str], race: bool = False) -> None:
        for ear in self.ears:
            with ear.lock:
                known = [i for i in sorted(intents) if i in ear.recogniser.lexicon]
                for outcome in ear.recogniser.set_intents(known, race=race):
                    self.attribution.hold(ear.seat, outcome, time.monotonic())

    def poll(self) -> list[Heard]:
        if self._problem:
            raise InputLost(self._problem)
        return [heard(seat, outcome) for seat, outcome in self.attribution.settled(time.monotonic(), self.seats)]

    def holding(self) -> bool:
        return self.attribution.holding()

    def mark_playback(self, start: float, end: float) -> None:
        self.attribution.mask_playback(start, end)
        for ear in self.ears:
            with ear.lock:
                ear.recogniser.mask_playback(start, end)

    def close(self) -> None:
        self._running = False
        for ear in self.ears:
            ear.microphone.stop()


def build_listener(model: str | None, lexicon: str, seats: Sequence[int], devices: Sequence[str] | None,
                   report: Callable[[str], None] = print) -> MicrophoneListener:
    """Load the model and the lexicon, open one input per human seat, wait for audio to flow.
    Raises ModelNotFoundError, LexiconError or MicrophoneError with what to do."""
    specs = list(devices or [])
    refusal = devices_refusal(len(seats), devices)
    if refusal is not None:
        raise MicrophoneError(refusal)
    vosk_model = load_model(find_model(model, download=model is None))
    words = check_game_lexicon(load_lexicon(lexicon))
    listener = open_listener(vosk_model, words, seats, specs)
    # Every phrase the model cannot hear, with the word that breaks it, once at start-up (the
    # recogniser checked the whole lexicon when it was built).
    first = listener.ears[0].recogniser
    for problem in first.unknown_words:
        report(f"lexicon: {problem}; add a sound-alike spelling to {lexicon}")
    for intent in first.silent_intents:
        report(f"lexicon: '{intent}' has no phrase the model knows: it cannot be said")
    if missing := unsayable(words):
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
        report(f"lexicon: {len(missing)} of the game's intents have no entry in {lexicon}, so they cannot be said: "
               f"{shown} (configs/voice/fr.yaml has them all)")
    report(f"listening on {len(seats)} microphone(s) with the model {vosk_model.path}")
    return listener


def open_listener(vosk_model: Any, words: Lexicon, seats: Sequence[int],
                  specs: Sequence[str]) -> MicrophoneListener:
    """One microphone and recogniser per seat (specs: one `DEVICE[:CHANNEL]` per seat, or none
    for the default input), started, with audio flowing."""
    ears: list[_Ear] = []
    try:
        for index, seat in enumerate(seats):
            device, channel = parse_device(specs[index] if specs else None)
            microphone = Microphone(device, channel)
            # Nothing is listened for until the game asks (listen_for): intents that share a
            # phrase (the bird Chouette, the combination Chouette) are never active together.
            # crowded: several microphones in one room hear each other's players (voice/crosstalk.py).
            recogniser = Recogniser(vosk_model, words, intents=[], clock=microphone.clock, crowded=len(seats) > 1)
            microphone.start()
            ears.append(_Ear(seat, microphone, recogniser, threading.Lock()))
        for ear in ears:
            ear.microphone.wait_started()
    except BaseException:
        # One microphone that cannot start stops them all: the game goes on by keyboard, and a
        # microphone left recording filled a queue nobody read (and kept its device open).
        for ear in ears:
            ear.microphone.stop()
        raise
    return MicrophoneListener(ears)
