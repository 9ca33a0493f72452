"""scripts/audit_mutations.py: a mutation its tests catch, one they miss, and a stale one."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from doubles import script

ROOT = Path(__file__).resolve().parents[1]


def audit() -> ModuleType:
    return script("audit_mutations")


def test_a_mutation_is_caught_only_where_a_test_fails_and_the_file_is_put_back(tmp_path: Path) -> None:
    script = audit()
    (tmp_path / "birds.py").write_text("FACES = {'fauvette': 3, 'mouette': 4}\n", encoding="utf-8")
    (tmp_path / "test_birds.py").write_text(
        "from birds import FACES\n\ndef test_fauvette():\n    assert FACES['fauvette'] == 3\n", encoding="utf-8")
    swapped = script.Mutation("swap", "birds.py", "'fauvette': 3, 'mouette': 4", "'fauvette': 4, 'mouette': 3",
                              ("test_birds.py",))
    unseen = script.Mutation("mouette", "birds.py", "'mouette': 4", "'mouette': 5", ("test_birds.py",))
    assert script.caught(swapped, tmp_path)[0] is True
    assert script.caught(unseen, tmp_path)[0] is False
    assert "'mouette': 4" in (tmp_path / "birds.py").read_text(encoding="utf-8")
    stale = script.Mutation("gone", "birds.py", "'pinson': 1", "'pinson': 2", ("test_birds.py",))
    with pytest.raises(SystemExit, match="not once in birds.py"):
        script.caught(stale, tmp_path)


def test_every_audit_mutation_still_finds_its_text() -> None:
    for mutation in audit().MUTATIONS:
        text = (ROOT / mutation.path).read_text(encoding="utf-8")
        assert text.count(mutation.old) == 1, mutation.name
        assert all((ROOT / test).exists() for test in mutation.tests), mutation.name


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    script = audit()

    def interrupted(tree: Path) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(script, "copy_tree", interrupted)
    assert script.main([]) == 130  # was a KeyboardInterrupt traceback
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert err.startswith("stopped: the working tree is untouched")
