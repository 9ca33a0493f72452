"""The engine is a library of its own: the environments, bots, voice and scripts are its
clients, and it imports none of them (nor any I/O-bound front end)."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "cdc_env"
CLIENTS = ("agents", "voice", "scripts", "tests")


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_the_engine_imports_none_of_its_clients() -> None:
    offenders = {
        str(path.relative_to(ENGINE.parent)): sorted(name for name in imported_modules(path)
                                                     if name.split(".")[0] in CLIENTS)
        for path in ENGINE.rglob("*.py")
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_every_rule_family_has_its_own_module() -> None:
    rulebook = {path.stem for path in (ENGINE / "rulebook").glob("*.py")}
    assert {"sirop", "grelottine", "civet", "soufflette", "achat", "races", "rare",
            "false_shouts", "bets"} <= rulebook


RULEBOOK = ENGINE / "rulebook"


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, under TYPE_CHECKING too: `from cdc_env import game` counts
    as cdc_env.game, and a relative import is resolved against the rulebook package."""
    names: set[str] = set()
    package = ".".join(path.relative_to(ENGINE.parent).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def test_no_rule_module_imports_the_game() -> None:
    """The rules see the game through their own interface (cdc_env/rulebook/table.py), so the
    game imports the rulebook and never the other way round."""
    offenders = {str(path.relative_to(ENGINE.parent)): sorted(name for name in imports_of(path)
                                                              if name == "cdc_env.game")
                 for path in RULEBOOK.rglob("*.py")}
    assert {path: names for path, names in offenders.items() if names} == {}
    assert "cdc_env.rulebook" in imports_of(ENGINE / "game.py")


def test_the_rules_touch_nothing_private_of_the_game() -> None:
    """A rule calls `game.change_score`, never `game._change_score`."""
    private = {
        f"{path.relative_to(ENGINE.parent)}:{node.lineno}: game.{node.attr}"
        for path in RULEBOOK.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
        and isinstance(node.value, ast.Name) and node.value.id == "game"
    }
    assert private == set()
