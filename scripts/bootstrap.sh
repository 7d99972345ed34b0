#!/usr/bin/env sh
# A fresh machine to a verified GPU (or CPU) environment: install gpuenv into its own virtual
# environment (.venv beside this checkout), then run `gpuenv setup`. Re-running is safe.
# Usage: ./scripts/bootstrap.sh [REQUIREMENT ...] [gpuenv setup options]
# GPUENV_INSTALL_ONLY=1 installs gpuenv and stops there (the fleet role installs lockfiles itself).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
venv="${GPUENV_VENV:-$here/.venv}"
python="${PYTHON:-python3}"

if ! command -v "$python" >/dev/null 2>&1; then
  echo "bootstrap: $python not found; install Python 3.10 or newer, or set PYTHON=/path/to/python3" >&2
  exit 2
fi
# the version first: an older Python fails later inside pip with a far less clear message
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  found=$("$python" -c 'import sys; print(".".join(map(str, sys.version_info[:3])))' 2>/dev/null || echo "unknown")
  echo "bootstrap: gpuenv needs Python 3.10 or newer; $python is $found. Install a newer one, or set PYTHON=/path/to/python3.10+" >&2
  exit 2
fi
if [ ! -x "$venv/bin/python" ] && ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
  echo "bootstrap: $python cannot make virtual environments (no venv/ensurepip module); on Debian or Ubuntu: apt-get install python3-venv" >&2
  exit 2
fi
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet -e "$here"
echo "gpuenv installed in $venv" >&2  # stdout is setup's alone (setup --json)
if [ "${GPUENV_INSTALL_ONLY:-}" = 1 ]; then
  exit 0
fi
exec "$venv/bin/gpuenv" setup "$@"
