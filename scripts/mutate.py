"""Mutation testing of chosen modules: do their tests fail when the code is wrong?

    python scripts/mutate.py voice/intents.py
    python scripts/mutate.py cdc_env.spaces cdc_env/env.py --tests tests/env
    python scripts/mutate.py cdc_env                       # every module of the package
    python scripts/mutate.py cdc_env/combinations.py --fresh  # the survivors again, one fresh process each

mutmut (configured in pyproject.toml, [tool.mutmut]) makes small changes to the code one at a
time (a comparison flipped, a constant changed, a call dropped) in a copy of the tree under
mutants/, and runs the tests that cover the changed function on each. A mutant the tests catch
is *killed*; one they let through *survives*. This prints the score (killed / total) and every
survivor with its file, line and diff. Only the chosen modules are mutated, against their own
tests (TESTS below, or --tests), so one module takes minutes, not the hour of the whole tree.
mutmut 3 mutates inside functions only: a module-level table (a dict of constants) is not
mutated, so its tests must pin it by themselves.

Survivors that cannot change behaviour (equivalent mutants) are listed in docs/mutation.md
with the reason; keep the score of a module at 90 % or more.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as `python scripts/mutate.py`: the project's packages
import cdc_env.ctrl_c_at_start  # noqa: E402, F401, I001 - first: a Ctrl+C while the libraries load is one line

from cdc_env.cli import processes  # noqa: E402

# Each module's own tests (the first prefix that matches wins): fast, and enough to judge it.
TESTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("voice/intents.py", ("tests/play/test_intents.py", "tests/play/test_intents_pinned.py")),
    ("voice/lexicon.py", ("tests/voice/test_lexicon.py", "tests/voice/test_lexicon_pinned.py",
                          "tests/voice/test_game_lexicon_and_clips.py")),
    ("voice/recogniser.py", ("tests/voice/test_results.py",)),
    ("voice/", ("tests/voice", "tests/play")),
    ("agents/heuristic.py", ("tests/agents/test_bold.py", "tests/agents/test_bots_and_evaluation.py")),
    ("agents/evaluation.py", ("tests/agents/test_bots_and_evaluation.py", "tests/agents/test_evaluation_pinned.py")),
    ("agents/", ("tests/agents/test_bots_and_evaluation.py",)),
    ("cdc_env/spaces.py", ("tests/env/test_env_spaces.py", "tests/env/test_codec_seats.py",
                           "tests/env/test_observation_by_hand.py", "tests/env/test_house_observation.py")),
    ("cdc_env/env.py", ("tests/env/test_env_aec.py", "tests/env/test_env_single.py", "tests/env/test_cut_short.py",
                        "tests/env/test_env_messages.py")),
    # The engine: hand-worked tests only. The seeded random games (test_log_digest,
    # test_properties) would catch much of it too, but run every mutant for half a minute.
    ("cdc_env/combinations.py", ("tests/engine/test_combinations.py", "tests/engine/test_complete.py")),
    ("cdc_env/rules.py", ("tests/engine/test_ruleset_files.py", "tests/engine/test_errors_and_saves.py",
                          "tests/engine/test_house_rules.py", "tests/engine/test_complete.py")),
    ("cdc_env/game.py", tuple(f"tests/engine/test_{name}.py" for name in (
        "game_pinned", "actions", "races", "errors_and_saves", "save_independence", "clone", "action_types",
        "complete", "house_rules", "chante_sloubi", "solo", "engine_boundary", "ruleset_files"))),
    ("cdc_env/rulebook/house/", ("tests/engine/test_house_rules.py", "tests/engine/test_ruleset_files.py",
                                 "tests/engine/test_chante_sloubi.py", "tests/engine/test_house_pinned.py")),
    ("cdc_env/rulebook/", tuple(f"tests/engine/test_{name}.py" for name in (
        "actions", "races", "complete", "game_pinned", "grelottine_pinned", "sirop_pinned", "races_pinned",
        "rare_pinned", "soufflette_civet_pinned"))),
    ("cdc_env/dice.py", ("tests/engine/test_dice.py", "tests/engine/test_errors_and_saves.py",
                         "tests/engine/test_clone.py", "tests/engine/test_save_independence.py")),
    ("cdc_env/yamlfile.py", ("tests/engine/test_yamlfile.py", "tests/engine/test_ruleset_files.py")),
    ("cdc_env/reaction.py", ("tests/engine/test_reaction.py",)),
    ("cdc_env/actions.py", ("tests/engine/test_action_types.py", "tests/engine/test_errors_and_saves.py")),
    ("cdc_env/flow.py", tuple(f"tests/engine/test_{name}.py" for name in (
        "flow", "game_pinned", "errors_and_saves", "action_types", "house_pinned", "save_independence"))),
    ("cdc_env/cli.py", ("tests/test_command_helpers.py",)),
    ("cdc_env/play.py", ("tests/engine/test_play.py", "tests/engine/test_rule_readings.py",
                         "tests/engine/test_errors_and_saves.py")),
    # The small games are solved in the test (the solver runs under each mutant); S's values
    # come from caches filled before mutmut forks, so only its choices' code does.
    ("cdc_env/solo_optimum.py", ("tests/engine/test_solo_optimum.py", "tests/engine/test_solo.py",
                                 "tests/engine/test_solo_optimum_small.py")),
    ("cdc_env/__main__.py", ("tests/engine/test_rules_table_command.py",)),
    ("cdc_env/", ("tests/engine", "tests/env")),
)
# Statuses that count as caught: a test failed, the tests ran out of time (an endless loop),
# or the type checker refused the mutant.
CAUGHT = {"killed", "timeout", "caught by type check"}


class UsageError(Exception):
    pass


def module_files(names: Sequence[str], source_paths: Sequence[str]) -> list[str]:
    """The .py files (relative to the root) that the arguments name: a path or a dotted name,
    of a module or of a package (all its modules)."""
    files: list[str] = []
    for name in names:
        candidates = [Path(name), Path(name.replace(".", "/") + ".py"), Path(name.replace(".", "/"))]
        path = next((c for c in candidates if (ROOT / c).exists() and not c.is_absolute()), None)
        if path is None:
            raise UsageError(f"module {name!r} not found: give a path such as voice/intents.py or a dotted "
                             f"name such as cdc_env.spaces, relative to {ROOT}")
        top = path.parts[0] if path.parts else ""  # ("." and "" have none: an IndexError)
        if top not in source_paths:
            raise UsageError(f"module {name!r} is outside the mutated packages {', '.join(source_paths)} "
                             f"([tool.mutmut] source_paths in pyproject.toml)")
        found = sorted(p for p in (ROOT / path).rglob("*.py")) if (ROOT / path).is_dir() else [ROOT / path]
        if not found or found[0].suffix != ".py":
            raise UsageError(f"module {name!r} is not a Python module or package")
        files += [str(p.relative_to(ROOT)) for p in found if str(p.relative_to(ROOT)) not in files]
    return files


def tests_for(files: Sequence[str]) -> list[str]:
    tests: list[str] = []
    for file in files:
        for prefix, chosen in TESTS:
            if file.startswith(prefix):
                tests += [t for t in chosen if t not in tests and (ROOT / t).exists()]
                break
    return tests


def mutant_line(path: str, mutant: str, diff: str) -> int | None:
    """The line of the source that the mutant changes: its function's first line (decorators
    included, as in the diff) plus the offset of the first removed line in the diff's hunk."""
    # x_function__mutmut_3, or xǁClassǁmethod__mutmut_3 for a method
    parts = re.sub(r"__mutmut_\d+$", "", mutant.rsplit(".", 1)[-1]).split("ǁ")
    function = parts[-1][2:] if len(parts) == 1 else parts[-1]
    scope: ast.AST = ast.parse((ROOT / path).read_text())
    if len(parts) == 3:
        scope = next((node for node in ast.walk(scope)
                      if isinstance(node, ast.ClassDef) and node.name == parts[1]), scope)
    start = None
    for node in ast.walk(scope):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            break
    if start is None:
        return None
    line = None
    for text in diff.splitlines():
        hunk = re.match(r"@@ -(\d+)", text)
        if hunk:
            line = int(hunk.group(1))
        elif line is not None and not text.startswith(("---", "+++")):
            if text.startswith("-"):
                return start + line - 1
            if not text.startswith("+"):
                line += 1
    return start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="+", metavar="MODULE",
                        help="a module or package to mutate: voice/intents.py, cdc_env.spaces, cdc_env")
    parser.add_argument("--tests", nargs="+", metavar="PATH",
                        help="the tests to run on each mutant (pytest paths; default: the module's own)")
    parser.add_argument("--jobs", type=processes, default=2, help="mutants tested at once (default 2)")
    mode = parser.add_mutually_exclusive_group()  # --report won over the others unsaid
    mode.add_argument("--report", action="store_true",
                      help="run nothing: print the score and survivors of the last run on these modules")
    mode.add_argument("--survivors", action="store_true",
                      help="run again only the last run's survivors (after adding tests: quick)")
    mode.add_argument("--fresh", action="store_true",
                      help="run each of the last run's survivors again in a fresh Python, against all the "
                           "chosen tests: catches what mutmut cannot (code run at import, in a subprocess)")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    from mutmut import configuration  # after the chdir: mutmut reads ./pyproject.toml

    config = configuration.config()
    source_paths = [str(p) for p in config.source_paths]
    try:
        files = module_files(args.modules, source_paths)
        files = [f for f in files if config.should_mutate(f)] or files
        tests = args.tests or tests_for(files)
        missing = [t for t in tests if not (ROOT / t.split("::")[0]).exists()]
        if missing:
            raise UsageError(f"--tests: {', '.join(missing)} not found (give pytest paths relative to {ROOT})")
        if not tests:
            raise UsageError(f"no tests known for {', '.join(files)}: give them with --tests")
    except UsageError as error:
        print(f"mutate.py: error: {error}", file=sys.stderr)
        return 2
    if args.report or args.survivors or args.fresh:
        # These read the last run: say so where a module has none, rather than a score of 0 / 0.
        never = [file for file in files if not (ROOT / "mutants" / (file + ".meta")).exists()]
        if never:
            print(f"mutate.py: error: no run of {', '.join(never)} yet: run scripts/mutate.py "
                  f"{' '.join(never)} first", file=sys.stderr)
            return 2
        damaged = [file for file in files if not readable_results(file)]
        if damaged:
            print(f"mutate.py: error: the last run's results of {', '.join(damaged)} are damaged (mutants/"
                  f"{damaged[0]}.meta; a run cut short?): run scripts/mutate.py {' '.join(damaged)} again",
                  file=sys.stderr)
            return 2
    if args.report:
        return report(files)
    if args.fresh:
        return fresh(files, tests, [str(a) for a in config.pytest_add_cli_args])
    # Only the chosen modules are mutated, against the chosen tests (mutmut keeps the rest of
    # its configuration); every mutant of theirs is (re)run, so a new test counts at once.
    config.only_mutate = files
    for file in files:
        # A copy that mutmut left unmutated (a module of an earlier run restored) looks newer
        # than its source, which mutmut takes for "already mutated": make it copy it afresh.
        copy = ROOT / "mutants" / file
        if copy.exists() and "__mutmut_" not in copy.read_text():
            copy.unlink()
    config.do_not_mutate = []
    # Which tests call which function is traced afresh on every run (one run of the chosen
    # tests): mutmut would otherwise trace only tests it has not seen, and keep the old map of
    # a test changed in place (one that now calls a function it did not).
    (ROOT / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    config.pytest_add_cli_args_test_selection = tests
    from mutmut.__main__ import _run

    print(f"mutating {', '.join(files)} against {' '.join(tests)}", flush=True)
    names = [f[:-3].replace("/", ".").removesuffix(".__init__") + ".*" for f in files]
    caught: dict[str, dict[str, int]] = {}
    if args.survivors:
        names = survivors(files)
        if not names:
            print(f"no survivors of a last run on {', '.join(files)}: nothing to run again")
            return report(files)
        caught = caught_codes(files)
    try:
        _run(names, args.jobs)
    except SystemExit as stop:  # mutmut says why above (the clean tests failed, say)
        if stop.code:
            print(f"mutate.py: mutmut stopped (exit {stop.code}); its output above says why", file=sys.stderr)
            return 1
    except AssertionError as error:  # a module without any function to mutate
        print(f"mutate.py: error: nothing to mutate in {', '.join(files)} ({error})", file=sys.stderr)
        return 2
    finally:
        restore_caught(caught)
    return report(files)


def mutation_data(file: str) -> Any:
    """mutmut's results for one module (its mutants and their exit codes), loaded."""
    from mutmut.mutation.data import SourceFileMutationData

    data = SourceFileMutationData(path=file)
    data.load()
    return data


def readable_results(file: str) -> bool:
    """mutmut's results of the last run on `file` can be read (mutmut itself raises on a damaged one)."""
    try:
        mutation_data(file)
    except (ValueError, TypeError, KeyError, AttributeError, AssertionError):  # JSON or its shape
        return False
    return True


def caught_codes(files: Sequence[str]) -> dict[str, dict[str, int]]:
    """The verdicts of the last run on `files`, by file."""
    codes: dict[str, dict[str, int]] = {}
    for file in files:
        data = mutation_data(file)
        codes[file] = {name: code for name, code in data.exit_code_by_key.items() if code is not None}
    return codes


def restore_caught(codes: dict[str, dict[str, int]]) -> None:
    """After --survivors with other tests than the last run's: puts back the verdicts mutmut
    forgot (it forgets every verdict when the tests change; a test added cannot revive a
    mutant), and keeps "survived" for a survivor that none of the new tests reach."""
    from mutmut.stats import status_by_exit_code

    for file, before in codes.items():
        data = mutation_data(file)
        now = data.exit_code_by_key
        back = {name: code for name, code in before.items()
                if now.get(name, 0) is None or (status_by_exit_code[now.get(name)] == "no tests"
                                                 and status_by_exit_code[code] == "survived")}
        if back:
            now.update(back)
            data.save()


def survivors(files: Sequence[str]) -> list[str]:
    """The mutants of the last run on `files` that no test killed."""
    from mutmut.stats import status_by_exit_code

    names: list[str] = []
    for file in files:
        data = mutation_data(file)
        names += [name for name, code in data.exit_code_by_key.items()
                  if status_by_exit_code[code] not in CAUGHT and code is not None]
    return names


def fresh(files: Sequence[str], tests: Sequence[str], pytest_args: Sequence[str]) -> int:
    """Runs each survivor of the last run on `files` again, one at a time, in a new Python
    process started with the mutant already chosen (MUTANT_UNDER_TEST), against every chosen
    test, and records it killed when a test fails.

    mutmut forks its test processes from one that has already imported the code, so a mutant
    of a function that only runs at import (a table built by a helper, a rule registered) is
    never active there, and one whose function only a test's subprocess calls has "no tests".
    In a fresh process both are."""
    names = survivors(files)
    if not (ROOT / "mutants").is_dir() or not names:
        print(f"no survivors of a last run on {', '.join(files)}: nothing to run again")
        return report(files)
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", *pytest_args, *tests]

    def run(mutant: str, limit: float | None) -> tuple[int, float]:
        env = {**os.environ, "MUTANT_UNDER_TEST": mutant, "PY_IGNORE_IMPORTMISMATCH": "1"}
        start = time.monotonic()
        try:
            code = subprocess.run(command, cwd=ROOT / "mutants", env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, timeout=limit).returncode
        except subprocess.TimeoutExpired:
            code = 36  # mutmut's "timeout": the mutant made the tests run on (counted as caught)
        return code, time.monotonic() - start

    code, clean = run("", None)
    if code != 0:
        print(f"mutate.py: the chosen tests fail without any mutant (pytest exit {code}) in mutants/: "
              f"run them there to see why", file=sys.stderr)
        return 1
    print(f"running {len(names)} survivors again, each in a fresh process ({clean:.0f} s of tests each)", flush=True)
    by_file = {file: mutation_data(file) for file in files}
    for name in names:
        code, took = run(name, 3 * clean + 10)
        # The tests passed without the mutant, so a failure, an error while collecting them (the
        # mutant broke an import) or pytest's internal error is the mutant's doing: killed.
        code = 1 if code in (1, 2, 3) else code
        verdict = {0: "survived", 1: "killed", 36: "timeout"}.get(code, f"pytest exit {code}")
        print(f"  {name}: {verdict} ({took:.0f} s)", flush=True)
        if code in (1, 36):
            data = next(d for d in by_file.values() if name in d.exit_code_by_key)
            data.exit_code_by_key[name] = code
            data.save()
    return report(files)


def report(files: Sequence[str]) -> int:
    """Prints each module's score and its survivors, from mutmut's results under mutants/."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    from mutmut.mutation.file_mutation import mutate_file_contents
    from mutmut.stats import status_by_exit_code

    total = caught = 0
    lines: list[str] = []
    mutated: dict[str, str] = {}

    def diff_of(name: str, file: str) -> str:
        try:
            return get_diff_for_mutant(name, path=file)
        except (FileNotFoundError, ValueError):
            # A later run on another module put this one's plain copy back under mutants/: its
            # mutants are made again in memory, from the source (numbered as mutmut numbers them).
            if file not in mutated:
                mutated[file] = mutate_file_contents(file, (ROOT / file).read_text()).code
            return get_diff_for_mutant(name, source=mutated[file], path=file)

    for file in files:
        data = mutation_data(file)
        statuses = {name: status_by_exit_code[code] for name, code in data.exit_code_by_key.items()}
        file_caught = sum(status in CAUGHT for status in statuses.values())
        unchecked = sum(status == "not checked" for status in statuses.values())
        total += len(statuses)
        caught += file_caught
        if statuses:
            lines.append(f"{file}: {file_caught} / {len(statuses)} killed ({100 * file_caught / len(statuses):.1f} %)"
                         + (f", {unchecked} not checked (the run was stopped)" if unchecked else ""))
        for name, status in sorted(statuses.items(), key=lambda item: item[0]):
            if status in CAUGHT or status == "not checked":
                continue
            diff = diff_of(name, file)
            lines.append(f"\n{status.upper()}: {file}:{mutant_line(file, name, diff)} {name}\n{diff}")
    print()
    print("\n".join(lines))
    score = 100 * caught / total if total else 0.0
    print(f"\nscore: {caught} / {total} killed ({score:.1f} %)")
    return 0

if __name__ == "__main__":
    sys.exit(main())
