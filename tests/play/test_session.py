"""The play session: keyboard answers, races in real time decided by onsets, saving."""

from __future__ import annotations

import io
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from doubles import FixedBot, Recorder

from cdc_env.actions import (
    Action,
    ChallengeGrelottine,
    ChallengeSoufflette,
    DeclareCivet,
    KeepDice,
    Pass,
    Roll,
    Shout,
)
from cdc_env.dice import InjectedDice
from cdc_env.game import Decision, GameState
from cdc_env.rules import load_ruleset
from voice.session import Heard, InputLost, Keyboard, PlaySession, RaceShout, Said, SeatPlayer, UnknownPhrase


def told(said: list[str], english: str) -> Said:
    """The line said to the whole table that begins with `english` (a Said: the pages show it)."""
    line = next(line for line in said if line.startswith(english))
    assert isinstance(line, Said), f"said to the host alone: {line}"
    return line


class TypedLater:
    """A keyboard whose lines arrive at given times after the first race starts."""

    def __init__(self) -> None:
        read, write = os.pipe()
        self.reader = os.fdopen(read, "r")
        self.writer = os.fdopen(write, "w")

    def type(self, text: str, after_s: float = 0.0) -> None:
        def later() -> None:
            time.sleep(after_s)
            self.writer.write(text + "\n")
            self.writer.flush()
        threading.Thread(target=later, daemon=True).start()


class LateListener:
    """A microphone that reports a shout whose onset is early but which it recognises late."""

    def __init__(self, seat: int, intent: str, onset_after_s: float, heard_after_s: float) -> None:
        self.seats = [seat]
        self.intent, self.onset_after_s, self.heard_after_s = intent, onset_after_s, heard_after_s
        self.started: float | None = None
        self.marked: list[tuple[float, float]] = []
        self.delivered = False
        self.asked: list[tuple[set[str], bool]] = []  # each listen_for: (intents, race)

    def listen_for(self, intents: set[str], race: bool = False) -> None:
        self.asked.append((set(intents), race))
        if self.intent in intents and self.started is None:
            self.started = time.monotonic()

    def poll(self) -> list[Heard]:
        if self.started is None or self.delivered or time.monotonic() - self.started < self.heard_after_s:
            return []
        self.delivered = True
        return [Heard(self.seats[0], self.intent, self.started + self.onset_after_s)]

    def mark_playback(self, start: float, end: float) -> None:
        self.marked.append((start, end))

    def close(self) -> None:
        pass


def chouette_velute_session(keyboard: TypedLater, bot_onset_ms: float, listener=None,
                            bot_first: bool = False) -> PlaySession:
    # Seat 0 (human) starts (dice 1 vs 6), rolls 1,1,2: a Chouette-Velute of 8. Then seat 1
    # (bot) rolls 6,6,6 with a score set to win at once, to end the game. `bot_first`: the bot
    # starts (6 vs 1) and rolls the Chouette-Velute, then Ana wins with 6,6,6 from 300.
    dice = InjectedDice([6, 1, 1, 1, 2, 6, 6, 6] if bot_first else [1, 6, 1, 1, 2, 6, 6, 6])
    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(bot_onset_ms))],
                          view=Recorder(), keyboard=Keyboard(keyboard.reader), listener=listener, dice=dice,
                          setup={"scores": [300, 0] if bot_first else [0, 300]})
    return session


def test_keyboard_answers_and_a_race_won_by_the_earlier_key_press() -> None:
    keyboard = TypedLater()
    keyboard.type("1", 0.0)        # roll
    keyboard.type("", 0.35)        # Enter during the race: the shout begins ~350 ms in
    session = chouette_velute_session(keyboard, bot_onset_ms=1200)
    state = session.run()
    shouts = {s.seat: s for s in session.race_log[0]}
    assert shouts[0].by == "keyboard" and 300 <= shouts[0].onset_ms <= 700
    assert shouts[1].by == "bot" and shouts[1].onset_ms == 1200
    assert state.scores[0] == 8
    assert state.winner == 1


class AskedInRaces(FixedBot):
    """FixedBot that keeps every race decision the table asked it."""

    def __init__(self, onset_ms: float) -> None:
        super().__init__(onset_ms)
        self.races: list[Decision] = []

    def act(self, state: GameState, decision: Decision) -> Action:
        if decision.kind == "race":
            self.races.append(decision)
        return super().act(state, decision)


def test_a_bot_is_asked_in_a_race_with_the_engines_bevues_for_its_seat() -> None:
    # The live table asks its bots itself, at the race's start; its decision named no Bévue, so a
    # network (ModelBot masks decision.bevues) could shout a wrong phrase at a live table alone.
    keyboard = TypedLater()
    keyboard.type("1", 0.0)  # Ana throws 1, 1, 2: a Chouette-Velute, a race; then the table stops
    threading.Timer(0.5, keyboard.writer.close).start()
    bot = AskedInRaces(400)
    session = PlaySession(load_ruleset("classic"), [SeatPlayer("Ana"), SeatPlayer("bot", bot)],
                          view=Recorder(), keyboard=Keyboard(keyboard.reader),
                          dice=InjectedDice([1, 6, 1, 1, 2, 6, 6, 6]), setup={"scores": [0, 300]})
    with pytest.raises(EOFError):
        session.run()
    [asked] = bot.races
    right = Shout("pas_mou_le_caillou")
    assert right in asked.options and right not in asked.bevues
    assert asked.bevues and set(asked.bevues) == {o for o in asked.options if isinstance(o, Shout)} - {right}


def test_bot_faster_than_the_key_press_wins() -> None:
    keyboard = TypedLater()
    keyboard.type("1", 0.0)
    keyboard.type("", 0.9)
    session = chouette_velute_session(keyboard, bot_onset_ms=400)
    state = session.run()
    assert state.log[[e["type"] for e in state.log].index("race")]["tied"] == [1]
    assert state.scores[1] >= 300 + 8


def test_race_is_decided_by_onset_not_by_recognition_time() -> None:
    # The human's shout began 200 ms in but the recogniser only reported it at 1.5 s, long after
    # the bot shouted at 600 ms: the human still wins.
    keyboard = TypedLater()
    keyboard.type("1", 0.0)
    listener = LateListener(0, "pas_mou_le_caillou", onset_after_s=0.2, heard_after_s=1.5)
    session = chouette_velute_session(keyboard, bot_onset_ms=600, listener=listener)
    state = session.run()
    shouts = {s.seat: s for s in session.race_log[0]}
    assert shouts[0].by == "voice" and abs(shouts[0].onset_ms - 200) < 60
    assert state.scores[0] == 8
    # The race was opened for its phrase alone (the recognisers' race-time look), and only it.
    assert [intents for intents, race in listener.asked if race] == [{"pas_mou_le_caillou"}]
    # ...and closed as it was settled: the bot's winning turn (no pause between moves at this
    # table's pace) was listened to for any false shout, not with the race's look.
    after = listener.asked[[race for _, race in listener.asked].index(True) + 1]
    assert after == ({"pas_mou_le_caillou"}, False)  # basic's only race phrase (it plays no Suite)


@pytest.mark.parametrize(("ruleset", "played", "not_played"), [
    ("classic", {"pas_mou_le_caillou", "grelotte_ca_picote", "sans_fin"}, {"velutee", "mecreant", "pelican"}),
    ("complete", {"velutee", "patte_de_canard", "artichette", "pelican", "mecreant"}, set()),
])
def test_between_races_only_the_rows_the_ruleset_plays_are_listened_for(ruleset: str, played: set[str],
                                                                       not_played: set[str]) -> None:
    # Every race phrase was listened for at every table: at classic « Velutée ! » (a row it does
    # not play) was live beside the combination « vélute » of a Civet, each mishearing a Bévue.
    keyboard = TypedLater()
    keyboard.type("1", 0.0)

    class PassingOnTheCul(Recorder):
        """At complete Ana is asked whether she buys the bot's cul: « 2 » (no), typed once asked
        (typed at a set time, under load it came before the question and the game waited)."""

        def ask(self, session: PlaySession, decision: Decision, options: list[Action]) -> None:
            super().ask(session, decision, options)
            if decision.kind == "buy_cul":
                keyboard.type("2", 0.05)

    listener = LateListener(0, "pas_mou_le_caillou", onset_after_s=0.2, heard_after_s=1.5)
    session = PlaySession(load_ruleset(ruleset), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(600))],
                          view=PassingOnTheCul(), keyboard=Keyboard(keyboard.reader), listener=listener,
                          dice=InjectedDice([1, 6, 1, 1, 2, 6, 6, 6]), setup={"scores": [0, 300]})
    session.run()
    between = [intents for intents, race in listener.asked if not race]
    assert between and all(played <= intents and not intents & not_played for intents in between)
    assert set(session.race_shouts) >= played and not set(session.race_shouts) & not_played


