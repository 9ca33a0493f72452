"""Bots choose legal actions; tournament statistics give the known answers on rigged matchups."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
from doubles import script

from agents.bots import BOT_FACTORIES, make_bot
from agents.evaluation import elo_ratings, lineups, run_tournament, save_report, wilson_interval
from agents.heuristic import best_soufflette_keep, made_probability, soufflette_chance
from cdc_env.actions import BirdBet, ChallengeGrelottine, Pass, Roll
from cdc_env.dice import InjectedDice, SeededDice
from cdc_env.game import Decision, GameState
from cdc_env.rules import RULES_DIR, load_ruleset

RULESETS = sorted(p.stem for p in RULES_DIR.glob("*.yaml"))


# The solo optimum plays only the one-player game; every other bot plays every ruleset.
PAIRS = [(name, ruleset) for name in sorted(BOT_FACTORIES) for ruleset in RULESETS
         if name != "solo_optimal" or ruleset == "solo"]


@pytest.mark.parametrize(("name", "ruleset"), PAIRS)
def test_bots_only_choose_legal_actions(name: str, ruleset: str) -> None:
    rules = load_ruleset(ruleset)
    players = min(max(3, rules.min_players), rules.max_players)
    for seed in range(3):
        state = GameState(rules, players, dice=SeededDice(seed))
        bots = [make_bot(name, seed=f"{seed}:{seat}") for seat in range(players)]
        while not state.is_over and state.turn_number < 400:
            decision = state.pending
            assert decision is not None and decision.seat is not None  # not over; seeded dice
            action = bots[decision.seat].act(state, decision)
            assert decision.allows(action), (decision.describe(), action)
            state.apply_action(action)


def test_solo_optimum_refuses_a_table_of_several() -> None:
    state = GameState(load_ruleset("classic"), 2, dice=SeededDice(0))
    assert state.pending is not None
    with pytest.raises(ValueError, match="only one-player rulesets"):
        make_bot("solo_optimal").act(state, state.pending)


def test_unknown_bot_is_named() -> None:
    with pytest.raises(ValueError, match="unknown bot 'wizard'"):
        make_bot("wizard")


def test_soufflette_chances_by_hand() -> None:
    # One throw from nothing: 3! orders of 1,2,4 out of 216.
    assert soufflette_chance((), 1) == Fraction(6, 216)
    # Holding 1 and 2, one throw: the third die must be a 4.
    assert soufflette_chance((1, 2), 1) == Fraction(1, 6)
    # Holding 1 and 2, two throws: 1 - (5/6)².
    assert soufflette_chance((1, 2), 2) == 1 - Fraction(25, 36)
    keep, chance = best_soufflette_keep((1, 2, 6), 1)
    assert keep == (1, 2) and chance == Fraction(1, 6)


def test_made_probabilities_from_the_table() -> None:
    rules = load_ruleset("classic")
    assert made_probability(rules, "chouette_velute", False) == pytest.approx(9 / 216)
    assert made_probability(rules, "cul_de_chouette", False) == pytest.approx(6 / 216)
    # A Cul de Chouette can also come from siroting a Chouette (1 in 6):
    chouettes = 90 - 9  # pairs, less the Chouette-Velutes
    assert made_probability(rules, "cul_de_chouette", True) == pytest.approx(6 / 216 + chouettes / 216 / 6)


def test_wilson_interval_known_values() -> None:
    low, high = wilson_interval(75, 100)
    assert (round(low, 4), round(high, 4)) == (0.657, 0.8245)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_lineups_rotate_every_agent_through_every_seat() -> None:
    seatings = lineups(["a", "b", "c"], 2)
    assert len(seatings) == 6
    for name in "abc":
        assert sorted(s.index(name) for s in seatings if name in s) == [0, 0, 1, 1]
    assert lineups(["a", "b"], 4) == [["a", "b", "a", "b"], ["b", "a", "b", "a"],
                                       ["a", "b", "a", "b"], ["b", "a", "b", "a"]]


def test_rigged_matchup_gives_the_known_answer() -> None:
    # "strong" wins 3 games out of 4 whatever its seat.
    def runner(seating: list[str], seed: int):
        winner_name = "strong" if seed % 4 != 3 else "weak"
        return seating.index(winner_name), [343 if n == winner_name else 100 for n in seating]

    rules = load_ruleset("classic")
    tournament = run_tournament(["strong", "weak"], rules, seats=2, games=4000, runner=runner)
    strong, weak = tournament.agents
    assert strong.name == "strong" and strong.win_rate == 0.75 and weak.win_rate == 0.25
    assert (strong.ci_low, strong.ci_high) == wilson_interval(3000, 4000)
    assert strong.seats == {0: 2000, 1: 2000}
    # 3-to-1 odds are 400·log10(3) ≈ 191 Elo apart.
    assert strong.elo - weak.elo == pytest.approx(400 * math.log10(3), abs=1.0)
    assert strong.mean_points == pytest.approx(0.75 * 343 + 0.25 * 100)


def test_a_fields_copies_share_each_game_in_its_interval() -> None:
    # At 4 seats the field's three copies sit in every game and at most one of them wins it: its
    # row took 3 seats a game for 3 independent games (here an interval a third too wide). It is
    # now the interval of the games the field won, shared among its copies.
    def runner(seating: list[str], seed: int):
        winner_name = "agent" if seed % 2 == 0 else "bold"
        return seating.index(winner_name), [343 if n == winner_name else 100 for n in seating]

    tournament = run_tournament(["agent"], load_ruleset("classic"), seats=4, games=400, runner=runner,
                                field="bold")
    agent, field = sorted(tournament.agents, key=lambda a: a.name != "agent")
    assert (agent.games, agent.wins) == (400, 200) and (field.games, field.wins) == (1200, 200)
    assert (agent.ci_low, agent.ci_high) == wilson_interval(200, 400)
    low, high = wilson_interval(200, 400)
    assert (field.ci_low, field.ci_high) == pytest.approx((low / 3, high / 3))
    assert (field.ci_low, field.ci_high) != pytest.approx(wilson_interval(200, 1200))  # the seats' count


def test_elo_orders_a_cycle_free_result_set() -> None:
    results = [(["a", "b"], "a")] * 9 + [(["a", "b"], "b")] + [(["b", "c"], "b")] * 9 + [(["b", "c"], "c")]
    ratings = elo_ratings(results, ["a", "b", "c"])
    assert ratings["a"] > ratings["b"] > ratings["c"]
    assert sum(ratings.values()) / 3 == pytest.approx(1500, abs=1)


def test_real_tournament_and_report(tmp_path: Path) -> None:
    tournament = run_tournament(["prudent", "random"], load_ruleset("classic"), seats=2, games=40, seed=1)
    best = tournament.agents[0]
    assert best.name == "prudent" and best.win_rate > 0.7
    json_path, png_path = save_report(tournament, tmp_path)
    data = json.loads(json_path.read_text())
    assert data["games"] == 40 and len(data["games_played"]) == 40
    assert png_path.read_bytes()[:4] == b"\x89PNG"


def test_tournament_in_several_processes_gives_the_same_results() -> None:
    rules = load_ruleset("classic")
    alone = run_tournament(["prudent", "bold", "simple"], rules, seats=2, games=36, seed=5)
    shared = run_tournament(["prudent", "bold", "simple"], rules, seats=2, games=36, seed=5, workers=2)
    assert shared.results == alone.results
    assert [(a.name, a.wins, a.points, a.elo) for a in shared.agents] == \
        [(a.name, a.wins, a.points, a.elo) for a in alone.agents]


def compare_decisions_script():
    return script("compare_decisions")


def test_compare_decisions_finds_where_two_bots_differ() -> None:
    script = compare_decisions_script()
    asked, differ, threatened = script.compare("bold", "bold", "classic", games=6, seed=0)
    assert asked["buy_cul"] > 20 and sum(differ.values()) == 0 and threatened[1] == threatened[2]
    asked, differ, _ = script.compare("prudent", "bold", "classic", games=6, seed=0)
    # prudent never bets a bird; bold bets on the thrower's face unless it is at the 332 cap
    assert asked["sirop_bet"] > 10 and differ["sirop_bet"] >= 0.8 * asked["sirop_bet"]


def test_compare_decisions_at_four_seats_tallies_points_and_tichette_claims_by_place() -> None:
    """bold against three bolds: no answer differs, the agent's seat rotates, and bold claims a
    Tichette exactly when it is strictly last (agents/heuristic.py), whoever sits where."""
    script = compare_decisions_script()
    tally = script.Tally()
    asked, differ, _ = script.compare("bold", "bold", "maison", games=8, seed=0, seats=4, tally=tally)
    assert sum(asked.values()) > 100 and sum(differ.values()) == 0
    assert tally.games == 8 and 0 <= tally.wins <= 8
    for who in ("agent", "reference"):
        assert tally.offered[who]["last"] > 0 and tally.claimed[who]["last"] == tally.offered[who]["last"]
        assert tally.offered[who]["above the last"] > 0 and tally.claimed[who]["above the last"] == 0
        assert tally.claimed[who]["tied for last"] == 0
    # Three reference seats to the agent's one, over the same games.
    assert sum(tally.offered["reference"].values()) == 3 * sum(tally.offered["agent"].values())
    assert tally.agent_points["tichette_won"] > 0 and tally.reference_points["tichette_lost"] == 0
    assert script.place_of([10, 5, 5, 20], 1) == "tied for last" and script.place_of([10, 5, 6, 20], 1) == "last"
    assert script.place_of([10, 5, 6, 20], 2) == "above the last"


def grelottine_decision(scores: list[int]) -> tuple[GameState, Decision]:
    """v004, 2 seats: seat 0 throws a Néant (1, 3, 6); seat 1 holds a Grelottine and must decide."""
    dice = InjectedDice([1, 1, 3, 6])  # the first player's die (seat 0), then the Néant
    state = GameState(load_ruleset("v004"), 2, dice=dice,
                      setup={"scores": scores, "items": [{}, {"grelottine": 1}]})
    state.apply_action(Roll())
    decision = state.pending
    assert decision is not None and decision.kind == "grelottine" and decision.seat == 1
    return state, decision


def test_patient_keeps_its_grelottine_for_a_challenge_worth_ten_points() -> None:
    # At 30 points each the best challenge (a Velute for 7) is worth about 5.6: bold spends its
    # Grelottine on it, patient keeps it.
    state, decision = grelottine_decision([30, 30])
    assert isinstance(make_bot("bold").act(state, decision), ChallengeGrelottine)
    assert make_bot("patient").act(state, decision) == Pass()
    # At 100 each the Velute stake is 25, worth about 20: both challenge, for the same stake.
    state, decision = grelottine_decision([100, 100])
    bold_choice = make_bot("bold").act(state, decision)
    assert isinstance(bold_choice, ChallengeGrelottine) and make_bot("patient").act(state, decision) == bold_choice


def test_patient_differs_from_bold_only_on_grelottine_challenges() -> None:
    script = compare_decisions_script()
    asked, differ, _ = script.compare("patient", "bold", "v004", games=20, seed=0)
    assert asked["grelottine"] > 0 and differ["grelottine"] > 0
    assert {kind for kind, count in differ.items() if count} == {"grelottine"}


def test_rollouts_of_one_action_with_one_key_meet_the_same_luck() -> None:
    probe = script("probe_rollouts")
    state, decision = grelottine_decision([100, 100])
    copy = state.clone(dice=None)
    assert copy.snapshot() == state.snapshot() and copy.pending is not None and copy.pending.kind == "grelottine"
    outcomes = [[probe.rollout(state, action, "bold", key) for key in range(12)]
                for action in (Pass(), Pass())]
    assert outcomes[0] == outcomes[1] and 0 < sum(outcomes[0]) < 12  # the same luck, not a fixed result
    assert state.pending is decision and len(state.history) == len(copy.history)  # the state is untouched


def test_rollout_candidates_keep_three_stakes_per_grelottine_combination() -> None:
    probe = script("probe_rollouts")
    state, decision = grelottine_decision([100, 100])
    chosen = make_bot("bold").act(state, decision)
    kept = probe.staked_candidates(decision, chosen)
    assert Pass() in kept and chosen in kept and len(kept) < len(decision.legal_actions())
    for combination, _ in decision.stakes:
        assert 1 <= sum(isinstance(a, ChallengeGrelottine) and a.combination == combination for a in kept) <= 4


def test_rollout_figures_find_a_better_alternative_and_nothing_where_there_is_none() -> None:
    probe = script("probe_rollouts")
    better = {"kind": "sirop", "chosen": "Pass()", "outcomes": {"Pass()": [0] * 8, "Sirop()": [1] * 8}}
    level = {"kind": "boucliette", "chosen": "Pass()",
             "outcomes": {"Pass()": [1, 0] * 4, "UseBoucliette()": [1, 0] * 4}}
    fixed = probe.fixed_alternatives([better, level])
    assert fixed[("sirop", "Pass", "Sirop")][:2] == (1, 1.0)
    assert fixed[("boucliette", "Pass", "UseBoucliette")][:2] == (1, 0.0)
    policy = probe.rollout_policy_gain([better, level], switch=0.1)
    assert policy["sirop"][:2] == (1, 1.0) and policy["boucliette"][:2] == (1, 0.0)
    # A lead smaller than the switch leaves the bot's choice: no gain, no loss.
    assert probe.rollout_policy_gain([better], switch=1.5)["sirop"][1] == 0.0


@pytest.mark.parametrize("argv", [["--ruleset", "nope"], ["--seats", "9"], ["--bot", "nope"], ["--rollouts", "1"]])
def test_rollout_probe_refuses_bad_input_in_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        status = script("probe_rollouts").main(argv)
    except SystemExit as stop:  # argparse's own refusal of a number out of range
        status = stop.code
    assert status == 2
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err


def test_hedger_differs_from_bold_only_on_bird_bets_and_never_names_the_throwers_face() -> None:
    script = compare_decisions_script()
    asked, differ, _ = script.compare("hedger", "bold", "v004", games=20, seed=0)
    assert asked["sirop_bet"] > 10 and differ["sirop_bet"] >= 0.9 * asked["sirop_bet"]
    assert {kind for kind, count in differ.items() if count} == {"sirop_bet"}
    rules, seen = load_ruleset("v004"), 0
    for game in range(30):
        state = GameState(rules, 3, dice=SeededDice(game))
        hedger, bold = make_bot("hedger"), make_bot("bold")
        while (decision := state.pending) is not None and state.turn_number <= 100:
            action = bold.act(state, decision)
            if decision.kind == "sirop_bet" and isinstance(action, BirdBet):
                thrower_face = max(set(state.table.dice), key=state.table.dice.count)
                hedged = hedger.act(state, decision)
                assert action.face == thrower_face and isinstance(hedged, BirdBet) and hedged.face != thrower_face
                seen += 1
            state.apply_action(action)
    assert seen > 20
