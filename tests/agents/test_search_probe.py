"""scripts/probe_rollouts.py at tables with claims: it rolls out what the searcher would search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from doubles import script

from cdc_env.actions import Action
from cdc_env.game import GameState


def test_the_rollout_probe_leaves_claims_out_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # `maison` has claims ("Sirop gagnant !"): their options are shouts with no onset, which the
    # game refuses as actions, and the probe stopped at the first one it rolled out ("a shout
    # needs its onset in ms"), nothing written. The game of seed 60,000,002 has two in its first
    # 4 turns; the game and its rollouts stop after turn 5 (a quick test).
    probe = script("probe_rollouts")
    monkeypatch.setattr(probe, "MAX_TURNS", 5)
    monkeypatch.setenv("COLUMNS", "200")
    out = tmp_path / "probe.json"
    argv = ["--ruleset", "maison", "--seats", "4", "--games", "1", "--rollouts", "2", "--share", "1",
            "--seed", "60000002", "--json", str(out)]
    assert probe.main(argv) == 0
    said = capsys.readouterr().out
    assert "fixed alternatives" in said and "one-step rollout policy" in said
    records = json.loads(out.read_text(encoding="utf-8"))
    assert len(records) > 10 and not {record["kind"] for record in records} & {"claim", "race"}
    assert all(record["chosen"] in record["outcomes"] for record in records)


def test_the_bots_choice_is_rolled_out_even_where_the_candidates_leave_it_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The figures are measured from the bot's own choice (`outcomes[chosen]`): a choice that was
    # none of the candidates (a claim's shout, with its onset) was a KeyError after every rollout.
    probe = script("probe_rollouts")
    rolled: list[Action] = []

    def rollout(state: GameState, action: Action, bot: str, key: int) -> int:
        rolled.append(action)
        return key % 2

    monkeypatch.setattr(probe, "rollout", rollout)
    monkeypatch.setattr(probe, "staked_candidates", lambda decision, chosen: [
        a for a in decision.legal_actions() if a != chosen])
    records = probe.probe(probe.load_ruleset("classic"), 2, "bold", range(1), 2, 1.0, 0)
    assert records and all(record["chosen"] in record["outcomes"] for record in records)
    assert rolled
    fixed = probe.fixed_alternatives(records)
    assert fixed and probe.rollout_policy_gain(records, 0.1)
