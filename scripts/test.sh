#!/usr/bin/env bash
# Sets up everything (Python packages, the Debian audio packages the voice tests use) and
# runs the whole test suite. This is the README's test command, and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
exec .venv/bin/python -m pytest "$@"
