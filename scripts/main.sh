#!/usr/bin/env bash
# The main job on its default config: set up, then play a whole game between the built-in bots.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m cdc_env play --ruleset classic --players 4 --seed 7 "$@"
