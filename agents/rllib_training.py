"""Ray RLlib as the training back end (`trainer: rllib` in a training config).

Same config, same model format, same evaluation as the stable-baselines3 back end; what RLlib
adds is sampling spread over processes and machines (env runners) and learners of their own.

The pieces:

- `TableEnv`, one table of the game as an RLlib `MultiAgentEnv` over the PettingZoo env
  (cdc_env/env.py). Every seat an RL module plays is an agent; seats given to heuristic bots
  are played inside the env, because a bot plays from the game state, which a module never
  sees. Each game the env deals the seats: one to the learner, each other seat to a bot of
  `opponents` or, in `self_play_fraction` of cases, to a frozen past version of the learner.
  An agent's id says its role and seat ("main@seat_1", "past_0@seat_0"), and the policy
  mapping sends it to that RL module: self-play and league play are RLlib's own mapping.
- `MaskedActorCritic`, the RL module: an actor and a critic MLP shaped like SB3's MlpPolicy,
  whose illegal logits are set to the lowest float before any sampling, so an illegal action
  never reaches the engine (the env raises if one did).
- The run: a local Ray (or the cluster at `--address` / RAY_ADDRESS), PPO on the new API stack,
  an imitation warm start, league snapshots, RLlib checkpoints that resume, and the export of
  the learner's weights into the project's model format (agents/model_bot.py), so evaluate.py,
  play.py and ModelBot play it unchanged.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED
from ray.rllib.utils.torch_utils import FLOAT_MIN
from ray.rllib.utils.typing import AgentID, MultiAgentDict

from agents import training
from agents.bots import make_bot
from agents.single import random_position, whole_index
from agents.training import CorruptCheckpoint, RllibConfig, TrainConfig, _digest, save_model, segment_seed
from cdc_env.actions import IllegalActionError
from cdc_env.env import decided_winner, raw_env, whole_seed
from cdc_env.rules import Ruleset, load_ruleset

MAIN = "main"  # the learner's module; the frozen league members are past_0, past_1, …
CHECKPOINT_FORMAT = "cdc-rllib-checkpoint/1"
# A game may end before any RL seat decides; reset then deals the next game, this many times.
MAX_EMPTY_GAMES = 1000


class RunError(ValueError):
    """What stops a run before it learns, said in one line: a cluster that cannot be joined,
    a whole checkpoint RLlib cannot restore (another config)."""


def past(index: int) -> str:
    return f"past_{index}"


def agent_id(module: str, seat: int) -> str:
    return f"{module}@seat_{seat}"


def module_of(agent: AgentID, *args: Any, **kwargs: Any) -> str:
    """The policy mapping: an agent plays with the module its id names."""
    return str(agent).split("@", 1)[0]  # TableEnv's ids are strings, module@seat


# ---------------------------------------------------------------------- the table


class TableEnv(MultiAgentEnv):
    """A table for RLlib: the RL seats are agents, the bot seats are played inside.

    env_config keys: ruleset, players, max_turns, reaction, shaping, random_starts,
    opponents (bot names), league_size (how many past_k modules exist), self_play_fraction.
    Observations are the PettingZoo env's: {"observation": floats, "action_mask": 0/1}.
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        # RLlib seeds env runner w with seed + w, and its table i with that + i: runner 1's table 1
        # and runner 2's table 0 were given one seed, and played the same games for ever. The
        # table's place (RLlib's EnvContext) goes into its generator's seed too.
        self.place = (int(getattr(config, "worker_index", 0)), int(getattr(config, "vector_index", 0)))
        config = dict(config or {})
        rules = config.get("ruleset", "classic")
        self.rules = rules if isinstance(rules, Ruleset) else load_ruleset(rules)
        self.game = raw_env(self.rules, config.get("players", 2), max_turns=config.get("max_turns", 300),
                            reaction=config.get("reaction", "human"), shaping=config.get("shaping", 0.0))
        self.players = self.game.players
        self.opponents: list[str] = list(config.get("opponents", ["bold"]))
        self.league_size: int = int(config.get("league_size", 0))
        self.self_play_fraction: float = float(config.get("self_play_fraction", 0.0))
        self.random_starts: float = float(config.get("random_starts", 0.0))
        modules = [MAIN] + [past(k) for k in range(self.league_size)]
        self.possible_agents = [agent_id(m, s) for m in modules for s in range(self.players)]
        self.agents = []
        space = self.game.observation_spaces["seat_0"]
        # (RLlib's MultiAgentEnv declares them optional: a TableEnv always has them.)
        self.observation_spaces: dict[AgentID, spaces.Space] = {agent: space for agent in self.possible_agents}
        self.action_spaces: dict[AgentID, spaces.Space] = {agent: self.game.action_spaces["seat_0"]
                                                          for agent in self.possible_agents}
        self.rng = random.Random(0)
        self.learner_seat = 0
        self.seat_agents: dict[int, str] = {}     # RL seats of this game → agent id
        self.bots: dict[int, Any] = {}            # bot seats of this game → bot
        self.seen: set[str] = set()               # agents that have been given an observation

    # RLlib's own MultiAgentEnv.reset and .step (dicts per agent) override gymnasium's Env's incompatibly.
    def reset(self, *, seed: int | None = None,  # type: ignore[override]  # RLlib's signature (above)
              options: dict[str, Any] | None = None) -> tuple[MultiAgentDict, MultiAgentDict]:
        if seed is not None:
            seed = whole_seed(seed)
            self.rng.seed(seed if self.place == (0, 0) else f"{seed}:{self.place[0]}:{self.place[1]}")
        for _ in range(MAX_EMPTY_GAMES):
            self._deal()
            game_seed = self.rng.getrandbits(63)
            setup = None
            if self.random_starts and self.rng.random() < self.random_starts:
                generator = np.random.default_rng(self.rng.getrandbits(63))
                setup = {"scores": random_position(generator, self.rules, self.players)}
            self.game.reset(seed=game_seed, options={"setup": setup})
            self.bots = {seat: make_bot(name, seed=f"{game_seed}:{seat}", reaction=self.game.reactions[seat].level)
                         for seat, name in self.bots.items()}
            self.seen = set()
            self._play_bots()
            if not self._over():
                self._collect_rewards()  # what the bots did before the first decision is no one's reward
                agent = self._to_act()
                self.seen.add(agent)
                return {agent: self.game.observe(f"seat_{self._seat_to_act()}")}, {}
        raise RuntimeError(f"{MAX_EMPTY_GAMES} games in a row ended before an RL seat had a decision")

    def step(self, action_dict: MultiAgentDict,  # type: ignore[override]  # RLlib's signature (above reset)
             ) -> tuple[dict, dict, dict, dict, dict]:
        agent = self._to_act()
        seat = self._seat_to_act()
        index = whole_index(action_dict[agent])
        mask = self.game.action_mask(f"seat_{seat}")
        if index is None or not 0 <= index < len(mask) or not mask[index]:  # (past the end: an IndexError)
            # The masked module never samples one; a caller that bypasses it is told at once.
            raise IllegalActionError(f"{agent} sent illegal action index {action_dict[agent]!r}")
        self.game.step(index)
        self._play_bots()
        rewards = self._collect_rewards()
        if self._over():
            seat_of = {a: int(a.rsplit("_", 1)[1]) for a in self.seen}
            observations = {a: self.game.observe(f"seat_{seat_of[a]}") for a in self.seen}
            assert self.game.state is not None
            winner = decided_winner(self.game.state)  # a cut game by the scores, as the reward
            # A Doublette's team wins together (as the reward has it): the learner's logged win rate too.
            team = () if winner is None else self.game.state.teams[winner]
            infos = {a: {"won": seat_of[a] in team} for a in self.seen}
            terminated = any(self.game.terminations.values())
            return (observations, {a: rewards.get(a, 0.0) for a in self.seen},
                    {"__all__": terminated}, {"__all__": not terminated}, infos)
        following = self._to_act()
        self.seen.add(following)
        return ({following: self.game.observe(f"seat_{self._seat_to_act()}")},
                {a: r for a, r in rewards.items() if a in self.seen},
                {"__all__": False}, {"__all__": False}, {})

    # ---------------------------------------------------------------- internals

    def _deal(self) -> None:
        """This game's seats: one learner, the others bots or frozen past selves."""
        self.learner_seat = self.rng.randrange(self.players)
        self.seat_agents = {self.learner_seat: agent_id(MAIN, self.learner_seat)}
        self.bots = {}
        for seat in range(self.players):
            if seat == self.learner_seat:
                continue
            if self.league_size and self.rng.random() < self.self_play_fraction:
                self.seat_agents[seat] = agent_id(past(self.rng.randrange(self.league_size)), seat)
            else:
                self.bots[seat] = self.rng.choice(self.opponents)
        self.agents = list(self.seat_agents.values())

    def _seat_to_act(self) -> int:
        return int(self.game.agent_selection[5:])

    def _to_act(self) -> str:
        return self.seat_agents[self._seat_to_act()]

    def _over(self) -> bool:
        return any(self.game.terminations.values()) or any(self.game.truncations.values())

    def _play_bots(self) -> None:
        game = self.game
        while not self._over() and self._seat_to_act() in self.bots:
            state = game.state
            assert state is not None and state.pending is not None
            game.act(self.bots[self._seat_to_act()].act(state, state.pending))

    def _collect_rewards(self) -> dict[str, float]:
        """The reward each RL seat has earned since it was last paid (the engine zeroes a
        seat's running total when it acts, so it is read after every step)."""
        paid = {}
        for seat, agent in self.seat_agents.items():
            name = f"seat_{seat}"
            paid[agent] = float(self.game._cumulative_rewards[name])
            self.game._cumulative_rewards[name] = 0.0
        return paid