def test_where_the_game_listens_the_bots_shouts_are_spoken_once_the_race_is_decided() -> None:
    # --speak: the bot's shout at 400 ms was spoken at once and masked in the microphones for its
    # length and 0.3 s more, so Ana's shout begun at 900 ms (under it) was not heard: she lost.
    # Now the bots' shouts are spoken after the race, and the mask covers no part of it.
    keyboard = TypedLater()
    keyboard.type("1", 0.0)
    listener = LateListener(0, "pas_mou_le_caillou", onset_after_s=0.9, heard_after_s=1.2)
    session = chouette_velute_session(keyboard, bot_onset_ms=400, listener=listener)
    spoken: list[tuple[str, float]] = []

    def speak(text: str) -> float:
        spoken.append((text, time.monotonic()))
        return 0.2

    session.speak = speak
    session.run()
    assert listener.started is not None
    assert [text for text, _ in spoken] == ["pas mou le caillou"]
    assert spoken[0][1] >= listener.started + 1.2  # after Ana's shout was heard: the race decided
    assert [end - start for start, end in listener.marked] == [pytest.approx(0.2 + 0.3)]
    assert listener.marked[0][0] > listener.started + 0.9  # her onset is under no mask
    # Where nobody listens (keys alone), a bot's shout is heard as it is made.
    keyboard = TypedLater()
    keyboard.type("1", 0.0)
    keyboard.type("", 0.9)
    session = chouette_velute_session(keyboard, bot_onset_ms=400)
    spoken.clear()
    session.speak = speak
    began = time.monotonic()
    session.run()
    assert [text for text, _ in spoken] == ["pas mou le caillou"] and spoken[0][1] - began < 0.85


class SoundingListener(LateListener):
    """A LateListener whose host plays a sound masked in its audio (the phones' chirp) for
    `sound_s` from its making: `sounding()` says so meanwhile."""

    def __init__(self, *args: Any, sound_s: float) -> None:
        super().__init__(*args)
        self.quiet_at = time.monotonic() + sound_s

    def sounding(self) -> bool:
        return time.monotonic() < self.quiet_at


def test_no_dice_are_shown_while_the_host_plays_a_sound_masked_in_the_phones_audio() -> None:
    # The human rolls at once, while the chirp sounds for 0.6 s: the roll waits for its end,
    # so the race it opens (a Chouette-Velute) starts after it, and the shout the player makes
    # 0.85 s after being asked to roll counts (were the dice shown at once, it would too: the
    # race is open 3 s; what matters is that none of the race's time is under the mask).
    keyboard = TypedLater()
    keyboard.type("1", 0.0)
    listener = SoundingListener(0, "pas_mou_le_caillou", 0.85, 1.0, sound_s=0.6)
    session = chouette_velute_session(keyboard, bot_onset_ms=1200, listener=listener)
    state = session.run()
    assert session._last_race is not None and session._last_race[0] >= listener.quiet_at
    assert state.scores[0] == 8


def test_a_host_sound_that_never_ends_holds_each_move_only_so_long(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("voice.session.HOST_SOUND_WAIT_S", 0.3)
    keyboard = TypedLater()
    keyboard.type("1", 0.0)
    listener = SoundingListener(0, "pas_mou_le_caillou", 0.2, 0.4, sound_s=1e9)
    began = time.monotonic()
    session = chouette_velute_session(keyboard, bot_onset_ms=1200, listener=listener)
    state = session.run()
    assert session._last_race is not None and 0.3 <= session._last_race[0] - began < 1.0
    assert state.winner == 1  # the game went on to its end


def tap_and_voice(tap_s: float, voice_s: float) -> tuple[RaceShout, GameState]:
    """Ana rolls a Chouette-Velute and both taps (at `tap_s`) and says the phrase (from
    `voice_s`, decided at 1.2 s); the bot shouts at 380 ms. Her shout in the race, and the game."""
    keyboard = TypedLater()
    keyboard.type("1", 0.0)
    keyboard.type("", tap_s)
    listener = LateListener(0, "pas_mou_le_caillou", onset_after_s=voice_s, heard_after_s=1.2)
    session = chouette_velute_session(keyboard, bot_onset_ms=380, listener=listener)
    state = session.run()
    ana = [s for s in session.race_log[0] if s.seat == 0]
    assert len(ana) == 1
    return ana[0], state


def test_a_seat_that_taps_while_shouting_races_at_its_earlier_onset_its_voice() -> None:
    # The page says « touchez si vous criez »: Ana's voice from 250 ms, her tap at 500 ms. The tap
    # arrives at once, her voice is decided at 1.2 s. Her shout is her voice's onset, the
    # earlier: she wins (the tap alone, first in, ended the race, and the bot won).
    ana, state = tap_and_voice(0.5, 0.25)
    assert ana.by == "voice" and ana.onset_ms < 300
    assert state.scores[0] == 8


def test_a_tap_before_the_voice_counts_and_a_seat_not_heard_is_not_waited_for() -> None:
    # Ana taps at 250 ms and her voice (heard at 1.2 s) began at 400 ms: the tap stands. A
    # listener that says her microphone is off: the race ends at her tap, waiting for no voice.
    ana, state = tap_and_voice(0.25, 0.4)
    assert ana.by == "keyboard" and ana.onset_ms < 300
    assert state.scores[0] == 8

    class MicOff(LateListener):
        def streaming(self, seat: int) -> bool:
            return False

    keyboard = TypedLater()
    keyboard.type("1", 0.0)
    keyboard.type("", 0.6)
    session = chouette_velute_session(keyboard, bot_onset_ms=380, listener=MicOff(0, "pas_mou_le_caillou", 9, 9))
    began = time.monotonic()
    session.run()
    assert session.race_log[0][-1].by == "keyboard"
    assert time.monotonic() - began < 1.5  # the tap at 0.6 s ended the race (not its voice's 2 s more)
    assert session.race_now == session.race_log[0]


class Batches:
    """Two players' microphones whose room hands over what it heard in batches: one batch each
    time a roll is asked for (several utterances come at once where the room holds them back
    to tell whose they are)."""

    def __init__(self, *batches: list[tuple[int, str]]) -> None:
        self.seats = [0, 1]
        self.batches = list(batches)
        self.armed = False
        self.lost_at = time.monotonic() + 5  # a game that waits on past it waits for ever: lost

    def listen_for(self, intents: set[str], race: bool = False) -> None:
        self.armed = "je_lance" in intents

    def poll(self) -> list[Heard]:
        if time.monotonic() > self.lost_at:
            raise InputLost("nothing more will be said")
        if not self.armed or not self.batches:
            return []
        self.armed = False
        return [Heard(seat, intent, time.monotonic()) for seat, intent in self.batches.pop(0)]

    def mark_playback(self, start: float, end: float) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.mark.parametrize("first", ["answer", "false shout"])
def test_an_answer_and_another_players_false_shout_heard_together_are_both_taken(first: str) -> None:
    # Ana is asked to roll; the room hands over at once her « je lance » and Bob's « pas mou le
    # caillou » said outside any race. Both count, in either order: her roll (1, 3, 6), his
    # Bévue (-10). Bob then rolls 6, 6, 6 from 290 and wins with 390. (Before, the first of the
    # batch was judged and the rest dropped without a word.)
    together = [(0, "je_lance"), (1, "pas_mou_le_caillou")]
    state = heard_in_batches(Batches(together if first == "answer" else together[::-1], [(1, "je_lance")]))
    assert [e["seat"] for e in state.log if e["type"] == "false_shout"] == [1]
    assert state.winner == 1 and state.scores == [0, 390]


def heard_in_batches(listener: Batches) -> GameState:
    """Ana and Bob at `basic` with Bévues, heard by `listener`: Ana throws 1, 3, 6, then Bob
    6, 6, 6 from 300 (290 after a Bévue)."""
    basic = load_ruleset("basic")
    rules = basic.model_copy(update={"bevue": basic.bevue.model_copy(update={"enabled": True})})
    keyboard = TypedLater()
    keyboard.writer.close()  # nothing typed: with the microphones lost, the game ends in an error
    session = PlaySession(rules, [SeatPlayer("Ana"), SeatPlayer("Bob")], view=Recorder(),
                          keyboard=Keyboard(keyboard.reader), listener=listener,
                          dice=InjectedDice([1, 6, 1, 3, 6, 6, 6, 6]), setup={"scores": [0, 300]})
    return session.run()


def test_a_false_shout_said_twice_louder_is_one_bevue() -> None:
    # « Pas mou le caillou ! PAS MOU LE CAILLOU ! » outside a race: the recogniser now hears a
    # louder repeat as a second utterance (another voice's, at a phone), and the game charged
    # two Bévues for one shout. Then Ana rolls (1, 3, 6) and Bob wins with 6, 6, 6.
    state = heard_in_batches(Batches([(1, "pas_mou_le_caillou"), (1, "pas_mou_le_caillou"), (0, "je_lance")],
                                     [(1, "je_lance")]))
    assert [e["seat"] for e in state.log if e["type"] == "false_shout"] == [1]
    assert state.winner == 1 and state.scores == [0, 390]


class EarlyAnswer(Batches):
    """Ana's « je lance », heard as she is asked to roll, but begun a second before the question:
    her last answer said twice (« oui… OUI »), not this question's."""

    def poll(self) -> list[Heard]:
        return [Heard(h.seat, h.intent, h.onset - (1.0 if h.intent == "je_lance" and h.seat == 0 else 0.0))
                for h in super().poll()]


def test_an_answer_begun_before_its_question_does_not_answer_it() -> None:
    # The bot throws first (6 against 1: nothing), the table waits 1.5 s, then Ana is asked.
    listener = EarlyAnswer([(0, "je_lance")])
    keyboard = TypedLater()
    keyboard.type("1", 2.5)  # Ana rolls at the keyboard instead
    threading.Timer(4.0, keyboard.writer.close).start()
    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(900))],
                          view=Recorder(), keyboard=Keyboard(keyboard.reader), listener=listener, pace=1.5,
                          dice=InjectedDice([6, 1, 1, 3, 6, 2, 4, 5, 6, 6, 6]), setup={"scores": [0, 300]})
    state = session.run()
    assert state.winner == 1
    assert next(e for e in state.history if e["seat"] == 0)["action"]["kind"] == "roll"
    assert [m for m in session.misheard if m.answer] == []  # the roll was the keyboard's, not the early voice


