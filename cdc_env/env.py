"""Cul de Chouette as a PettingZoo AEC environment: one agent per seat (`seat_0`, `seat_1`, …).

The agent to act is whoever the engine says must decide, the simultaneous moments included
(bets, races), asked one seat after another. Every decision is one index of a flat `Discrete`
space masked to the legal options (cdc_env/spaces.py). In a race the agent chooses whether and
what to shout; *when* it shouts comes from its seat's reaction-time model (cdc_env/reaction.py),
so bots race each other fairly, unless the caller gives a real onset: `step(action,
onset_ms=...)` on the raw environment (`env.unwrapped` under the wrappers), or `act(Shout(...))`.

    from cdc_env.env import env
    table = env(ruleset="classic", players=4)
    table.reset(seed=1)
    for agent in table.agent_iter():
        observation, reward, terminated, truncated, info = table.last()
        action = None if terminated or truncated else policy(observation)
        table.step(action)

Rewards: +1 to the winner and −1 to the others at the end (`reward="win_loss"`), or −1 per turn
played (`reward="turns"`, meant for the one-player `solo` ruleset: fewer turns to 343 is better),
or any object with `reset(state)` and `__call__(state, truncated)`; `shaping=c` adds c × the
change of (own score − mean of the others') / target. A game with no winner after `max_turns`
turns is truncated. With `auto_forced` (on by default), a decision with a single legal option
(the `Roll` of a turn without a Civet to declare, a challenge throw) is played at once, except
the first decision after a reset, so that every game gives the agents at least one step.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from cdc_env.actions import Action, IllegalActionError, Join, Shout
from cdc_env.dice import SeededDice
from cdc_env.game import GameState, JoinRefused, decided_winner, turns_played
from cdc_env.play import words
from cdc_env.reaction import DEFAULT_REACTION, ReactionModel, reaction_model
from cdc_env.rulebook.house import added_names
from cdc_env.rules import Ruleset, load_ruleset
from cdc_env.spaces import STAKE_LEVELS, ActionCodec, ObservationEncoder

DEFAULT_MAX_TURNS = 300


class Reward(Protocol):
    """A reward: `reset` at the start of a game, then called after every step with the state
    reached; returns one number per seat (or None for all zeros)."""

    def reset(self, state: GameState) -> None: ...

    def __call__(self, state: GameState, truncated: bool) -> Sequence[float] | None: ...


class WinLoss:
    """+1 to the winner, −1 to every other seat, when the game ends. A game cut short after
    `max_turns` is decided by the scores: +1 to the single leader, −1 to the others (0 to all
    when several share the lead). Without this, stalling a game (buying every cul, say) would
    be worth more than losing it, and agents learn to stall."""

    def reset(self, state: GameState) -> None:
        pass

    def __call__(self, state: GameState, truncated: bool) -> Sequence[float] | None:
        if state.winner is None and not truncated:
            return None
        winner = decided_winner(state)
        if winner is None:
            return None
        # A Doublette's team wins together.
        return [1.0 if seat in state.teams[winner] else -1.0 for seat in range(state.players)]


class TurnPenalty:
    """−1 to every seat for each turn played (the `solo` reward: a game's return is minus the
    turns it took to reach the target, so fewer turns is better)."""

    def reset(self, state: GameState) -> None:
        self._played = turns_played(state)

    def __call__(self, state: GameState, truncated: bool) -> Sequence[float] | None:
        played = turns_played(state)
        new, self._played = played - self._played, played
        return [-float(new)] * state.players if new else None


class ScoreShaping:
    """`weight` × the change of (own score − mean of the others' scores) / target score, after
    every step: a potential-based hint that sums to the final score difference."""

    def __init__(self, weight: float) -> None:
        self.weight = weight

    def reset(self, state: GameState) -> None:
        self._scores = list(state.scores)

    def __call__(self, state: GameState, truncated: bool) -> Sequence[float] | None:
        scores = state.scores
        if scores == self._scores:
            return None
        deltas = [new - old for new, old in zip(scores, self._scores, strict=True)]
        self._scores = list(scores)
        n = len(scores)
        scale = self.weight / state.rules.target_score
        if n == 1:
            return [deltas[0] * scale]
        # Each side's change (a seat's, or a team's sum at a Doublette: a partner's gain is one's
        # own there, not an opponent's), against the mean of the other sides'.
        sides = {min(state.teams[seat]): sum(deltas[m] for m in state.teams[seat]) for seat in range(n)}
        total = sum(sides.values())
        return [(sides[min(state.teams[seat])] - (total - sides[min(state.teams[seat])]) / (len(sides) - 1)) * scale
                for seat in range(n)]


def make_reward(reward: str | Reward, rules: Ruleset) -> Reward:
    if not isinstance(reward, str):
        return reward
    if reward == "auto":
        reward = "turns" if rules.max_players == 1 else "win_loss"
    if reward == "win_loss":
        return WinLoss()
    if reward == "turns":
        return TurnPenalty()
    raise ValueError(f"unknown reward {reward!r}; choose auto, win_loss, turns, or give an object "
                     f"with reset(state) and __call__(state, truncated)")


def whole_seed(seed: Any) -> int:
    """A seed as a researcher gives it: an int or a numpy integer (Python's `random` refuses the
    latter, a TypeError); anything else, one ValueError."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(f"a seed is a whole number, got {seed!r}")
    return int(seed)


def default_players(rules: Ruleset, players: int | None, preferred: int = 4) -> int:
    """`players`, checked; by default `preferred` where the ruleset allows it, else the nearest
    count it does (solo: 1)."""
    count = preferred if players is None else players
    if players is None:
        # The nearest count the ruleset seats (a team mode only some: the Doublette an even one).
        fits = [n for n in range(rules.min_players, rules.max_players + 1) if rules.players_refusal(n) is None]
        count = min(fits, key=lambda n: (abs(n - preferred), n)) if fits else count
    if (refusal := rules.players_refusal(count)) is not None:
        raise ValueError(refusal)
    return count


class raw_env(AECEnv[str, dict[str, np.ndarray], int]):
    metadata: dict[str, Any] = {"name": "cul_de_chouette_v0", "render_modes": ["human", "ansi"],
                "is_parallelizable": False, "render_fps": 2}

    def __init__(
        self,
        ruleset: str | Path | Ruleset = "classic",
        players: int | None = None,
        *,
        max_turns: int = DEFAULT_MAX_TURNS,
        reaction: str | Sequence[str] = DEFAULT_REACTION,
        auto_forced: bool = True,
        reward: str | Reward = "auto",
        shaping: float = 0.0,
        stake_levels: Sequence[float] = STAKE_LEVELS,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.rules = ruleset if isinstance(ruleset, Ruleset) else load_ruleset(ruleset)
        self.players = default_players(self.rules, players)
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, "
                             f"got {render_mode!r}")
        self.max_turns = max_turns
        self.auto_forced = auto_forced
        self.render_mode = render_mode
        levels = [reaction] * self.players if isinstance(reaction, str) else list(reaction)
        if len(levels) != self.players:
            raise ValueError(f"reaction needs one level per seat ({self.players}), got {levels}")
        self.reactions: list[ReactionModel] = [reaction_model(level) for level in levels]
        self.rewards_in_use: list[Reward] = [make_reward(reward, self.rules)]
        if shaping:
            self.rewards_in_use.append(ScoreShaping(shaping))
        self.codec = ActionCodec(self.players, stake_levels,
                                 house_phrases=added_names(self.rules.house_rules, "phrases"))
        self.encoder = ObservationEncoder(self.rules, self.players, max_turns)
        self.possible_agents = [f"seat_{seat}" for seat in range(self.players)]
        self.action_spaces: dict[str, spaces.Space[Any]] = {agent: spaces.Discrete(self.codec.size)
                                                             for agent in self.possible_agents}
        self.observation_spaces = {
            agent: spaces.Dict({
                "observation": spaces.Box(-1.0, 1.0, (self.encoder.size,), np.float32),
                "action_mask": spaces.Box(0, 1, (self.codec.size,), np.int8),
            })
            for agent in self.possible_agents
        }
        self.state: GameState | None = None
        self.game_seed: int | None = None
        self._seeds: random.Random | None = None
        self._reaction_rngs: list[random.Random] = []
        self._rewarded = False  # whether self.rewards holds non-zero values from the last step

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ---------------------------------------------------------------- the game

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game. `reset(seed=s)` plays the dice of `python -m agents play --seed s`;
        later resets without a seed go on with games drawn from `s`. `options={"setup": {...}}`
        starts from another position (scores, items: see `GameState`)."""
        if seed is not None:
            seed = whole_seed(seed)
        if seed is not None or self._seeds is None:
            self._seeds = random.Random(seed)
        self.game_seed = int(seed) if seed is not None else self._seeds.getrandbits(63)
        setup = (options or {}).get("setup")
        self.state = GameState(self.rules, self.players, dice=SeededDice(self.game_seed), setup=setup)
        self.state.seats_fixed_by = self._fixed_seats()
        self._reaction_rngs = [random.Random(f"{self.game_seed}:reaction:{seat}")
                               for seat in range(self.players)]
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        for reward in self.rewards_in_use:
            reward.reset(self.state)
        self._rewarded = False
        pending = self.state.pending
        assert pending is not None and pending.seat is not None  # the seeded dice answer chance
        self.agent_selection = self.possible_agents[pending.seat]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        assert self.state is not None, "call reset() before observe()"
        seat = int(agent[5:])  # "seat_3" -> 3
        return {
            "observation": self.encoder.encode(self.state, seat),
            "action_mask": self.action_mask(agent),
        }

    def action_mask(self, agent: str | None = None) -> np.ndarray:
        """The legal action indices of `agent` (default: the agent to act), as 0/1 int8; all
        zeros once its game is over, a game cut short included (whose engine state still has a
        decision pending: the turn after `max_turns` has begun, unplayed)."""
        assert self.state is not None, "call reset() before action_mask()"
        agent = agent or self.agent_selection
        if self.terminations.get(agent) or self.truncations.get(agent):
            return np.zeros(self.codec.size, np.int8)
        return self.codec.mask(self.state.pending, int(agent[5:])).copy()

    def step(self, action: int | None, onset_ms: float | None = None) -> None:
        """Play action index `action` for the agent to act. In a race, `onset_ms` is when the
        shout began (ms after the dice showed); by default the seat's reaction model draws it."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self.state
        assert state is not None and state.pending is not None
        decision = state.pending
        assert decision.seat is not None  # a chance moment is answered by the seeded dice, never stepped
        if action is None:
            raise IllegalActionError(
                f"{agent} must act ({decision.describe()}); None is only for agents that "
                f"are done. Legal: {self.codec.describe_legal(decision, decision.seat)}"
            )
        chosen = self.codec.decode(action, decision, decision.seat)
        if type(chosen) is Shout:
            chosen = Shout(chosen.phrase, self._onset(decision.seat, onset_ms))
        self._play(chosen)

    def act(self, action: Action) -> None:
        """Play an engine action for the agent to act (a front-end's shout with its measured
        onset, a bot's choice). An action the decision does not allow raises and changes nothing."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            raise IllegalActionError(f"the game is over for {agent}: step(None) to remove it")
        if isinstance(action, Join):
            self.join(action.name, action.sung)
        self._play(action)

    def join(self, name: str, sung: bool = False) -> None:
        """A late friend (the Chante-Sloubi house rule) cannot sit at an environment's table:
        refused with one clear error (JoinRefused), the game unchanged."""
        raise JoinRefused(f"nobody can join this game: {self._fixed_seats()}")

    def _fixed_seats(self) -> str:
        return (f"the environment's agents are fixed (seat_0..seat_{self.players - 1}); a late friend "
                f"(chante_sloubi) joins at the live table, scripts/play.py")

    def _onset(self, seat: int, onset_ms: float | None) -> float:
        if onset_ms is not None:
            return float(onset_ms)
        return self.reactions[seat].sample(self._reaction_rngs[seat])

    def _play(self, action: Action) -> None:
        state = self.state
        assert state is not None and state.pending is not None
        agent = self.agent_selection
        state.apply_action(action, seat=state.pending.seat)
        self._cumulative_rewards[agent] = 0.0
        self._settle()
        if self.render_mode == "human":
            self.render()

    def _settle(self) -> None:
        """Play forced decisions, then hand out rewards and pick the next agent."""
        state = self.state
        assert state is not None
        while (decision := state.pending) is not None and state.turn_number <= self.max_turns:
            if not (self.auto_forced and decision.staked is None and len(decision.options) == 1
                    and type(decision.options[0]) is not Shout):
                break
            state.apply_action(decision.options[0], seat=decision.seat)
        over = state.pending is None
        truncated = not over and state.turn_number > self.max_turns
        given = [values for reward in self.rewards_in_use if (values := reward(state, truncated))]
        if given or self._rewarded:  # most steps give nothing, after a step that gave nothing
            rewards = self.rewards
            for agent in rewards:
                rewards[agent] = 0.0
            for values in given:
                for agent, value in zip(self.possible_agents, values, strict=True):
                    rewards[agent] += value
            self._accumulate_rewards()
            self._rewarded = bool(given)
        if over or truncated:
            ends = self.terminations if over else self.truncations
            # "winner" is the engine's (None for a game cut short); "leader" is what the
            # win_loss reward read: the winner, else the single leader by score (None on a tie).
            summary = {"winner": state.winner, "leader": decided_winner(state),
                       "scores": list(state.scores), "turns": turns_played(state)}
            for agent in self.agents:
                ends[agent] = True
                self.infos[agent] = dict(summary)
            return
        assert decision is not None and decision.seat is not None
        self.agent_selection = self.possible_agents[decision.seat]

    # ---------------------------------------------------------------- display

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode: "
                                  "make the env with render_mode='ansi' or 'human'")
            return None
        text = self._table_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _table_text(self) -> str:
        state = self.state
        if state is None:
            return "(no game: call reset())"
        table = state.table
        turn = min(state.turn_number, self.max_turns)  # (cut short: turn max_turns + 1 has begun, unplayed)
        lines = [f"Cul de Chouette — {self.rules.name}, turn {turn}/{self.max_turns}"]
        for seat in range(self.players):
            marks = ("▶" if state.pending is not None and state.pending.seat == seat else " ")
            role = " throws" if table.thrower == seat else ""
            role += " bought the cul" if table.buyer == seat else ""
            held = " ".join(item for item, count in state.items[seat].items() if count)
            bet = table.sirop_bets.get(seat)
            extra = f" bet {bet}" if bet else ""
            lines.append(f"{marks} seat_{seat} {state.scores[seat]:5d}  {held}{role}{extra}")
        if table.dice:
            shown = " ".join(str(d) for d in table.dice)
            lines.append(f"  dice: {shown}  {words(table.combination)}")
        for name, what in (("civet", table.civet), ("grelottine", table.challenge),
                           ("soufflette", table.soufflette)):
            if what:
                lines.append(f"  {name}: " + ", ".join(f"{k} {v}" for k, v in what.items()))
        if state.pending is None:
            lines.append(f"  seat_{state.winner} wins")
        elif state.turn_number > self.max_turns:
            lines.append(f"  stopped after {self.max_turns} turns")
        else:
            lines.append(f"  {state.pending.describe()}")
        return "\n".join(lines)

    def close(self) -> None:
        pass


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order check, with `last()` and `step()` handed to the environment in one
    call once it has been reset: the base wrapper reaches each attribute they read through two
    `__getattr__` calls, about a tenth of a step's time here."""

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("last() cannot be called before reset()")
        return self.env.last(observe)

    def step(self, action: int | None) -> None:
        if self._has_reset and self.env.agents:
            self._has_updated = True
            self.env.step(action)
        else:
            super().step(action)  # PettingZoo's errors and warnings


def env(**kwargs: Any) -> AECEnv:
    """raw_env under PettingZoo's order check (reset before step, and so on). raw_env checks
    actions itself (out of range or illegal: an error naming the legal choices), so PettingZoo's
    AssertOutOfBounds and TerminateIllegal wrappers would only add cost."""
    return OrderEnforcing(raw_env(**kwargs))