# ---------------------------------------------------------------------- the RL module


def _mlp(sizes: list[int]) -> torch.nn.Sequential:
    layers: list[torch.nn.Module] = []
    for index, (inputs, outputs) in enumerate(zip(sizes, sizes[1:], strict=False)):
        layers.append(torch.nn.Linear(inputs, outputs))
        if index < len(sizes) - 2:
            layers.append(torch.nn.Tanh())
    return torch.nn.Sequential(*layers)


class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """SB3 MlpPolicy's layout (separate tanh MLPs for actor and critic), with the action mask
    applied to the logits: an illegal index gets the lowest float, so its probability is 0."""

    def setup(self) -> None:
        # RLlib types them optional; the spec and TableEnv give all three (see algorithm_config).
        assert isinstance(self.observation_space, spaces.Dict) and isinstance(self.action_space, spaces.Discrete)
        assert isinstance(self.model_config, dict)
        observation = self.observation_space["observation"]
        assert isinstance(observation, spaces.Box)
        observations = observation.shape[0]
        hiddens = list(self.model_config.get("hiddens", [128, 128]))
        self.pi = _mlp([observations, *hiddens, self.action_space.n])
        self.vf = _mlp([observations, *hiddens, 1])

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        observation = batch[Columns.OBS]
        logits = self.pi(observation["observation"])
        legal = observation["action_mask"] > 0
        return {Columns.ACTION_DIST_INPUTS: logits.masked_fill(~legal, FLOAT_MIN)}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.vf(batch[Columns.OBS]["observation"]).squeeze(-1)


