#!/usr/bin/env bash
# Installs what attnzoo needs from Debian (skipping what is present), fetches the quickstart data,
# and builds (Release, ccache, precompiled torch header). Safe to run again: it redoes only what is missing.
#   scripts/setup.sh [--no-build] [--tests]    (--tests also installs python3-torch for parity tests)
set -euo pipefail
cd "$(dirname "$0")/.."

build=1; with_tests=0
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    --tests) with_tests=1 ;;
    *) echo "setup: unknown option $arg" >&2; exit 2 ;;
  esac
done

packages=(build-essential cmake ninja-build ccache pkg-config zlib1g-dev
          libtorch-dev libopenblas0-pthread libyaml-cpp-dev libopencv-dev libfmt-dev
          libgtest-dev libcli11-dev nlohmann-json3-dev)
# The tests compare against Debian's Python PyTorch (parity of parameter counts and layers).
[[ $with_tests == 1 ]] && packages+=(python3-torch python3-torchvision)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo_cmd=""; [[ $(id -u) != 0 ]] && sudo_cmd="sudo"
if (( ${#missing[@]} )); then
  echo "setup: installing ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  apt_updated=1
fi
# libtorch-dev leaves the reference BLAS active; OpenBLAS is 12-20x faster for fp32 matmul.
openblas=$(update-alternatives --list libblas.so.3-x86_64-linux-gnu 2>/dev/null | grep openblas-pthread || true)
if [[ -n $openblas ]]; then
  $sudo_cmd update-alternatives --set libblas.so.3-x86_64-linux-gnu "$openblas" >/dev/null
  lapack=$(update-alternatives --list liblapack.so.3-x86_64-linux-gnu 2>/dev/null | grep openblas-pthread || true)
  [[ -n $lapack ]] && $sudo_cmd update-alternatives --set liblapack.so.3-x86_64-linux-gnu "$lapack" >/dev/null
fi

APT_UPDATED=${apt_updated:-0} scripts/data/fetch_fashion_mnist.sh

if [[ $build == 1 ]]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j "$(nproc)"
fi
