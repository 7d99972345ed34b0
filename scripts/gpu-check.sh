#!/usr/bin/env bash
# The real-GPU check (docs/gpu-check.md). On a Linux machine with an NVIDIA GPU, offline:
#
#   scripts/gpu-check.sh                  # writes ./gpu-check-out, prints a one-screen summary
#
# Before, where there is a network (only needed when that machine's Python lacks click,
# packaging or nvidia-ml-py): carry .gpu-check/wheels (about 0.4 MiB) along.
#
#   scripts/gpu-check.sh --prepare
#
# Options after the first: --out DIR, --budget SECONDS, --python PATH (verify it too),
# --archive (pack the output into DIR/gpu-check.tar.gz). PYTHON=/path/to/python3 picks the
# interpreter that runs gpuenv (3.10 or newer). Exit: 0 ran clean (or no GPU here), 1 something
# to look at (see the summary), 2 could not run.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
python="${PYTHON:-python3}"
carried="${GPU_CHECK_DIR:-$here/.gpu-check}"  # what --prepare made and the run unpacks
wheels="$carried/wheels"
site="$carried/site"

if ! command -v "$python" >/dev/null 2>&1; then
  echo "gpu-check: $python not found; set PYTHON=/path/to/python3 (3.10 or newer)" >&2
  exit 2
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  echo "gpu-check: $python is older than Python 3.10; set PYTHON=/path/to/python3" >&2
  exit 2
fi
# The package, never `installer` itself, goes on the path (installer/ is the source root).
pypath="$here/installer"

if [ "${1:-}" = "--prepare" ]; then
  shift
  exec env PYTHONPATH="$pypath" "$python" -m gpuenv.gpucheck.wheelhouse download \
    --wheels "$wheels" "$@"
fi

# Carried wheels win over the machine's own packages; without them, the machine's must do.
if [ -d "$wheels" ]; then
  PYTHONPATH="$pypath" "$python" -m gpuenv.gpucheck.wheelhouse unpack \
    --wheels "$wheels" --site "$site" || exit 2
  pypath="$pypath:$site"
fi
missing=$(PYTHONPATH="$pypath" "$python" -m gpuenv.gpucheck.wheelhouse missing) || exit 2
if [ -n "$missing" ]; then
  echo "gpu-check: $python lacks: $missing." >&2
  echo "  Run scripts/gpu-check.sh --prepare where there is a network and bring .gpu-check/ along," >&2
  echo "  or set PYTHON to an interpreter that has them." >&2
  exit 2
fi
export PYTHONPATH="$pypath${PYTHONPATH:+:$PYTHONPATH}"
exec "$python" -m gpuenv.gpucheck run "$@"