# ---------------------------------------------------------------------- the model format


def _sb3_pairs(policy: Any) -> list[tuple[str, torch.nn.Parameter]]:
    """SB3's MlpPolicy parameters under the module's names (pi.0.weight, …, vf.4.bias)."""
    pairs = []
    for prefix, hidden, head in (("pi", policy.mlp_extractor.policy_net, policy.action_net),
                                 ("vf", policy.mlp_extractor.value_net, policy.value_net)):
        linears = [m for m in hidden if isinstance(m, torch.nn.Linear)] + [head]
        for position, linear in enumerate(linears):
            pairs += [(f"{prefix}.{2 * position}.weight", linear.weight),
                      (f"{prefix}.{2 * position}.bias", linear.bias)]
    return pairs


def sb3_model(config: TrainConfig, rules: Ruleset) -> Any:
    """An untrained MaskablePPO with the layout of the module (the project's model format),
    built as the SB3 back end builds its own, on one table."""
    from agents.single import CulDeChouetteEnv

    table = CulDeChouetteEnv(rules, config.players, max_turns=config.max_turns, reaction=config.reaction)
    return training.new_model(config, table)


def module_state_from_sb3(policy: Any) -> dict[str, np.ndarray]:
    return {name: parameter.detach().numpy().copy() for name, parameter in _sb3_pairs(policy)}


def load_module_state_into_sb3(policy: Any, state: dict[str, Any]) -> None:
    with torch.no_grad():
        for name, parameter in _sb3_pairs(policy):
            parameter.copy_(torch.as_tensor(np.asarray(state[name])))


def export_model(algo: Algorithm, config: TrainConfig, rules: Ruleset, path: Path) -> Path:
    """The learner's weights as `path` (MaskablePPO zip) and its metadata JSON."""
    from agents.model_bot import write_metadata
    from cdc_env.spaces import STAKE_LEVELS

    model = sb3_model(config, rules)
    module = algo.get_module(MAIN)
    assert module is not None  # None only for a module id the algorithm lacks
    load_module_state_into_sb3(model.policy, module.get_state())
    path.parent.mkdir(parents=True, exist_ok=True)
    save_model(model, path)
    write_metadata(path, rules, config.players, config.max_turns, list(STAKE_LEVELS),
                   extra={"run_name": config.run_name, "trainer": "rllib"})
    return path


