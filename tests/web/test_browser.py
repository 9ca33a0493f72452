"""The web table in a real browser: headless Chromium (Debian's) driven by Selenium against the
table served in-process (tests/web/conftest.py). Simulated phones hear the room through a private
PulseAudio: one stereo file carries both phones' sound on one timeline."""

from __future__ import annotations

import re
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from web_helpers import (
    SCREENSHOTS,
    SOURCES,
    Browsers,
    PlayWeb,
    Pulse,
    WebTable,
    read_screenshot_qr_codes,
    set_viewport,
    wait_for,
)

from agents.bots import make_bot
from cdc_env.dice import InjectedDice
from cdc_env.rules import load_ruleset
from voice.session import PlaySession, SeatPlayer

pytestmark = [pytest.mark.browser]


def css(driver: Any, selector: str) -> Any:
    return driver.find_element("css selector", selector)


def page_table(driver: Any) -> dict[str, Any] | None:
    return driver.execute_script("return window.cdcTable || null")


def claim_by_tap(driver: Any, seat: int) -> None:
    """The seat picker lists the free seats; tap ours."""
    def tap() -> bool:
        css(driver, f"#seats button[data-seat='{seat}']").click()
        return True

    wait_for("the seat picker", tap)  # retried while the page is still drawing it
    wait_for("the welcome", lambda: driver.execute_script("return window.cdcPhone.seat") == seat)


def seated(driver: Any, seat: int) -> bool:
    return driver.execute_script("return window.cdcPhone.seat") == seat


def calibration_shown(driver: Any) -> re.Match[str] | None:
    return re.search(r"délai (\d+) ms", css(driver, "#calibration").text)


def race_rows(driver: Any, count: int) -> bool:
    return len(driver.find_elements("css selector", "#race .shouts li")) == count