class SecondEarly(Batches):
    """Ana's first « je lance » is in time; her second is begun a second before her second turn's
    question (equal to the first's: the same seat, kind and options)."""

    heard = 0

    def poll(self) -> list[Heard]:
        got = super().poll()
        self.heard += bool(got)
        early = 1.0 if self.heard == 2 else 0.0
        return [Heard(h.seat, h.intent, h.onset - (early if h.seat == 0 else 0.0)) for h in got]


def test_an_answer_begun_before_the_next_turns_equal_question_does_not_answer_it() -> None:
    # The question's time was kept while an equal question came back: from the second turn on,
    # an early answer was taken again.
    listener = SecondEarly([(0, "je_lance")], [(0, "je_lance")])
    keyboard = TypedLater()
    keyboard.type("1", 3.5)
    threading.Timer(5.0, keyboard.writer.close).start()
    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(900))],
                          view=Recorder(), keyboard=Keyboard(keyboard.reader), listener=listener, pace=1.5,
                          dice=InjectedDice([1, 6, 1, 3, 6, 2, 4, 5, 2, 4, 5, 6, 6, 6]), setup={"scores": [0, 300]})
    session.run()
    assert [m.phrase for m in session.misheard if m.answer] == ["je_lance"]  # the first turn's only


class ChallengeHeard:
    """Bob is asked to challenge Ana's Néant; Ana shouts falsely 0.1 s later (heard at 0.6 s: her
    Bévue changes the stakes, the question is put again), and Bob's « non », begun at 0.3 s,
    is heard at 1.0 s."""

    seats = [0, 1]

    def __init__(self) -> None:
        self.asked: float | None = None
        self.stage = 0

    def listen_for(self, intents: set[str], race: bool = False) -> None:
        if "non" in intents and self.asked is None:
            self.asked = time.monotonic()

    def poll(self) -> list[Heard]:
        if self.asked is None:
            return []
        since = time.monotonic() - self.asked
        if since > 3:
            raise InputLost("nothing more")
        if self.stage == 0 and since >= 0.6:
            self.stage = 1
            return [Heard(0, "pas_mou_le_caillou", self.asked + 0.1)]
        if self.stage == 1 and since >= 1.0:
            self.stage = 2
            return [Heard(1, "non", self.asked + 0.3)]
        return []

    def mark_playback(self, start: float, end: float) -> None:
        pass

    def close(self) -> None:
        pass


def test_an_answer_to_a_question_put_again_after_anothers_false_shout_is_taken() -> None:
    # The question put again had other stakes (the Bévue moved the scores): it was taken for a
    # new question, and Bob's « non », begun before it was put again, was dropped.
    keyboard = TypedLater()
    keyboard.writer.close()
    state = GameState(load_ruleset("classic"), 2, dice=InjectedDice([1, 3, 2, 3, 6, 6, 6, 6, 6, 6]),
                      setup={"scores": [60, 100], "items": [{"grelottine": 0}, {"grelottine": 1}]})
    while state.pending is not None and state.pending.kind != "grelottine":
        state.apply_action(Pass() if Pass() in state.pending.options else Roll(), seat=state.pending.seat)
    session = PlaySession(load_ruleset("classic"), [SeatPlayer("Ana"), SeatPlayer("Bob")], view=Recorder(),
                          keyboard=Keyboard(keyboard.reader), listener=ChallengeHeard())
    session.state = state
    first = state.pending
    assert first is not None and session._ask_human(first) is None  # Ana's false shout came first
    again = state.pending
    assert state.scores[0] == 50 and again is not None and again != first  # her Bévue: the stakes changed
    assert session._ask_human(again) == Pass()


def test_no_race_answer_outlives_its_race() -> None:
    # A race resumed from a save made in it is run for every seat, those that answered before
    # the save too; the engine asks only the others, and the answers it never asks for must not
    # answer the next race in their seats' place (a stale onset, or a phrase of another race).
    keyboard = TypedLater()
    keyboard.type("1", 0.0)
    keyboard.type("", 0.3)
    session = chouette_velute_session(keyboard, bot_onset_ms=900)
    real = session._run_race
    session._run_race = lambda decision: {**real(decision), 5: Shout("pas_mou_le_caillou", 10.0)}  # type: ignore[method-assign]
    state = session.run()
    assert state.winner == 1 and session._race_answers == {}


class Silent:
    """A bot that rolls and never shouts."""

    def act(self, state: GameState, decision: Decision) -> Action:
        return Roll() if decision.allows(Roll()) else Pass()


@pytest.mark.parametrize("bevues", [True, False])
def test_an_answer_before_a_save_in_a_race_is_not_handed_to_the_race_after_it(bevues: bool, tmp_path: Path) -> None:
    # Classic: Ana throws 1,2,3, a Suite; she stays silent and the game is saved there (a save
    # failing on the next seat's answer, or Ctrl+C, leaves this). Resumed, the race is run again
    # for every seat and Ana presses Enter in it; the tie race « sans fin » follows at once
    # (Ana and the silent bot last). Her re-run answer was kept and handed, unasked, to the tie
    # race: a Bévue (or, without Bévues, an illegal shout that stopped the game).
    rules = load_ruleset("classic")
    rules = rules.model_copy(update={"bevue": rules.bevue.model_copy(update={"enabled": bevues})})
    path = tmp_path / "game.json"

    def players() -> list[SeatPlayer]:
        return [SeatPlayer("Ana"), SeatPlayer("quiet", Silent(), "quiet"), SeatPlayer("loud", FixedBot(500), "loud")]

    before = PlaySession(rules, players(), view=Recorder(), keyboard=Keyboard(io.StringIO("")), save_path=path,
                         dice=InjectedDice([1, 6, 6, 1, 2, 3] + [6, 5, 4, 3, 2, 1] * 10))
    while before.state.pending is not None and before.state.pending.kind != "race":
        decision = before.state.pending
        before.state.apply_action(Roll() if decision.allows(Roll()) else Pass(), seat=decision.seat)
    assert before.state.pending is not None and before.state.pending.reason == "suite"
    before.state.apply_action(Pass(), seat=0)
    before.save()
    keyboard = TypedLater()
    keyboard.type("", 0.3)
    threading.Timer(5.0, keyboard.writer.close).start()  # then Ana's next question ends the session
    session = PlaySession.resume(path, players(), view=Recorder(), keyboard=Keyboard(keyboard.reader))
    with pytest.raises(EOFError):
        session.run()
    log = session.state.log
    assert [e["race"] for e in log if e["type"] == "race"] == ["suite", "suite_tie"]
    assert [e for e in log if e["type"] == "shout" and e["seat"] == 0] == []
    assert [e for e in log if e["type"] == "score" and e["reason"] == "bevue"] == []
    assert any(line.startswith("RACE: suite tie") for line in session.view.said)  # type: ignore[attr-defined]


