"""The Ray RLlib back end: the masked module never picks an illegal action, the table env deals
seats and pays rewards as the game does, the export plays exactly as the module, and a short
run on a local Ray checkpoints, resumes past a corrupt checkpoint, exports a model that
evaluate.py plays through whole legal games."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import yaml
from ray.rllib.core.columns import Columns

from agents.model_bot import ModelBot
from agents.rllib_training import (
    MAIN,
    MaskedActorCritic,
    TableEnv,
    latest_checkpoint,
    load_module_state_into_sb3,
    module_of,
    sb3_model,
)
from agents.training import ConfigError, TrainConfig, load_config
from cdc_env.actions import IllegalActionError
from cdc_env.rules import load_ruleset

ROOT = Path(__file__).resolve().parents[2]


def module(hiddens: list[int], seed: int) -> MaskedActorCritic:
    torch.manual_seed(seed)
    space = TableEnv({"players": 2}).observation_spaces[f"{MAIN}@seat_0"]
    return MaskedActorCritic(observation_space=space, action_space=TableEnv({"players": 2}).action_spaces[
        f"{MAIN}@seat_0"], model_config={"hiddens": hiddens})


def table_observations(count: int, seed: int) -> dict[str, np.ndarray]:
    """Observations and masks of real decisions, from games of random legal play."""
    env = TableEnv({"players": 2, "opponents": ["simple"]})
    rng = np.random.default_rng(seed)
    observed: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    observations, _ = env.reset(seed=seed)
    while len(observed) < count:
        (agent, observation), = observations.items()
        observed.append(observation["observation"])
        masks.append(observation["action_mask"])
        choice = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        observations, _, terminated, truncated, _ = env.step({agent: choice})
        if terminated["__all__"] or truncated["__all__"]:
            observations, _ = env.reset()
    return {"observation": np.asarray(observed, np.float32), "action_mask": np.asarray(masks)}


def test_masked_module_never_samples_an_illegal_action() -> None:
    batch = table_observations(400, seed=1)
    masks = torch.as_tensor(batch["action_mask"]) > 0
    assert (masks.sum(dim=1) < masks.shape[1] / 4).all()  # most indices are illegal at every decision
    rl_module = module([32], seed=0)
    with torch.no_grad():  # large random weights: the unmasked logits favour illegal indices too
        for parameter in rl_module.parameters():
            parameter.mul_(20)
        inputs = {Columns.OBS: {k: torch.as_tensor(v) for k, v in batch.items()}}
        logits = rl_module.forward_exploration(inputs)[Columns.ACTION_DIST_INPUTS]
        unmasked = rl_module.pi(inputs[Columns.OBS]["observation"])
    assert (~masks.gather(1, unmasked.argmax(dim=1, keepdim=True))).any(), "the test must be able to fail"
    distribution = rl_module.get_exploration_action_dist_cls().from_logits(logits)
    samples = torch.stack([torch.as_tensor(distribution.sample()) for _ in range(200)], dim=1)  # 80,000 draws
    assert masks.gather(1, samples).all()
    greedy = rl_module.get_inference_action_dist_cls().from_logits(
        rl_module.forward_inference(inputs)[Columns.ACTION_DIST_INPUTS]).to_deterministic().sample()
    assert isinstance(greedy, torch.Tensor)  # RLlib types it as any framework's tensor
    assert masks.gather(1, greedy.unsqueeze(1)).all()


def test_table_env_refuses_an_illegal_action_and_changes_nothing() -> None:
    env = TableEnv({"players": 2, "opponents": ["bold"]})
    observations, _ = env.reset(seed=3)
    (agent, observation), = observations.items()
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    assert env.game.state is not None
    before = json.dumps(env.game.state.to_json(), sort_keys=True)
    with pytest.raises(IllegalActionError, match="illegal action index"):
        env.step({agent: illegal})
    assert json.dumps(env.game.state.to_json(), sort_keys=True) == before


def play_out(env: TableEnv, observations: dict[Any, Any], rng: np.random.Generator) -> tuple[
        dict[Any, Any], dict[Any, Any], dict[Any, Any], dict[str, float]]:
    """Random legal choices to the game's end: the last step's observations, rewards and infos,
    and each agent's return."""
    returns: dict[str, float] = {}
    while True:
        (agent, observation), = observations.items()
        choice = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        observations, rewards, terminated, truncated, infos = env.step({agent: choice})
        for name, reward in rewards.items():
            returns[name] = returns.get(name, 0.0) + reward
        if terminated["__all__"] or truncated["__all__"]:
            return observations, rewards, infos, returns