def script_errors(driver: Any) -> list[str]:
    """The page's JavaScript errors (the console's SEVERE entries)."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def page_errors(driver: Any) -> str:
    return driver.execute_script("return document.querySelector('#errors').innerText")


def bots_table(web_table: Any, setup: dict[str, Any] | None = None, seed: int = 3) -> WebTable:
    players = [SeatPlayer("Zoé"), SeatPlayer("Prudent", make_bot("prudent", seed=1), "prudent"),
               SeatPlayer("Hardi", make_bot("bold", seed=2), "bold")]
    return web_table(players, ruleset="basic", seed=seed, setup=setup)


def test_a_phone_taps_through_a_whole_game_against_bots(web_table, browsers: Browsers) -> None:
    from selenium.common.exceptions import StaleElementReferenceException  # missing: the fixture said how to get it

    # Scores near 343 so that the game ends within a few turns.
    table = bots_table(web_table, setup={"scores": [330, 330, 330]})
    phone = browsers.open()
    set_viewport(phone, 360, 740, mobile=True)
    phone.get(table.phone_url)
    claim_by_tap(phone, 0)
    # Its microphone never started: no fault shown, as the board says too.
    wait_for("the table on the phone", lambda: phone.find_elements("css selector", "#players li[data-seat='0']"))
    assert css(phone, "#mic-state").get_attribute("data-mic") == "none"
    assert css(phone, "#mic-state").text == "pas de micro"
    answered = shouted = 0
    deadline = time.monotonic() + 60
    while not (table.room.table_message() or {}).get("over"):
        assert time.monotonic() < deadline, f"the game did not end: {table.room.table_message()}"
        assert not table.errors, table.errors
        try:
            buttons = phone.find_elements("css selector", "#choices button.choice:not([disabled])")
            if buttons:
                buttons[0].click()  # the first choice: roll, pass, ...
                answered += 1
            elif "in-race" in (css(phone, "#shout").get_attribute("class") or ""):
                css(phone, "#shout").click()
                shouted += 1
        except StaleElementReferenceException:  # the question changed meanwhile: look again
            pass
        time.sleep(0.1)
    wait_for("the end on the phone", lambda: css(phone, "#over").is_displayed())
    state = table.session.state
    assert state.winner is not None
    assert answered >= 1
    # The phone's seat played: every decision of seat 0 in the log came from its taps.
    assert any(e["type"] == "turn_start" and e["seat"] == 0 for e in state.log)
    winner_name = table.session.players[state.winner].name
    assert winner_name in css(phone, "#over").text
    assert "l'hôte tape « again »" in css(phone, "#over").text  # how another game begins
    assert not page_errors(phone), page_errors(phone)
    assert not script_errors(phone)


def test_screenshots_of_the_phone_and_the_board_in_french(web_table, browsers: Browsers) -> None:
    table = bots_table(web_table, seed=5)
    phone = browsers.open(lang="fr", fake_microphone=True)
    set_viewport(phone, 360, 740, mobile=True)
    phone.get(table.phone_url)
    claim_by_tap(phone, 0)
    css(phone, "#mic-button").click()
    wait_for("the microphone on", lambda: css(phone, "#mic-state").get_attribute("data-mic") == "on")
    wait_for("the host streaming it (after the page's 1 s warm-up)",
             lambda: phone.find_elements("css selector", "#players li[data-seat='0'] [data-mic='online']"))
    wait_for("a question for the phone", lambda: phone.find_elements("css selector", "#choices button.choice"),
             timeout=30)
    assert css(phone, "#shout").text == "CRIER !"
    assert "Bévue" in css(phone, "#shout-hint").text  # outside a race, a shout is a Bévue: said
    SCREENSHOTS.mkdir(exist_ok=True)
    phone.execute_script("window.scrollTo(0, 0)")
    phone.save_screenshot(str(SCREENSHOTS / "phone-fr-360x740.png"))
    # A shout tapped outside a race: the game's word on it reaches the player under the question,
    # in French, and the board's list (in its screenshot).
    assert css(phone, "#note").get_attribute("hidden") is not None  # nothing said about Zoé yet
    # A thumb's swipe that starts on the bar (to scroll), and a touch the browser takes for a
    # scroll (cancelled): no shout. A shout was sent at the touch, a Bévue for a scroll.
    phone.execute_script("""
        const b = document.getElementById('shout'), r = b.getBoundingClientRect();
        const at = (type, dy) => b.dispatchEvent(new PointerEvent(type, {pointerId: 7, pointerType: 'touch',
            isPrimary: true, bubbles: true, clientX: r.x + r.width / 2, clientY: r.y + r.height / 2 + dy}));
        at('pointerdown', 0); at('pointermove', -60); at('pointerup', -120);
        at('pointerdown', 0); at('pointercancel', 0);""")
    time.sleep(1.5)
    assert css(phone, "#note").get_attribute("hidden") is not None
    css(phone, "#shout").click()
    wait_for("the note on the phone", lambda: css(phone, "#note").is_displayed(), timeout=15)
    assert css(phone, "#note").text.startswith("Zoé a crié « pas mou le caillou » (touche) ")
    phone.save_screenshot(str(SCREENSHOTS / "phone-fr-note-360x740.png"))
    css(phone, "#lang").click()  # the note follows the page's language, and back
    assert css(phone, "#note").text.startswith("Zoé shouted « pas mou le caillou » (keyboard) ")
    css(phone, "#lang").click()

    board = browsers.open(lang="fr")
    set_viewport(board, 1280, 720, mobile=False)
    board.get(table.board_url)
    wait_for("the board's players", lambda: len(board.find_elements("css selector", "#players li")) == 3)
    wait_for("the board showing the phone's mic",
             lambda: board.find_elements("css selector", "#players li[data-seat='0'] [data-mic='online']"))
    text = css(board, "body").text
    assert css(board, "#said").text.count("Zoé a crié « pas mou le caillou » (touche) ") == 1  # the tap, not the swipes
    assert "Joueurs" in text.replace("JOUEURS", "Joueurs") and "Journal" in text.replace("JOURNAL", "Journal")
    board.save_screenshot(str(SCREENSHOTS / "board-fr-1280x720.png"))
    assert not script_errors(board)
    for name in ("phone-fr-360x740.png", "phone-fr-note-360x740.png", "board-fr-1280x720.png"):
        assert (SCREENSHOTS / name).stat().st_size > 5000
    # The switch: English at once, kept for the next visit; the host's texts follow (*_en).
    css(phone, "#lang").click()
    assert css(phone, "#shout").text == "SHOUT!"
    question = table.room.table_message()["question"]
    wait_for("the question in English", lambda: css(phone, "#question-text").text == question["text_en"])
    phone.refresh()
    wait_for("English after a reload", lambda: css(phone, "#shout").text == "SHOUT!")


LONG_NAME = "LeGrandChouetteur2000XXXXXXXXX"  # 30 letters, no space: the longest name play.py takes


def test_a_long_name_and_a_suite_tie_race_fit_360_px_with_the_turn_and_the_teams_shown(browsers: Browsers,
                                                                                       tmp_path: Path) -> None:
    from cdc_env.actions import Pass, Roll
    from voice.web.certs import ensure_certificates
    from voice.web.room import Room
    from voice.web.server import WebServer

    # A Doublette table (the long name and Cy against Bob and Dee) stopped in a Suite's tie race,
    # « sans fin est la moisissure des bières bretonnes »: the table is set once, no game runs.
    players = [SeatPlayer(name) for name in (LONG_NAME, "Bob", "Cy", "Dee")]
    room = Room(players, play=lambda samples, rate: None)
    server = WebServer(room, ensure_certificates(tmp_path / "certs", ["127.0.0.1"]), "127.0.0.1", 0).start()
    try:
        session = PlaySession(load_ruleset("classic").with_house_rules(["doublette"]), players, view=room.view,
                              keyboard=room.keys, dice=InjectedDice([1, 2, 3, 4, 2, 3, 4]),
                              setup={"scores": [100, 20, 40, 7]})
        state = session.state
        while (pending := state.pending) is not None and pending.reason != "suite_tie":
            # Seat 0 throws a Suite (2 3 4), nobody buys the cul, nobody shouts: all four tie.
            state.apply_action(next(a for a in pending.options if isinstance(a, Roll | Pass)), seat=pending.seat)
        room.set_table(session, {}, [])
        where = server.join_at("127.0.0.1")
        driver = browsers.open(lang="fr")
        set_viewport(driver, 360, 740, mobile=True)
        for page in (f"{where['phone']}&seat=1", where["board"]):
            driver.get(page)
            wait_for("the race", lambda: "sans fin" in css(driver, "#race .race-head").text)
            assert "« sans fin est la moisissure des bières bretonnes »" in css(driver, "#race .race-head").text
            assert driver.execute_script("return document.documentElement.scrollWidth") <= 360
            # The player to play is marked (the terminal's ▶), the others not.
            marks = driver.execute_script("return [...document.querySelectorAll('#players .name')]"
                                          ".map((n) => getComputedStyle(n, '::before').content)")
            assert marks[0].startswith('"▶') and set(marks[1:]) == {"none"}, marks
            assert [t.text for t in driver.find_elements("css selector", "#players .team")] == [
                "Équipe 1 avec Cy : 140 points", "Équipe 2 avec Dee : 27 points",
                f"Équipe 1 avec {LONG_NAME} : 140 points", "Équipe 2 avec Bob : 27 points"]
            assert not script_errors(driver)
            if page != where["board"]:
                SCREENSHOTS.mkdir(exist_ok=True)
                driver.save_screenshot(str(SCREENSHOTS / "phone-fr-teams-360x740.png"))
        css(driver, "#lang").click()
        assert css(driver, "#players li[data-seat='1'] .team").text == "Team 2 with Dee: 27 points"
    finally:
        server.stop()
        room.close()


def test_the_board_shows_the_way_in_and_a_lost_phones_seat_goes_to_a_new_one(web_table, browsers: Browsers) -> None:
    """While a seat is free the board shows the trust page's and the table's addresses as QR
    codes a phone's camera reads (checked on its screenshot); once the seat is taken they go. The
    host gives the seat of a lost phone to a new one (`phone 1`): the board shows the way in
    again, the old phone is back at the seat picker, and the new phone opens the link and plays
    on as Zoé."""
    table = bots_table(web_table, seed=5)
    board = browsers.open(lang="fr")
    set_viewport(board, 1280, 720, mobile=False)
    board.get(table.board_url)
    join = "#join:not([hidden])"
    wait_for("the way in on the board", lambda: board.find_elements("css selector", join))
    wait_for("its two codes drawn", lambda: board.execute_script(
        "return [...document.querySelectorAll('#join img')].every((i) => i.complete && i.naturalWidth > 0)"))
    assert "Places libres : Place 1 (Zoé)" in css(board, "#join-free").text
    board.save_screenshot(str(SCREENSHOTS / "board-fr-join-1280x720.png"))
    assert sorted(read_screenshot_qr_codes(board.get_screenshot_as_png())) == sorted(table.room.join.values())
    assert css(board, "#join-phone-address").text == table.room.join["phone"]

    lost = browsers.open(lang="fr", fake_microphone=True)
    set_viewport(lost, 360, 740, mobile=True)
    lost.get(table.phone_url)
    claim_by_tap(lost, 0)
    css(lost, "#mic-button").click()
    wait_for("its microphone streaming", lambda: table.room.seats[0].mic == "online")
    wait_for("the way in gone once the seat is taken", lambda: not board.find_elements("css selector", join))
    wait_for("the players back at the top", lambda: css(board, ".players-box").location["y"] < 100)

    answer = table.room.host_command("phone 1")
    assert answer is not None and answer.link == table.phone_url + "&seat=1"
    wait_for("the way in back on the board", lambda: board.find_elements("css selector", join))
    wait_for("the old phone at the seat picker", lambda: lost.execute_script("return window.cdcPhone.seat") is None)
    wait_for("the old phone told why",
             lambda: "Votre place joue maintenant sur un autre téléphone" in page_errors(lost))
    time.sleep(2.5)  # its clock pings (every second) and its microphone's audio would come meanwhile
    assert "Erreur" not in page_errors(lost), page_errors(lost)  # it sends nothing for a seat it lost
    assert css(lost, "#connection").get_attribute("data-state") == "connected"
    # ...nor does it hear for it: its microphone stopped (left on, it drained the battery).
    assert lost.execute_script("return window.cdcPhoneAudio() === null && window.cdcPhone.mic") == "off"
    new = browsers.open(lang="fr")
    set_viewport(new, 360, 740, mobile=True)
    new.get(answer.link)  # the link claims the seat at once
    wait_for("the new phone seated", partial(seated, new, 0))
    wait_for("the new phone is Zoé", lambda: css(new, "#me").text == "Vous êtes Zoé")
    wait_for("the way in gone again", lambda: not board.find_elements("css selector", join))
    wait_for("a question for the new phone", lambda: new.find_elements("css selector", "#choices button.choice"),
             timeout=30)
    css(new, "#choices button.choice").click()
    wait_for("its move played", lambda: any(e["type"] == "turn_start" and e["seat"] == 0
                                            for e in table.session.state.log))
    # The old phone, reloaded, has no token any more: every seat is taken, and it is said how to get one back.
    lost.refresh()
    wait_for("the old phone's picker", lambda: css(lost, "#seats").is_displayed())
    assert "« phone 2 »" in css(lost, "#seat-list").text
    assert not script_errors(board) and not script_errors(new)


def test_a_phone_is_back_at_its_seat_by_itself_when_the_host_resumes_the_game(browsers: Browsers,
                                                                               tmp_path: Path) -> None:
    """The laptop's play.py stops mid-game; started again with --resume on the same port, it is
    the same room (the save keeps it): the phone's page, reconnecting all along, is at its seat
    again with nobody touching it, and plays on. The resumed room numbers its questions from 1
    again: the page forgets the question it answered before (its buttons came up disabled)."""
    save = tmp_path / "game.json"
    argv = ["--humans", "Zoé", "--bots", "bold", "--seed", "5", "--save", str(save)]
    host = PlayWeb(tmp_path, argv)

    def moves() -> int:
        return sum(e["seat"] == 0 for e in PlaySession.read_save(save)["history"])

    try:
        address = host.read_until("phones:").split("phones: ")[1].split()[0]
        host.read_until("Ctrl+C stops")
        phone = browsers.open(lang="fr")
        set_viewport(phone, 360, 740, mobile=True)
        phone.get(address + "&seat=1")
        wait_for("the phone seated", partial(seated, phone, 0))
        token = phone.execute_script("return window.cdcPhone.token")
        wait_for("a first question", lambda: phone.find_elements("css selector", "#choices button.choice"),
                 timeout=30)
        answered = phone.execute_script("return window.cdcTable.question.id")
        css(phone, "#choices button.choice").click()
        wait_for("its first move saved", lambda: moves() >= 1)
        before = moves()
        host.interrupt()
    finally:
        host.close()
    wait_for("the phone reconnecting", lambda: css(phone, "#connection").get_attribute("data-state") == "reconnecting")
    again = PlayWeb(tmp_path, ["--resume", str(save)], port=host.port)
    try:
        assert "come back to their seats by themselves" in again.read_until("Ctrl+C stops")
        wait_for("the phone at its seat again", lambda: css(phone, "#connection").get_attribute("data-state")
                 == "connected" and phone.execute_script("return window.cdcPhone.live") is True, timeout=20)
        assert seated(phone, 0) and phone.execute_script("return window.cdcPhone.token") == token
        assert not css(phone, "#seats").is_displayed()
        wait_for("a question for it", lambda: phone.find_elements("css selector", "#choices button.choice"),
                 timeout=30)
        assert phone.execute_script("return window.cdcTable.question.id") == answered  # numbered anew
        assert css(phone, "#choices button.choice").get_attribute("disabled") is None
        css(phone, "#choices button.choice").click()
        wait_for("its move saved", lambda: moves() > before)
        again.interrupt()
    finally:
        again.close()
    # The browser logs each refused reconnection while the host was down; nothing else.
    assert not [e for e in script_errors(phone) if "ERR_CONNECTION_REFUSED" not in e]


# ---------------------------------------------------------------- two phones, one race, by voice

EXTRA_DELAY_S = 0.080  # phone 2's microphone path is this much slower than phone 1's
# Phone 2's player truly shouts this much before phone 1's: more than the basic rules' tie window
# (100 ms) plus the tolerance, so calibrated he wins outright; uncorrected, his shout would land
# AHEAD_S - EXTRA_DELAY_S = 50 ms first: a tie.
AHEAD_S = 0.130
# Both phones record one stereo file, so paplay's start and the sink's latency are common to
# both. What is not: each Chromium process's own capture path (PulseAudio source buffer, the
# browser's input FIFO), part of that phone's real input delay. Measured here over four runs, the
# delay difference for an 80 ms offset in the file was 95, 69, 75 and 64 ms: the capture paths of
# two Chromium processes differ by up to ~16 ms, so the calibration's difference is checked to
# 25 ms. The race is the sharper check: whatever each phone's delay, the calibration must remove
# it, so the two shouts' onsets on the host clock must be AHEAD_S apart within 15 ms (the issue's
# p95 bound on the onset error across phones).
CAPTURE_SPREAD_S = 0.025
TOLERANCE_S = 0.015
KO_LEXICON = Path(__file__).resolve().parents[1] / "voice" / "data" / "ko.yaml"


@pytest.fixture(scope="module")
def korean() -> tuple[Any, Any, np.ndarray]:
    """The Korean test model, its lexicon and the Korean phrase for « pas mou le caillou »
    spoken by espeak-ng (the French model is not installable here; the lexicon maps the
    Korean phrase to the French intent)."""
    from voice.audio import sound_span, synthesise
    from voice.lexicon import load_lexicon
    from voice.model import load_model, packaged_model_path

    lexicon = load_lexicon(KO_LEXICON)
    speech = synthesise(lexicon.intents["pas_mou_le_caillou"][0], "ko", 175, 50)
    span = sound_span(speech)
    assert span is not None
    return load_model(packaged_model_path()), lexicon, speech[span[0]:span[1]] / 32768  # int16 units → [-1, 1]


def stereo(length_s: float, left: list[tuple[float, np.ndarray]], right: list[tuple[float, np.ndarray]],
           gain: float = 0.5) -> np.ndarray:
    """A (frames, 2) room sound: each (start_s, samples) placed on its channel."""
    out = np.zeros((round(length_s * 16000), 2))
    for channel, parts in enumerate((left, right)):
        for start_s, samples in parts:
            first = round(start_s * 16000)
            out[first:first + len(samples), channel] += gain * np.asarray(samples, dtype=float)
    return out


def test_two_phones_race_by_voice_and_the_delay_is_calibrated(web_table, room_browsers: Browsers, pulse: Pulse,
                                                              korean, tmp_path: Path) -> None:
    from voice.recogniser import Recogniser

    model, lexicon, shout = korean
    chirps: list[float] = []

    def play(samples: np.ndarray, rate: int) -> None:
        """The host's loudspeaker: the chirp reaches phone 2 EXTRA_DELAY_S later than phone 1."""
        assert rate == 16000
        chirps.append(time.monotonic())
        pulse.play(stereo(1.0, [(0.0, samples)], [(EXTRA_DELAY_S, samples)]), tmp_path / f"chirp{len(chirps)}.wav")

    # Seat 1 throws first (first-player dice 1, 2) a chouette velute (2, 4 then 2): a race
    # where the first to shout « Pas mou le caillou ! » wins.
    # The race stays open 6 s instead of 3: on a loaded test machine the two recognisers may
    # finish decoding a shout later than a person would wait (what is checked is the onsets).
    basic = load_ruleset("basic")
    rules = basic.model_copy(update={"races": basic.races.model_copy(update={"race_window_ms": 6000})})
    table = web_table([SeatPlayer("Alice"), SeatPlayer("Bruno")], ruleset=rules,
                      dice=InjectedDice([1, 2, 2, 4, 2] + [6, 5, 3] * 10), play=play,
                      make_recogniser=lambda clock: Recogniser(model, lexicon, intents=[], clock=clock))
    room = table.room
    # Both browsers start before either microphone: a browser starting takes the CPU and would
    # stall the other's audio.
    phones = [room_browsers.open(source=source) for source in SOURCES]
    for seat, phone in enumerate(phones):
        phone.get(f"{table.phone_url}&seat={seat + 1}")  # the link gives the seat
        wait_for(f"phone {seat + 1} seated", partial(seated, phone, seat))
    for phone in phones:
        css(phone, "#mic-button").click()
    wait_for("both microphones online", lambda: all(room.seats[s].mic == "online" for s in (0, 1)))
    time.sleep(3.0)  # the clock bursts (2 s) and the join chirps are over
    played = len(chirps)
    room.calibrate()  # one chirp both phones hear: one paplay for both channels
    wait_for("the chirp", lambda: len(chirps) > played, timeout=5)
    wait_for("both phones calibrated",
             lambda: all(room.seats[s].clock.calibration_state == "ok" for s in (0, 1)), timeout=8)
    delays = [room.seats[s].clock.input_delay_s for s in (0, 1)]
    assert all(0.0 < d < 0.5 for d in delays), delays
    assert delays[1] - delays[0] == pytest.approx(EXTRA_DELAY_S, abs=CAPTURE_SPREAD_S), delays
    # Each phone shows its own calibration: the delay its clock holds now (it follows the
    # envelope for a while after the chirp, so not necessarily the one read above), to 1 ms.
    def shows_its_delay(phone: Any, seat: int) -> bool:
        shown = calibration_shown(phone)
        delay = room.seats[seat].clock.input_delay_s
        return shown is not None and delay is not None and abs(int(shown.group(1)) - delay * 1000) <= 1

    for seat, phone in enumerate(phones):
        wait_for(f"phone {seat + 1} showing its delay", partial(shows_its_delay, phone, seat))
    # The chirps (the host's sound) did not pass the microphone test: the pages still ask for words.
    for phone in phones:
        assert css(phone, "#mic-test").text.startswith("Test du micro : dites quelques mots")

    # Alice throws: the race opens; Bruno truly shouts AHEAD_S first but his phone hears him
    # EXTRA_DELAY_S later.
    wait_for("Alice's roll button", lambda: phones[0].find_elements("css selector", "#choices button.choice"))
    css(phones[0], "#choices button.choice").click()
    wait_for("the race", lambda: ((room.table_message() or {}).get("race") or {}).get("running"), timeout=10)
    at = 0.3
    pulse.play(stereo(at + 2.0, [(at, shout)], [(at - AHEAD_S + EXTRA_DELAY_S, shout)]), tmp_path / "shouts.wav")
    race = wait_for("the race's result", lambda: (lambda r: r if r and r.get("result") else None)(
        (room.table_message() or {}).get("race")), timeout=20)
    by_seat = {s["seat"]: s for s in race["shouts"]}
    assert set(by_seat) == {0, 1}, race
    assert all(s["by"] == "voice" for s in race["shouts"]), race
    gap_s = (by_seat[0]["onset_ms"] - by_seat[1]["onset_ms"]) / 1000
    assert gap_s == pytest.approx(AHEAD_S, abs=TOLERANCE_S), (gap_s, delays, race)
    [verdict] = [e for e in table.session.state.log if e["type"] == "race"]
    assert verdict["tied"] == [1], verdict  # Bruno alone first: no tie
    assert "Bruno" in race["result"]["en"] and "Alice" not in race["result"]["en"], race
    # Both phones' race panels show the two shouts with their onsets, and the shouts passed
    # each phone's microphone test.
    for phone in phones:
        wait_for("the race panel", partial(race_rows, phone, 2))
        # Each row on one line at a phone's width: the race's phrase is in the head, not repeated.
        assert not phone.find_elements("css selector", "#race .shouts .phrase")
        wait_for("the microphone test passed", lambda: css(phone, "#mic-test").text  # noqa: B023 - waited on at once
                 == "Micro testé : la table vous entend.")
    set_viewport(phones[1], 360, 740, mobile=True)
    phones[1].execute_script("window.scrollTo(0, document.querySelector('#race-box').offsetTop"
                             " - document.querySelector('.sticky-top').offsetHeight - 8)")
    phones[1].save_screenshot(str(SCREENSHOTS / "phone-fr-race-360x740.png"))


