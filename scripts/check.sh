#!/usr/bin/env bash
# The linter (ruff) and the type checker (mypy) over the whole tree, as pyproject.toml
# configures them, from .venv (`bash scripts/setup.sh --dev` installs them). CI runs this
# before the tests, and pre-commit (.pre-commit-config.yaml) before each commit.
#   bash scripts/check.sh          both
#   bash scripts/check.sh lint     ruff only
#   bash scripts/check.sh types    mypy only
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case "$what" in
    all|lint|types) ;;
    *) echo "usage: bash scripts/check.sh [lint|types]" >&2; exit 2 ;;
esac
if [[ ! -x .venv/bin/ruff || ! -x .venv/bin/mypy ]]; then
    echo "check: .venv has no ruff or mypy; run: bash scripts/setup.sh --dev" >&2
    exit 2
fi
# Each check runs even when one before it failed, so that one run reports every finding.
failed=0
if [[ "$what" != types ]]; then
    .venv/bin/ruff check . || failed=1
fi
if [[ "$what" != lint ]]; then
    .venv/bin/mypy || failed=1
fi
if (( failed )); then
    echo "check: findings above; fix them (ruff check --fix does the safe ones)" >&2
fi
exit "$failed"
