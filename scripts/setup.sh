# Sourced by scripts/test and scripts/demo: installs the Debian packages autoddl builds with
# (only those missing, non-interactively) and configures a Release build in build/.
# CUDA is auto-detected; set AUTODDL_WITH_CUDA=OFF to skip calib's GPU programs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

packages=(build-essential cmake ninja-build pkg-config git
          libsimgrid-dev libeigen3-dev nlohmann-json3-dev catch2 libbenchmark-dev libcli11-dev
          coinor-libcbc-dev libxgboost-dev python3 python3-matplotlib
          python3-torch)  # python3-torch: the CPU executor (calib/cpu, ctest -L exec)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "autoddl: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

jobs=${AUTODDL_JOBS:-$(nproc)}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DAUTODDL_WITH_CUDA="${AUTODDL_WITH_CUDA:-AUTO}" >/dev/null