def test_the_board_marks_an_untested_microphone_until_its_player_speaks(web_table, room_browsers: Browsers,
                                                                      pulse: Pulse, korean, tmp_path: Path) -> None:
    """A phone streams, its player not yet heard: the board says « micro à tester » beside the
    seat (a player whose phone would not hear them is found before the first race). Once the
    player has said a few words the board's mark goes and the phone says its test passed."""
    _model, _lexicon, said = korean
    table = bots_table(web_table, seed=7)
    phone = room_browsers.open(source=SOURCES[0])
    phone.get(f"{table.phone_url}&seat=1")  # Zoé's seat, by the link
    wait_for("the phone seated", partial(seated, phone, 0))
    css(phone, "#mic-button").click()
    wait_for("the microphone streaming", lambda: table.room.seats[0].mic == "online")
    board = room_browsers.open()
    board.get(table.board_url)
    untested = "#players li[data-seat='0'] .mic-test[data-test='waiting']"
    wait_for("the board's mark", lambda: board.find_elements("css selector", untested))
    assert css(board, untested).text == "micro à tester"
    assert css(phone, "#mic-test").text.startswith("Test du micro : dites quelques mots")
    time.sleep(1.5)  # the silent room passes nothing
    assert table.room.seats[0].mic_test == "waiting" and board.find_elements("css selector", untested)

    pulse.play(stereo(len(said) / 16000 + 1.0, [(0.3, said)], []), tmp_path / "said.wav")
    wait_for("the microphone test passed", lambda: css(phone, "#mic-test").text
             == "Micro testé : la table vous entend.", timeout=10)
    wait_for("the board's mark gone", lambda: not board.find_elements("css selector", untested))
    assert board.find_elements("css selector", "#players li[data-seat='0'] [data-mic='online']")
    assert not script_errors(board) and not script_errors(phone)


