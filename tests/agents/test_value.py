"""A fitted value file (agents/value.py) that cannot be trusted is one clear error, never read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from doubles import script

from agents.value import VALUES_DIR, load_value, read_value_file, value_path

REFIT = "fit it again with scripts/fit_value.py"


def shipped(table: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((VALUES_DIR / f"{table}.json").read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize(("weight", "says"), [
    ("NaN", "one is nan"),  # Python's JSON reads NaN and Infinity
    ("Infinity", "one is inf"),
    ("-Infinity", "one is -inf"),
    ("1e308", "one is 1e+308"),  # finite, and the weighted sum overflows
    ("1" + "0" * 400, "one is an integer of 401 digits"),
    ("-12345678", "one is an integer of 8 digits"),
])
def test_a_weight_no_fit_gives_is_a_damaged_file(weight: str, says: str, tmp_path: Path) -> None:
    # Such a file loaded: every seat's chance came out equal (or NaN), every sample of a search
    # scored alike, and the searcher played its base without a word.
    data = shipped("classic_2p")
    text = json.dumps({**data, "weights": ["WEIGHT", *data["weights"][1:]]}).replace('"WEIGHT"', weight)
    path = value_path("classic", 2, tmp_path)
    path.write_text(text, encoding="utf-8")
    for read in (lambda: read_value_file(path), lambda: load_value("classic", 2, tmp_path)):
        with pytest.raises(ValueError) as refused:
            read()
        message = str(refused.value)
        assert message.startswith(f"{path} is damaged: its weights must be finite numbers within ±1e+06")
        assert says in message and message.endswith(REFIT) and len(message) < 300


def test_the_shipped_value_files_are_all_read() -> None:
    for path in sorted(VALUES_DIR.glob("*.json")):
        ruleset, players, *base = path.stem.split("_")
        assert load_value(ruleset, int(players.removesuffix("p")), base=base[0] if base else None) is not None, path


@pytest.mark.parametrize(("made_for", "read_as", "base", "fit"), [
    ("classic_2p", ("v004", 2), None, "--tables v004_2p --out {dir} --overwrite"),  # another ruleset
    ("classic_4p", ("classic", 2), None, "--tables classic_2p --out {dir} --overwrite"),  # other seats
    ("classic_2p", ("classic", 4), "network", "--tables classic_4p --base network --out {dir} --overwrite"),
])
def test_a_value_file_made_for_another_table_is_refused(made_for: str, read_as: tuple[str, int], base: str | None,
                                                         fit: str, tmp_path: Path) -> None:
    # A file is found by its name: one copied or renamed from another table was read at this one
    # (its fields `ruleset` and `players` never looked at).
    ruleset, players = read_as
    path = value_path(ruleset, players, tmp_path, base)
    path.write_text(json.dumps(shipped(made_for)), encoding="utf-8")
    other, seats = made_for.split("_")
    with pytest.raises(ValueError) as refused:
        load_value(ruleset, players, tmp_path, base)
    assert str(refused.value) == (
        f"{path} was fitted for {other} at {seats.removesuffix('p')} seats, and is read for {ruleset} at {players}: "
        "put this table's own file back (git checkout it) or fit one with scripts/fit_value.py "
        + fit.format(dir=tmp_path))
    # A file without the fields (hand-made) is taken as the table's, as before.
    data = shipped(made_for)
    del data["ruleset"], data["players"]
    path.write_text(json.dumps(data), encoding="utf-8")
    assert load_value(ruleset, players, tmp_path, base) is not None


@pytest.mark.parametrize("damage", ["nan", "other table"])
def test_evaluate_says_a_bad_value_file_in_one_line_before_any_game(
        damage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import agents.search as search

    values = tmp_path / "values"
    values.mkdir()
    data = shipped("v004_2p" if damage == "nan" else "classic_2p")
    if damage == "nan":
        data["weights"][3] = float("nan")
    (values / "v004_2p.json").write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(search, "load_value",
                        lambda ruleset, players, base=None: load_value(ruleset, players, values, base))
    argv = ["--agents", "searcher:50", "--field", "bold", "--ruleset", "v004", "--games", "2", "--workers", "1",
            "--out", str(tmp_path / "out")]
    assert script("evaluate").main(argv) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err and len(lines) == 1 and lines[0].startswith("error: "), err
    says = "is damaged: its weights must be finite numbers" if damage == "nan" else "was fitted for classic at 2 seats"
    assert f"v004_2p.json {says}" in lines[0] and "scripts/fit_value.py" in lines[0]