@pytest.mark.parametrize("typed", ["²", "1²", "³ 5", "① "])
def test_a_digit_sign_that_is_no_number_typed_at_the_table_is_refused_in_words(typed: str) -> None:
    # « ² » is the first key of a French keyboard: a digit to str.isdigit, no number to int(),
    # which raised, and the game stopped on an error.
    session = chouette_velute_session(TypedLater(), bot_onset_ms=900)
    decision = session.state.pending
    assert decision is not None and decision.seat == 0
    action, why = session._typed_action(decision, decision.legal_actions(), typed)
    assert action is None and why
    with pytest.raises(UnknownPhrase):
        PlaySession._parse_shout("! " + typed, [0], None, ["pas_mou_le_caillou"])


def test_enter_pressed_twice_for_a_shout_does_not_answer_the_next_question() -> None:
    # The bot throws 1, 1, 2 and shouts at 200 ms; Ana (keyboard) presses Enter twice, at 0.5 and
    # 0.62 s. The race ends at her first press; her turn's roll is asked next, and Enter alone
    # takes its only option: her second press threw her dice before she saw the question. It is
    # her shout repeated; her roll is her « 1 » at 3 s (6, 6, 6 from 300: she wins).
    keyboard = TypedLater()
    keyboard.type("", 0.5)
    keyboard.type("", 0.62)
    keyboard.type("1", 3.0)
    session = chouette_velute_session(keyboard, bot_onset_ms=200, bot_first=True)
    began = time.monotonic()
    state = session.run()
    assert state.winner == 0 and time.monotonic() - began >= 2.9
    assert [s.by for s in session.race_log[0] if s.seat == 0] == ["keyboard"]


def test_a_phrase_said_before_the_game_began_is_not_heard_in_it() -> None:
    # « again » after a game: a shout of joy at its end, held by the microphone, came out as the
    # new game's first heard phrase, and was judged a false shout in it (a Bévue).
    class SaidBefore(LateListener):
        def poll(self) -> list[Heard]:
            if self.delivered:
                return []
            self.delivered = True
            return [Heard(0, "pas_mou_le_caillou", time.monotonic() - 5.0)]

    keyboard = TypedLater()
    keyboard.type("1", 0.3)
    session = chouette_velute_session(keyboard, bot_onset_ms=1200, listener=SaidBefore(0, "x", 0, 0))
    state = session.run()
    assert not [e for e in state.log if e["type"] == "false_shout"]


class HeldListener(LateListener):
    """A LateListener whose room holds the shout back until it delivers it (a crowded reading
    waiting for another phone to bear it out): `holding()` says so meanwhile."""

    def holding(self) -> bool:
        return self.started is not None and not self.delivered


def play_late_shout(listener: LateListener, typed: tuple[tuple[str, float], ...] = (),
                    save_path: Path | None = None) -> tuple[PlaySession, GameState]:
    # The rules with Bévues (a false shout costs 10). Seat 0 (human) rolls 1,1,2: a
    # Chouette-Velute, the bot shouting at 2.95 s. Seat 1 (bot) then rolls 1,3,6 (nothing), and
    # seat 0, asked to roll again (Enter at 6 s), throws 6,6,6 and wins. `typed`: more lines.
    keyboard = TypedLater()
    for line, after_s in (("1", 0.0), ("1", 6.0), *typed):
        keyboard.type(line, after_s)
    basic = load_ruleset("basic")
    rules = basic.model_copy(update={"bevue": basic.bevue.model_copy(update={"enabled": True})})
    session = PlaySession(rules, [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(2950))], view=Recorder(),
                          keyboard=Keyboard(keyboard.reader), listener=listener, save_path=save_path,
                          dice=InjectedDice([1, 6, 1, 1, 2, 1, 3, 6, 6, 6, 6]), setup={"scores": [300, 0]})
    return session, session.run()


def test_a_shout_the_room_still_holds_when_the_grace_ends_is_waited_for() -> None:
    # Said at 2.8 s, inside the 3 s window, and held by the room until 4.6 s: past the 1 s grace,
    # inside the held grace. It wins the race.
    listener = HeldListener(0, "pas_mou_le_caillou", onset_after_s=2.8, heard_after_s=4.6)
    session, state = play_late_shout(listener)
    shouts = {s.seat: s for s in session.race_log[0]}
    assert shouts[0].by == "voice" and abs(shouts[0].onset_ms - 2800) < 60
    assert [e["tied"] for e in state.log if e["type"] == "race"] == [[0]]
    assert state.winner == 0


def test_a_shout_of_the_race_heard_after_it_was_settled_is_late_not_a_false_shout() -> None:
    # The same shout, heard at 4.6 s by a listener that did not say it held it: the race was
    # settled at 4 s without it (the bot won), and the shout, heard while Ana is asked to roll
    # again, is said to be late: no Bévue.
    listener = LateListener(0, "pas_mou_le_caillou", onset_after_s=2.8, heard_after_s=4.6)
    session, state = play_late_shout(listener)
    assert listener.delivered
    assert [e["tied"] for e in state.log if e["type"] == "race"] == [[1]]
    assert "false_shout" not in [e["type"] for e in state.log]
    said = session.view.said  # type: ignore[attr-defined]
    late = told(said, "Ana: « pas mou le caillou » was heard after the race was settled: not counted")
    assert late.seat == 0 and late.fr == "Ana : « {phrase} » entendu après la course réglée : non compté"
    assert [e["delta"] for e in state.log if e["type"] == "score" and e["seat"] == 0 and e["delta"] < 0] == []
    assert state.winner == 0


def test_a_race_phrase_said_after_the_race_is_still_a_false_shout() -> None:
    # Said at 4.5 s, after the window: a false shout while Ana is asked to roll (a Bévue, -10).
    listener = LateListener(0, "pas_mou_le_caillou", onset_after_s=4.5, heard_after_s=4.6)
    session, state = play_late_shout(listener)
    assert listener.delivered
    assert "false_shout" in [e["type"] for e in state.log]


def test_a_race_phrase_begun_after_the_window_but_before_the_race_was_settled_is_never_a_false_shout() -> None:
    # Begun at 3.3 s, after the 3 s window, while the race waited for shouts on their way (until
    # 4 s), and recognised at 4.6 s, once the race was settled: not counted, as when recognised
    # during that wait. It was a false shout (a Bévue) then: the recogniser's speed decided.
    listener = LateListener(0, "pas_mou_le_caillou", onset_after_s=3.3, heard_after_s=4.6)
    session, state = play_late_shout(listener)
    assert listener.delivered
    assert "false_shout" not in [e["type"] for e in state.log]
    assert [e["delta"] for e in state.log if e["type"] == "score" and e["seat"] == 0 and e["delta"] < 0] == []
    late = told(session.view.said, "Ana: « pas mou le caillou » began after the race's window: not counted")  # type: ignore[attr-defined]
    assert late.fr == "Ana : « {phrase} » commencé après la fenêtre de la course : non compté"


def claim_a_flan(typed: tuple[tuple[str, float], ...], listener: Any = None) -> PlaySession:
    # `complete`: Ana throws 6, 5, 2, a Flan, and may claim it (« À Kadoc ! ») before the next
    # throw. The keyboard closes at 1.5 s: the session stops at Ana's next question.
    keyboard = TypedLater()
    for line, after_s in typed:
        keyboard.type(line, after_s)
    threading.Timer(1.5, keyboard.writer.close).start()
    session = PlaySession(load_ruleset("complete"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(1200))],
                          view=Recorder(), keyboard=Keyboard(keyboard.reader), listener=listener,
                          dice=InjectedDice([1, 6, 6, 5, 2, 4, 4, 1]), setup={"scores": [0, 300]})
    with pytest.raises(EOFError):
        session.run()
    return session


def test_a_claim_chosen_from_the_menu_is_a_shout_timed_from_the_question() -> None:
    # Choice 2, « À Kadoc ! », half a second after she was asked (a phone's tap comes the same
    # way). Before, the menu's shout had no onset: the engine refused it and the session died.
    session = claim_a_flan((("", 0.1), ("2", 0.6)))
    claim = next(e for e in session.state.log if e["type"] == "claim")
    assert claim["seat"] == 0 and claim["phrase"] == "a_kadoc" and 300 <= claim["onset_ms"] <= 900
    assert session.state.items[0]["flan"] == 1