# ---------------------------------------------------------------- a phone that sleeps, then reloads


def test_mic_offline_when_the_stream_stops_and_the_seat_comes_back_after_reload(web_table, browsers: Browsers) -> None:
    table = bots_table(web_table, seed=7)
    phone = browsers.open(fake_microphone=True)
    phone.get(table.phone_url)
    claim_by_tap(phone, 0)
    css(phone, "#mic-button").click()
    seat = table.room.seats[0]
    wait_for("the mic online", lambda: seat.mic == "online")
    board = browsers.open()
    board.get(table.board_url)
    online = "#players li[data-seat='0'] [data-mic='online']"
    wait_for("the board showing the mic online", lambda: board.find_elements("css selector", online))
    # The phone's audio stops without a word (as when the network drops it): no frame, no message.
    phone.execute_script("window.cdcPhoneAudio().node.port.onmessage = null")
    stopped = time.monotonic()
    offline = "#players li[data-seat='0'] [data-mic='offline']"
    wait_for("the board showing the mic offline", lambda: board.find_elements("css selector", offline), timeout=3)
    assert time.monotonic() - stopped < 2.0  # "within a second" of the host noticing, plus the page's poll
    wait_for("the phone saying so too", lambda: css(phone, "#mic-state").get_attribute("data-mic") == "off")
    # The context suspended (iOS interrupts it on a call): the page says "off" and offers the button.
    phone.execute_script("window.cdcPhoneAudio().ctx.suspend()")
    wait_for("the mic button back", lambda: css(phone, "#mic-button").is_displayed())

    # A reload: the page reconnects with the token it kept, to the same seat, no picker.
    token = phone.execute_script("return window.cdcPhone.token")
    assert token == seat.token
    phone.refresh()
    wait_for("the seat back after the reload", lambda: phone.execute_script("return window.cdcPhone.seat") == 0)
    assert not css(phone, "#seats").is_displayed()
    assert phone.execute_script("return window.cdcPhone.token") == token
    back = wait_for("the table back", lambda: page_table(phone))
    assert [p["name"] for p in back["players"]] == ["Zoé", "Prudent", "Hardi"]


