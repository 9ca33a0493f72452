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