def test_a_claim_said_aloud_is_made_with_its_onset() -> None:
    class LostAfterIt(LateListener):
        """Then (or after 3 s, if the claim is never listened for) the microphone is lost, so
        the closed keyboard ends the session."""

        def poll(self) -> list[Heard]:
            if self.delivered or time.monotonic() - made > 3:
                raise InputLost("unplugged")
            return super().poll()

    made = time.monotonic()
    listener = LostAfterIt(0, "a_kadoc", onset_after_s=0.3, heard_after_s=0.5)  # listened for at the claim
    session = claim_a_flan((("", 0.1),), listener=listener)
    assert listener.delivered
    claim = next(e for e in session.state.log if e["type"] == "claim")
    assert claim["seat"] == 0 and 250 <= claim["onset_ms"] <= 400
    assert session.state.items[0]["flan"] == 1


def test_a_double_tap_that_lands_after_the_race_is_the_same_shout_not_a_false_one() -> None:
    # Ana taps at 2.6 s, the bot shouts at 2.95 s: every shout is in, so the race is settled at
    # once; her second tap at 3.3 s, after the 3 s window, repeats her shout: no Bévue (there
    # was one before). A tap 5.4 s in is a shout of its own: a false shout, -10.
    silent = LateListener(0, "pas_mou_le_caillou", onset_after_s=99, heard_after_s=99)
    session, state = play_late_shout(silent, typed=(("!", 2.6), ("!", 3.3)))
    assert [sorted(e["shouts"]) for e in state.log if e["type"] == "race"] == [["0", "1"]]
    assert "false_shout" not in [e["type"] for e in state.log]
    assert not [line for line in session.view.said if "shout" in line and "Ana" in line]  # type: ignore[attr-defined]
    session, state = play_late_shout(silent, typed=(("!", 2.6), ("!", 5.4)))
    assert [e["seat"] for e in state.log if e["type"] == "false_shout"] == [0]


def test_a_second_tap_after_the_window_is_a_repeat_not_a_shout_too_late() -> None:
    # The race waits after its window for a voice (Léo's); Ana's second tap lands then. Her
    # first counted: nothing is said of the second. A tap of Léo's then is too late, said so.
    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("Léo")], view=Recorder(),
                          keyboard=Keyboard(TypedLater().reader), seed=1)
    race = Decision(0, "race", (Pass(), Shout("pas_mou_le_caillou")), reason="chouette_velute")
    shouts = {0: RaceShout(0, "pas_mou_le_caillou", 500.0, "keyboard")}
    for line in ("! 1", "! 2"):
        session._typed_shout((line, 103.3), 100.0, [0, 1], {0: ["pas_mou_le_caillou"], 1: ["pas_mou_le_caillou"]},
                             race, shouts, 3.0)
    assert session.view.said == ["Léo's « ! 2 » was pressed after the race's window: not counted in this race"]  # type: ignore[attr-defined]
    assert list(shouts) == [0]


def test_a_number_after_a_choice_that_takes_none_is_refused_and_faces_are_kept_at_a_soufflette() -> None:
    # « 2 5 » at a claim took choice 2 and dropped the 5; « 3 5 » at a Soufflette's keep took the
    # menu's third line, whatever it kept. Now the first is refused in one line, the second keeps
    # the 3 and the 5 where that keep is offered.
    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(500))],
                          view=Recorder(), keyboard=Keyboard(TypedLater().reader), seed=1)
    claim = Decision(0, "claim", (Pass(), Shout("a_kadoc")), reason="a_kadoc")
    refused = (None, "choice 2 takes no stake: type « 2 » alone")
    assert session._typed_action(claim, list(claim.options), "2 5") == refused
    assert session._typed_action(claim, list(claim.options), "2")[0] == Shout("a_kadoc")
    keep = Decision(0, "soufflette_keep", (KeepDice(()), KeepDice((5,)), KeepDice((3, 5)), KeepDice((3,))))
    assert session._typed_action(keep, list(keep.options), "3 5") == (KeepDice((3, 5)), "")
    assert session._typed_action(keep, list(keep.options), "3")[0] == KeepDice((3, 5))  # the menu's third line
    action, why = session._typed_action(keep, list(keep.options), "4 6")
    assert action is None and why == "« 4 6 » is no keep of these dice: type the number of your choice (1..4)"


class Delayed:
    """Lines that arrive at `arrive_s` stamped with the time `stamp_s` (both from now): a
    phone's taps, timed on the phone and carried over the network."""

    def __init__(self, lines: list[tuple[str, float, float]]) -> None:
        self.lines, self.closed, self.began = lines, False, time.monotonic()

    def poll(self, timeout: float) -> tuple[str, float] | None:
        if self.lines and time.monotonic() - self.began >= self.lines[0][1]:
            text, _, stamp_s = self.lines.pop(0)
            return text, self.began + stamp_s
        time.sleep(min(timeout, 0.005))
        return None


def test_a_tap_from_the_races_window_that_arrives_once_it_is_settled_is_late_not_false() -> None:
    # A tap stamped 2.0 s into the window (the phone's time on the host's clock) reaches the host
    # only at 4.4 s, after the race was settled without Ana (the bot won it): said to be late,
    # no Bévue. Ana then rolls 6, 6, 6 and wins with her 300 points intact.
    basic = load_ruleset("basic")
    rules = basic.model_copy(update={"bevue": basic.bevue.model_copy(update={"enabled": True})})
    keyboard = Delayed([("1", 0.0, 0.0), ("!", 4.4, 2.0), ("1", 6.0, 6.0)])
    session = PlaySession(rules, [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(2950))], view=Recorder(),
                          keyboard=keyboard, dice=InjectedDice([1, 6, 1, 1, 2, 1, 3, 6, 6, 6, 6]),
                          setup={"scores": [300, 0]})
    state = session.run()
    assert [sorted(e["shouts"]) for e in state.log if e["type"] == "race"] == [["1"]]
    assert "false_shout" not in [e["type"] for e in state.log]
    late = told(session.view.said, "Ana: a shout pressed after the race was settled: not counted")  # type: ignore[attr-defined]
    assert late.seat == 0 and late.fr == "Ana : cri touché après la course réglée : non compté"
    assert state.winner == 0


@pytest.mark.parametrize("delivery_s", [0.0, 0.5])
def test_a_tap_made_in_the_races_last_moment_counts_when_it_reaches_the_host_just_after(delivery_s: float) -> None:
    # Ana rolls a Chouette-Velute at 0 s, so the race's window runs to about 3.0 s; the bot
    # shouts at 2.95 s. Her phone's tap, made at 2.7 s on the host's clock, crosses a sleepy
    # Wi-Fi and arrives at 3.25 s. A phone table (tap_delivery_s 0.5) waits for it: she wins.
    # A terminal's table (0) has nothing on its way and settles at once: the bot wins. Either
    # way nothing is a false shout. The bot then rolls 6, 6, 6 and wins the game.
    keyboard = Delayed([("1", 0.0, 0.0), ("!", 3.25, 2.7)])
    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(2950))],
                          view=Recorder(), keyboard=keyboard, dice=InjectedDice([1, 6, 1, 1, 2, 6, 6, 6]),
                          setup={"scores": [0, 300]}, tap_delivery_s=delivery_s)
    state = session.run()
    race = next(e for e in state.log if e["type"] == "race")
    if delivery_s:
        assert sorted(race["shouts"]) == ["0", "1"] and race["tied"] == [0]
        assert 2600 <= {s.seat: s for s in session.race_log[0]}[0].onset_ms <= 2750
    else:
        assert sorted(race["shouts"]) == ["1"]
    assert "false_shout" not in [e["type"] for e in state.log]
    assert state.winner == 1


def test_a_false_shout_the_microphone_misheard_is_taken_back_by_the_table(tmp_path: Path) -> None:
    # Talk heard as « pas mou le caillou » at 4.5 s while Ana is asked to roll again: a false
    # shout, a Bévue (-10). The table knows she said nothing: « - » at 5.3 s takes it back, and
    # the game goes on (and is saved) as if it had never been said.
    listener = LateListener(0, "pas_mou_le_caillou", onset_after_s=4.5, heard_after_s=4.6)
    save = tmp_path / "game.json"
    session, state = play_late_shout(listener, typed=(("-", 5.3),), save_path=save)
    said = session.view.said  # type: ignore[attr-defined]
    assert listener.delivered
    assert any("« - » typed at the table takes it back" in line for line in said)  # said with the false shout
    back = told(said, "Ana's « pas mou le caillou » is taken back: talk the microphone misheard, as if never said")
    assert back.seat == 0 and back.fr == "Ana : « {phrase} » est repris (une parole mal entendue), comme jamais dit"
    assert "false_shout" not in [e["type"] for e in state.log]
    assert [e for e in state.log if e["type"] == "score" and e["delta"] < 0] == []
    assert state.winner == 0 and not session.misheard
    resumed = GameState.from_json(json.loads(save.read_text(encoding="utf-8")))
    assert resumed.snapshot() == state.snapshot() and resumed.history == state.history