def test_the_phone_page_in_firefox(web_table, firefox_browsers: Browsers) -> None:
    """Firefox (Debian's firefox-esr): the page in French, a seat, its fake microphone streaming
    to the host, the clock synced from performance.now() in 1 ms steps, no error said."""
    table = bots_table(web_table, seed=7)
    phone = firefox_browsers.open_firefox(lang="fr")
    phone.get(table.phone_url)
    claim_by_tap(phone, 0)
    assert phone.execute_script("return document.documentElement.lang") == "fr"
    assert css(phone, "#mic-button").text == "Activer le micro"
    css(phone, "#mic-button").click()
    seat = table.room.seats[0]
    wait_for("the mic online", lambda: seat.mic == "online", timeout=20)
    wait_for("the host's clock for the phone", lambda: seat.clock is not None and seat.clock.synced)
    assert css(phone, "#mic-state").get_attribute("data-mic") == "on"
    assert phone.execute_script("return window.cdcPhoneAudio().ctx.state") == "running"
    time.sleep(1.0)  # a second of pings and audio: nothing refused meanwhile
    assert css(phone, "#connection").get_attribute("data-state") == "connected"
    assert not page_errors(phone), page_errors(phone)


# ---------------------------------------------------------------- the worklet's resampler

RESAMPLE_SCRIPT = """
const [frequency, done] = arguments;
(async () => {
  const seconds = 1.0, rate = 48000;
  const ctx = new OfflineAudioContext(1, seconds * rate, rate);
  await ctx.audioWorklet.addModule("/static/worklet.js");
  const tone = ctx.createOscillator();
  tone.frequency.value = frequency;
  const node = new AudioWorkletNode(ctx, "pcm-capture", {numberOfInputs: 1, numberOfOutputs: 1});
  const chunks = [];
  node.port.onmessage = (e) => chunks.push([e.data.first, Array.from(e.data.pcm)]);
  tone.connect(node); node.connect(ctx.destination); tone.start();
  await ctx.startRendering();
  await new Promise((r) => setTimeout(r, 200));  // the last messages
  done(chunks);
})().catch((e) => done(String(e)));
"""


