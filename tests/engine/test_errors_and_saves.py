"""Bad input gets a clear error and changes nothing; games save, load and replay exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_helpers import ROLL, new_game, play

from agents.simple import SimpleBot
from cdc_env.actions import BirdBet, BuyCul, IllegalActionError, Pass, Roll, Shout, action_from_json
from cdc_env.dice import SeededDice
from cdc_env.game import GameLoadError, GameState
from cdc_env.play import play_game
from cdc_env.rules import RulesetError, load_ruleset

# ------------------------------------------------------------------ illegal decisions


def test_illegal_action_raises_and_changes_nothing() -> None:
    state = new_game("classic", 2, dice=[5, 5, 2])
    before = state.to_json()
    with pytest.raises(IllegalActionError, match="not legal now: seat 0 must roll the dice"):
        state.apply_action(BuyCul())
    assert state.to_json() == before


def test_out_of_turn_action_is_refused() -> None:
    state = new_game("classic", 2, dice=[5, 5, 2])
    with pytest.raises(IllegalActionError, match="seat 1 acted out of turn: it is seat 0's decision"):
        state.apply_action(Roll(), seat=1)
    state.apply_action(Roll(), seat=0)


def test_shout_without_an_onset_is_refused() -> None:
    state = new_game("classic", 2, dice=[1, 1, 2])
    play(state, ROLL, Pass())
    before = state.to_json()
    with pytest.raises(IllegalActionError, match="onset"):
        state.apply_action(Shout("pas_mou_le_caillou"))
    with pytest.raises(IllegalActionError, match="onset"):
        state.apply_action(Shout("pas_mou_le_caillou", float("nan")))
    assert state.to_json() == before


def test_wrong_chance_outcome_is_refused() -> None:
    state = GameState(load_ruleset("classic"), 2)
    from cdc_env.actions import Dice
    with pytest.raises(IllegalActionError, match="not a legal outcome"):
        state.apply_action(Dice((7,)))
    with pytest.raises(IllegalActionError):
        state.apply_action(Roll())


def test_unknown_action_json_is_refused() -> None:
    with pytest.raises(IllegalActionError, match="unknown action kind 'dance'"):
        action_from_json({"kind": "dance"})
    with pytest.raises(IllegalActionError, match="unknown fields"):
        action_from_json({"kind": "roll", "speed": 3})
    assert action_from_json(BirdBet(3).to_json()) == BirdBet(3)


def test_wrong_player_count_is_refused() -> None:
    with pytest.raises(Exception, match="is played by 2 to 8 players, not 9"):
        GameState(load_ruleset("classic"), 9)


# ------------------------------------------------------------------ ruleset files


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_unknown_key_names_the_key_and_the_file(tmp_path: Path) -> None:
    source = Path("configs/rules/classic.yaml").read_text(encoding="utf-8")
    path = write(tmp_path, source.replace("  tie_window_ms: 100", "  tie_windw_ms: 100"))
    with pytest.raises(RulesetError) as error:
        load_ruleset(path)
    assert "races.tie_windw_ms: unknown key" in str(error.value)
    assert str(path) in str(error.value)


def test_bad_value_names_the_key(tmp_path: Path) -> None:
    source = Path("configs/rules/classic.yaml").read_text(encoding="utf-8")
    path = write(tmp_path, source.replace("  cost: 30", "  cost: -30"))
    with pytest.raises(RulesetError, match=r"dice_buying\.cost: .*greater than or equal to 0"):
        load_ruleset(path)
    path = write(tmp_path, source.replace("chouette_velute_tie: dice_for_six", "chouette_velute_tie: coin"))
    with pytest.raises(RulesetError, match=r"races\.chouette_velute_tie"):
        load_ruleset(path)
    path = write(tmp_path, source.replace("    chouette: 33%", "    chouette: lots"))
    with pytest.raises(RulesetError, match=r"grelottine\.stake_limits\.chouette"):
        load_ruleset(path)
    path = write(tmp_path, source.replace("  rewards: [50, 40, 30]", "  rewards: [50, 40]"))
    with pytest.raises(RulesetError, match="one value per throw"):
        load_ruleset(path)


def test_malformed_yaml_and_non_mapping(tmp_path: Path) -> None:
    with pytest.raises(RulesetError, match="not valid YAML"):
        load_ruleset(write(tmp_path, "name: [unclosed"))
    with pytest.raises(RulesetError, match="is not a ruleset: it holds a list"):
        load_ruleset(write(tmp_path, "- a\n- b\n"))
    with pytest.raises(RulesetError, match="no ruleset 'missing'"):
        load_ruleset("missing")


def test_a_copied_ruleset_with_changed_numbers_is_played(tmp_path: Path) -> None:
    source = Path("configs/rules/classic.yaml").read_text(encoding="utf-8")
    path = write(tmp_path, source.replace("  cost: 30", "  cost: 12"))
    rules = load_ruleset(path)
    state = GameState(rules, 2, dice=None)
    from cdc_env.actions import Dice
    for values in [(1,), (6,), (3, 3)]:
        assert state.pending is not None
        if state.pending.is_chance:
            state.apply_action(Dice(values))
        else:
            state.apply_action(Roll())
            state.apply_action(Dice(values))
    state.apply_action(BuyCul())
    assert state.scores == [0, -12]


# ------------------------------------------------------------------ saving, loading, replaying


def bots(players: int) -> list[SimpleBot]:
    return [SimpleBot(seed=f"s{seat}") for seat in range(players)]


def test_save_and_load_mid_game_gives_an_equal_state_that_goes_on_identically() -> None:
    rules = load_ruleset("classic")
    state = GameState(rules, 3, dice=SeededDice(11))
    players = bots(3)
    for _ in range(60):
        assert state.pending is not None and state.pending.seat is not None  # seeded dice: no chance moment
        state.apply_action(players[state.pending.seat].act(state, state.pending))
    saved = json.loads(json.dumps(state.to_json()))
    loaded = GameState.from_json(saved)
    assert loaded == state
    players_again = bots(3)
    for bot, twin in zip(players, players_again, strict=True):
        twin.rng.setstate(bot.rng.getstate())
    while not state.is_over:
        decision = state.pending
        assert decision is not None and decision.seat is not None  # not over; seeded dice
        action = players[decision.seat].act(state, decision)
        assert loaded.pending is not None
        assert players_again[decision.seat].act(loaded, loaded.pending) == action
        state.apply_action(action)
        loaded.apply_action(action)
    assert loaded.log == state.log and loaded.winner == state.winner


def test_replay_from_seed_and_decisions_gives_the_identical_log() -> None:
    rules = load_ruleset("v004")
    state = play_game(rules, bots(4), seed=5)
    replay = GameState(rules, 4, dice=SeededDice(5))
    for entry in state.decisions():
        replay.apply_action(action_from_json(entry["action"]), seat=entry["seat"])
    assert replay.log == state.log
    assert json.loads(json.dumps(state.log)) == state.log


def test_corrupt_saved_games_are_reported() -> None:
    state = play_game(load_ruleset("classic"), bots(2), seed=3)
    saved = state.to_json()
    with pytest.raises(GameLoadError, match="not a saved game"):
        GameState.from_json({"format": "something else"})
    tampered = json.loads(json.dumps(saved))
    tampered["snapshot"]["scores"][0] += 1
    with pytest.raises(GameLoadError, match="does not give the saved scores"):
        GameState.from_json(tampered)
    broken = json.loads(json.dumps(saved))
    broken["history"][5] = {"seat": 0, "action": {"kind": "fly"}}
    with pytest.raises(GameLoadError, match="history entry 5 cannot be replayed"):
        GameState.from_json(broken)
    missing = {k: v for k, v in saved.items() if k != "history"}
    with pytest.raises(GameLoadError, match="missing"):
        GameState.from_json(missing)
    bad_rules = json.loads(json.dumps(saved))
    bad_rules["ruleset"]["races"]["tie_window_ms"] = -1
    with pytest.raises(GameLoadError, match="tie_window_ms"):
        GameState.from_json(bad_rules)


def test_a_dice_state_with_numbers_out_of_range_is_a_corrupt_save() -> None:
    # The generator's words are 32-bit: a larger one was an OverflowError traceback at --resume.
    saved = play_game(load_ruleset("classic"), bots(2), seed=3).to_json()
    version, words, gauss = saved["dice"]["state"]
    saved["dice"]["state"] = [version, [10**30, *words[1:]], gauss]
    with pytest.raises(GameLoadError, match="saved game has a bad dice source"):
        GameState.from_json(saved)
