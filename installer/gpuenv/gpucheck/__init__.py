"""The real-GPU check: run gpuenv's GPU paths on a machine with an NVIDIA GPU and record them.

Whenever such a machine is at hand (often briefly, often offline), `scripts/gpu-check.sh` runs
`python -m gpuenv.gpucheck run`: it records what NVML, nvidia-smi, /proc and /sys answer (in the
fixture format of tests/fixtures/detect), compares them with each other and with the knowledge
base, resolves torch, tensorflow and jax for the machine and verifies the frameworks already
installed there on the real device. `promote` turns a recording into committed fixtures.

Modules: `wheelhouse` (stdlib only: the carried dependencies), `record` (raw answers), `compare`
(pure), `steps` (gpuenv commands with a time budget), `run` (the order), `summary`, `promote`.
"""