def test_the_worklet_resamples_a_48_khz_context_to_16_khz(web_table, browsers: Browsers) -> None:
    """Firefox and Safari run the context at the microphone's rate: the worklet resamples. A
    1 kHz tone keeps its level; a 12 kHz tone (above 16 kHz's Nyquist) is filtered, not folded
    back to 4 kHz; the chunks are 100 ms each, numbered without gaps."""
    table = bots_table(web_table)
    page = browsers.open()
    page.get(table.phone_url)
    page.set_script_timeout(20)
    for frequency, gain in ((1000.0, 1.0), (12000.0, 0.0)):
        chunks = page.execute_async_script(RESAMPLE_SCRIPT, frequency)
        assert isinstance(chunks, list), chunks
        assert [c[0] for c in chunks] == [1600 * i for i in range(len(chunks))]
        assert len(chunks) in (9, 10)  # 1 s at 16 kHz, less the kernel's half width at the end
        pcm = np.concatenate([np.array(c[1], dtype=float) for c in chunks]) / 32767
        rms = float(np.sqrt(np.mean(pcm[800:-800] ** 2)))
        assert rms == pytest.approx(gain / np.sqrt(2), abs=0.01), frequency


# ---------------------------------------------------------------- clear errors


def test_clear_errors_for_a_refused_microphone_a_wrong_room_and_a_lost_connection(web_table, browsers: Browsers,
                                                                                  tmp_path: Path) -> None:
    table = bots_table(web_table)
    phone = browsers.open(fake_microphone=True, microphone_refused=True)
    # The room's secret wrong: the host's 403 page, never the table.
    phone.get(table.phone_url.replace("room=", "room=x"))
    assert "403" in css(phone, "body").text and not phone.find_elements("css selector", "#shout")
    # The microphone refused (the person said no): said, with what to do; taps still work.
    phone.get(table.phone_url)
    claim_by_tap(phone, 0)
    css(phone, "#mic-button").click()
    wait_for("the refusal", lambda: "Micro refusé" in page_errors(phone), timeout=5)
    assert css(phone, "#mic-state").get_attribute("data-mic") == "off"
    # The host goes away: "reconnecting", and the seat is back when it returns.
    table.server.stop()
    wait_for("the lost connection said", lambda: "reconnexion" in page_errors(phone))
    assert css(phone, "#connection").get_attribute("data-state") == "reconnecting"


