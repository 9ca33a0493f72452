#!/usr/bin/env bash
# The main job on its default config: set up, train the default agent (2-player classic against
# the heuristic bots and a league of its past selves), then evaluate it. Report and model in
# runs/classic_2p/. Extra arguments go to scripts/train.py (e.g. --resume).
set -euo pipefail
cd "$(dirname "$0")/.."
for arg in "$@"; do
    if [[ "$arg" == "-h" || "$arg" == "--help" ]]; then  # (it set everything up first, minutes of it)
        sed -n '2,4s/^# \{0,1\}//p' "$0"
        [[ -x .venv/bin/python ]] && exec .venv/bin/python scripts/train.py --help
        echo "(scripts/train.py's options are listed once the set-up has run: bash scripts/setup.sh)"
        exit 0
    fi
done
bash scripts/setup.sh
exec .venv/bin/python scripts/train.py --config configs/train/classic_2p.yaml "$@"
