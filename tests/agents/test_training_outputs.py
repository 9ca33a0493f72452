"""scripts/train.py's outputs without a training: a solo run evaluated on no games writes strict
JSON, and --publish says which champion it replaced and warns of a model below bold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from doubles import script

from agents.training import load_config
from cdc_env.rules import load_ruleset


def solo_config(tmp_path: Path) -> Path:
    config = {"run_name": "alone", "ruleset": "solo", "players": 1, "total_timesteps": 128, "n_envs": 1,
              "opponents": [], "imitation": {"teacher": None},
              "league": {"snapshot_every": 128, "max_snapshots": 1, "self_play_fraction": 0.0},
              "evaluation": {"games": 2, "games_others": 2, "opponents": []}, "out_dir": str(tmp_path / "alone")}
    path = tmp_path / "alone.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def no_nan(constant: str) -> None:
    raise AssertionError(f"report.json holds {constant}, which strict JSON has not")


def test_a_solo_run_evaluated_on_no_games_writes_null_not_nan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # `--eval-games 0` printed "solo: nan ± nan turns … (+nan%)" and wrote NaN into report.json.
    train = script("train")
    monkeypatch.setattr(train.ModelBot, "load", lambda *args, **kwargs: pytest.fail("no game to play"))
    config = load_config(solo_config(tmp_path))
    config.output.mkdir()
    train.finish(config, load_ruleset("solo"), config.output / "model.zip", 128, [], 0.0, 1.0, 0, 1)
    printed = capsys.readouterr().out
    assert "nan" not in printed and "solo: not evaluated (no evaluation games were played)" in printed
    report = json.loads((config.output / "report.json").read_text(encoding="utf-8"), parse_constant=no_nan)
    assert report["evaluation"]["games"] == 0 and report["evaluation"]["mean_turns"] is None


def bold_row(win_rate: float, high: float) -> dict[str, Any]:
    return {"evaluation": {"opponents": {"bold": {"games": 400, "win_rate": win_rate, "ci95": [win_rate - 0.05, high],
                                                  "fair_share": 0.5}}}}


@pytest.mark.parametrize(("report", "warned"), [
    (bold_row(0.41, 0.46), True),  # its interval below the fair share: it lost to bold
    (bold_row(0.49, 0.54), False),  # no clear loser
    (bold_row(0.58, 0.63), False),
    ({"evaluation": {"opponents": {"simple": bold_row(0.1, 0.2)["evaluation"]["opponents"]["bold"]}}}, False),
])
def test_publish_names_the_champion_it_replaces_and_warns_of_a_loss_to_bold(
        report: dict[str, Any], warned: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # It replaced a shipped champion without a word, and published a model its report showed
    # losing to bold as any other.
    train = script("train")
    champions = tmp_path / "champions"
    champions.mkdir()
    shipped = champions / "classic_2p.npz"
    shipped.write_bytes(b"the shipped champion")

    def publish(model: Path, directory: Path, extra: dict[str, Any]) -> Path:
        shipped.write_bytes(b"weights")
        return shipped

    monkeypatch.setattr(train, "publish", publish)
    run = tmp_path / "run"
    run.mkdir()
    (run / "model.zip").write_bytes(b"a model")  # its reading is `publish`'s, stood in for here
    (run / "report.json").write_text(json.dumps(report), encoding="utf-8")
    assert train.publish_run(run, champions) == 0
    said = capsys.readouterr()
    assert f"; it replaces the earlier champion in {shipped}" in said.out
    assert shipped.read_bytes() == b"weights", "published all the same, as asked"
    if warned:
        assert said.err == (f"warning: {run / 'report.json'} shows this model below bold (41.0% won, 95 % interval "
                            "up to 46.0%, a fair share 50.0%): it plays its table worse than the bot `bold`\n")
    else:
        assert said.err == ""
    # A table that had no champion: nothing replaced, nothing said of it.
    shipped.unlink()
    assert train.publish_run(run, champions) == 0
    assert "replaces" not in capsys.readouterr().out


def test_at_a_doublette_the_evaluation_measures_against_a_teams_fair_share(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    # The report said 1/N (25 % at 4 seats) where both partners win: a team at 47 % (35–59 %)
    # was said to beat bold, and --publish never warned of a loss.
    train = script("train")
    rules_path = tmp_path / "teams.yaml"
    classic_path = Path(__file__).resolve().parents[2] / "configs" / "rules" / "classic.yaml"
    classic = yaml.safe_load(classic_path.read_text(encoding="utf-8"))
    rules_path.write_text(yaml.safe_dump({**classic, "name": "teams", "house_rules": {"doublette": True}}),
                          encoding="utf-8")
    config_path = tmp_path / "teams_config.yaml"
    config_path.write_text(yaml.safe_dump({"run_name": "teams", "ruleset": str(rules_path), "players": 4,
                                           "evaluation": {"games": 8, "games_others": 8, "opponents": ["bold"]},
                                           "out_dir": str(tmp_path / "teams")}), encoding="utf-8")
    config = load_config(config_path)
    results = train.evaluate(Path("prudent"), config, load_ruleset(rules_path), 8, 1)
    assert results["opponents"]["bold"]["fair_share"] == 0.5
    train.print_verdict({"opponents": {"bold": {**results["opponents"]["bold"], "win_rate": 0.467,
                                                "ci95": [0.346, 0.591]}}}, config)
    assert "a fair share is 50.0%" in capsys.readouterr().out
    assert train.lost_to_bold({"evaluation": {"opponents": {"bold": {"win_rate": 0.40, "ci95": [0.36, 0.44],
                                                                     "fair_share": 0.5}}}}) is not None