@pytest.mark.parametrize("self_play_fraction", [0.0, 1.0])
def test_table_env_deals_the_seats_and_pays_the_game_outcome(self_play_fraction: float) -> None:
    env = TableEnv({"players": 4, "opponents": ["prudent", "bold"], "league_size": 2,
                    "self_play_fraction": self_play_fraction})
    rng = np.random.default_rng(0)
    learner_seats = set()
    for game in range(6):
        observations, _ = env.reset(seed=game)
        assert sorted(module_of(a) for a in env.agents).count(MAIN) == 1
        expected_agents = 1 if self_play_fraction == 0 else 4
        assert len(env.agents) == expected_agents and len(env.bots) == 4 - expected_agents
        learner_seats.add(env.learner_seat)
        observations, rewards, infos, returns = play_out(env, observations, rng)
        assert set(observations) == set(rewards) == env.seen
        winners = [a for a in env.seen if infos[a]["won"]]
        for name in env.seen:  # win/loss reward: +1 to the winner, -1 to the others
            assert returns[name] == pytest.approx(1.0 if name in winners else -1.0 if winners else returns[name])
    assert len(learner_seats) > 1


def test_a_doublette_teams_win_is_logged_for_both_partners() -> None:
    # The reward pays a Doublette's team together; the logged "won" (the learner's win-rate
    # curve) counted the winning seat alone, so a partner's win was logged as the learner's loss.
    from cdc_env.env import decided_winner
    from cdc_env.rules import load_ruleset

    rules = load_ruleset("classic").with_house_rules(["doublette"])
    env = TableEnv({"ruleset": rules, "players": 4, "opponents": ["bold"], "max_turns": 40})
    rng = np.random.default_rng(1)
    partners_won = 0
    for game in range(60):  # until a partner's win has come up
        if partners_won:
            break
        observations, _ = env.reset(seed=game)
        observations, rewards, infos, returns = play_out(env, observations, rng)
        state = env.game.state
        assert state is not None
        winner = decided_winner(state)
        (learner,) = env.seen
        if winner is not None:
            assert infos[learner]["won"] == (returns[learner] > 0) == (env.learner_seat in state.teams[winner])
            partners_won += winner != env.learner_seat and env.learner_seat in state.teams[winner]
    assert partners_won  # the case the log had wrong came up


def test_exported_model_plays_exactly_as_the_module(tmp_path: Path) -> None:
    config = TrainConfig(run_name="export", players=2, ppo={"net_arch": [24, 24]})
    rules = load_ruleset("classic")
    rl_module = module([24, 24], seed=5)
    model = sb3_model(config, rules)
    load_module_state_into_sb3(model.policy, rl_module.get_state())
    batch = table_observations(50, seed=2)
    with torch.no_grad():
        logits = rl_module.pi(torch.as_tensor(batch["observation"])).numpy()
        values = rl_module.compute_values({Columns.OBS: {k: torch.as_tensor(v) for k, v in batch.items()}}).numpy()
        sb3_values = model.policy.predict_values(torch.as_tensor(batch["observation"])).numpy().ravel()
    from agents.model_bot import NumpyPolicy

    numpy_logits = np.stack([NumpyPolicy.from_torch(model.policy).logits(o) for o in batch["observation"]])
    assert np.allclose(numpy_logits, logits, atol=1e-5)
    assert np.allclose(sb3_values, values, atol=1e-5)


def test_trainer_key_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"run_name": "x", "trainer": "tensorflow"}))
    with pytest.raises(ConfigError, match="trainer"):
        load_config(path)
    path.write_text(yaml.safe_dump({"run_name": "x", "rllib": {"env_runner": 2}}))
    with pytest.raises(ConfigError, match="rllib.env_runner: unknown key"):
        load_config(path)
    assert load_config(ROOT / "configs" / "train" / "classic_2p_rllib.yaml").trainer == "rllib"
    assert load_config(ROOT / "configs" / "train" / "complete_8p_rllib.yaml").players == 8
    assert load_config(ROOT / "configs" / "train" / "classic_2p.yaml").trainer == "sb3"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, timeout=600)


