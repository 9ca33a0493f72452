"""Training: a short run checkpoints, resumes where it stopped, reports a corrupt checkpoint;
a saved model plays as a bot; bad configs and models get clear errors."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from doubles import script

from agents.bots import make_bot
from agents.champion import SEARCH_CHAMPIONS
from agents.model_bot import ModelLoadError, load_model
from agents.training import (
    ConfigError,
    CorruptCheckpoint,
    latest_checkpoint,
    load_config,
    read_state,
)
from cdc_env.dice import SeededDice
from cdc_env.game import GameState
from cdc_env.rules import load_ruleset

ROOT = Path(__file__).resolve().parents[2]


def tiny_config(tmp_path: Path, **changes) -> Path:
    config = {
        "run_name": "tiny", "ruleset": "classic", "players": 2, "seed": 3, "total_timesteps": 256,
        "n_envs": 2, "max_turns": 60, "opponents": ["simple", "prudent"],
        # Imitation runs as in a real config, on a few games: the default 1500 took most of a run.
        "imitation": {"teacher": "bold", "games": 10, "epochs": 1, "batch_size": 64},
        "league": {"snapshot_every": 128, "max_snapshots": 2, "self_play_fraction": 0.5},
        "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1, "net_arch": [16]},
        "checkpoint_every": 128,
        "evaluation": {"games": 4, "games_others": 2, "opponents": ["simple"]},
        "out_dir": str(tmp_path / "run"),
    }
    config.update(changes)
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def train(*args: str, columns: int | None = None) -> subprocess.CompletedProcess:
    env = None if columns is None else {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "train.py"), *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)


def test_train_checkpoint_resume_and_report(tmp_path: Path) -> None:
    config = tiny_config(tmp_path)
    # A narrow terminal (CI's may be): the verdict stays one unbroken line all the same.
    first = train("--config", str(config), columns=30)
    assert first.returncode == 0, first.stderr
    # The verdict: a table and one line on the terminal; the JSON stays in the run folder.
    # Four games decide nothing, and any of the three verdicts may come: each names the bot.
    verdicts = [line for line in first.stdout.splitlines() if line.startswith("verdict: ")]
    assert len(verdicts) == 1 and " simple (" in verdicts[0] and "fair share 50.0%" in verdicts[0]
    assert '"opponents"' not in first.stdout and "95 % interval" in first.stdout
    run = tmp_path / "run"
    report = json.loads((run / "report.json").read_text())
    assert report["steps"] == 256
    assert report["evaluation"]["opponents"]["simple"]["games"] == 4
    assert (run / "learning_curve.png").exists() and (run / "model.json").exists()
    checkpoints = sorted(p.name for p in (run / "checkpoints").glob("step_*"))
    assert checkpoints == ["step_0000000128", "step_0000000256"]
    assert len(list((run / "snapshots").glob("*.zip"))) == 2
    assert list((run / "tb").iterdir()), "TensorBoard logs are written"

    # Go on to 512 steps from the last checkpoint: the same run continues.
    resumed = train("--config", str(config), "--resume", "--timesteps", "512")
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming from" in resumed.stdout and "step_0000000256" in resumed.stdout
    report = json.loads((run / "report.json").read_text())
    assert report["steps"] == 512
    assert [p["steps"] for p in report["curve"]][:2] == [128, 256]
    assert len(list((run / "tb").iterdir())) == 1, "the resumed run logs to the same TensorBoard run"


def test_corrupt_checkpoint_is_reported_and_not_loaded(tmp_path: Path) -> None:
    config = tiny_config(tmp_path)
    assert train("--config", str(config)).returncode == 0
    newest = tmp_path / "run" / "checkpoints" / "step_0000000256" / "model.zip"
    newest.write_bytes(b"not a model")
    reports: list[str] = []
    found = latest_checkpoint(tmp_path / "run" / "checkpoints", report=reports.append)
    assert found is not None
    path, state = found
    assert path.name == "step_0000000128" and state["steps"] == 128
    assert "corrupt" in reports[0] and "step_0000000256" in reports[0]
    resumed = train("--config", str(config), "--resume", "--timesteps", "256", "--eval-games", "0")
    assert resumed.returncode == 0, resumed.stderr
    assert "skipping a corrupt checkpoint" in resumed.stdout and "resuming from" in resumed.stdout


def test_saved_model_plays_legal_actions_as_a_bot(tmp_path: Path) -> None:
    config = tiny_config(tmp_path, total_timesteps=128)
    assert train("--config", str(config), "--eval-games", "0").returncode == 0
    model = str(tmp_path / "run" / "model.zip")
    rules = load_ruleset("classic")
    for seed in range(3):
        state = GameState(rules, 2, dice=SeededDice(seed))
        bots = [make_bot(model, seed=seed), make_bot("simple", seed=seed)]
        while not state.is_over and state.turn_number < 200:
            decision = state.pending
            assert decision is not None and decision.seat is not None  # not over; seeded dice
            action = bots[decision.seat].act(state, decision)
            assert decision.allows(action)
            state.apply_action(action)


def test_bad_config_and_bad_model_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="ppo.lerning_rate: unknown key"):
        load_config(tiny_config(tmp_path, ppo={"lerning_rate": 0.1}))
    with pytest.raises(ConfigError, match="total_timesteps"):
        load_config(tiny_config(tmp_path, total_timesteps=-5))
    # Infinity passes `gt=0`: a learning rate of .inf imitated, then broke at PPO's first rollout.
    for changes, named in (({"ppo": {"learning_rate": math.inf}}, "ppo.learning_rate"),
                           ({"shaping": math.inf}, "shaping"),
                           ({"imitation": {"learning_rate": math.inf}}, "imitation.learning_rate")):
        with pytest.raises(ConfigError, match=f"{named}: Input should be a finite number"):
            load_config(tiny_config(tmp_path, **changes))
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"garbage")
    with pytest.raises(ModelLoadError, match="broken.json is missing"):
        load_model(broken)
    (tmp_path / "broken.json").write_text(json.dumps({"format": "cdc-model/1", "ruleset": {"name": "classic"},
                                                      "players": 2, "max_turns": 60, "stake_levels": [0, 1]}))
    with pytest.raises(ModelLoadError, match="cannot be loaded"):
        load_model(broken)
    result = train("--config", str(tmp_path / "nothing.yaml"))
    assert result.returncode == 2 and "no training config" in result.stderr


def test_model_of_another_observation_layout_is_refused_with_a_clear_error() -> None:
    from types import SimpleNamespace

    from agents.model_bot import ModelBot
    from cdc_env.env import raw_env
    from cdc_env.spaces import STAKE_LEVELS

    rules = load_ruleset("classic")
    meta = {"ruleset": rules.to_dict(), "players": 2, "max_turns": 60, "stake_levels": list(STAKE_LEVELS)}
    size = raw_env(rules, 2).encoder.size
    old = SimpleNamespace(observation_space=SimpleNamespace(shape=(size - 3,)))  # saved by an older cdc
    with pytest.raises(ModelLoadError, match=f"reads observations of {size - 3} values.*train it again"):
        ModelBot(old, meta, name="old")
    # Its metadata edited (3 seats where it was trained for 2): said too, not a retraining alone.
    with pytest.raises(ModelLoadError, match="its table \\(3 seats of classic\\) is encoded in .*metadata was "
                                             "edited or damaged"):
        ModelBot(SimpleNamespace(observation_space=SimpleNamespace(shape=(size,))), {**meta, "players": 3},
                 name="edited")


def test_imitation_label_smoothing_keeps_the_teachers_alternatives_alive() -> None:
    """Cloned without smoothing, the policy all but never tries what the teacher does not do
    (PPO could not learn a deviation it never samples); with it, every legal choice keeps a
    share of its probability while the teacher's choice stays the most likely."""
    import numpy as np
    from sb3_contrib import MaskablePPO

    from agents.single import CulDeChouetteEnv
    from agents.training import clone_teacher, teacher_samples

    rules = load_ruleset("classic")
    env = CulDeChouetteEnv(rules, 2, opponents="bold")
    table = env.game
    samples = teacher_samples("bold", rules, 2, ["bold"], 30, table.encoder, table.codec, 0, "human")
    binary = samples["masks"].sum(axis=1) == 2
    assert binary.sum() > 100  # the two-way choices: buy the cul or not, sirop or not, …

    def other_choice_probability(smoothing: float) -> np.ndarray:
        model = MaskablePPO("MlpPolicy", env, seed=0, device="cpu", policy_kwargs={"net_arch": [32]})
        clone_teacher(model, samples, epochs=40, batch_size=256, learning_rate=1e-2, seed=0,
                      label_smoothing=smoothing)
        import torch

        with torch.no_grad():
            distribution = model.policy.get_distribution(
                torch.as_tensor(samples["observations"][binary]), action_masks=samples["masks"][binary])
            assert isinstance(distribution.distribution, torch.distributions.Categorical)  # one discrete action
            probabilities = distribution.distribution.probs.numpy()
        teacher = probabilities[np.arange(len(probabilities)), samples["actions"][binary]]
        return 1 - teacher

    sharp, smoothed = other_choice_probability(0.0), other_choice_probability(0.2)
    assert np.median(sharp) < 0.02
    assert 0.05 < np.median(smoothed) < 0.2  # the target gives the other choice 0.1
    assert (smoothed < 0.5).mean() > 0.95  # and the teacher's choice is still the greedy one


