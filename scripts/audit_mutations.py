"""The outside audit's mutations that once survived (issue 27), re-applied one at a time: each
must now make its tests fail.

    python scripts/audit_mutations.py

Each mutation is one exact text replaced in one file, in a copy of the tree (the files git
tracks, in a temporary folder: the working tree is never touched), and the tests that should
catch it are run there. Prints CAUGHT or SURVIVED per mutation, and exits 1 if any survived.
mutmut (scripts/mutate.py) makes its own mutations by rule; these are the hand-made ones an
auditor found missed, kept so that they stay caught.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import cdc_env.ctrl_c_at_start  # noqa: E402, F401, I001 - first: a Ctrl+C while the libraries load is one line

from cdc_env.cli import UsageError, run_command  # noqa: E402


class Mutation(NamedTuple):
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


INTENTS_TESTS = ("tests/play/test_intents.py", "tests/play/test_intents_pinned.py")
BOLD_TESTS = ("tests/agents/test_bold.py",)
MUTATIONS = (
    Mutation("Fauvette and Mouette swapped", "voice/intents.py",
             '"bird_fauvette": 3,\n    "bird_mouette": 4,', '"bird_fauvette": 4,\n    "bird_mouette": 3,',
             INTENTS_TESTS),
    Mutation("« oui » dropped as an answer to a Civet bet", "voice/intents.py",
             '"civet_bet": {"oui", "non"},', '"civet_bet": {"non"},', INTENTS_TESTS),
    Mutation("the codec's seat-relative target with its sign flipped", "cdc_env/spaces.py",
             "value = (value - seat) % self.players", "value = (seat - value) % self.players",
             ("tests/env/test_codec_seats.py", "tests/env/test_env_spaces.py")),
    Mutation("a game cut short with two leaders won by the first", "cdc_env/game.py",
             "return min(leading.pop()) if len(leading) == 1 else None",
             "return min(leading.pop()) if leading else None",
             ("tests/env/test_cut_short.py", "tests/env/test_env_aec.py")),
    Mutation("the recogniser's onset bias dropped", "voice/recogniser.py",
             "onset_bias_s: float = 0.04,", "onset_bias_s: float = 0.0,", ("tests/voice/test_results.py",)),
    Mutation("a saved game sharing its history list with the live game", "cdc_env/game.py",
             '"history": copy.deepcopy(self.history),', '"history": self.history,',
             ("tests/engine/test_save_independence.py",)),
    Mutation("bold's Grelottine threshold 1 → 2", "agents/heuristic.py",
             'self.grelottine_threshold = 1.0 if style == "bold" else 3.0',
             'self.grelottine_threshold = 2.0 if style == "bold" else 3.0', BOLD_TESTS),
    Mutation("bold's margin to buy a cul 0 → 1", "agents/heuristic.py",
             'margin = 0 if self.style == "bold" else 5', 'margin = 1 if self.style == "bold" else 5', BOLD_TESTS),
    Mutation("bold's sirop push also when level", "agents/heuristic.py",
             "sirop += 8 if self._lead(state, seat) < 0 else 0", "sirop += 8 if self._lead(state, seat) <= 0 else 0",
             BOLD_TESTS),
)


def copy_tree(destination: Path) -> None:
    """The files git tracks, as they are in the working tree, copied under `destination`."""
    done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if done.returncode != 0:  # (a CalledProcessError traceback outside a git checkout: an archive's files)
        said = done.stderr.decode(errors="replace").strip().splitlines()
        raise UsageError(f"the audit copies the files git tracks, and {ROOT} is no git checkout "
                         f"({said[0] if said else 'git failed'})")
    listed = done.stdout
    for name in listed.decode().split("\0"):
        source = ROOT / name
        if name and source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


def run_tests(tests: tuple[str, ...], tree: Path) -> tuple[bool, str]:
    """(passed, pytest's last line). Run from the copy: Python puts the working folder first on
    its path, so the copy's code is the one imported."""
    result = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                            cwd=tree, capture_output=True, text=True)
    lines = result.stdout.strip().splitlines()
    return result.returncode == 0, lines[-1] if lines else result.stderr.strip()[-200:]


def caught(mutation: Mutation, tree: Path) -> tuple[bool, str]:
    """Applies `mutation` in `tree`, runs its tests, puts the file back: (caught, pytest's last line)."""
    file = tree / mutation.path
    original = file.read_text(encoding="utf-8")
    if original.count(mutation.old) != 1:
        raise SystemExit(f"error: {mutation.name}: the text to mutate is not once in {mutation.path} "
                         "(the code changed: update MUTATIONS in scripts/audit_mutations.py)")
    # The tests must pass on the code as it is, or a failure would say nothing of the mutation.
    passed, last_line = run_tests(mutation.tests, tree)
    if not passed:
        raise SystemExit(f"error: {mutation.name}: its tests fail before any mutation ({last_line}): fix them first")
    file.write_text(original.replace(mutation.old, mutation.new), encoding="utf-8")
    try:
        passed, last_line = run_tests(mutation.tests, tree)
    finally:
        file.write_text(original, encoding="utf-8")
    return not passed, last_line


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    # Ctrl+C: one line, not a traceback (the copy of the tree goes with its temporary folder).
    return run_command(audit, (), stopped="stopped: the working tree is untouched (the mutations were in a copy)")


def audit() -> int:
    with tempfile.TemporaryDirectory(prefix="cdc-audit-") as folder:
        tree = Path(folder)
        copy_tree(tree)
        survived = 0
        for mutation in MUTATIONS:
            was_caught, last_line = caught(mutation, tree)
            survived += not was_caught
            print(f"{'CAUGHT  ' if was_caught else 'SURVIVED'} {mutation.name} ({mutation.path}): {last_line}",
                  flush=True)
    print(f"{len(MUTATIONS) - survived} of {len(MUTATIONS)} caught")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