# ---------------------------------------------------------------------- the algorithm


WINDOW = 200  # the learner's last games the logged win rate is over (the SB3 back end's too)
OUTCOMES = "learner_outcomes"  # the callback's metric: each game's outcome for the learner


class WinRate(RLlibCallback):
    """Each game's outcome for the learner (1 won, 0 not), in the training results.

    Every outcome of the iteration, not a mean: RLlib's `window=200` mean was reset each
    iteration on the driver (one iteration's rate, NaN where no game ended), so the window of
    the last 200 games is kept by `train` (`follow_games`)."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        for agent, single in episode.agent_episodes.items():
            if module_of(agent) == MAIN and len(single) > 0:
                won = bool(single.get_infos(-1).get("won", False))
                metrics_logger.log_value(OUTCOMES, float(won), reduce="item_series")


def iteration_outcomes(runners: Mapping[str, Any]) -> list[float]:
    """The outcomes of the games that ended in one iteration, from its env runners' results:
    RLlib gives a list, a lone outcome as a number, and nothing (or NaN) where no game ended."""
    logged = runners.get(OUTCOMES)
    if isinstance(logged, list | tuple | np.ndarray):
        return [float(outcome) for outcome in logged]
    if isinstance(logged, int | float | np.number) and np.isfinite(logged):
        return [float(logged)]
    return []


def follow_games(window: deque[float], ended: list[float]) -> float | None:
    """The learner's win rate over its last games (`window`, holding at most WINDOW), once the
    iteration's `ended` join it; None while no game has ended (no curve point, shown "—")."""
    window.extend(ended)
    return sum(window) / len(window) if window else None


def env_config(config: TrainConfig) -> dict[str, Any]:
    # The ruleset by name (or path), which every machine of a cluster can load.
    return {"ruleset": config.ruleset, "players": config.players,
            "max_turns": config.max_turns, "reaction": config.reaction, "shaping": config.shaping,
            "random_starts": config.random_starts, "opponents": list(config.opponents),
            "league_size": config.league.max_snapshots, "self_play_fraction": config.league.self_play_fraction}


def algorithm_config(config: TrainConfig, rules: Ruleset, steps: int = 0) -> PPOConfig:
    """`steps`: those trained already (a resumed run): its env runners play new games."""
    ppo, spread = config.ppo, config.rllib
    modules = [MAIN] + [past(k) for k in range(config.league.max_snapshots)]
    spec = RLModuleSpec(module_class=MaskedActorCritic, model_config={"hiddens": list(ppo.net_arch)})
    return (
        PPOConfig()
        # RLlib's env checker steps random, mostly illegal, indices, which TableEnv refuses.
        .environment(TableEnv, env_config=env_config(config), disable_env_checking=True)
        .env_runners(num_env_runners=spread.env_runners, num_envs_per_env_runner=spread.envs_per_env_runner,
                     num_cpus_per_env_runner=1, custom_resources_per_env_runner=dict(spread.env_runner_resources))
        .learners(num_learners=spread.learners, num_gpus_per_learner=spread.gpus_per_learner)
        .training(lr=ppo.learning_rate, gamma=ppo.gamma, lambda_=ppo.gae_lambda, clip_param=ppo.clip_range,
                  entropy_coeff=ppo.ent_coef, num_epochs=ppo.n_epochs, minibatch_size=ppo.batch_size,
                  # (train_batch_size is the update's, over all learners: each learns on its share)
                  train_batch_size_per_learner=spread.train_batch_size // max(1, spread.learners),
                  use_kl_loss=False, vf_loss_coeff=0.5)
        .multi_agent(policies=set(modules), policy_mapping_fn=module_of, policies_to_train=[MAIN])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={m: spec for m in modules}))
        .callbacks(WinRate)
        .reporting(metrics_num_episodes_for_smoothing=200)
        .debugging(seed=segment_seed(config.seed, steps), log_level="ERROR")
    )


def set_modules(algo: Algorithm, states: dict[str, dict[str, Any]]) -> None:
    """New weights for some modules, on the learners and on every env runner. (The learner
    group's weight sync carries only the modules it trains, so the frozen ones are set on the
    env runners directly.)"""
    algo.set_state({"learner_group": {"learner": {"rl_module": states}}})

    def load(runner: Any) -> None:
        for module_id, state in states.items():
            runner.module[module_id].set_state(state)

    assert algo.env_runner_group is not None  # None only for offline algorithms; PPO here samples
    algo.env_runner_group.foreach_env_runner(load, local_env_runner=True)


