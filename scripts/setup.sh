#!/usr/bin/env bash
# Installs what Keel needs from Debian 12's packages (as root, only what is
# missing), then configures and builds Keel in build/ with two jobs.
# Used by scripts/demo.sh, scripts/test.sh and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ cmake ninja-build pkg-config python3   # toolchain; lit runs on python3
  llvm-22-dev llvm-22-tools                  # APFloat cross-check; lit, FileCheck
  libz3-dev                                  # shape obligations
  libgtest-dev libmpfr-dev                   # tests and their MPFR reference
  python3-numpy                              # .npy interoperability tests
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: error: missing Debian packages (${missing[*]}); run as root or install them" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2
