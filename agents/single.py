"""Cul de Chouette as a single-agent Gymnasium environment, for stable-baselines3.

It lives with the agents, not in the engine: its opponents are bots, named or given, and the
engine imports nothing from the bots.

One learning seat; the other seats are played by given policies: a bot's name (agents/bots.py:
"random", "simple", "prudent", "bold", or a saved model's path), an object with
`act(state, decision) -> Action`, a plain callable `(state, decision) -> Action`, or a trained
model through `ModelPolicy`. The learning seat is fixed or drawn at random each episode.
Observations are the flat float32 vector of cdc_env/spaces.py; `action_masks()` gives the legal
actions to sb3-contrib's MaskablePPO.

    import gymnasium, agents.single
    table = gymnasium.make("cdc/CulDeChouette-v0", ruleset="classic", players=2)

Gymnasium's and stable-baselines3's checkers step random indices, which are mostly illegal:
by default (`illegal_action="fallback"`) an illegal index plays the decision's first legal
index instead, costs `illegal_penalty`, and says so in `info["illegal_action"]`;
`illegal_action="raise"` raises instead.

Seeding: `reset(seed=s)` fixes the dice, the opponents' choices, the learning seat and every
reaction onset; later resets draw their games from `s`.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import gymnasium
import numpy as np
from gymnasium import spaces

from agents.bots import make_bot
from cdc_env.actions import Action, IllegalActionError, Shout
from cdc_env.env import DEFAULT_MAX_TURNS, Reward, default_players, raw_env, whole_seed
from cdc_env.game import Decision, GameState
from cdc_env.reaction import DEFAULT_REACTION, reaction_model
from cdc_env.rulebook.house import teams_of
from cdc_env.rules import Ruleset, load_ruleset
from cdc_env.spaces import STAKE_LEVELS

ENV_ID = "cdc/CulDeChouette-v0"


class Policy(Protocol):
    def act(self, state: GameState, decision: Decision) -> Action: ...


Opponent = str | Policy | Callable[[GameState, Decision], Action]

# A game may end before the learning seat has anything to decide (in `basic` it only decides in
# races); reset then plays the next game of the seed, at most this many times.
MAX_EMPTY_GAMES = 1000


class ModelPolicy:
    """A trained model (anything with SB3's `predict`) playing a seat, as an opponent or in a
    tournament. It must have been trained on an env of the same ruleset, players and max_turns,
    whose encoder and codec `table` lends (a CulDeChouetteEnv or a raw_env)."""

    def __init__(self, model: Any, table: CulDeChouetteEnv | raw_env, *, deterministic: bool = True,
                 reaction: str = DEFAULT_REACTION, seed: int | str = 0) -> None:
        game = table.game if isinstance(table, CulDeChouetteEnv) else table
        self.model = model
        self.encoder = game.encoder
        self.codec = game.codec
        self.deterministic = deterministic
        self.reaction = reaction_model(reaction)
        self.rng = random.Random(seed)  # reseeded by CulDeChouetteEnv each episode
        # MaskablePPO's predict takes the mask; a plain model's does not.
        self.masked = "action_masks" in inspect.signature(model.predict).parameters

    def act(self, state: GameState, decision: Decision) -> Action:
        seat = decision.seat
        assert seat is not None
        observation = self.encoder.encode(state, seat)
        mask = self.codec.mask(decision, seat).astype(bool)
        if self.masked:
            index, _ = self.model.predict(observation, action_masks=mask,
                                          deterministic=self.deterministic)
        else:  # a model that knows no masks (plain PPO): an illegal choice becomes the first legal
            index, _ = self.model.predict(observation, deterministic=self.deterministic)
            if not mask[int(index)]:
                index = int(np.flatnonzero(mask)[0])
        action = self.codec.decode(int(index), decision, seat)
        if type(action) is Shout:
            return Shout(action.phrase, self.reaction.sample(self.rng))
        return action


def whole_index(action: Any) -> int | None:
    """An action index as a policy gives it (an int, a numpy or torch scalar or one-element
    array, a whole float), or None for anything else (a fraction, a string, None, a bool): an
    illegal action. `int()` alone played 1.5 as index 1, and None was a TypeError."""
    if isinstance(action, np.ndarray):  # (int() takes no array of one value since NumPy 2)
        if action.size != 1:
            return None
        action = action.reshape(()).item()
    if action is None or isinstance(action, str | bytes | bool | np.bool_):
        return None
    try:
        index = int(action)
        return index if bool(action == index) else None
    except (TypeError, ValueError, RuntimeError):  # (a tensor or array of several values: RuntimeError, ValueError)
        return None


def random_position(rng: np.random.Generator, rules: Ruleset, players: int,
                    spread: float = 40.0) -> list[int]:
    """Scores for a game started part-way: how far the game has got is drawn uniformly, and
    each seat's score scatters around it, up to the cap (no one has won yet).

    Training starts some games here so that the agent meets many more endgames than whole
    games alone would show it: near 343 the cap, the own-turn win and a rival's winning roll
    change what every choice is worth, and a whole game holds only one endgame."""
    # In teams (the Doublette) a team wins on its sum: each seat keeps within its share of the
    # target, or most such starts began with a team already past it (and ended at its first roll).
    size = max(len(team) for team in teams_of(rules.house_rules, players).values())
    top = rules.cap_score if size == 1 else min(rules.cap_score, (rules.target_score - 1) // size)
    progress = rng.uniform(0.0, top)
    floor = -spread if rules.negative_scores else 0.0
    return [int(np.clip(round(progress + rng.normal(0.0, spread)), floor, top)) for _ in range(players)]


class CulDeChouetteEnv(gymnasium.Env[np.ndarray, np.int64]):
    metadata = {"render_modes": ["human", "ansi"], "render_fps": 2}

    def __init__(
        self,
        ruleset: str | Path | Ruleset = "classic",
        players: int | None = None,
        *,
        opponents: Opponent | Sequence[Opponent] = "simple",
        learner_seat: int | Literal["random"] = 0,
        max_turns: int = DEFAULT_MAX_TURNS,
        reaction: str | Sequence[str] = DEFAULT_REACTION,
        auto_forced: bool = True,
        reward: str | Reward = "auto",
        shaping: float = 0.0,
        illegal_action: Literal["fallback", "raise"] = "fallback",
        illegal_penalty: float = 0.1,
        stake_levels: Sequence[float] = STAKE_LEVELS,
        random_starts: float = 0.0,
        render_mode: str | None = None,
    ) -> None:
        if render_mode not in (None, *self.metadata["render_modes"]):  # ("rgb_array" gave a str)
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, "
                             f"got {render_mode!r}")
        rules = ruleset if isinstance(ruleset, Ruleset) else load_ruleset(ruleset)
        self.game = raw_env(rules, default_players(rules, players, preferred=2),
                            max_turns=max_turns, reaction=reaction, auto_forced=auto_forced,
                            reward=reward, shaping=shaping, stake_levels=stake_levels,
                            render_mode=None if render_mode is None else "ansi")
        self.players = self.game.players
        if learner_seat != "random" and not (isinstance(learner_seat, int)
                                             and 0 <= learner_seat < self.players):
            raise ValueError(f"learner_seat must be 'random' or a seat in 0..{self.players - 1}, "
                             f"got {learner_seat!r}")
        if illegal_action not in ("fallback", "raise"):
            raise ValueError(f"illegal_action must be 'fallback' or 'raise', got {illegal_action!r}")
        others = self.players - 1
        if isinstance(opponents, (str, bytes)) or not isinstance(opponents, Sequence):
            opponents = [opponents] * others
        if len(opponents) != others:
            raise ValueError(f"opponents needs one policy per other seat ({others}), "
                             f"got {len(opponents)}")
        self.opponents: list[Opponent] = list(opponents)
        if not 0.0 <= random_starts <= 1.0:
            raise ValueError(f"random_starts is a fraction of games in [0, 1], got {random_starts!r}")
        self.random_starts = random_starts
        self.learner_seat_option = learner_seat
        self.illegal_action = illegal_action
        self.illegal_penalty = illegal_penalty
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(self.game.codec.size)
        self.observation_space = self.game.observation_spaces["seat_0"]["observation"]
        self.learner = 0
        self._learner_agent = "seat_0"
        self._policies: list[Callable[[GameState, Decision], Action] | None] = []

    # ---------------------------------------------------------------- episodes

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        seed = whole_seed(seed) if seed is not None else None  # (a numpy integer: gymnasium's Error)
        super().reset(seed=seed)
        chosen = (options or {}).get("setup")  # the caller's start, as the raw environment takes it
        for _ in range(MAX_EMPTY_GAMES):
            game_seed = int(seed) if seed is not None else int(self.np_random.integers(2**63))
            seed = None
            if self.learner_seat_option == "random":
                self.learner = int(self.np_random.integers(self.players))
            else:
                self.learner = self.learner_seat_option
            self._learner_agent = self.game.possible_agents[self.learner]
            self._policies = self._seat_policies(game_seed)
            setup = chosen
            if setup is None and self.random_starts and self.np_random.random() < self.random_starts:
                setup = {"scores": random_position(self.np_random, self.game.rules, self.players)}
            self.game.reset(seed=game_seed, options={"setup": setup})
            self._play_opponents()
            if not self._episode_over():
                # What the others did before the learner's first decision is no reward of its.
                self.game._cumulative_rewards[self._learner_agent] = 0.0
                if self.render_mode == "human":
                    self.render()
                return self._observation(), self._info()
        raise RuntimeError(
            f"{MAX_EMPTY_GAMES} games in a row ended before seat {self.learner} had a decision: "
            f"raise max_turns or set auto_forced=False"
        )

    def join(self, name: str, sung: bool = False) -> None:
        """A late friend (chante_sloubi) cannot sit at this table: its seats are fixed, and the
        game's own `join` refuses too (JoinRefused, the game unchanged)."""
        self.game.join(name, sung)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        game = self.game
        if self._episode_over():
            raise IllegalActionError("the episode is over: call reset()")
        state = game.state
        assert state is not None and state.pending is not None  # not over: checked just above
        decision = state.pending
        mask = game.codec.mask(decision, self.learner)
        penalty = 0.0
        index = whole_index(action)  # (int() took 1.5 and "1" for 1, and None was a TypeError)
        illegal = index is None or not (0 <= index < game.codec.size and mask[index])
        if illegal:
            if self.illegal_action == "raise":
                if index is None:  # (the codec would read some of these, True as 1)
                    raise IllegalActionError(f"an action is an index in 0..{game.codec.size - 1}, got {action!r}")
                game.codec.decode(index, decision, self.learner)  # raises, naming the choices
            index = int(np.flatnonzero(mask)[0])
            penalty = self.illegal_penalty
        assert index is not None
        game.step(index)
        self._play_opponents()
        reward = game._cumulative_rewards[self._learner_agent] - penalty
        game._cumulative_rewards[self._learner_agent] = 0.0
        info = self._info()
        if illegal:
            info["illegal_action"] = True
        terminated = game.terminations[self._learner_agent]
        truncated = game.truncations[self._learner_agent]
        if self.render_mode == "human":
            self.render()
        return self._observation(), float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The legal actions of the learning seat (bool); every index once the game is over."""
        state = self.game.state
        if state is None or state.pending is None or self._episode_over():
            return np.ones(self.game.codec.size, bool)
        return self.game.codec.mask(state.pending, self.learner).astype(bool)

    def render(self) -> str | None:  # type: ignore[override]  # gymnasium's RenderFrame is a TypeVar no subclass can name
        if self.render_mode is None:
            return self.game.render()  # (it warns)
        text = self.game.render()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self.game.close()

    # ---------------------------------------------------------------- internals

    def _seat_policies(self, game_seed: int) -> list[Callable[[GameState, Decision], Action] | None]:
        """One callable per seat (None for the learner); bots get seeds from the game's seed,
        like `python -m agents play`, so an episode replays exactly."""
        policies: list[Callable[[GameState, Decision], Action] | None] = []
        others = iter(self.opponents)
        for seat in range(self.players):
            if seat == self.learner:
                policies.append(None)
                continue
            spec = next(others)
            level = self.game.reactions[seat].level
            if isinstance(spec, str):
                policies.append(make_bot(spec, seed=f"{game_seed}:{seat}", reaction=level).act)
                continue
            rng = getattr(spec, "rng", None)
            if isinstance(rng, random.Random):
                rng.seed(f"{game_seed}:{seat}")
            policies.append(spec.act if hasattr(spec, "act") else spec)
        return policies

    def _play_opponents(self) -> None:
        game = self.game
        while not self._episode_over() and game.agent_selection != self._learner_agent:
            state = game.state
            assert state is not None and state.pending is not None
            seat = state.pending.seat
            policy = None if seat is None else self._policies[seat]
            assert policy is not None  # an opponent's seat: only the learner's has no policy
            game.act(policy(state, state.pending))

    def _episode_over(self) -> bool:
        agent = self._learner_agent
        return self.game.terminations.get(agent, True) or self.game.truncations.get(agent, True)

    def _observation(self) -> np.ndarray:
        return self.game.encoder.encode(self.game.state, self.learner)  # type: ignore[arg-type]

    def _info(self) -> dict[str, Any]:
        info = dict(self.game.infos.get(self._learner_agent, {}))
        info["seat"] = self.learner
        return info


def register() -> None:
    """Registers `cdc/CulDeChouette-v0` with Gymnasium (done when this module is imported)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="agents.single:CulDeChouetteEnv")


register()
