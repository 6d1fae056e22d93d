#!/usr/bin/env bash
# Installs every system package polytune needs on a fresh Debian machine.
# Idempotent and non-interactive: packages already present are skipped.
set -euo pipefail

packages=(
  # isl-rs builds its bundled isl with autotools
  autoconf automake libtool g++ make pkg-config libgmp-dev
  # SCoP detection in ordinary C (clang-sys links the libclang that
  # matches clang-19, see .cargo/config.toml)
  libclang-19-dev
  # PNG copies of the SVG plots of `evaluate --plots`
  librsvg2-bin
  # simulated counters (cachegrind) and, optionally, hardware ones (PAPI)
  valgrind libpapi-dev
  # second back-end compiler and its OpenMP runtime
  clang-19 libomp-19-dev
  # timing helpers for scripts
  python3
  # the reference dgemm of scripts/bench_gemm.py
  libopenblas-dev
  # a single-node Slurm cluster for campaigns on a cluster and their test
  # (scripts/slurm-local.sh, `polytune collect --slurm`)
  slurm-wlm munge
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup: all system packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
