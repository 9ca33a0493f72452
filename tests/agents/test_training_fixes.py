"""Training runs that went wrong at the edges: RLlib's win rate over the learner's last 200
games (not one iteration's, never NaN), a damaged config.json or an unloadable checkpoint that
stopped a --resume, Ctrl+C in the evaluation of a run stopped by --time-limit, state.json of the
wrong kinds, an out_dir placeholder with an attribute, train_tables.py's Ctrl+C line, and an
evaluation of no games."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from collections import deque
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from doubles import script, tiny_config

from agents.training import ConfigError, CorruptCheckpoint, TrainConfig, latest_checkpoint, load_config, read_state
from cdc_env.rules import load_ruleset


def no_nan(constant: str) -> None:
    raise AssertionError(f"the JSON holds {constant}, which strict JSON has not")


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tiny SB3 run (checkpoints at 128 and 256 steps), trained once for the module."""
    where = tmp_path_factory.mktemp("trained")
    assert script("train").main(["--config", str(tiny_config(where)), "--eval-games", "0", "--workers", "1"]) == 0
    return where / "tiny"


def copy_of(trained: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The trained run copied to tmp_path/tiny, with its config (out_dir there)."""
    shutil.copytree(trained, tmp_path / "tiny")
    return tiny_config(tmp_path), tmp_path / "tiny"


# ---------------------------------------------------------------------- 1. RLlib's win rate


def test_the_win_rate_window_holds_the_last_200_games_across_iterations() -> None:
    from agents.rllib_training import OUTCOMES, WINDOW, follow_games, iteration_outcomes

    assert WINDOW == 200
    # As RLlib hands the iteration's outcomes over: a list, one game as a number, none as NaN or nothing.
    assert iteration_outcomes({OUTCOMES: [1.0, 0.0]}) == [1.0, 0.0]
    assert iteration_outcomes({OUTCOMES: 1.0}) == [1.0]
    assert iteration_outcomes({OUTCOMES: math.nan}) == iteration_outcomes({OUTCOMES: []}) == []
    assert iteration_outcomes({}) == []
    window: deque[float] = deque(maxlen=WINDOW)
    assert follow_games(window, []) is None  # no game yet: no point
    assert follow_games(window, [1.0] * 150) == 1.0
    assert follow_games(window, []) == 1.0  # an iteration of no game leaves the window as it was
    assert follow_games(window, [0.0] * 100) == 0.5  # the last 200: 100 wins, 100 losses (one iteration's: 0)


class FakeAlgorithm:
    """RLlib's Algorithm as train() uses it, its iterations' results given: each `ended` list the
    learner's outcomes of that iteration, also as RLlib's per-iteration mean (NaN for none)."""

    def __init__(self, iterations: list[list[float]]) -> None:
        self.iterations = iter(iterations)
        self.learner_group = SimpleNamespace(get_state=lambda components: {"learner": {"rl_module": {}}})

    def train(self) -> dict[str, Any]:
        from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED

        from agents.rllib_training import OUTCOMES

        ended = next(self.iterations)
        mean = sum(ended) / len(ended) if ended else math.nan
        return {ENV_RUNNER_RESULTS: {NUM_ENV_STEPS_SAMPLED: 100, "learner_win_rate": mean,
                                     OUTCOMES: ended if ended else math.nan}}

    def save_to_path(self, path: str) -> None:
        Path(path).mkdir(parents=True)
        (Path(path) / "algorithm_state.pkl").write_bytes(b"state")

    def restore_from_path(self, path: str) -> None:
        pass

    def stop(self) -> None:
        pass


def fake_rllib(monkeypatch: pytest.MonkeyPatch, algorithm: FakeAlgorithm) -> Any:
    from agents import rllib_training

    monkeypatch.setattr(rllib_training, "ready_ray", lambda *args, **kwargs: None)
    monkeypatch.setattr(rllib_training, "algorithm_config",
                        lambda *args, **kwargs: SimpleNamespace(build_algo=lambda: algorithm))
    monkeypatch.setattr(rllib_training, "set_modules", lambda *args: None)
    monkeypatch.setattr(rllib_training, "export_model", lambda algo, config, rules, path: path)
    return rllib_training


def test_rllibs_curve_is_the_last_200_games_never_nan_and_resumes_with_its_window(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The logged "win rate (last 200)" was one iteration's (RLlib resets its window on the
    # driver), and NaN where no game ended: NaN in the curve, report.json and state.json.
    config = TrainConfig(run_name="rl", trainer="rllib", total_timesteps=400, checkpoint_every=300,
                         imitation={"teacher": None}, league={"max_snapshots": 0}, out_dir=str(tmp_path / "rl"))
    rules = load_ruleset("classic")
    said: list[str] = []
    rllib_training = fake_rllib(monkeypatch, FakeAlgorithm([[], [1.0] * 150, [], [0.0] * 100]))
    _, steps, curve = rllib_training.train(config, rules, None, None, say=said.append)
    assert steps == 400
    assert [point["win_rate"] for point in curve] == [1.0, 1.0, 0.5]  # (iteration 4 alone: 0.0)
    assert "win rate (last 200) —" in said[0] and "win rate (last 200) 0.500" in said[3]
    checkpoint = tmp_path / "rl" / "checkpoints" / "step_0000000300"
    state = json.loads((checkpoint / "state.json").read_text(encoding="utf-8"), parse_constant=no_nan)
    assert state["outcomes"] == [1.0] * 150 and len(state["curve"]) == 2

    # Resumed from step 300: the window goes on over the same games.
    found = (checkpoint, rllib_training.read_checkpoint(checkpoint))
    fake_rllib(monkeypatch, FakeAlgorithm([[0.0] * 100]))
    _, steps, curve = rllib_training.train(config, rules, found, None, say=said.append)
    assert steps == 400 and [point["win_rate"] for point in curve] == [1.0, 1.0, 0.5]


def test_a_curve_point_of_no_game_from_an_earlier_version_is_dropped_on_resuming(tmp_path: Path) -> None:
    from agents.rllib_training import CHECKPOINT_FORMAT

    # (json.dumps writes NaN as Python's json reads it back, as the earlier version wrote it)
    state = {"format": CHECKPOINT_FORMAT, "steps": 300, "snapshots": 0,
             "curve": [{"steps": 100, "win_rate": math.nan}, {"steps": 200, "win_rate": 0.25}]}
    (tmp_path / "state.json").write_text(json.dumps(state), encoding="utf-8")
    assert read_state(tmp_path, CHECKPOINT_FORMAT)["curve"] == [{"steps": 200, "win_rate": 0.25}]


# ---------------------------------------------------------------------- 2. a damaged config.json


def test_a_damaged_config_json_beside_checkpoints_is_written_again_and_the_run_resumes(
        trained: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # It blocked --resume, and the --overwrite it advised deleted every checkpoint.
    config, run = copy_of(trained, tmp_path)
    (run / "config.json").write_text('{"run_name": "tin', encoding="utf-8")
    checkpoints = sorted(path.name for path in (run / "checkpoints").iterdir())
    assert script("train").main(["--config", str(config), "--resume", "--timesteps", "384", "--eval-games", "0",
                                 "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert f"{run / 'config.json'} is damaged (not a training run's config): it is written again" in out
    assert f"resuming from {run / 'checkpoints' / 'step_0000000256'}" in out
    assert json.loads((run / "config.json").read_text(encoding="utf-8"))["run_name"] == "tiny"
    assert set(checkpoints) <= {path.name for path in (run / "checkpoints").iterdir()}
    # Without --resume the run is refused as ever, saying that --overwrite starts from nothing.
    (run / "config.json").write_text("damaged", encoding="utf-8")
    assert script("train").main(["--config", str(config), "--eval-games", "0"]) == 2
    err = capsys.readouterr().err
    assert "already holds a run" in err and "--overwrite to start again from nothing" in err
    # A folder that holds no run: a config.json there is the user's, refused as before.
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "config.json").write_text("mine", encoding="utf-8")
    assert script("train").main(["--config", str(tiny_config(tmp_path, "alone")), "--resume"]) == 2
    assert "is not a training run's config (a file of yours?)" in capsys.readouterr().err


# ---------------------------------------------------------------------- 3. Ctrl+C in the evaluation


def interrupted_evaluation(*args: Any) -> None:
    raise KeyboardInterrupt


def test_ctrl_c_in_the_evaluation_after_a_time_limit_says_resume_trains_on(
        trained: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # "--resume evaluates it again", it said; --resume trained on to total_timesteps and replaced the model.
    config, run = copy_of(trained, tmp_path)
    train = script("train")
    monkeypatch.setattr(train, "finish", interrupted_evaluation)
    assert train.main(["--config", str(config), "--resume", "--timesteps", "100000", "--time-limit", "0.01",
                       "--workers", "1"]) == 130
    said = capsys.readouterr().err.strip()
    assert len(said.splitlines()) == 1 and "evaluates it again" not in said, said
    assert "of 100000 steps is kept in" in said and "--resume trains it on to 100000 steps (and replaces it)" in said
    assert said.endswith(f"python scripts/evaluate.py --agents {run / 'model.zip'} --field simple --ruleset classic "
                         "--seats 2")
    # A run that reached its total_timesteps: --resume evaluates it again (it trains no more).
    assert train.main(["--config", str(config), "--resume", "--timesteps", "256", "--workers", "1"]) == 130
    assert capsys.readouterr().err.strip().endswith("--resume evaluates it again")


# ---------------------------------------------------------------------- 4. an out_dir, a state.json


@pytest.mark.parametrize("out_dir", ["runs/{run_name.x}", "runs/{run_name[x]}"])
def test_an_out_dir_placeholder_with_an_attribute_or_a_key_is_a_config_error(tmp_path: Path, out_dir: str) -> None:
    with pytest.raises(ConfigError, match=r"out_dir: .*the one placeholder is \{run_name\}"):
        load_config(tiny_config(tmp_path, out_dir=out_dir))


def checkpoint(directory: Path, at: int, state: dict[str, Any] | None = None) -> Path:
    path = directory / f"step_{at:010d}"
    path.mkdir(parents=True)
    (path / "model.zip").write_bytes(b"a model")
    whole = {"format": "cdc-checkpoint/1", "steps": at, "model_sha256": hashlib.sha256(b"a model").hexdigest(),
             "curve": [], "snapshots": [], **(state or {})}
    (path / "state.json").write_text(json.dumps(whole), encoding="utf-8")
    return path


@pytest.mark.parametrize("wrong", [{"steps": "lots"}, {"steps": -1}, {"curve": 5}, {"curve": [{"steps": "x"}]},
                                   {"curve": [{"win_rate": 0.5}]}, {"snapshots": 5}, {"snapshots": [5]}])
def test_a_state_json_of_the_wrong_kinds_is_a_corrupt_checkpoint_passed_over(tmp_path: Path,
                                                                             wrong: dict[str, Any]) -> None:
    # Valid JSON, wrong kinds: ValueError and TypeError tracebacks as the run resumed.
    older = checkpoint(tmp_path, 128)
    newest = checkpoint(tmp_path, 256, wrong)
    with pytest.raises(CorruptCheckpoint, match="state.json has"):
        read_state(newest)
    reports: list[str] = []
    found = latest_checkpoint(tmp_path, report=reports.append)
    assert found is not None and found[0] == older and "skipping a corrupt checkpoint" in reports[0]


@pytest.mark.parametrize("wrong", [{"snapshots": "two"}, {"files": 5}, {"outcomes": [2]}, {"outcomes": 5}])
def test_an_rllib_state_json_of_the_wrong_kinds_is_a_corrupt_checkpoint(tmp_path: Path, wrong: dict[str, Any]) -> None:
    from agents.rllib_training import CHECKPOINT_FORMAT, read_checkpoint

    (tmp_path / "algorithm").mkdir()
    (tmp_path / "algorithm" / "a.pkl").write_bytes(b"state")
    state = {"format": CHECKPOINT_FORMAT, "steps": 10, "snapshots": 0, "curve": [], "outcomes": [1.0],
             "files": {"a.pkl": hashlib.sha256(b"state").hexdigest()}}
    (tmp_path / "state.json").write_text(json.dumps(state), encoding="utf-8")
    assert read_checkpoint(tmp_path)["steps"] == 10
    (tmp_path / "state.json").write_text(json.dumps({**state, **wrong}), encoding="utf-8")
    with pytest.raises(CorruptCheckpoint, match="state.json"):
        read_checkpoint(tmp_path)


# ---------------------------------------------------------------------- 5. the minor ones


def test_a_whole_checkpoint_that_cannot_be_loaded_is_passed_over_for_the_one_before(
        trained: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A garbage model.zip with a matching checksum stopped the run (its intact predecessor beside it).
    config, run = copy_of(trained, tmp_path)
    newest = run / "checkpoints" / "step_0000000256"
    (newest / "model.zip").write_bytes(b"not a zip at all")
    state = json.loads((newest / "state.json").read_text(encoding="utf-8"))
    state["model_sha256"] = hashlib.sha256(b"not a zip at all").hexdigest()
    (newest / "state.json").write_text(json.dumps(state), encoding="utf-8")
    assert script("train").main(["--config", str(config), "--resume", "--timesteps", "256", "--eval-games", "0",
                                 "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert f"skipping a corrupt checkpoint: {newest}: model.zip cannot be loaded" in out
    assert f"resuming from {run / 'checkpoints' / 'step_0000000128'}" in out


def test_train_tables_ctrl_c_says_what_each_run_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # "each run kept its last checkpoint", it said, of runs whose logs said nothing was kept.
    tables = script("train_tables")
    said = {"kept": "stopped: the checkpoint at 512 steps is kept in k; go on with --resume",
            "none": "stopped before the first checkpoint: nothing learnt is kept in n; start again with --overwrite"}

    interrupted: list[bool] = []

    class Run:
        def __init__(self, command: list[str], stdout: Any, stderr: Any) -> None:
            self.stem = Path(command[command.index("--config") + 1]).stem
            stdout.write(f"steps 128\n{said[self.stem]}\n\n")
            stdout.flush()

        def wait(self) -> int:
            if not interrupted:  # the first wait is where Ctrl+C reaches train_tables.py
                interrupted.append(True)
                raise KeyboardInterrupt
            return 130

    monkeypatch.setattr(tables.subprocess, "Popen", Run)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "kept.log").write_text("an earlier run's last line\n", encoding="utf-8")
    configs = [str(tiny_config(tmp_path, name)) for name in said]
    assert tables.main([*configs, "--logs", str(tmp_path / "logs")]) == 130
    err = capsys.readouterr().err
    assert "each run kept its last checkpoint" not in err
    assert f"  kept: {said['kept']}" in err and f"  none: {said['none']}" in err


def test_an_evaluation_of_no_games_at_several_seats_says_so(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # An empty table, and no line saying that nothing was evaluated (as solo says).
    train = script("train")
    train.print_verdict({"opponents": {}}, load_config(tiny_config(tmp_path)))
    printed = capsys.readouterr().out
    assert printed.startswith("2 seats: not evaluated (no evaluation games were played")
    assert "win rate" not in printed
