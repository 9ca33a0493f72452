"""`python -m cdc_env`: the rules-table command, its help, its errors, the old play command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_env.__main__ import main


def test_the_table_is_classic_unless_told(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules-table"]) == 0
    classic = json.loads(capsys.readouterr().out)
    assert main(["rules-table", "--ruleset", "solo"]) == 0
    solo = json.loads(capsys.readouterr().out)
    # 1,2,4 is a Soufflette in classic, a Néant in S.
    assert classic[2] == {"dice": [1, 1, 3], "combination": "chouette", "value": 1, "races": []}
    assert [row for row in classic if row["dice"] == [1, 2, 4]][0]["combination"] == "soufflette"
    assert [row for row in solo if row["dice"] == [1, 2, 4]][0]["combination"] == "neant"


def test_the_arguments_default_to_the_command_line(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.argv", ["python -m cdc_env", "rules-table", "--ruleset", "solo"])
    assert main() == 0
    assert len(json.loads(capsys.readouterr().out)) == 216


def test_the_help_names_the_command_and_where_games_are(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m cdc_env [-h] {rules-table} ...")
    lines = [line.strip() for line in out.splitlines()]
    # The docstring's first paragraph only, the command's help, the epilog.
    assert "Command line: `python -m cdc_env rules-table --ruleset NAME`." in lines
    assert "(A whole game between bots is" not in out
    assert "rules-table  classify the 216 ordered rolls as JSON" in lines
    assert lines[-1] == "A whole game between bots: python -m agents play ..."
    with pytest.raises(SystemExit):
        main(["rules-table", "--help"])
    options = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert "--ruleset RULESET  a ruleset name or YAML path" in options


def test_a_command_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main([])
    assert stop.value.code == 2
    assert "the following arguments are required: command" in capsys.readouterr().err


def test_a_bad_ruleset_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules-table", "--ruleset", "nope"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ") and "no ruleset 'nope'" in err and err.count("\n") == 1


def test_the_old_play_command_says_where_it_went(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--players", "4"]) == 2
    assert capsys.readouterr().err == (
        "error: a whole game between bots is now `python -m agents play --players 4` (the engine imports no bots)\n")
    # Only as the first word: a ruleset called play is a ruleset.
    assert main(["rules-table", "--ruleset", "play"]) == 2
    assert "no ruleset 'play'" in capsys.readouterr().err


def test_a_full_disk_is_one_line() -> None:
    # /dev/full: an OSError traceback (No space left on device) from print.
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "cdc_env", "rules-table"], stdout=full, stderr=subprocess.PIPE,
                                text=True, cwd=Path(__file__).resolve().parents[2])
    assert result.returncode == 2
    assert result.stderr == ("error: the table cannot be written to the standard output (No space left on device); "
                             "write it where there is room\n")