def freeze_snapshot(algo: Algorithm, slot: int) -> None:
    """The learner as it is now becomes league member past_<slot>."""
    module = algo.get_module(MAIN)
    assert module is not None  # None only for a module id the algorithm lacks
    set_modules(algo, {past(slot): module.get_state()})


def check_reachable(address: str) -> None:
    """Fails at once on a head that does not answer: Ray itself retries for minutes."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # "auto" and the like: Ray resolves them
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as error:
        raise RunError(f"no Ray head answers at {address} ({error}); start one there with "
                       "`ray start --head --port=PORT`, or leave out --address (and RAY_ADDRESS) "
                       "to start Ray on this machine") from None


# Where Ray looks for a cluster's token, in its order (ray._raylet.AuthenticationTokenLoader).
TOKEN_VARIABLE, TOKEN_PATH_VARIABLE, DEFAULT_TOKEN_FILE = "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "~/.ray/auth_token"
TOKEN_PLACES = f"{DEFAULT_TOKEN_FILE}, or the file {TOKEN_PATH_VARIABLE} names, or {TOKEN_VARIABLE}"


def token_source(environ: Mapping[str, str] = os.environ) -> str | None:
    """Where this machine's Ray token would come from, looked up as Ray does; None if nowhere.
    A RAY_AUTH_TOKEN_PATH that names no readable token is an error, as it is to Ray."""
    if environ.get(TOKEN_VARIABLE, "").strip():
        return TOKEN_VARIABLE
    named = environ.get(TOKEN_PATH_VARIABLE)
    if named:
        try:
            readable = bool(Path(named).expanduser().read_text(encoding="utf-8").strip())
        except (OSError, UnicodeDecodeError):
            readable = False
        if not readable:
            raise RunError(f"{TOKEN_PATH_VARIABLE}={named} names no readable token: point it at a copy of the "
                           f"head's {DEFAULT_TOKEN_FILE}, or unset it")
        return f"{TOKEN_PATH_VARIABLE} ({named})"
    default = Path(environ.get("HOME", "~")).expanduser() / ".ray" / "auth_token"
    try:
        return DEFAULT_TOKEN_FILE if default.read_text(encoding="utf-8").strip() else None
    except (OSError, UnicodeDecodeError):
        return None


def use_token_authentication() -> None:
    """Token mode for this process, as `ray start --head` turns it on when a token exists. A
    driver joining by address does not do it by itself (Ray 2.60), so the head refuses it."""
    from ray._raylet import Config  # type: ignore[attr-defined]  # compiled, no stubs for it

    os.environ["RAY_AUTH_MODE"] = "token"
    Config.initialize("")  # Ray caches its config: re-read it, as ray's own _enable_token_auth does


@contextmanager
def stderr_aside() -> Iterator[list[str]]:
    """File descriptor 2 goes to a scratch file for the block: Ray's C++ client writes a line a
    second there while it retries a refused join. The text is handed back (once the block is
    over, as the list's one item) to be read for the cause, not shown."""
    sys.stderr.flush()
    saved = os.dup(2)
    kept: list[str] = []
    with tempfile.TemporaryFile() as scratch:
        os.dup2(scratch.fileno(), 2)
        try:
            yield kept
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            scratch.seek(0)
            kept.append(scratch.read().decode("utf-8", errors="replace"))


def join_failure(address: str, said: str, source: str | None, mode: str | None) -> str:
    """The likely cause of a refused join and its fix, from what Ray said while trying."""
    if "InvalidAuthToken" in said or "Unauthenticated" in said:
        if mode is not None and mode.lower() == "disabled":
            return (f"the Ray head at {address} requires its token and RAY_AUTH_MODE=disabled is set here: unset "
                    f"it and give this machine the head's token ({TOKEN_PLACES})")
        if source is None:
            return (f"the Ray head at {address} requires its token and this machine has none: copy the head's "
                    f"{DEFAULT_TOKEN_FILE} to {DEFAULT_TOKEN_FILE} here (or set {TOKEN_VARIABLE} to it, or "
                    f"{TOKEN_PATH_VARIABLE} to the copy's path)")
        return (f"the Ray head at {address} refused the token from {source}: it is not the head's; copy the "
                f"head's {DEFAULT_TOKEN_FILE} here (`ray get-auth-token` prints it on the head)")
    if "no authentication token" in said or "couldn't find an authentication token" in said:
        return (f"RAY_AUTH_MODE=token is set but this machine has no Ray token: copy the head's "
                f"{DEFAULT_TOKEN_FILE} to {DEFAULT_TOKEN_FILE} here (or set {TOKEN_VARIABLE} or {TOKEN_PATH_VARIABLE})")
    last = said.strip().splitlines()[-1] if said.strip() else "no reason given"
    import ray

    return (f"cannot join the Ray cluster at {address} ({last}); is `ray start --head` of the same Ray "
            f"({ray.__version__}) running there? Without --address and RAY_ADDRESS, Ray starts on this machine")


def join_cluster(address: str) -> str:
    """Joins the running cluster at `address` with the token this machine has, as Ray's own
    nodes do; one RunError naming the likely cause and fix otherwise. Says what it joined."""
    import ray

    check_reachable(address)
    source, mode = token_source(), os.environ.get("RAY_AUTH_MODE")
    if mode is None and source is not None:
        use_token_authentication()  # an explicit RAY_AUTH_MODE is the user's choice, kept
    # A refused join is retried once a second, 20 times; 3 tells a refusal from a slow answer.
    shortened = "RAY_gcs_server_port_wait_time_s" not in os.environ
    if shortened:
        os.environ["RAY_gcs_server_port_wait_time_s"] = "3"
    failure: Exception | None = None
    with stderr_aside() as noise:
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        except Exception as error:  # noqa: BLE001 - whatever Ray raises, the join failed: say why, once
            failure = error
    if shortened:
        os.environ.pop("RAY_gcs_server_port_wait_time_s", None)
    if failure is not None:
        said = f"{noise[0]}\n{type(failure).__name__}: {failure}"
        raise RunError(join_failure(address, said, source, mode)) from None
    nodes = [node for node in ray.nodes() if node.get("Alive")]
    authentication = "token authentication" if os.environ.get("RAY_AUTH_MODE") == "token" else "no token"
    return (f"joined the Ray cluster at {address}: {len(nodes)} nodes, {ray.cluster_resources().get('CPU', 0):g} CPUs "
            f"({authentication}{f', token from {source}' if source and authentication != 'no token' else ''})")


def check_capacity(spread: RllibConfig, where: str) -> None:
    """Env runners that the cluster cannot hold would wait for them forever: said at once."""
    import ray

    have = ray.cluster_resources()
    # num_cpus_per_env_runner=1; a learner's is RLlib's "auto": a CPU of its own where it has no GPU
    # (not counted, a learner on a cluster of 2 CPUs and 2 runners waited for ever); its GPUs.
    needs = {"CPU": float(spread.env_runners + (spread.learners if not spread.gpus_per_learner else 0))}
    if spread.gpus_per_learner:
        needs["GPU"] = spread.gpus_per_learner * max(1, spread.learners)
    for name, amount in spread.env_runner_resources.items():
        needs[name] = needs.get(name, 0.0) + amount * spread.env_runners
    short = [f"{need:g} {name} (it has {have.get(name, 0):g})"
             for name, need in needs.items() if have.get(name, 0) < need]
    if short:
        lacking = {name for name, need in needs.items() if have.get(name, 0) < need}
        learners = f" and {spread.learners} learner(s)" if spread.learners else ""
        if "GPU" in lacking:
            fix = "lower rllib.gpus_per_learner or rllib.learners, or add machines with GPUs"
        elif lacking - {"CPU"}:
            fix = ("lower rllib.env_runners or rllib.env_runner_resources, or start nodes with that resource "
                   "(`ray start --address=HEAD_IP:PORT --resources='{\"NAME\": COUNT}'`)")
        else:
            fix = "lower rllib.env_runners or rllib.learners, or add machines (`ray start --address=HEAD_IP:PORT`)"
        raise RunError(f"{where} cannot hold {spread.env_runners} env runners{learners}, which need "
                       f"{', '.join(short)}: {fix}")


def ready_ray(config: TrainConfig, address: str | None, say: Callable[[str], None] = print) -> None:
    """Ray started (or joined) and able to hold the run's env runners and learners, or RunError:
    train.py asks before it deletes an earlier run (--overwrite), which a refusal then cost."""
    import ray

    if not ray.is_initialized():
        say(start_ray(address, config.rllib.cpus))
    cluster = address or os.environ.get("RAY_ADDRESS")
    check_capacity(config.rllib, f"the Ray cluster at {cluster}" if cluster else "the local Ray")


def start_ray(address: str | None, cpus: int | None) -> str:
    """Ray for this run: the cluster at `address` (or RAY_ADDRESS), else a local one. Says which."""
    import ray

    address = address or os.environ.get("RAY_ADDRESS")
    if ray.is_initialized():
        return "Ray already started in this process"
    if address:
        return join_cluster(address)
    cpus = cpus or os.cpu_count() or 1
    # "local": a Ray of its own even where `ray start` runs a cluster on this machine, which
    # ray.init() would otherwise join (and refuse, since num_cpus is given).
    ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    return f"started a local Ray with {cpus} CPUs"


# ---------------------------------------------------------------------- checkpoints


def _files(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): _digest(p) for p in sorted(directory.rglob("*")) if p.is_file()}