def test_only_a_shout_a_microphone_heard_is_taken_back_and_said_when_there_is_none() -> None:
    # « ! » typed at 4.5 s is a false shout at the keyboard (meant: no take back); « - » at 5.0 s
    # finds none to take back and changes nothing: the Bévue stands.
    listener = LateListener(0, "pas_mou_le_caillou", onset_after_s=30.0, heard_after_s=30.0)  # never heard
    session, state = play_late_shout(listener, typed=(("!", 4.5), ("-", 5.0)))
    said = session.view.said  # type: ignore[attr-defined]
    assert "« - » takes back a false shout or an answer a microphone heard: there is none to take back" in said
    assert [e["type"] for e in state.log].count("false_shout") == 1
    assert [e["delta"] for e in state.log if e["type"] == "score" and e["seat"] == 0 and e["delta"] < 0] == [-10]


def misheard_purchase(typed: tuple[tuple[str, float], ...], then: tuple[int, ...] = (6, 6, 6),
                      save_path: Path | None = None) -> tuple[PlaySession, GameState]:
    # Classic, Ana (seat 0) at 300 against a bot. The bot starts (6 against 1) and throws 2, 5;
    # Ana is asked whether she buys the cul, and her microphone hears « achat du cul » (talk,
    # misheard): she buys it (-30), the cul falls, a 1, and her turn begins. `typed`: the table's
    # lines; `then`: the dice after (by default her throw, 6, 6, 6, which wins).
    listener = LateListener(0, "achat_du_cul", onset_after_s=0.1, heard_after_s=0.2)
    keyboard = TypedLater()
    for line, after_s in typed:
        keyboard.type(line, after_s)
    session = PlaySession(load_ruleset("classic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(2950))],
                          view=Recorder(), keyboard=Keyboard(keyboard.reader), listener=listener,
                          save_path=save_path, dice=InjectedDice([6, 1, 2, 5, 1, *then]),
                          setup={"scores": [300, 300]})
    state = session.run()
    assert listener.delivered
    return session, state


def test_an_answer_the_microphone_misheard_is_taken_back_and_asked_again(tmp_path: Path) -> None:
    # « - » while Ana is asked to throw: only dice came after the purchase, so it is taken back,
    # she is asked again and passes (« non »); the cul is the same 1 (a take-back throws nothing
    # anew), and the game, saved so, goes on.
    save = tmp_path / "game.json"
    session, state = misheard_purchase((("-", 0.8), ("non", 1.4), ("1", 2.0)), save_path=save)
    said = session.view.said  # type: ignore[attr-defined]
    back = told(said, "Ana's « achat du cul » is taken back: talk the microphone misheard, Ana is asked again (the "
                      "dice that followed fall again)")
    assert back.fr == ("Ana : « {phrase} » est repris (une parole mal entendue), Ana répond à nouveau (les dés qui "
                       "ont suivi retombent pareils)")
    assert session.view.asked.count("buy_cul") == 2  # type: ignore[attr-defined]
    assert "buy_cul" not in [e["type"] for e in state.log]
    assert [e["values"] for e in state.log if e["type"] == "dice"] == [[6], [1], [2, 5], [1], [6, 6], [6]]
    assert state.winner == 0 and state.scores[0] > 300 and not session.misheard
    resumed = GameState.from_json(json.loads(save.read_text(encoding="utf-8")))
    assert resumed.snapshot() == state.snapshot() and resumed.history == state.history


def test_an_answer_is_not_taken_back_once_a_human_has_played_since() -> None:
    # Ana throws (« 1 »: 3, 6, 2, nothing) before the table types « - » in the bot's turn: her
    # throw would be lost, so the purchase stands, said in one line. Asked whether she buys the
    # bot's cul, she passes, and its 6, 6, 6 wins.
    session, state = misheard_purchase((("1", 0.8), ("-", 1.4), ("non", 2.0)), then=(3, 6, 2, 6, 6, 6))
    said = session.view.said  # type: ignore[attr-defined]
    assert ("Ana's « achat du cul » cannot be taken back: Ana has played since (an answer is taken back while "
            "only dice and bots have played after it)") in said
    refused = next(line for line in said if "cannot be taken back" in line)
    assert not isinstance(refused, Said)  # an answer to the host's « - »: the terminal's alone
    assert "buy_cul" in [e["type"] for e in state.log] and state.winner == 1 and state.scores[0] == 270
    assert len(session.misheard) == 1 and session.misheard[0].answer


class OnsetlessBot(FixedBot):
    """A brought bot that shouts without saying when it began (a Shout with no onset)."""

    def act(self, state: GameState, decision: Decision) -> Action:
        action = super().act(state, decision)
        return Shout(action.phrase) if isinstance(action, Shout) else action


def test_a_bots_shout_without_an_onset_is_no_shout() -> None:
    # The engine refuses a race shout with no onset; the live race took it for one and
    # crashed dividing None. Now the bot simply has not shouted: the human's key press wins.
    keyboard = TypedLater()
    keyboard.type("1", 0.0)
    keyboard.type("", 0.3)
    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("bot", OnsetlessBot(0))],
                          view=Recorder(), keyboard=Keyboard(keyboard.reader),
                          dice=InjectedDice([1, 6, 1, 1, 2, 6, 6, 6]), setup={"scores": [0, 300]})
    state = session.run()
    assert [s.seat for s in session.race_log[0]] == [0]
    assert state.scores[0] == 8


def test_game_is_saved_after_every_move_and_resumes(tmp_path: Path) -> None:
    keyboard = TypedLater()
    keyboard.type("1", 0.0)
    keyboard.type("", 0.3)
    session = chouette_velute_session(keyboard, bot_onset_ms=1500)
    session.save_path = tmp_path / "game.json"
    session.run()
    saved = json.loads(session.save_path.read_text())
    assert GameState.from_json(saved).winner == 1


def test_a_save_that_cannot_be_written_says_what_the_file_keeps(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from voice.session import SaveError

    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("Bob")], view=Recorder(),
                          keyboard=Keyboard(TypedLater().reader), seed=1, save_path=tmp_path / "gone" / "game.json")
    with pytest.raises(SaveError, match=r"^the game cannot be saved in .*gone/game.json \(No such file or directory\); "
                                        "nothing was saved: make room and start again$"):
        session.save()
    session.save_path = tmp_path / "game.json"
    session.save_path.write_text("the game before")

    def full_disk(_: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(SaveError) as error:
        session.save()
    assert str(error.value) == (f"the game cannot be saved in {session.save_path} (No space left on device); the file "
                                f"keeps the game as it was before: make room, then go on with --resume "
                                f"{session.save_path}")
    assert session.save_path.read_text() == "the game before" and len(list(tmp_path.iterdir())) == 1


def test_a_save_leaves_the_files_beside_it_alone(tmp_path: Path) -> None:
    # The save was written to a fixed game.tmp beside game.json, then renamed: a user's
    # game.tmp was overwritten and gone.
    (tmp_path / "game.tmp").write_text("my notes")
    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("Bob")], view=Recorder(),
                          keyboard=Keyboard(TypedLater().reader), seed=1, save_path=tmp_path / "game.json")
    session.save()
    assert (tmp_path / "game.tmp").read_text() == "my notes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.json", "game.tmp"]
    assert GameState.from_json(json.loads((tmp_path / "game.json").read_text())).players == 2


def test_lost_microphone_falls_back_to_the_keyboard() -> None:
    from voice.session import InputLost

    class Vanishing(LateListener):
        def poll(self) -> list[Heard]:
            raise InputLost("device 'pulse' disappeared")

    keyboard = TypedLater()
    keyboard.type("1", 0.0)
    keyboard.type("", 0.3)
    recorder_session = chouette_velute_session(keyboard, 1500, listener=Vanishing(0, "x", 0, 0))
    state = recorder_session.run()
    assert recorder_session.listener is None
    assert isinstance(recorder_session.view, Recorder)
    assert any("microphone lost" in line for line in recorder_session.view.said)
    assert state.is_over and state.scores[0] == 8


