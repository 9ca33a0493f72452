"""scripts/test.sh's own arguments (run in a copy whose set-up, checks and Python only say they
were called: the real set-up installs packages), and what a non-editable install carries: the
rulesets and the lexicon, found inside the installed package."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cdc_env.rules import RULES_DIR, shipped_configs

ROOT = Path(__file__).resolve().parents[1]
RECORD = '#!/usr/bin/env bash\necho "{name} $*" >> "$(dirname "$0")/{up}calls.log"\n'


def stand_in(tmp_path: Path) -> Path:
    """A copy of scripts/test.sh beside stand-ins of setup.sh, check.sh and .venv/bin/python
    that write their calls to calls.log."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "test.sh", tmp_path / "scripts" / "test.sh")
    for path, up in (("scripts/setup.sh", "../"), ("scripts/check.sh", "../"), (".venv/bin/python", "../../")):
        (tmp_path / path).write_text(RECORD.format(name=Path(path).name, up=up), encoding="utf-8")
        (tmp_path / path).chmod(0o755)
    return tmp_path


def run_test_sh(tmp_path: Path, *args: str, relative_from: str | None = None) -> tuple[str, list[str]]:
    """`relative_from`: called as `bash test.sh` from that folder of the copy (a relative $0)."""
    script = str(tmp_path / "scripts" / "test.sh") if relative_from is None else "test.sh"
    done = subprocess.run(["bash", script, *args], capture_output=True, text=True, timeout=60,
                          cwd=None if relative_from is None else tmp_path / relative_from)
    assert done.returncode == 0, done.stderr
    log = tmp_path / "calls.log"
    return done.stdout, log.read_text(encoding="utf-8").splitlines() if log.exists() else []


@pytest.mark.parametrize("option", ["--help", "-h"])
def test_test_sh_help_sets_nothing_up(tmp_path: Path, option: str) -> None:
    # It ran the whole set-up (apt, pip: minutes) before pytest's help.
    printed, calls = run_test_sh(stand_in(tmp_path), "-q", option)
    assert calls == ["python -m pytest --help"] and "--check: the linter" in printed
    # From the scripts folder (`bash test.sh --help`): its cd made "$0" name no file for sed.
    (tmp_path / "calls.log").unlink()
    printed, calls = run_test_sh(tmp_path, option, relative_from="scripts")
    assert calls == ["python -m pytest --help"] and "--check: the linter" in printed


@pytest.mark.parametrize("args", [["-q", "--check"], ["--check", "-q"]])  # CI's own call: .ci/run
def test_test_sh_takes_check_anywhere_and_never_passes_it_to_pytest(tmp_path: Path, args: list[str]) -> None:
    _, calls = run_test_sh(stand_in(tmp_path), *args)
    assert calls == ["setup.sh --dev", "check.sh ", "python -m pytest -n 2 --dist loadgroup -q"]
    assert "bash scripts/test.sh --check -q" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_test_sh_without_check_runs_the_tests_alone(tmp_path: Path) -> None:
    _, calls = run_test_sh(stand_in(tmp_path), "tests/engine", "-k", "suite")
    assert calls == ["setup.sh --dev", "python -m pytest -n 2 --dist loadgroup tests/engine -k suite"]


@pytest.mark.parametrize(("args", "added"), [
    (["-n", "4"], "--dist loadgroup"), (["-n4"], "--dist loadgroup"), (["--numprocesses=0"], "--dist loadgroup"),
    (["--dist", "load"], "-n 2"), (["-n", "3", "--dist=each"], ""), (["-p", "no:xdist"], ""),
    (["--dist", "no"], ""), (["--dist=no"], "")])
def test_test_sh_leaves_the_process_count_to_arguments_that_give_one(tmp_path: Path, args: list[str],
                                                                     added: str) -> None:
    # With a count of the user's, the tests that measure time still share one process.
    _, calls = run_test_sh(stand_in(tmp_path), "-q", *args)
    assert calls == ["setup.sh --dev", " ".join(["python -m pytest", *([added] if added else []), "-q", *args])]


# ---------------------------------------------------------------------- a non-editable install


def test_the_package_data_carries_every_ruleset_and_lexicon() -> None:
    # configs/ was not packaged: `pip install .` (a wheel) loaded no ruleset, not even classic.
    tomllib = pytest.importorskip("tomllib")
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    for kind in ("rules", "voice"):
        package = f"cdc_env.configs.{kind}"
        assert package in setuptools["packages"] and setuptools["package-dir"]["cdc_env.configs"] == "configs"
        patterns = setuptools["package-data"][package]
        files = sorted(path for path in (ROOT / "configs" / kind).rglob("*") if path.is_file())
        assert files and all(any(path.match(pattern) for pattern in patterns) for path in files), (kind, patterns)
    # Every package of the source tree is listed (the list replaced automatic discovery).
    found = {".".join(path.parent.relative_to(ROOT).parts) for name in ("cdc_env", "agents", "voice")
             for path in (ROOT / name).rglob("*.py") if "__pycache__" not in path.parts}
    assert found <= set(setuptools["packages"])


def test_the_configs_are_found_inside_an_installed_package_first(tmp_path: Path) -> None:
    # An installed package (site-packages/cdc_env) has its configs inside it; a checkout (or an
    # editable install) has them beside the package, in configs/.
    installed = tmp_path / "site-packages" / "cdc_env"
    (installed / "configs" / "rules").mkdir(parents=True)
    assert shipped_configs("rules", installed) == installed / "configs" / "rules"
    checkout = tmp_path / "checkout" / "cdc_env"
    checkout.mkdir(parents=True)
    assert shipped_configs("rules", checkout) == tmp_path / "checkout" / "configs" / "rules"
    assert RULES_DIR == ROOT / "configs" / "rules"  # this checkout's, as before
