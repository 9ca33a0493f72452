#!/usr/bin/env bash
# The main job on its default config: set up, train the default agent (2-player classic against
# the heuristic bots and a league of its past selves), then evaluate it. Report and model in
# runs/classic_2p/. Extra arguments go to scripts/train.py (e.g. --resume).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python scripts/train.py --config configs/train/classic_2p.yaml "$@"