def test_not_understood_asks_to_say_it_again_and_keeps_waiting() -> None:
    class Unclear(LateListener):
        """Each moment: first an utterance it could not tell, then (in the race) the shout."""

        def listen_for(self, intents: set[str], race: bool = False) -> None:
            self.started, self.delivered, self.race = time.monotonic(), False, self.intent in intents
            self.unclear_sent = False

        def poll(self) -> list[Heard]:
            if not self.unclear_sent:
                self.unclear_sent = True
                return [Heard(0, None, time.monotonic())]
            return super().poll() if self.race else []

    keyboard = TypedLater()
    keyboard.type("1", 0.3)  # the roll, by keyboard after the unclear utterance
    listener = Unclear(0, "pas_mou_le_caillou", onset_after_s=0.3, heard_after_s=0.6)
    session = chouette_velute_session(keyboard, bot_onset_ms=1500, listener=listener)
    state = session.run()
    assert isinstance(session.view, Recorder)
    again = [line for line in session.view.said if line.startswith("Ana: not understood, say it again")]
    assert len(again) == 2  # at the roll and in the race
    assert all(isinstance(line, Said) and line.seat == 0 and line.fr == "Ana : pas compris, répétez" for line in again)
    assert session.view.said.count("voice 0: say it again") == 2  # the seat's voice status
    shouts = {s.seat: s for s in session.race_log[0]}
    assert shouts[0].by == "voice" and state.scores[0] == 8  # it kept waiting for the shout


def test_a_shout_said_in_the_window_but_decided_after_it_still_counts() -> None:
    # The human began at 2.7 s of the 3 s window; the recogniser decided at 3.4 s, after the
    # window closed. The race waits for it: the human beat the bot's 2.9 s.
    keyboard = TypedLater()
    keyboard.type("1", 0.0)
    listener = LateListener(0, "pas_mou_le_caillou", onset_after_s=2.7, heard_after_s=3.4)
    session = chouette_velute_session(keyboard, bot_onset_ms=2900, listener=listener)
    state = session.run()
    shouts = {s.seat: s for s in session.race_log[0]}
    assert shouts[0].by == "voice" and 2600 <= shouts[0].onset_ms <= 2800
    assert state.scores[0] == 8


def test_a_shout_that_began_before_the_dice_were_shown_does_not_count() -> None:
    # Heard with an onset half a second before the race opened (Ana rolls at 0.6 s): shouting
    # before seeing the dice is no reaction to them, so it is not a 0 ms shout; the bot wins.
    keyboard = TypedLater()
    keyboard.type("1", 0.6)
    listener = LateListener(0, "pas_mou_le_caillou", onset_after_s=0.1, heard_after_s=0.7)
    session = chouette_velute_session(keyboard, bot_onset_ms=600, listener=listener)
    state = session.run()
    assert [s.seat for s in session.race_log[0]] == [1]
    early = told(session.view.said, "Ana: « pas mou le caillou » began before the dice were shown: not counted")  # type: ignore[attr-defined]
    assert early.seat == 0 and early.phrase == "pas_mou_le_caillou"
    assert early.fr == "Ana : « {phrase} » commencé avant que les dés soient montrés : non compté"
    assert state.scores[0] == 0


class StampedLines:
    """Lines with the time they were pressed (a phone's tap, timed on its own clock), given
    relative to when the race opens: one waiting in the queue was pressed before it."""

    def __init__(self, lines: list[tuple[str, float]]) -> None:
        self.lines = lines
        self.closed = False
        self.race_opened: float | None = None

    def poll(self, timeout: float) -> tuple[str, float] | None:
        if not self.lines:
            time.sleep(timeout)
            return None
        text, offset = self.lines.pop(0)
        if self.race_opened is None:
            self.race_opened = time.monotonic()
        return text, self.race_opened + offset


def test_a_key_pressed_before_the_race_opened_is_not_a_zero_ms_shout() -> None:
    # The roll, then a shout stamped 0.3 s before the race: it waited in the queue while the
    # dice fell. Before this fix it counted as 0 ms and beat the bot's 500 ms.
    lines = StampedLines([("1", 0.0), ("!", -0.3)])
    dice = InjectedDice([1, 6, 1, 1, 2, 6, 6, 6])
    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(500))],
                          view=Recorder(), keyboard=lines, dice=dice, setup={"scores": [0, 300]})
    state = session.run()
    assert [s.seat for s in session.race_log[0]] == [1]
    assert state.scores[0] == 0
    # Said to the whole table, about Ana: her phone shows it (the pages' French beside it).
    late = told(session.view.said, "Ana's « ! » was pressed before the dice were shown")  # type: ignore[attr-defined]
    assert late.seat == 0 and late.fr == "Ana : touché avant que les dés soient montrés : non compté dans cette course"


def test_a_maison_table_of_bots_plays_to_the_end_and_resumes_from_its_save(tmp_path: Path) -> None:
    """Every house rule at the live table: the session asks the bots each house decision and
    race (races run in real time: the scores start near the end to keep the game short), saves
    after every move, and the save loads back to the same game."""
    from agents.heuristic import HeuristicBot

    save = tmp_path / "maison.json"
    bots = [SeatPlayer(f"bot{seat}", HeuristicBot(style="bold", seed=seat)) for seat in range(4)]
    session = PlaySession(load_ruleset("maison"), bots, Recorder(), Keyboard(TypedLater().reader),
                          seed=11, save_path=save, setup={"scores": [290, 300, 310, 320]})
    state = session.run()
    assert state.is_over
    assert any(e["type"] == "race" and e["race"] == "tichette" for e in state.log)  # a house race, live
    saved = json.loads(save.read_text(encoding="utf-8"))
    assert saved["ruleset"]["house_rules"] and GameState.from_json(saved).log == state.log


def test_the_next_game_at_the_table_starts_fresh_with_the_same_players_and_drops_lines_typed_after_the_end(
        tmp_path: Path) -> None:
    from voice.table import TypedLines

    lines = TypedLines()
    players = [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(900))]
    view = Recorder()
    over = PlaySession(load_ruleset("basic"), players, view=view, keyboard=lines, seed=5, pace=0.4,
                       setup={"scores": [300, 320]})
    lines.put("! 1", 1.0)  # a shout typed at the finished game: a Bévue at the next one's start
    lines.put("2", 2.0)
    following = over.rematch(6, tmp_path / "game-2.json")
    assert lines.poll(0) is None  # dropped
    assert following.players is players and following.view is view and following.keyboard is lines
    assert following.pace == 0.4 and following.save_path == tmp_path / "game-2.json"
    assert over.state.scores == [300, 320] and following.state.scores == [0, 0]
    assert following.state.rules is over.state.rules
    fresh = PlaySession(load_ruleset("basic"), players, view=view, keyboard=lines, seed=6)
    assert following.state.to_json() == fresh.state.to_json()  # the game a fresh table of seed 6 would play


def test_a_race_on_a_bots_dice_opens_as_they_are_shown_not_after_the_pace() -> None:
    # The bot starts (dice 6 vs 1) and rolls 1,1,2, a Chouette-Velute; the table leaves 0.6 s
    # after a bot's move for people to follow. Ana presses Enter 0.3 s after seeing the dice:
    # that is her shout in the race. The race used to open only after the pause, so her shout
    # fell outside it and was refused in the engine's words ("seat 0 acted out of turn").
    keyboard = TypedLater()
    keyboard.type("", 0.3)
    keyboard.type("1", 2.5)  # her roll, after the race: 6,6,6 ends the game
    threading.Timer(6.0, keyboard.writer.close).start()  # the keyboard ends: never a hang
    dice = InjectedDice([6, 1, 1, 1, 2, 6, 6, 6])
    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(1200))],
                          view=Recorder(), keyboard=Keyboard(keyboard.reader), dice=dice,
                          setup={"scores": [300, 0]}, pace=0.6)
    state = session.run()
    shouts = {s.seat: s for s in session.race_log[0]}
    assert shouts[0].by == "keyboard" and 200 <= shouts[0].onset_ms <= 500
    assert state.scores[1] == 0 and state.winner == 0
    assert not [line for line in session.view.said if "out of turn" in line]  # type: ignore[attr-defined]


@pytest.mark.parametrize("typed, phrase", [("! mé", "mecreant"), ("! me", "mecreant"), ("!  Mécr", "mecreant"),
                                           ("! je", "je_suis_un_miserable"), ("!", None)])
def test_a_phrase_typed_for_a_shout_is_found_by_its_first_letters_as_written_or_without_accents(
        typed: str, phrase: str | None) -> None:
    # The table writes the Néant Soufflé's calls as said (« mécréant »): their first letters,
    # typed with or without the accent, name them.
    assert PlaySession._parse_shout(typed, [0], None, ["mecreant", "je_suis_un_miserable"]) == (0, phrase)


