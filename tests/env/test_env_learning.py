"""A short MaskablePPO run on the single-agent environment learns something measurable.

The task: 2-player classic against SimpleBot, with score shaping. Two habits are measured on a
fixed set of decisions met in random play, as the policy's probability of the right choice:
- not siroting a Chouette of 5 or 6 (a sirop of a Chouette of a wins (40 + 10a)/6 on average
  and loses 11a²/6 against keeping it: −31 points for 5, −49 for 6);
- shouting the race's own phrase (a wrong phrase is a −10 Bévue; silence loses the race).
An untrained policy is near 1/2 and 1/4 (uniform over the legal choices). 8192 steps take
about 25 s on one core.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
sb3_contrib = pytest.importorskip("sb3_contrib")

from agents.single import CulDeChouetteEnv  # noqa: E402
from cdc_env.actions import Shout  # noqa: E402
from cdc_env.game import RACE_PHRASES  # noqa: E402

Sample = tuple[np.ndarray, np.ndarray, int]  # observation, mask, the right action


def make_env() -> CulDeChouetteEnv:
    return CulDeChouetteEnv("classic", 2, opponents="simple", shaping=1.0, max_turns=200)


def probe_decisions(steps: int = 5000, seed: int = 7) -> dict[str, list[Sample]]:
    """Decisions met in random play: sirops of a Chouette of 5 or 6, and races."""
    table = make_env()
    codec = table.game.codec
    rng = random.Random(seed)
    observation, _ = table.reset(seed=seed)
    probes: dict[str, list[Sample]] = {"no_sirop_on_5_or_6": [], "right_phrase": []}
    for _ in range(steps):
        assert table.game.state is not None and table.game.state.pending is not None
        decision = table.game.state.pending
        mask = table.action_masks()
        if decision.kind == "sirop":
            assert table.game.state is not None
            dice = table.game.state.table.dice
            if max(set(dice), key=dice.count) >= 5:
                probes["no_sirop_on_5_or_6"].append((observation, mask, codec.blocks["pass"].start))
        elif decision.kind == "race":
            right = codec.index_of(Shout(RACE_PHRASES[decision.reason]), table.learner)
            probes["right_phrase"].append((observation, mask, right))
        observation, _, terminated, truncated, _ = table.step(
            rng.choice(np.flatnonzero(mask).tolist()))
        if terminated or truncated:
            observation, _ = table.reset()
    return probes


def probability_of_right_choice(model: Any, samples: list[Sample]) -> float:  # a MaskablePPO (importorskip'd)
    observations = torch.as_tensor(np.array([s[0] for s in samples]))
    masks = np.array([s[1] for s in samples])
    with torch.no_grad():
        distribution = model.policy.get_distribution(observations, action_masks=masks)
        probabilities = distribution.distribution.probs.numpy()
    return float(np.mean([probabilities[i, s[2]] for i, s in enumerate(samples)]))


@pytest.mark.slow
def test_maskable_ppo_learns_to_keep_big_chouettes_and_shout_the_right_phrase() -> None:
    torch.set_num_threads(1)
    probes = probe_decisions()
    assert all(len(samples) >= 100 for samples in probes.values())
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", make_env(), n_steps=512, batch_size=128, n_epochs=4, learning_rate=1e-3,
        gamma=0.5, seed=0, policy_kwargs={"net_arch": [64, 64]}, verbose=0,
    )
    before = {name: probability_of_right_choice(model, s) for name, s in probes.items()}
    model.learn(8192)
    after = {name: probability_of_right_choice(model, s) for name, s in probes.items()}
    assert before["no_sirop_on_5_or_6"] < 0.6 and before["right_phrase"] < 0.35
    # Seed 0 reaches about 0.98 and 0.70; seeds 1 and 2, 0.99/0.84 and 0.98/0.62.
    assert after["no_sirop_on_5_or_6"] > 0.9, (before, after)
    assert after["right_phrase"] > 0.45, (before, after)
