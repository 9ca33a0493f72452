"""`python -m agents play`: whole games printed, and one clear error for each bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agents.__main__ import main

ROOT = Path(__file__).resolve().parents[2]


def test_play_cli_prints_a_whole_game() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "agents", "play", "--ruleset", "classic", "--players", "4", "--seed", "7", "--json"],
        capture_output=True, text=True, check=True, cwd=ROOT).stdout
    game = json.loads(out)
    assert game["winner"] in range(4) and game["scores"][game["winner"]] >= 343
    text = subprocess.run(
        [sys.executable, "-m", "agents", "play", "--ruleset", "classic", "--players", "4", "--seed", "7"],
        capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert f"winner: seat {game['winner']}" in text


def test_a_game_cut_short_prints_no_turn_it_did_not_play_and_a_team_wins_together(
        capsys: pytest.CaptureFixture[str]) -> None:
    # --max-turns 2 printed "— turn 3: seat 0 throws" above "stopped after 2 turns".
    assert main(["play", "--players", "4", "--max-turns", "2", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "— turn 2:" in out and "— turn 3:" not in out and "stopped after 2 turns" in out
    # A Doublette's winners are both seats (it said "winner: seat 2" under the team's win).
    assert main(["play", "--players", "4", "--house", "doublette", "--seed", "2", "--bot", "bold"]) == 0
    out = capsys.readouterr().out
    assert "win as a team" in out and "winner: seats " in out and " as a team" in out.splitlines()[-1]


def test_play_cli_prints_the_rank_and_grade() -> None:
    out = subprocess.run([sys.executable, "-m", "agents", "play", "--ruleset", "solo", "--seed", "3"],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    last = out.strip().splitlines()[-1]
    assert last.startswith("Solo: ") and "grade " in last and "/20, rank " in last


@pytest.mark.parametrize("argv, says", [
    (["--players", "9"], "--players 9: ruleset 'classic' is played by 2 to 8 players, not 9"),
    (["--players", "1"], "--players 1: ruleset 'classic' is played by 2 to 8 players, not 1"),
    (["--players", "0"], "--players 0: ruleset 'classic' is played by 2 to 8 players, not 0"),
    (["--ruleset", "solo", "--players", "2"], "ruleset 'solo' is played by exactly 1 player, not 2;"),
    (["--ruleset", "configs"], "'configs' is a directory, not a YAML file"),
    (["--max-turns", "-1"], "--max-turns -1: give a number of turns ≥ 1, or 0 for no limit"),
    (["--bot", "nobody"], "unknown bot 'nobody'"),
])
def test_bad_input_gets_one_clear_error(argv: list[str], says: str, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["play", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: ") and says in err and "Traceback" not in err


def test_the_engines_old_play_command_points_to_the_new_one(capsys: pytest.CaptureFixture[str]) -> None:
    from cdc_env.__main__ import main as engine_main

    assert engine_main(["play", "--players", "4"]) == 2
    assert "error: a whole game between bots is now `python -m agents play --players 4`" in capsys.readouterr().err


@pytest.mark.parametrize("as_json", [True, False])
def test_a_full_disk_is_one_line(as_json: bool) -> None:
    # /dev/full: an OSError traceback (No space left on device) from print, as for rules-table.
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "agents", "play", "--players", "2", "--max-turns", "3",
                                 *(["--json"] if as_json else [])],
                                stdout=full, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert result.returncode == 2
    assert result.stderr == ("error: the game cannot be written to the standard output (No space left on device); "
                             "write it where there is room\n")


def test_a_pipe_closed_by_its_reader_ends_the_command_quietly() -> None:
    # `python -m agents play … | head`: it said "(Broken pipe); write it where there is room", exit 2.
    child = subprocess.Popen([sys.executable, "-c", "from cdc_env.cli import standard_output\n"
                              "with standard_output('the game'):\n    print('x' * 2_000_000)"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.read(10)
    child.stdout.close()  # as `head` does, having read its lines
    assert child.wait(timeout=60) == 141
    assert child.stderr.read() == b""


def test_a_solo_game_the_optimum_does_not_cover_is_not_graded_and_its_bot_refused(
        capsys: pytest.CaptureFixture[str]) -> None:
    # Solo with Tichette: the optimum ignored the house rule, so its "best play needs 19.40"
    # was beaten by 4 turns and every grade was inflated.
    from agents.__main__ import main

    assert main(["play", "--ruleset", "solo", "--house", "tichette", "--bot", "bold", "--seed", "3"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("Solo: ") and "no grade" in last and "house rules (tichette)" in last
    assert main(["play", "--ruleset", "solo", "--house", "tichette", "--bot", "solo_optimal"]) == 2
    assert "the solo optimum does not cover house rules (tichette)" in capsys.readouterr().err
    assert main(["play", "--ruleset", "solo", "--house", "tichette", "--bot", "bold", "--seed", "3", "--json"]) == 0
    solo = json.loads(capsys.readouterr().out)["solo"]
    assert solo["grade"] is None and "house rules (tichette)" in solo["not_graded"] and solo["turns"] > 0