def save_checkpoint(directory: Path, algo: Algorithm, steps: int, progress: dict[str, Any]) -> Path:
    """RLlib's checkpoint of the whole algorithm, with a manifest of its files' checksums;
    written aside and renamed, so a checkpoint either exists whole or not at all."""
    final = directory / f"step_{steps:010d}"
    staging = directory / f".staging_{steps:010d}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    algo.save_to_path(str((staging / "algorithm").resolve()))
    state = {"format": CHECKPOINT_FORMAT, "steps": steps, "files": _files(staging / "algorithm"), **progress}
    (staging / "state.json").write_text(json.dumps(state, allow_nan=False), encoding="utf-8")  # strict JSON
    shutil.rmtree(final, ignore_errors=True)
    staging.rename(final)
    return final


def read_checkpoint(path: Path) -> dict[str, Any]:
    state = training.read_state(path, CHECKPOINT_FORMAT)
    if not isinstance(state.get("files"), dict):  # (its .items() below was an AttributeError traceback)
        raise CorruptCheckpoint(f"{path}: state.json holds no checksums of its files")
    algorithm = path / "algorithm"
    found = _files(algorithm) if algorithm.is_dir() else {}
    damaged = sorted(name for name, digest in state["files"].items() if found.get(name) != digest)
    if damaged or not found:
        raise CorruptCheckpoint(f"{path}: {', '.join(damaged) or 'algorithm/'} missing or damaged "
                                "(checksum differs from the one recorded)")
    return state


