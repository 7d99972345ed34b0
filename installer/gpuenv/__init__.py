"""gpuenv: which CUDA, cuDNN, TensorFlow, PyTorch and JAX this GPU needs, locked and verified.

The Python API is `gpuenv.api` (docs/api.md). Its functions are not re-exported here:
`gpuenv.detect`, `gpuenv.resolve`, `gpuenv.lock` and `gpuenv.verify` are the packages of those
stages, and `import gpuenv` stays as light as the CLI needs it."""

__version__ = "0.1.0"
