#!/usr/bin/env bash
# Sets up everything (Python packages, the Debian audio packages the voice tests use) and
# runs the whole test suite. This is the README's test command, and what CI runs.
#   bash scripts/test.sh [--check] [pytest arguments]
# --check: the linter and the type checker (scripts/check.sh) first, failing before the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [[ "${1:-}" == "--check" ]]; then check=1; shift; fi
bash scripts/setup.sh --dev
if (( check )); then bash scripts/check.sh; fi
exec .venv/bin/python -m pytest "$@"