def test_the_link_opened_again_in_a_second_tab_plays_on_and_keeps_the_seat_after_a_reload(
        web_table, browsers: Browsers) -> None:
    """A player scans the table's code again (or opens the link twice): the phone's browser opens
    a second tab, which takes the seat over with the token the first one kept. The first tab is
    told and goes back to the seat picker, and must leave that token, still the seat's, where
    the second tab reads it: a phone's browser reloads a tab it put to sleep, and the seat
    would be lost until the host typed « phone 1 »."""
    table = bots_table(web_table, seed=11)
    phone = browsers.open()
    phone.get(table.phone_url)
    claim_by_tap(phone, 0)
    first = phone.current_window_handle
    phone.switch_to.new_window("tab")
    phone.get(table.phone_url)
    wait_for("the second tab at the seat", partial(seated, phone, 0))
    second = phone.current_window_handle
    phone.switch_to.window(first)
    wait_for("the first tab told", lambda: phone.execute_script("return window.cdcPhone.seat") is None)
    wait_for("the first tab says why",
             lambda: "Votre place joue maintenant sur un autre téléphone" in page_errors(phone))
    # Said once, in the page's language: not again in the host's English words.
    assert "another phone" not in page_errors(phone), page_errors(phone)
    phone.switch_to.window(second)
    time.sleep(0.5)  # whatever the first tab did with what it kept has been done
    phone.refresh()
    wait_for("the seat back after the reload", partial(seated, phone, 0))
    assert phone.execute_script("return window.cdcPhone.token") == table.room.seats[0].token
    assert not css(phone, "#seats").is_displayed()


