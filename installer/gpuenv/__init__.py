"""gpuenv: which CUDA, cuDNN, TensorFlow, PyTorch and JAX this GPU needs, locked and verified."""

__version__ = "0.1.0"
