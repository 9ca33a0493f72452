#!/usr/bin/env bash
# Sets up everything (Python packages, the Debian audio packages the voice tests use) and
# runs the whole test suite. This is the README's test command, and what CI runs.
#   bash scripts/test.sh [--check] [pytest arguments]
# --check: the linter and the type checker (scripts/check.sh) first, failing before the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
self=scripts/test.sh  # (after the cd: "$0" may be relative to the folder it was called from)
check=0
args=()
for arg in "$@"; do
    if [[ "$arg" == "-h" || "$arg" == "--help" ]]; then  # (it set everything up first, minutes of it)
        sed -n '2,5s/^# \{0,1\}//p' "$self"
        [[ -x .venv/bin/python ]] && exec .venv/bin/python -m pytest --help
        echo "(pytest's options are listed once the set-up has run: bash scripts/setup.sh --dev)"
        exit 0
    fi
    # --check anywhere (`test.sh -q --check`), never passed on: pytest took it for its own.
    if [[ "$arg" == "--check" ]]; then check=1; else args+=("$arg"); fi
done
# Two processes (pytest-xdist) unless the arguments say how many (-n N) or turn it off (-p no:xdist):
# half the suite's time is waiting (races' windows, a browser, Ray starting). With any count, the
# tests that measure time as it passes stay together in one process (tests/conftest.py), unless
# the arguments choose another --dist.
count=(-n 2)
dist=(--dist loadgroup)
previous=""
for arg in "${args[@]}"; do
    [[ "$previous" == "--dist" && "$arg" == "no" ]] && count=()  # no distribution: one process
    previous="$arg"
    case "$arg" in
        -n|-n[0-9]*|--numprocesses|--numprocesses=*) count=() ;;
        no:xdist|--dist=no) count=(); dist=() ;;
        --dist|--dist=*|-d) dist=() ;;
    esac
done
bash scripts/setup.sh --dev
if (( check )); then bash scripts/check.sh; fi
exec .venv/bin/python -m pytest "${count[@]}" "${dist[@]}" "${args[@]}"