# ---------------------------------------------------------------------- bad inputs (issue 16)


@pytest.mark.parametrize(("changes", "named"), [
    ({"opponents": ["bold", "blod"]}, "opponents: unknown bot 'blod'"),
    ({"imitation": {"teacher": "wizard"}}, "imitation.teacher: unknown bot 'wizard'"),
    ({"reaction": "lightning"}, "reaction: unknown level 'lightning'"),
    ({"ruleset": "solo", "players": 2}, "players: ruleset 'solo' is played by exactly 1 player, not 2"),
    ({"ruleset": "clasic"}, "ruleset:"),
    ({"evaluation": {"games": 4, "opponents": ["prudnet"]}}, "evaluation.opponents: unknown bot 'prudnet'"),
    # Bots that exist but cannot sit at the table: found after the learning (a traceback, or a
    # model's refusal naming no key), the model trained for nothing.
    ({"evaluation": {"games": 4, "opponents": ["bold", "solo_optimal"]}},
     "evaluation.opponents: the solo optimum plays only one-player rulesets (solo)"),
    ({"evaluation": {"games": 4, "opponents": ["agents/champions/classic_4p.npz"]}},
     "evaluation.opponents: model agents/champions/classic_4p.npz was trained for 4 seats, not 2"),
    ({"imitation": {"teacher": "solo_optimal"}}, "imitation.teacher: the solo optimum plays only one-player"),
    # Keys the trainer does not read, taken without a word (an rllib section trained with SB3).
    ({"rllib": {"env_runners": 4}}, "rllib: a section of trainer: rllib, and this config trains with sb3"),
    ({"trainer": "rllib"}, "n_envs: sb3's, and this config trains with rllib"),
    ({"trainer": "rllib", "ruleset": "solo", "players": 1, "n_envs": 1},
     "trainer: rllib trains tables of several seats; solo is played alone"),
    ({"ppo": {"learning_rate": 1e300}}, "ppo.learning_rate: Input should be less than or equal to 10"),
])
def test_every_name_in_a_config_is_checked_before_any_work(tmp_path: Path, changes: dict, named: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    config = tiny_config(tmp_path, **changes)
    with pytest.raises(ConfigError, match=re.escape(named)):
        load_config(config)
    # The command in this process (a new one for each case took 2.5 s of imports); one case below
    # runs it as a user does.
    assert script("train").main(["--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert named in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "run").exists(), "nothing was started"


def test_a_config_refused_is_one_line_from_the_command_as_a_user_runs_it(tmp_path: Path) -> None:
    config = tiny_config(tmp_path, opponents=["bold", "blod"])
    result = train("--config", str(config))
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: training config {config} is not valid: opponents: unknown bot 'blod': give one of")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("games", ["-5", "0"])
def test_evaluate_refuses_a_game_count_below_one(games: str) -> None:
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "evaluate.py"), "--agents", "bold", "simple",
                             "--games", games], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 2
    assert f"argument --games: {games}: give 1 or more" in result.stderr and "Traceback" not in result.stderr


def test_model_with_a_damaged_policy_is_a_clear_error(tmp_path: Path) -> None:
    import zipfile

    from sb3_contrib import MaskablePPO

    from agents.model_bot import write_metadata
    from agents.single import CulDeChouetteEnv
    from cdc_env.spaces import STAKE_LEVELS

    rules = load_ruleset("classic")
    model = MaskablePPO("MlpPolicy", CulDeChouetteEnv(rules, 2, opponents="random"), device="cpu",
                        policy_kwargs={"net_arch": [8]})
    good = tmp_path / "good.zip"
    model.save(good)
    damaged = tmp_path / "damaged.zip"
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(damaged, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            target.writestr(item, b"\x80\x02garbage" + data[40:] if item.filename == "policy.pth" else data)
    write_metadata(damaged, rules, 2, 60, list(STAKE_LEVELS))
    with pytest.raises(ModelLoadError, match="damaged.zip cannot be loaded"):
        load_model(damaged)
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "evaluate.py"), "--agents", str(damaged), "bold",
                             "--games", "2"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 2 and "cannot be loaded" in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_a_lost_league_snapshot_is_reported_once_and_dropped(tmp_path: Path) -> None:
    config = tiny_config(tmp_path, imitation={"teacher": "bold", "games": 10, "epochs": 1},
                         league={"snapshot_every": 128, "max_snapshots": 4, "self_play_fraction": 0.5})
    assert train("--config", str(config), "--eval-games", "0").returncode == 0
    run = tmp_path / "run"
    lost = run / "snapshots" / "step_0000000128.zip"
    lost.write_bytes(b"not a model")
    resumed = train("--config", str(config), "--resume", "--timesteps", "512", "--eval-games", "0")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.count("a league snapshot is lost and dropped") == 1
    found = latest_checkpoint(run / "checkpoints")
    assert found is not None
    _, state = found
    assert state["steps"] == 512
    assert str(lost) not in state["snapshots"] and len(state["snapshots"]) == 3


def test_every_table_config_loads_and_v004_imitates_its_strongest_teacher() -> None:
    # Every table's config passes validation (its bots' names, its ruleset and seats) ...
    # A config that goes on from another run (init_from) names that run's model, which a clean
    # checkout has not trained: loaded without it, and the run it names is a shipped config's.
    raw = {path.stem: yaml.safe_load(path.read_text()) for path in (ROOT / "configs" / "train").glob("*.yaml")}
    configs = {name: load_config(ROOT / "configs" / "train" / f"{name}.yaml",
                                 {"init_from": None} if data.get("init_from") else None) for name, data in raw.items()}
    starts = {name: data["init_from"] for name, data in raw.items() if data.get("init_from")}
    assert starts == {"maison_4p_league": "runs/maison_4p_expert/model.zip",
                      "maison_4p_league2": "runs/maison_4p_expert/model.zip",
                      "maison_4p_league3": "runs/maison_4p_league2/model.zip"}
    assert configs["maison_4p_expert"].output == Path("runs/maison_4p_expert")
    assert {"classic_6p", "v004_2p", "v004_3p", "v004_4p"} <= set(configs)
    # ... and v004 at 2 seats clones patient, while the bar's opponent stays bold.
    v004 = configs["v004_2p"]
    assert (v004.ruleset, v004.players, v004.imitation.teacher, v004.opponents) == ("v004", 2, "patient", ["bold"])
    # At 3 and 4 seats it clones hedger, bold with its bird bets on another face than the thrower's.
    assert [configs[f"v004_{n}p"].imitation.teacher for n in (3, 4)] == ["hedger", "hedger"]
    assert [configs[f"v004_{n}p"].opponents for n in (3, 4)] == [["bold"], ["bold"]]
    # Expert iteration: the 4-seat champions imitate the searcher over the table's network.
    assert [configs[f"{r}_4p_expert"].imitation.teacher for r in ("classic", "v004")] == [
        "searcher:300:16:turn:network", "searcher:300:32:turn:network"]
    # At 2 seats of v004 the network imitates the champion there, the searcher over patient; round 2
    # the searcher over round 1's network (tried, not shipped). Their teacher games share no dice.
    assert configs["v004_2p_expert"].imitation.teacher == SEARCH_CHAMPIONS[("v004", 2)]
    assert configs["v004_2p_expert2"].imitation.teacher == "searcher:300:64:turn:network"
    expert_seeds = [config.seed for name, config in configs.items() if "_expert" in name]
    assert len(expert_seeds) == len(set(expert_seeds)) and all(seed >= 50 for seed in expert_seeds)
    # In complete the searcher over bold was the teacher (bold's imitation stayed at bold's level).
    complete = configs["complete_4p_expert"]
    assert (complete.ruleset, complete.players, complete.imitation.teacher, complete.imitation.games) == (
        "complete", 4, "searcher:300:16", 1600)


def test_a_checkpoint_state_that_is_not_an_object_is_reported_as_corrupt(tmp_path: Path) -> None:
    (tmp_path / "state.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(CorruptCheckpoint, match="not a"):
        read_state(tmp_path)


def test_a_checkpoint_state_that_is_not_text_is_passed_over_as_corrupt(tmp_path: Path) -> None:
    # Bytes that are not UTF-8 (a damaged disk) were a UnicodeDecodeError traceback at --resume.
    checkpoint = tmp_path / "step_0000000128"
    checkpoint.mkdir()
    (checkpoint / "state.json").write_bytes(b"\xff\xfe\x00\x00garbage")
    reports: list[str] = []
    assert latest_checkpoint(tmp_path, report=reports.append) is None
    assert reports == [f"skipping a corrupt checkpoint: {checkpoint}: state.json unreadable (not UTF-8 text)"]


def test_a_run_moved_to_another_folder_resumes_with_its_own_snapshots(tmp_path: Path) -> None:
    # The checkpoint named its league snapshots by the folder the run was in: resumed from the
    # folder it was moved to, they were "lost" (or another run's, at the old place, played).
    config = tiny_config(tmp_path, imitation={"teacher": None})
    assert train("--config", str(config), "--eval-games", "0").returncode == 0
    (tmp_path / "run").rename(tmp_path / "moved")
    resumed = train("--config", str(config), "--out", str(tmp_path / "moved"), "--resume", "--timesteps", "384",
                    "--eval-games", "0")
    assert resumed.returncode == 0, resumed.stderr
    assert "lost" not in resumed.stdout, resumed.stdout
    state = read_state(tmp_path / "moved" / "checkpoints" / "step_0000000384")
    assert state["snapshots"] and all(Path(p).parent == tmp_path / "moved" / "snapshots" for p in state["snapshots"])


def test_a_resumed_run_plays_new_games_the_same_ones_each_time() -> None:
    # The tables were reseeded with the run's seed at every --resume: each segment of a
    # --resume --time-limit recipe trained on the very games the run began with.
    from agents.training import League, TrainConfig, make_envs, segment_seed

    config = TrainConfig(run_name="seeds", players=2, n_envs=1, opponents=["simple"], seed=3)
    rules = load_ruleset("classic")

    def first_observation(steps: int) -> list[float]:
        league = League(config.opponents, config.reaction, config.league.max_snapshots,
                        config.league.self_play_fraction)
        envs = make_envs(config, rules, league, steps=steps)
        try:
            return [float(x) for x in envs.reset()[0]]
        finally:
            envs.close()

    assert segment_seed(3, 0) == 3 and segment_seed(3, 256) != segment_seed(3, 512)
    # As train.py resumes: SB3's load seeded the run's own seed again, after make_envs had given
    # the segment's, and the resumed run played the run's first games all the same.
    import tempfile

    from agents.training import load_to_resume, new_model

    league = League(config.opponents, config.reaction, config.league.max_snapshots,
                    config.league.self_play_fraction)
    start = make_envs(config, rules, league)
    saved = Path(tempfile.mkdtemp()) / "model.zip"
    new_model(config, start, None).save(saved)
    started = [float(x) for x in start.reset()[0]]
    start.close()
    envs = make_envs(config, rules, league, steps=256)
    load_to_resume(saved, envs, config, 256, None)
    try:
        assert [float(x) for x in envs.reset()[0]] != started
    finally:
        envs.close()
    runs = {steps: [first_observation(steps) for _ in range(2)] for steps in (0, 256)}
    assert runs[0][0] == runs[0][1] and runs[256][0] == runs[256][1]  # each segment reproducible
    starts = {steps: [first_observation(steps) for _ in range(1)][0] for steps in (0, 256, 512, 768)}
    assert len({tuple(obs) for obs in starts.values()}) > 1  # and the segments' games differ


def test_a_model_saved_whole_or_not_at_all(tmp_path: Path) -> None:
    # RLlib's export saved model.zip in place: cut short, a finished run's model was lost.
    from agents.training import save_model

    path = tmp_path / "model.zip"
    path.write_bytes(b"the finished run's model")

    class CutShort:
        def save(self, where: Path) -> None:
            Path(where).write_bytes(b"half")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        save_model(CutShort(), path)
    assert path.read_bytes() == b"the finished run's model"


def test_overwrite_into_a_folder_no_run_wrote_deletes_nothing_of_it(tmp_path: Path) -> None:
    # --overwrite deleted checkpoints/, tb/… of a folder that held no run: the user's own files.
    (tmp_path / "run" / "checkpoints").mkdir(parents=True)
    (tmp_path / "run" / "checkpoints" / "notes.txt").write_text("mine")
    (tmp_path / "run" / "tb").mkdir()
    (tmp_path / "run" / "tb" / "data").write_text("mine too")
    # A config.json of the user's: --overwrite is what the refusal asks for, and it replaces that
    # file alone (a run's config.json only would mean a run wrote the folder).
    (tmp_path / "run" / "config.json").write_text('{"my": "settings"}')
    config = tiny_config(tmp_path, total_timesteps=128, imitation={"teacher": None})
    done = train("--config", str(config), "--overwrite", "--eval-games", "0")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "run" / "checkpoints" / "notes.txt").read_text() == "mine"
    assert (tmp_path / "run" / "tb" / "data").read_text() == "mine too"


def test_a_solo_table_the_optimum_does_not_cover_trains_and_reports_without_it(tmp_path: Path) -> None:
    # The optimum now refuses rules it does not model: the evaluation called it after training,
    # and the run ended in a traceback with no report.
    rules = yaml.safe_load((ROOT / "configs" / "rules" / "solo.yaml").read_text(encoding="utf-8"))
    rules.update(name="solo_own_cap", cap_holds="off_own_turn")
    (tmp_path / "solo_own_cap.yaml").write_text(yaml.safe_dump(rules), encoding="utf-8")
    config = tiny_config(tmp_path, ruleset=str(tmp_path / "solo_own_cap.yaml"), players=1, total_timesteps=128,
                         opponents=[], imitation={"teacher": None}, league={"snapshot_every": 128,
                                                                              "max_snapshots": 1,
                                                                              "self_play_fraction": 0.0},
                         evaluation={"games": 2, "games_others": 2, "opponents": []})
    done = train("--config", str(config))
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "run" / "report.json").read_text())["evaluation"]
    assert report["optimum_expected_turns"] is None and "cap_holds: off_own_turn" in report["no_optimum"]
    assert "the solo optimum does not cover" in done.stdout and "Traceback" not in done.stderr