def test_the_phone_page_plays_where_the_browser_keeps_no_site_data(web_table, browsers: Browsers) -> None:
    """Cookies and site data blocked (a setting, some private modes, an app's own browser): reading
    localStorage throws, and the page stopped at its first line, blank. It plays on, keeping nothing."""
    table = bots_table(web_table)
    phone = browsers.open(storage_blocked=True)
    phone.get(table.phone_url)
    assert phone.execute_script("try { return !window.localStorage; } catch (e) { return true; }")
    css(phone, "#name").send_keys("Léa")
    claim_by_tap(phone, 0)  # the name and the seat's token are not kept
    assert table.room.seats[0].player.name == "Léa"
    wait_for("the table on the phone", lambda: phone.find_elements("css selector", "#players li[data-seat='0']"))
    css(phone, "#lang").click()  # the language switched, not kept
    wait_for("the page in English", lambda: css(phone, "#lang").text == "Français")
    # Its clock samples carry back the host's times of its pongs: taken, none refused.
    wait_for("the phone's clock synced", lambda: getattr(table.room.seats[0].clock, "synced", False))
    assert not [c.bad for c in table.room.connections if c.bad]
    assert not script_errors(phone), script_errors(phone)


def test_a_refusal_from_the_host_is_said_in_the_pages_language_and_goes_after_a_moment(
        web_table, browsers: Browsers) -> None:
    """A friend types the name of a player already at the table, then one with a markup mark: the
    host refuses each with its code (voice/web/room.py); the French page says it in French, and
    the refusal does not stay over the game (it used to stay on top of the page until the seat
    picker came back)."""
    table = bots_table(web_table, seed=13)
    phone = browsers.open(lang="fr")
    phone.get(table.phone_url)
    wait_for("the seat picker", lambda: css(phone, "#seats button[data-seat='0']").is_enabled())
    phone.execute_script("CDC.HOST_ERROR_MS = 1500")
    css(phone, "#name").send_keys("hardi")
    css(phone, "#seats button[data-seat='0']").click()
    said = wait_for("the refusal", lambda: page_errors(phone))
    assert said == "Erreur : hardi est déjà à la table : choisissez un autre nom.", said
    wait_for("the refusal gone", lambda: page_errors(phone) == "", timeout=5)
    assert not table.room.seats[0].taken
    css(phone, "#name").clear()
    css(phone, "#name").send_keys("Zoé <3")  # the table's screens read [ ] < > as markup
    css(phone, "#seats button[data-seat='0']").click()
    said = wait_for("the second refusal", lambda: page_errors(phone))
    assert said == "Erreur : « Zoé <3 » : donnez un nom sans [ ] < ni >.", said
    assert not table.room.seats[0].taken
    css(phone, "#name").clear()
    css(phone, "#name").send_keys("Zoé")
    css(phone, "#seats button[data-seat='0']").click()
    wait_for("seated once the name is hers", partial(seated, phone, 0))
    assert not script_errors(phone)


def test_a_host_that_accepts_and_closes_at_once_is_asked_again_ever_more_slowly(
        browsers: Browsers, tmp_path: Path) -> None:
    # A full table accepts the socket, says so and closes it. The back-off started again at every
    # open, so the page came back twice a second for ever (19-20 sockets in 10 s).
    from voice.web.certs import ensure_certificates
    from voice.web.room import Room
    from voice.web.server import WebServer

    certificates = ensure_certificates(tmp_path / "certs", ["127.0.0.1"])
    room = Room([SeatPlayer("Zoé")], play=lambda samples, rate: None)
    server = WebServer(room, certificates, "127.0.0.1", 0, max_sockets=0).start()
    try:
        phone = browsers.open(lang="fr")
        phone.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
          window.opened = [];
          const Real = window.WebSocket;
          window.WebSocket = function (url, protocols) {
            window.opened.push(performance.now());
            return new Real(url, protocols);
          };
          window.WebSocket.OPEN = Real.OPEN; window.WebSocket.prototype = Real.prototype;"""})
        phone.get(f"https://127.0.0.1:{server.port}/?room={room.secret}")
        time.sleep(6)
        opened = phone.execute_script("return window.opened")
        gaps = [later - earlier for earlier, later in zip(opened, opened[1:], strict=False)]
        # 0.5, 1, 2 s (±20 %) after the first: at most 4 sockets in 6 s, each wait longer.
        assert 2 <= len(opened) <= 4, gaps
        assert all(later > earlier for earlier, later in zip(gaps, gaps[1:], strict=False)), gaps
        assert "pleine" in page_errors(phone)
    finally:
        server.stop()
        room.close()
