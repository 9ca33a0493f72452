"""The shipped champions play every table listed in the issue with legal moves only; the bot
name `champion` resolves for those tables and refuses others with the list; `--publish` turns a
run's model into a champion file that loads and plays; the field mode and brought agents."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from doubles import script

from agents.bots import make_bot
from agents.champion import CHAMPIONS_DIR, champion_path, champion_tables
from agents.evaluation import run_tournament
from agents.model_bot import ModelBot
from cdc_env.dice import SeededDice
from cdc_env.game import Decision, GameState
from cdc_env.rules import load_ruleset

ROOT = Path(__file__).resolve().parents[2]
TABLES = [("classic", 2), ("classic", 3), ("classic", 4), ("classic", 6),
          ("v004", 2), ("v004", 3), ("v004", 4), ("complete", 2), ("complete", 3), ("complete", 4),
          ("maison", 4)]


def play_whole_game(bots: list, ruleset: str, seed: int, max_turns: int = 400) -> GameState:
    state = GameState(load_ruleset(ruleset), len(bots), dice=SeededDice(seed))
    while (decision := state.pending) is not None and state.turn_number <= max_turns:
        assert decision.seat is not None  # seeded dice: no chance moment
        action = bots[decision.seat].act(state, decision)
        assert decision.allows(action), f"{action} is not legal at {decision}"
        state.apply_action(action)
    return state


def test_every_listed_table_has_a_champion() -> None:
    assert set(TABLES) <= set(champion_tables())


@pytest.mark.parametrize(("ruleset", "players"), champion_tables())
def test_every_shipped_champion_plays_whole_games_with_legal_moves_only(ruleset: str, players: int) -> None:
    assert champion_path(ruleset, players).stat().st_size < 1_000_000  # small enough for the repo
    for seed in range(2):
        bots = [make_bot("champion", seed=seed)] + [make_bot("bold", seed=f"{seed}:{seat}")
                                                    for seat in range(1, players)]
        state = play_whole_game(bots, ruleset, seed)
        assert state.is_over


def test_champion_refuses_a_table_without_one_and_lists_those_with_one() -> None:
    with pytest.raises(ValueError, match="no champion for classic at 8 seats.*classic at 2 seats"):
        champion_path("classic", 8)
    bots = [make_bot("champion"), make_bot("bold")]
    with pytest.raises(ValueError, match="no champion for basic at 2 seats"):
        play_whole_game(bots, "basic", seed=0)


def test_evaluate_champion_against_a_field(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "evaluate.py"), "--agents", "champion",
                             "--field", "bold", "--ruleset", "v004", "--seats", "3", "--games", "6",
                             "--workers", "1", "--out", str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    report = yaml.safe_load((tmp_path / "tournament.json").read_text())
    rows = {row["name"]: row for row in report["agents"]}
    assert rows["champion"]["games"] == 6 and rows["bold"]["games"] == 12
    assert {"win_rate", "ci_low", "ci_high"} <= set(rows["champion"])


def test_field_mode_rotates_seats_and_pools_the_copies() -> None:
    """A rigged matchup: seat 0 always wins. The agent sits at each seat in turn, so it wins a
    third of its games; the field's two copies, pooled, win the other two thirds of theirs
    over twice as many seats: one in three too."""
    rules = load_ruleset("classic")

    def seat_zero_wins(seating: list[str], seed: int):
        return 0, [343 if seat == 0 else 0 for seat in range(len(seating))]

    tournament = run_tournament(["agent"], rules, seats=3, games=3000, runner=seat_zero_wins, field="bold")
    rows = {a.name: a for a in tournament.agents}
    assert rows["agent"].seats == {0: 1000, 1: 1000, 2: 1000}
    assert rows["agent"].games == 3000 and rows["agent"].wins == 1000
    assert rows["bold"].games == 6000 and rows["bold"].wins == 2000
    assert rows["agent"].ci_low < 1 / 3 < rows["agent"].ci_high

    def agent_wins(seating: list[str], seed: int):
        return seating.index("agent"), [0] * len(seating)

    tournament = run_tournament(["agent"], rules, seats=4, games=400, runner=agent_wins, field="bold")
    rows = {a.name: a for a in tournament.agents}
    assert rows["agent"].win_rate == 1.0 and rows["bold"].win_rate == 0.0 and rows["bold"].games == 1200


def test_brought_agent_plays_and_a_bad_one_is_named() -> None:
    rules = load_ruleset("classic")
    tournament = run_tournament(["doubles:FirstLegalAgent"], rules, seats=3, games=3, field="random")
    assert tournament.agents[0].games + tournament.agents[1].games == 9
    with pytest.raises(ValueError, match="'doubles:OutOfTurnAgent' played an illegal move"):
        run_tournament(["doubles:OutOfTurnAgent"], rules, seats=2, games=2, field="random")
    with pytest.raises(ValueError, match="cannot be imported"):
        make_bot("nowhere.at_all:Agent")
    with pytest.raises(ValueError, match="has no class or factory 'Missing'"):
        make_bot("doubles:Missing")


def test_published_champion_loads_and_plays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = {
        "run_name": "tiny", "ruleset": "complete", "players": 3, "seed": 1, "total_timesteps": 128,
        "n_envs": 2, "max_turns": 60, "opponents": ["simple"],
        "imitation": {"teacher": "bold", "games": 20, "epochs": 1},
        "league": {"snapshot_every": 1000, "max_snapshots": 0, "self_play_fraction": 0.0},
        "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1, "net_arch": [16]},
        "evaluation": {"games": 0, "games_others": 0, "opponents": ["simple"]},
        "checkpoint_every": 64,
        "out_dir": str(tmp_path / "run"),
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    train = [sys.executable, str(ROOT / "scripts" / "train.py")]
    assert subprocess.run([*train, "--config", str(path)], cwd=ROOT, capture_output=True, timeout=300).returncode == 0

    def publish(*args: str) -> tuple[int, str, str]:
        """train.py --publish in this process (a command's imports took 3 s each time)."""
        code = script("train").main(["--publish", *args])
        out, err = capsys.readouterr()
        return code, out, err

    code, _, err = publish(str(tmp_path / "run"), "--champions", str(tmp_path / "champions"))
    assert code == 0, err
    weights = champion_path("complete", 3, tmp_path / "champions")
    assert champion_tables(tmp_path / "champions") == [("complete", 3)]
    bot = ModelBot.load(weights)
    assert bot.model is None and bot.fast is not None  # numpy alone, no torch model
    state = play_whole_game([bot, make_bot("simple"), make_bot("random")], "complete", seed=4)
    assert state.is_over
    assert CHAMPIONS_DIR not in weights.parents  # the shipped champions are left alone
    # A checkpoint publishes too (the run's model.json beside it), with its own step count.
    checkpoint = sorted((tmp_path / "run" / "checkpoints").glob("step_*"))[0]
    shutil.copy(tmp_path / "run" / "model.json", checkpoint / "model.json")
    code, _, err = publish(str(checkpoint / "model.zip"), "--champions", str(tmp_path / "early"))
    assert code == 0, err
    meta = json.loads(champion_path("complete", 3, tmp_path / "early").with_suffix(".json").read_text())
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert meta["steps"] == int(checkpoint.name[5:]) < report["steps"]
    # A model newer than its report (a run resumed, then stopped in its evaluation): the report
    # was an earlier model's, and went with the new weights.
    model = tmp_path / "run" / "model.zip"
    later = (tmp_path / "run" / "report.json").stat().st_mtime + 60
    os.utime(model, (later, later))
    code, out, err = publish(str(tmp_path / "run"), "--champions", str(tmp_path / "stale"))
    assert code == 0 and "is older than model.zip (an earlier model's): published without it" in out, out + err
    meta = json.loads(champion_path("complete", 3, tmp_path / "stale").with_suffix(".json").read_text())
    assert "run_evaluation" not in meta and "steps" not in meta
    # A model given without its .zip (load_model adds it) was a FileNotFoundError traceback.
    code, _, err = publish(str(tmp_path / "run" / "model"), "--champions", str(tmp_path / "bare"))
    assert code == 0 and "Traceback" not in err, err


def test_a_model_of_rules_that_only_bear_a_shipped_name_is_no_champion_of_that_table() -> None:
    # A copy of classic.yaml with another target, its name kept: --publish made its model the
    # shipped classic champion, which then passed every check of classic's table.
    from agents.champion import NotShippedRules, check_shipped_rules
    from cdc_env.rules import Ruleset, load_ruleset

    classic = load_ruleset("classic")
    check_shipped_rules(classic)
    check_shipped_rules(Ruleset.from_dict({**classic.to_dict(), "name": "mine", "target_score": 300, "cap_score": 290}))
    with pytest.raises(NotShippedRules, match="rules named classic that are not the shipped classic's "
                                              r"\(cap_score, target_score differ\): give your ruleset a name"):
        check_shipped_rules(Ruleset.from_dict({**classic.to_dict(), "target_score": 300, "cap_score": 290}))


@pytest.mark.parametrize("name, players", [("champion", 3), ("network", 2), ("champion", 2)])
def test_the_champion_refuses_rules_that_only_bear_its_tables_name(name: str, players: int) -> None:
    # classic.yaml copied with another target, its name kept: `champion` (network or searcher)
    # played it as classic without a word, where the same weights given as a file are refused.
    from agents.bots import check_table
    from cdc_env.rules import Ruleset

    mine = Ruleset.from_dict({**load_ruleset("classic").to_dict(), "target_score": 500, "cap_score": 489})
    with pytest.raises(ValueError, match=f"the {name} of classic plays the shipped classic; these rules bear its "
                                         r"name and are not its \(cap_score, target_score differ\)"):
        check_table(make_bot(name), mine, players)
    check_table(make_bot(name), load_ruleset("classic"), players)  # the shipped rules: played


def test_the_searcher_refuses_rules_that_only_bear_its_tables_name_where_it_reads_that_tables_files() -> None:
    # Its network and its fitted value are found by the ruleset's name: `searcher:…:turn:network`
    # played a copy of classic.yaml with another target with classic's, without a word.
    from agents.bots import check_table
    from cdc_env.rules import Ruleset

    mine = Ruleset.from_dict({**load_ruleset("classic").to_dict(), "target_score": 500, "cap_score": 489})
    for spec in ("searcher:50:8:turn:network", "searcher:50:8:turn:bold"):
        with pytest.raises(ValueError, match="these rules bear its name and are not its"):
            check_table(make_bot(spec), mine, 2)
    check_table(make_bot("searcher:50:8:game:bold"), mine, 2)  # nothing of the table's read: played
    renamed = Ruleset.from_dict({**mine.to_dict(), "name": "mine"})
    check_table(make_bot("searcher:50:8:turn:bold"), renamed, 2)  # a name of its own: no value, played


def test_the_champions_report_says_what_each_searching_champion_plays() -> None:
    """docs/results/champions.json names the bot behind every figure: where `champion` is the
    searcher (SEARCH_CHAMPIONS), its figures are that very searcher's, and nowhere else is one."""
    from agents.champion import SEARCH_CHAMPIONS

    report = json.loads((ROOT / "docs" / "results" / "champions.json").read_text(encoding="utf-8"))
    for key, table in report.items():
        played = {figure["champion"] for figure in table["bold_by_seed_range"].values()}
        spec = SEARCH_CHAMPIONS.get((table["ruleset"], table["players"]))
        if spec is None:
            assert all(name.startswith("network") for name in played), key
        else:
            assert played == {spec} and table["plays"].startswith(f"{spec} "), key


@pytest.mark.parametrize(("table", "says"), [
    (("classic", 2), "the champion is the searcher (searcher:300:32:turn:network): this network is the bot "
                     "`network` there and the searcher's base"),
    (("v004", 2), "the champion is the searcher (searcher:300:64:turn:patient:plain): this network is the bot "
                  "`network` there\n"),
    (("classic", 4), None),
])
def test_publishing_at_a_searching_table_says_the_network_is_not_the_champion(
        table: tuple[str, int], says: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from doubles import script

    train = script("train")
    written = tmp_path / f"{table[0]}_{table[1]}p.npz"

    def publish(model: Path, directory: Path, extra: dict) -> Path:
        written.write_bytes(b"weights")
        return written

    monkeypatch.setattr(train, "publish", publish)
    (tmp_path / "model.zip").write_bytes(b"a model")  # its reading is `publish`'s, stood in for here
    assert train.publish_run(tmp_path / "model.zip", tmp_path) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"published {tmp_path / 'model.zip'} as {written}")
    if says is None:
        assert "searcher" not in printed
    else:
        assert says in printed


def _moments(ruleset: str, players: int, wanted: int) -> list[tuple[GameState, Decision]]:
    """Decisions of random games that offer a sure Bévue: (a copy of the state, its decision)."""
    rules = load_ruleset(ruleset)
    found: list[tuple[GameState, Decision]] = []
    for seed in range(50):
        bots = [make_bot("random", seed=f"{seed}:{s}") for s in range(players)]
        state = GameState(rules, players, dice=SeededDice(seed))
        while (decision := state.pending) is not None and state.turn_number <= 60 and len(found) < wanted:
            if decision.bevues:
                found.append((state.clone(), decision))
            assert decision.seat is not None
            state.apply_action(bots[decision.seat].act(state, decision))
        if len(found) >= wanted:
            break
    return found


def test_sure_bevues_are_the_wrong_race_phrases_and_the_silent_pass_where_it_is_announced() -> None:
    from cdc_env.actions import BirdBet, CoucheSirop, Pass, Shout

    kinds = set()
    for _state, decision in _moments("maison", 4, 60):
        sure = decision.bevues
        kinds.add(decision.kind)
        assert set(sure) <= set(decision.options)
        if decision.kind == "race":
            assert all(isinstance(a, Shout) and a.phrase not in decision.answers for a in sure)
            assert all(Shout(p) not in sure for p in decision.answers if p != "mecreant")
        else:
            # The silent pass, and the chouette's own bird where Beau-Sirop is its bet.
            assert decision.kind == "sirop_bet" and Pass() in sure and CoucheSirop() in decision.options
            assert len(sure) == 2 and isinstance(sure[1], BirdBet)
    assert kinds == {"race", "sirop_bet"}
    # Where no Bévue is played, no option is one.
    solo = load_ruleset("solo")
    state = GameState(solo, 1, dice=SeededDice(0))
    assert state.pending is not None and state.pending.bevues == ()


def test_a_network_never_chooses_a_sure_bevue_however_much_it_wants_one() -> None:
    # The maison champion passed in silence on 37 of random's sirops in one game (−370).
    bot = ModelBot.load(champion_path("maison", 4), rules=load_ruleset("maison"))
    assert bot.fast is not None
    for state, decision in _moments("maison", 4, 40):
        sure = decision.bevues
        seat = decision.seat
        assert seat is not None
        wanted = {bot.codec.index_of(a, seat, decision) for a in sure}
        # A network that wants nothing more than the Bévues.
        preferred = np.array([100.0 if i in wanted else 0.0 for i in range(bot.codec.size)])
        bot.fast.logits = lambda observation, preferred=preferred: preferred  # type: ignore[method-assign, misc]
        action = bot.act(state, decision)
        assert bot.codec.index_of(action, seat, decision) not in wanted, (decision, action)