def test_the_teachers_outcomes_at_a_doublette_are_its_teams() -> None:
    # The value head learned the seat's own win alone: a partner's win, half of the team's, was a loss.
    from agents.single import CulDeChouetteEnv
    from agents.training import teacher_samples

    rules = load_ruleset("classic").with_house_rules(["doublette"])
    table = CulDeChouetteEnv(rules, 4, opponents="bold").game
    samples = teacher_samples("bold", rules, 4, ["bold"], 12, table.encoder, table.codec, 0, "human")
    # Four bold seats, two teams: the teacher's side wins about one game in two, whichever partner
    # rolls the win; counting its own rolls alone these seeded games gave 28 % of the samples.
    assert 0.38 < float((samples["outcomes"] > 0).mean()) < 0.8


# ---------------------------------------------------------------------- init_from


def test_a_run_goes_on_from_a_saved_model_and_refuses_one_it_cannot(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # A champion trained against bold, taught again against itself (configs/train/maison_4p_league.yaml):
    # the run starts from that model's weights, policy and value, not from a new network.
    from sb3_contrib import MaskablePPO

    from agents.training import League, make_envs, start_from

    first = tiny_config(tmp_path, imitation={"teacher": None}, total_timesteps=128)
    assert train("--config", str(first), "--eval-games", "0").returncode == 0
    saved = tmp_path / "run" / "model.zip"
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(saved.read_bytes()[:500])
    (tmp_path / "damaged.json").write_bytes((tmp_path / "run" / "model.json").read_bytes())

    config_path = tiny_config(tmp_path, imitation={"teacher": "bold", "games": 0}, init_from=str(saved),
                              out_dir=str(tmp_path / "again"), seed=11)
    config = load_config(config_path)
    envs = make_envs(config, load_ruleset("classic"), League(["simple"], "human", 0, 0.0))
    model = start_from(saved, envs, config)
    old = MaskablePPO.load(saved, device="cpu").policy.state_dict()
    new = model.policy.state_dict()
    assert old.keys() == new.keys() and all((old[k] == new[k]).all() for k in old)
    envs.close()
    again = train("--config", str(config_path), "--eval-games", "0")
    assert again.returncode == 0, again.stderr
    assert f"going on from {saved}" in again.stdout and (tmp_path / "again" / "model.zip").exists()

    # An older layout's network (here one of 3 seats under the 2-seat metadata): ModelBot's line,
    # not a size-mismatch traceback once the run folder was made.
    from agents.single import CulDeChouetteEnv

    other_layout = tmp_path / "layout.zip"
    MaskablePPO("MlpPolicy", CulDeChouetteEnv(load_ruleset("classic"), 3, opponents="random"), device="cpu",
                policy_kwargs={"net_arch": [16]}).save(other_layout)
    (tmp_path / "layout.json").write_bytes((tmp_path / "run" / "model.json").read_bytes())
    [checkpoint] = (tmp_path / "run" / "checkpoints").glob("step_*")
    refusals: list[tuple[dict[str, Any], str]] = [
        ({"init_from": str(other_layout)}, "reads observations of"),
        ({"init_from": str(checkpoint / "model.zip")},
         f"is a checkpoint's model, with no model.json beside it: copy {tmp_path / 'run' / 'model.json'} there"),
        ({"init_from": str(tmp_path / "nothing.zip")}, f"init_from: {tmp_path / 'nothing.zip'} is not a file"),
        ({"init_from": "agents/champions/classic_2p.npz"}, "is not a saved model (.zip): a champion's weights"),
        ({"init_from": str(saved), "players": 3},
         "was trained for classic at 2 seats, and this config trains classic at 3"),
        ({"init_from": str(saved), "imitation": {"teacher": "bold", "games": 10}}, "set imitation.games: 0"),
        ({"init_from": str(damaged)}, "cannot be loaded"),
        ({"init_from": " "}, "init_from: empty; give the model.zip to go on from, or drop the key"),
        ({"init_from": str(saved), "ppo": {"n_steps": 64, "batch_size": 64, "net_arch": [32]}},
         "is a network of hidden layers [16], and this config's ppo.net_arch is [32]: set ppo.net_arch: [16]"),
    ]
    capsys.readouterr()
    for changes, named in refusals:  # (train.py's main in this process: 2.5 s of imports a case saved)
        path = tiny_config(tmp_path, **{"imitation": {"teacher": None}, "out_dir": str(tmp_path / "refused"),
                                        **changes})
        code = script("train").main(["--config", str(path), "--eval-games", "0"])
        err = capsys.readouterr().err
        assert code == 2 and named in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "refused").exists(), "a refused config starts nothing"
    # At an rllib table init_from is said to be sb3's, and the config's other problems with it
    # (the model is not read: the run would not use it).
    with pytest.raises(ConfigError) as refused:
        load_config(tiny_config(tmp_path, trainer="rllib", init_from=str(tmp_path / "nothing.zip")))
    assert "init_from: sb3's" in str(refused.value) and "n_envs: sb3's" in str(refused.value)
    assert "is not a file" not in str(refused.value)
    # A run that went on from a model resumes from its own checkpoint: the model, moved away
    # since, is not asked for again.
    config_path = tiny_config(tmp_path, imitation={"teacher": "bold", "games": 0}, init_from=str(saved),
                              out_dir=str(tmp_path / "again"), seed=11)  # (each config above was written there)
    saved.rename(tmp_path / "moved.zip")
    assert script("train").main(["--config", str(config_path), "--resume", "--timesteps", "384",
                                 "--eval-games", "0"]) == 0, capsys.readouterr().err
    assert "resuming from" in capsys.readouterr().out