def test_short_rllib_run_checkpoints_resumes_exports_and_plays_legal_games(tmp_path: Path) -> None:
    config = {
        "run_name": "tiny_rllib", "trainer": "rllib", "ruleset": "classic", "players": 2, "seed": 4,
        "total_timesteps": 300, "max_turns": 80, "opponents": ["simple", "bold"],
        "imitation": {"teacher": "bold", "games": 10, "epochs": 1, "batch_size": 64},
        "league": {"snapshot_every": 150, "max_snapshots": 1, "self_play_fraction": 0.5},
        "ppo": {"batch_size": 64, "n_epochs": 1, "net_arch": [16]},
        "rllib": {"env_runners": 1, "envs_per_env_runner": 2, "train_batch_size": 150, "cpus": 2},
        "checkpoint_every": 150,
        "evaluation": {"games": 4, "games_others": 0, "opponents": ["simple"]},
        "out_dir": str(tmp_path / "run"),
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    first = run("scripts/train.py", "--config", str(path))
    assert first.returncode == 0, first.stderr[-3000:]
    assert "imitated bold" in first.stdout and "steps/s" in first.stdout
    out = tmp_path / "run"
    report = json.loads((out / "report.json").read_text())
    assert report["trainer"] == "rllib" and report["steps"] >= 300
    assert report["evaluation"]["opponents"]["simple"]["games"] == 4
    assert (out / "learning_curve.png").exists() and json.loads((out / "model.json").read_text())["players"] == 2
    checkpoints = sorted((out / "checkpoints").glob("step_*"))
    assert len(checkpoints) == 2

    # Damage the newest checkpoint: it is reported, passed over, and the run resumes from the older.
    newest = checkpoints[-1] / "algorithm" / "learner_group" / "learner" / "rl_module" / MAIN / "module_state.pkl"
    newest.write_bytes(newest.read_bytes()[:-10])
    reports: list[str] = []
    found = latest_checkpoint(out / "checkpoints", report=reports.append)
    assert found is not None and found[0] == checkpoints[0]
    assert "corrupt" in reports[0] and "module_state.pkl" in reports[0]
    resumed = run("scripts/train.py", "--config", str(path), "--resume", "--timesteps", "450", "--eval-games", "0")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "skipping a corrupt checkpoint" in resumed.stdout
    assert f"resuming from {checkpoints[0]}" in resumed.stdout
    report = json.loads((out / "report.json").read_text())
    saved = json.loads((checkpoints[0] / "state.json").read_text())
    assert saved["steps"] < 300 <= report["steps"] - 150 and report["steps"] < 600
    assert report["curve"][:len(saved["curve"])] == saved["curve"] and report["curve"]

    # --time-limit holds for RLlib too (it was ignored: the run went on to its total_timesteps).
    limited = run("scripts/train.py", "--config", str(path), "--resume", "--timesteps", "10000000",
                  "--time-limit", "1", "--eval-games", "0")
    assert limited.returncode == 0, limited.stderr[-3000:]
    assert "time limit reached at" in limited.stdout
    assert json.loads((out / "report.json").read_text())["steps"] < 5000

    # The exported model plays whole legal games through evaluate.py (the engine refuses any other).
    played = run("scripts/evaluate.py", "--agents", str(out / "model.zip"), "bold", "--games", "20",
                 "--workers", "1", "--out", str(tmp_path / "evaluation"))
    assert played.returncode == 0, played.stdout[-3000:]
    tournament = json.loads((tmp_path / "evaluation" / "tournament.json").read_text())
    assert len(tournament["games_played"]) == 20
    bot = ModelBot.load(out / "model.zip")
    assert bot.meta["trainer"] == "rllib"

    # No intact checkpoint left: --resume refuses in one line and changes nothing (it started a
    # new run, over the model and the report).
    for checkpoint in (out / "checkpoints").glob("step_*"):
        (checkpoint / "state.json").write_text("{", encoding="utf-8")
    before = {name: (out / name).read_bytes() for name in ("model.zip", "report.json")}
    refused = run("scripts/train.py", "--config", str(path), "--resume", "--eval-games", "0")
    assert refused.returncode == 2 and "--resume: no intact checkpoint in" in refused.stderr, refused.stderr[-3000:]
    assert "Traceback" not in refused.stderr
    assert {name: (out / name).read_bytes() for name in before} == before


def test_an_unreachable_cluster_is_one_clear_error_and_overwrites_nothing(tmp_path: Path) -> None:
    # --overwrite deleted the earlier run first; the refusal (no cluster there, no room in it)
    # then left a folder holding config.json alone.
    out = tmp_path / "run"
    out.mkdir()
    earlier = {"model.zip": b"an earlier model", "report.json": b"{}", "config.json": b"{}"}
    for name, data in earlier.items():
        (out / name).write_bytes(data)
    result = run("scripts/train.py", "--config", "configs/train/classic_2p_rllib.yaml", "--address", "127.0.0.1:1",
                 "--out", str(out), "--overwrite")
    assert result.returncode == 2
    assert "no Ray head answers at 127.0.0.1:1" in result.stderr and "Traceback" not in result.stderr
    assert {name: (out / name).read_bytes() for name in earlier} == earlier


def test_a_snapshot_reaches_the_env_runners_that_play_it() -> None:
    """The frozen league members play on the env runners: a snapshot must land there, not only
    on the learner (RLlib's weight sync carries the trained module alone)."""
    import ray

    from agents.rllib_training import algorithm_config, freeze_snapshot, past, start_ray

    config = TrainConfig.model_validate({
        "run_name": "sync", "trainer": "rllib", "players": 2, "max_turns": 60, "opponents": ["simple"],
        "league": {"max_snapshots": 1, "self_play_fraction": 0.5},
        "ppo": {"batch_size": 64, "n_epochs": 1, "net_arch": [16]},
        "rllib": {"env_runners": 1, "envs_per_env_runner": 1, "train_batch_size": 100, "cpus": 2}})
    start_ray(None, 2)
    algo = algorithm_config(config, load_ruleset("classic")).build_algo()
    try:
        algo.train()

        def on_runner(module_id: str) -> dict:
            assert algo.env_runner_group is not None
            return algo.env_runner_group.foreach_env_runner(
                lambda r: r.module[module_id].get_state(),  # type: ignore[attr-defined]  # RLlib's EnvRunner base lacks it
                local_env_runner=False)[0]

        learner = on_runner(MAIN)
        assert any(not np.array_equal(learner[k], on_runner(past(0))[k]) for k in learner)
        freeze_snapshot(algo, 0)
        frozen = on_runner(past(0))
        assert all(np.array_equal(learner[k], frozen[k]) for k in learner)
    finally:
        algo.stop()
        ray.shutdown()


def test_tables_given_one_seed_by_rllib_play_apart_where_they_stand_apart() -> None:
    # RLlib seeds runner w with seed + w and its table i with that + i: runner 1's table 1 and
    # runner 2's table 0 both got seed + 2, and played the same games (dice, seats, starts)
    # for ever. Each table's place goes into its games' seed.
    from ray.rllib.env.env_context import EnvContext

    from cdc_env.actions import IllegalActionError

    def games(worker: int, vector: int) -> list[tuple[int, int]]:
        env = TableEnv(EnvContext({"players": 2, "opponents": ["simple"]}, worker_index=worker,
                                  vector_index=vector))
        env.reset(seed=2)
        return [(env.rng.getrandbits(32), env.learner_seat) for _ in range(3)]

    assert games(1, 1) != games(2, 0)
    assert games(1, 1) == games(1, 1)  # each its own stream, the same at every run
    # An index past the end is refused as an illegal one (it was an IndexError).
    env = TableEnv({"players": 2, "opponents": ["simple"]})
    observations, _ = env.reset(seed=1)
    (agent, _), = observations.items()
    size = len(observations[agent]["action_mask"])
    for index in (size, size + 869, -1, 0.5, "2", None):  # (int() played 0.5 and "2"; None a TypeError)
        with pytest.raises(IllegalActionError):
            env.step({agent: index})
