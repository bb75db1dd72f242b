#!/usr/bin/env bash
# Installs what attune needs on a fresh Debian bookworm machine (run as root).
# Safe to run again: it only installs what is missing.
set -euo pipefail

# g++ brings libgcc-12-dev and with it the sanitizer runtimes (libasan8,
# libubsan1, libtsan2) that tests/fuzz and tests/tsan link.
apt_pkgs=(cmake ninja-build g++ ccache python3-pip
          libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
          libgtest-dev libbenchmark-dev
          libprotobuf-dev protobuf-compiler)
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "attune: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q "${missing[@]}"
fi

PY=${PYTHON:-python3}
pip_need=()
"$PY" -c "import halide" 2>/dev/null || pip_need+=("halide>=21,<22")
"$PY" -c "import lit" 2>/dev/null || pip_need+=(lit)
if [ ${#pip_need[@]} -gt 0 ]; then
  echo "attune: installing Python packages: ${pip_need[*]}"
  "$PY" -m pip install -q "${pip_need[@]}" || "$PY" -m pip install -q --break-system-packages "${pip_need[@]}"
fi