def latest_checkpoint(directory: Path, report: Callable[[str], Any] = print) -> tuple[Path, dict[str, Any]] | None:
    """The newest intact checkpoint; corrupt ones are reported and passed over, never loaded."""
    return training.latest_checkpoint(directory, report, read=read_checkpoint)


# ---------------------------------------------------------------------- the run


def warm_start(algo: Algorithm, config: TrainConfig, rules: Ruleset) -> str:
    """Behaviour cloning of the teacher (the SB3 back end's own code, on an SB3 policy of the
    same layout), then its weights into the learner and every league member."""
    from agents.training import clone_teacher, teacher_samples

    imitation = config.imitation
    assert imitation.teacher is not None  # train() warm-starts only with a teacher
    model = sb3_model(config, rules)
    table = model.get_env().envs[0].unwrapped.game
    samples = teacher_samples(imitation.teacher, rules, config.players, config.opponents, imitation.games,
                              table.encoder, table.codec, config.seed, config.reaction)
    losses = clone_teacher(model, samples, imitation.epochs, imitation.batch_size, imitation.learning_rate,
                           config.seed, imitation.label_smoothing)
    state = module_state_from_sb3(model.policy)
    set_modules(algo, {m: state for m in [MAIN] + [past(k) for k in range(config.league.max_snapshots)]})
    return (f"imitated {imitation.teacher} on {len(samples['actions'])} decisions of {imitation.games} games: "
            f"loss {losses[0]:.3f} → {losses[-1]:.3f}")