class Utterances:
    """A microphone whose recogniser hears one phrase an utterance (as the real one decides them):
    the intents given, one each poll, `apart_s` apart."""

    def __init__(self, intents: list[str], apart_s: float = 0.0) -> None:
        self.seats = [0]
        self.intents, self.apart_s = list(intents), apart_s
        self.last = 0.0

    def listen_for(self, intents: set[str], race: bool = False) -> None:
        pass

    def poll(self) -> list[Heard]:
        if not self.intents:
            raise InputLost("nothing more is said")
        if time.monotonic() - self.last < self.apart_s:
            return []
        self.last = time.monotonic()
        return [Heard(0, self.intents.pop(0), time.monotonic())]

    def mark_playback(self, start: float, end: float) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.mark.parametrize(("decision", "said", "answer"), [
    (Decision(0, "turn_start", (Roll(),), staked=DeclareCivet, stakes=(("velute", range(1, 51)),)),
     ["civet", "combo_velute", "nombre_40"], DeclareCivet("velute", 40)),
    (Decision(0, "grelottine", (Pass(),), staked=ChallengeGrelottine, stakes=(("chouette", range(1, 34)),)),
     ["grelottine", "combo_chouette", "nombre_20"], ChallengeGrelottine("chouette", 20)),
    (Decision(0, "soufflette", (Pass(), ChallengeSoufflette(1))), ["en_garde_ma_mignonne", "joueur_2"],
     ChallengeSoufflette(1)),
    # Two dice kept: it kept the first alone, at once.
    (Decision(0, "soufflette_keep", (KeepDice(()), KeepDice((3,)), KeepDice((5,)), KeepDice((3, 5)))),
     ["nombre_3", "nombre_5"], KeepDice((3, 5))),
    # A begun answer that something else follows starts again: « civet », then « je lance ».
    (Decision(0, "turn_start", (Roll(),), staked=DeclareCivet, stakes=(("velute", range(1, 51)),)),
     ["civet", "je_lance"], Roll()),
])
def test_an_answer_of_several_phrases_is_said_one_phrase_an_utterance(decision: Decision, said: list[str],
                                                                       answer: Action) -> None:
    # The recogniser decides one phrase an utterance, and each was judged alone: « civet » was
    # "say it again", « velute » and « quarante » fit nothing; a two-dice keep kept one.
    read, write = os.pipe()
    os.close(write)
    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(500))],
                          view=Recorder(), keyboard=Keyboard(os.fdopen(read)), listener=Utterances(said), seed=0)
    assert session._ask_human(decision) == answer


def test_one_die_kept_alone_is_answered_once_no_second_is_named() -> None:
    read, write = os.pipe()
    os.close(write)
    keep = Decision(0, "soufflette_keep", (KeepDice(()), KeepDice((3,)), KeepDice((5,)), KeepDice((3, 5))))

    class ThenQuiet(Utterances):
        def poll(self) -> list[Heard]:
            return super().poll() if self.intents else []  # the player says nothing more

    listener = ThenQuiet(["nombre_3"])
    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(500))],
                          view=Recorder(), keyboard=Keyboard(os.fdopen(read)), listener=listener, seed=0)
    began = time.monotonic()
    assert session._ask_human(keep) == KeepDice((3,))
    assert 1.4 <= time.monotonic() - began < 3  # it waited KEEP_MORE_S for a second die


def test_a_race_whose_thrower_has_its_own_phrase_hears_each_seat_its_own() -> None:
    # A Suite Velutée (1, 2, 3) of `complete` without Bévues (the wrong phrases not offered): the
    # thrower says « patte de canard », the others « velutée ». Only the thrower's phrase was
    # listened for, so Bob's « velutée » was dropped, and the table was told « velutée » alone.
    rules = load_ruleset("complete")
    rules = rules.model_copy(update={"bevue": rules.bevue.model_copy(update={"enabled": False})})
    state = GameState(rules, 2, dice=InjectedDice([6, 1, 1, 2, 3] + [6] * 60))
    while (decision := state.pending) is not None and not (decision.kind == "race"
                                                           and decision.reason == "suite_velutee"):
        assert decision.seat is not None
        first = decision.options[1] if decision.kind == "race" and decision.seat == 0 else None
        state.apply_action(Shout(first.phrase, 100.0) if isinstance(first, Shout) else decision.options[0],
                           seat=decision.seat)
    assert state.pending is not None and state.table.race_answers == {0: ("patte_de_canard",), 1: ("velutee",)}
    listener = LateListener(1, "velutee", onset_after_s=0.2, heard_after_s=0.3)
    read, write = os.pipe()
    os.close(write)
    session = PlaySession(rules, [SeatPlayer("Ana"), SeatPlayer("Bob")], view=Recorder(),
                          keyboard=Keyboard(os.fdopen(read)), listener=listener, seed=0)
    session.state = state
    answers = session._run_race(state.pending)
    assert [sorted(intents) for intents, race in listener.asked if race] == [["patte_de_canard", "velutee"]]
    shout = answers[1]
    assert isinstance(shout, Shout) and shout.phrase == "velutee" and abs((shout.onset_ms or 0) - 200) < 60
    said = session.view.said  # type: ignore[attr-defined]
    assert said[0].startswith("RACE: suite velutée! — shout « velutée » (Ana: « patte de canard »)")


def test_a_whole_answer_said_in_parts_that_is_not_allowed_is_said_so_and_begun_again() -> None:
    # « civet, velute, quarante » with stakes to 30: it waited for more for ever, saying nothing.
    read, write = os.pipe()
    os.close(write)
    civet = Decision(0, "turn_start", (Roll(),), staked=DeclareCivet, stakes=(("velute", range(1, 31)),))
    view = Recorder()
    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(500))], view=view,
                          keyboard=Keyboard(os.fdopen(read)),
                          listener=Utterances(["civet", "combo_velute", "nombre_40", "civet", "combo_velute",
                                               "nombre_20"]), seed=0)
    assert session._ask_human(civet) == DeclareCivet("velute", 20)
    assert "voice 0: say it again" in view.said  # after the 40, then begun again


def test_typed_stakes_and_numbers_that_cannot_be_read_are_refused_not_a_stop_of_the_game() -> None:
    # « 2 --5 » passed the check and int() raised: the game stopped on a ValueError. A number of
    # 5000 digits did the same (int() reads 4300 at most). « 2 40 velute » played 40 on the
    # choice's own combination, the word after it dropped.
    from voice.session import typed_number

    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(500))],
                          view=Recorder(), keyboard=Keyboard(TypedLater().reader), seed=0)
    civet = Decision(0, "turn_start", (Roll(),), staked=DeclareCivet, stakes=(("chouette", range(1, 51)),))
    options: list[Action] = [Roll()]
    for typed, says in (("2 --5", "give the stake too: « 2 50 » (1..50)"), ("2 40 velute", "the choice and its stake "
                        "alone, such as « 2 40 »"), ("9" * 5000, "choose 1..2"), ("2 " + "9" * 5000, "give the stake")):
        action, why = session._typed_action(civet, options, typed)
        assert action is None and says in why, (typed[:20], why)
    assert session._typed_action(civet, options, "2 40") == (DeclareCivet("chouette", 40), "")
    assert typed_number("-7") == -7 and typed_number("--5") is None and typed_number("9" * 10) is None
    assert PlaySession._parse_shout("! " + "9" * 5000, [0, 1], None, ["pas_mou_le_caillou"]) is None


def test_a_race_shout_typed_for_no_human_seat_says_how_to_name_one() -> None:
    # Two humans at the keyboard: Enter, « ! » and « ! 3 » (a bot's seat) were dropped without a word.
    session = PlaySession(load_ruleset("basic"), [SeatPlayer("Ana"), SeatPlayer("Léo"), SeatPlayer("bot",
                          FixedBot(500))], view=Recorder(), keyboard=Keyboard(TypedLater().reader), seed=1)
    race = Decision(0, "race", (Pass(), Shout("pas_mou_le_caillou")), reason="chouette_velute")
    shouts: dict[int, RaceShout] = {}
    mine = {0: ["pas_mou_le_caillou"], 1: ["pas_mou_le_caillou"]}
    for line in ("", "!", "! 3"):
        session._typed_shout((line, 100.2), 100.0, [0, 1], mine, race, shouts, 3.0)
    said = session.view.said  # type: ignore[attr-defined]
    assert len(said) == 3 and all("several humans race here: « ! » then your seat's number (1 Ana, 2 Léo)" in s
                                  for s in said)
    assert shouts == {}


def test_a_name_typed_with_its_accent_apart_is_the_same_name() -> None:
    # « Léa » with é as one character (a laptop) and as e and a combining accent (some phones'
    # keyboards) look the same on every screen: one is at the table, the other is refused.
    from voice.session import name_at_table, name_refusal

    assert name_at_table("Le\u0301a", ["Léa"]) == "Léa"
    assert name_at_table("LÉA ", ["Léa"]) == "Léa"
    assert name_refusal("Le\u0301a", ["Léa", "bold-1"]) is not None
    assert name_refusal("Leo", ["Léa"]) is None