def train(config: TrainConfig, rules: Ruleset, found: tuple[Path, dict[str, Any]] | None, address: str | None,
          say: Callable[[str], Any] = print,
          time_limit: float | None = None) -> tuple[Path, int, list[dict[str, Any]]]:
    """Trains with RLlib; returns the exported model's path, the steps done and the curve.
    `found`: the checkpoint to resume from (`latest_checkpoint`; None: a new run). `time_limit`:
    seconds of learning, after which the run is checkpointed and exported as at its end
    (train.py --time-limit)."""
    torch.set_num_threads(1)  # tiny networks: one thread is faster than several fighting
    out = config.output
    ready_ray(config, address, say)
    algo = algorithm_config(config, rules, steps=int(found[1]["steps"]) if found is not None else 0).build_algo()
    steps, curve, snapshots = 0, [], 0
    games: deque[float] = deque(maxlen=WINDOW)
    if found is not None:
        path, state = found
        say(f"resuming from {path} ({state['steps']} steps)")
        try:
            algo.restore_from_path(str((path / "algorithm").resolve()))
        except Exception as error:  # noqa: BLE001 - RLlib raises anything: report it, start nothing from it
            algo.stop()
            raise RunError(f"checkpoint {path} cannot be restored ({type(error).__name__}: "
                                      f"{error}); was it written with another config?") from None
        # The restore syncs only the trained module to the env runners: the league's too.
        assert algo.learner_group is not None  # built with the algorithm
        modules = algo.learner_group.get_state(components="learner/rl_module")["learner"]["rl_module"]
        set_modules(algo, {m: modules[m] for m in modules if m != MAIN})
        steps, curve, snapshots = int(state["steps"]), list(state.get("curve", [])), int(state.get("snapshots", 0))
        games.extend(state.get("outcomes", []))  # (none in a checkpoint of an earlier version: the window starts anew)
    elif config.imitation.teacher and config.imitation.games:
        say(warm_start(algo, config, rules))
    league = config.league
    started, at_start = time.monotonic(), steps
    while steps < config.total_timesteps:
        if time_limit is not None and time.monotonic() - started >= time_limit:
            say(f"time limit reached at {steps} steps")
            save_checkpoint(out / "checkpoints", algo, steps, progress(curve, snapshots, games))
            break
        result = algo.train()
        runners = result.get(ENV_RUNNER_RESULTS, {})
        before, steps = steps, steps + int(runners.get(NUM_ENV_STEPS_SAMPLED, 0))
        rate = (steps - at_start) / max(time.monotonic() - started, 1e-9)
        win_rate = follow_games(games, iteration_outcomes(runners))
        if win_rate is not None:
            curve.append({"steps": steps, "win_rate": win_rate})
        say(f"steps {steps:>9}/{config.total_timesteps}  win rate (last 200) "
            f"{'—' if win_rate is None else f'{win_rate:.3f}'}  {rate:,.0f} steps/s")
        if league.max_snapshots and steps // league.snapshot_every != before // league.snapshot_every:
            freeze_snapshot(algo, snapshots % league.max_snapshots)
            snapshots += 1
        if steps // config.checkpoint_every != before // config.checkpoint_every or steps >= config.total_timesteps:
            save_checkpoint(out / "checkpoints", algo, steps, progress(curve, snapshots, games))
    final = export_model(algo, config, rules, out / "model.zip")
    algo.stop()
    return final, steps, curve


def progress(curve: list[dict[str, Any]], snapshots: int, games: deque[float]) -> dict[str, Any]:
    """What a checkpoint keeps of the run beside RLlib's state: the window of games goes with it,
    so that a resumed run's win rate goes on over the same last games."""
    return {"curve": curve, "snapshots": snapshots, "outcomes": list(games)}


def _sample_timed(runner: Any, steps: int) -> tuple[str, int, float]:
    """One env runner samples `steps` environment steps: (its node, the steps, its seconds)."""
    import ray

    began = time.perf_counter()
    done = sum(episode.env_steps() for episode in runner.sample(num_timesteps=steps))
    context = ray.get_runtime_context()
    return f"{ray.util.get_node_ip_address()} {context.get_node_id()[:8]}", done, time.perf_counter() - began


def sampling_rates(config: TrainConfig, rules: Ruleset, env_runners: int,
                   iterations: int = 3) -> tuple[float, list[tuple[str, float]]]:
    """Environment steps sampled per second with `env_runners` env runners (no learning), in
    all (wall clock), and each runner's own rate with its node ("IP node-id"): the figure a
    cluster multiplies."""
    spread = config.rllib.model_copy(update={"env_runners": env_runners})
    algo = algorithm_config(config.model_copy(update={"rllib": spread}), rules).build_algo()
    group = algo.env_runner_group
    assert group is not None  # None only for offline algorithms; PPO here samples
    local = env_runners == 0  # no remote runner: the driver's own samples
    # A first sample to warm up (bots built, torch loaded) before the clock starts.
    group.foreach_env_runner(lambda runner: runner.sample(num_timesteps=100), local_env_runner=local)
    nodes: list[str] = []
    steps = [0] * max(env_runners, 1)
    seconds = [0.0] * max(env_runners, 1)
    started = time.monotonic()
    for _ in range(iterations):
        results = group.foreach_env_runner(lambda runner: _sample_timed(runner, spread.train_batch_size),
                                           local_env_runner=local)
        nodes = [node for node, _, _ in results]
        for index, (_, done, took) in enumerate(results):
            steps[index] += done
            seconds[index] += took
    total = sum(steps) / (time.monotonic() - started)
    algo.stop()
    return total, [(node, done / took) for node, done, took in zip(nodes, steps, seconds, strict=True)]
