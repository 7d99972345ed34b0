"""The questions every newcomer asks, answered short, each with its primary source.

Kept consistent with the knowledge base (recipes/pytorch.toml, recipes/tensorflow.toml).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Answer:
    question: str
    answer: str
    sources: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"question": self.question, "answer": self.answer, "sources": list(self.sources)}


FAQ: tuple[Answer, ...] = (
    Answer(
        "Do I need to install the CUDA toolkit or cuDNN for PyTorch from pip?",
        "No. PyTorch's pip wheels bring the CUDA runtime and cuDNN they were built with: on"
        " Windows inside the torch wheel itself (DLLs in torch\\lib), on Linux as nvidia-* wheels"
        " (CUDA 13 builds: the cuda-toolkit meta-wheel) that pip installs as dependencies. Only"
        " the NVIDIA driver must be on the machine, new enough for the wheel's CUDA version. A"
        " CUDA toolkit (nvcc) is needed only to compile CUDA code yourself, such as custom CUDA"
        " extensions; it does not change which CUDA torch uses. Note: the default index's torch"
        " wheel is a CUDA build on Linux x86_64 but CPU-only on Windows; Windows CUDA wheels come"
        " from PyTorch's own index (https://download.pytorch.org/whl/cu126 and siblings).",
        (
            "https://pytorch.org/get-started/locally/",
            "https://docs.nvidia.com/deploy/cuda-compatibility/",
        ),
    ),
    Answer(
        "And for TensorFlow?",
        "Linux, TensorFlow 2.14 and newer: `pip install tensorflow[and-cuda]` installs CUDA and"
        " cuDNN as nvidia-* wheels, so again only the driver is needed (plain `pip install"
        " tensorflow` gets the same GPU-capable build without the libraries, and it runs on the"
        " CPU). Older Linux releases need CUDA and cuDNN installed for them: TensorFlow's guide"
        " used conda-forge (`conda install -c conda-forge cudatoolkit=11.2 cudnn=8.1.0` for"
        " 2.9-2.11; cudatoolkit=11.8.0 plus nvidia-cudnn-cu11==8.6.0.163 and LD_LIBRARY_PATH for"
        " 2.12-2.13) and, before 2.9, system packages. Native Windows: GPU support ends with"
        " TensorFlow 2.10, which needs CUDA 11.2 and cuDNN 8.1 installed (the guide's conda-forge"
        " command above); 2.11 and newer run only on the CPU there, so use WSL2 for newer"
        " releases on the GPU.",
        (
            "https://www.tensorflow.org/install/pip",
            "https://www.tensorflow.org/install/source#gpu",
            "https://www.tensorflow.org/install/source_windows#gpu",
        ),
    ),
    Answer(
        "What was `tensorflow-gpu`?",
        "The GPU package's old name. Up to 1.14 GPU support was only in `tensorflow-gpu`. From"
        " 2.1 the plain `tensorflow` package includes it (Linux and Windows) and `tensorflow-gpu`"
        " stayed an alias for the same build up to 2.11.0 (last Windows wheel 2.10.1);"
        " tensorflow-gpu 2.12.0 is a source package that deliberately fails to install. Install"
        " `tensorflow` (on Linux `tensorflow[and-cuda]`). gpuenv reads `tensorflow-gpu` as"
        " `tensorflow` and says so in one line.",
        (
            "https://github.com/tensorflow/tensorflow/releases/tag/v2.1.0",
            "https://www.tensorflow.org/install/pip",
        ),
    ),
    Answer(
        "Did TensorFlow merge CPU and GPU after 1.15?",
        "Not at once. TensorFlow 1.15.0's release notes: the `tensorflow` pip package includes"
        " GPU support by default (`tensorflow-cpu` is the small CPU-only one). But 1.15.2 to"
        " 1.15.5 and every 2.0.x went back to a CPU-only `tensorflow` with GPU support in"
        " `tensorflow-gpu` (a build-script change, tensorflow/tensorflow#36347). From 2.1.0 the"
        " merge holds: `tensorflow` includes GPU support, `tensorflow-cpu` is CPU-only (Linux"
        " and Windows x86_64), and `tensorflow-gpu` was an alias up to 2.11. So for 1.15.2-2.0.x"
        " a GPU needs `tensorflow-gpu`; gpuenv plans the right name per release.",
        (
            "https://github.com/tensorflow/tensorflow/releases/tag/v1.15.0",
            "https://github.com/tensorflow/tensorflow/issues/36347",
            "https://github.com/tensorflow/tensorflow/releases/tag/v2.1.0",
        ),
    ),
    Answer(
        "What is cuDNN and do TensorFlow and PyTorch use it?",
        "cuDNN is NVIDIA's library of GPU kernels for deep-learning primitives: convolutions,"
        " pooling, normalisation, activations, RNNs and attention. Both frameworks call it for"
        " those operations on NVIDIA GPUs. PyTorch bundles it: its CUDA wheels require an"
        " nvidia-cudnn wheel on Linux and carry the DLLs on Windows"
        " (`torch.backends.cudnn.version()` shows which). TensorFlow is built against one cuDNN"
        " version per release (its tested build configurations) and loads it at run time: from"
        " the and-cuda extra's nvidia-cudnn wheel, or one you installed. Without it TensorFlow"
        " logs that it cannot load libcudnn, skips the GPU and runs on the CPU; a cuDNN too new"
        " may also lack kernels for older GPUs.",
        (
            "https://docs.nvidia.com/deeplearning/cudnn/latest/",
            "https://pytorch.org/docs/stable/backends.html",
            "https://www.tensorflow.org/install/source#gpu",
        ),
    ),
    Answer(
        "Why do TensorFlow and PyTorch ship CUDA differently?",
        "PyTorch publishes one self-contained build per CUDA version (cu118, cu126, cu128, ...)"
        " on its own index, each pinned to its CUDA runtime and cuDNN: you pick the CUDA version"
        " by picking the wheel (the index URL), and two builds of one release differ only in"
        " CUDA. TensorFlow publishes one build per release, compiled against one CUDA/cuDNN pair"
        " (its tested build configurations table), and loads those libraries from beside it at"
        " run time: the nvidia-* wheels of the and-cuda extra, or libraries you installed. To"
        " change TensorFlow's CUDA you change TensorFlow's version. JAX works like TensorFlow's"
        " extra: jax[cuda12] or jax[cuda13] add a CUDA plugin and nvidia-* wheels.",
        (
            "https://pytorch.org/get-started/locally/",
            "https://www.tensorflow.org/install/source#gpu",
            "https://docs.jax.dev/en/latest/installation.html",
        ),
    ),
    Answer(
        "What does 'no kernel image is available for execution on the device' mean?",
        "The build has no machine code (SASS) for your GPU's compute capability and no PTX the"
        " driver could compile for it. SASS for sm_XY runs on compute capability X.Z with Z ≥ Y"
        " (same major only); PTX runs on equal or newer GPUs after JIT compilation. It happens"
        " with old GPUs on new builds (a GTX 10xx, sm_61, on PyTorch cu128 builds) and with new"
        " GPUs on old builds (an RTX 50, sm_120, on builds before CUDA 12.8). Compare"
        ' `python -c "import torch; print(torch.cuda.get_arch_list(),'
        ' torch.cuda.get_device_capability())"`; the fix is a build that lists your'
        " architecture, which `gpuenv resolve` picks.",
        (
            "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility",
            "https://developer.nvidia.com/cuda-gpus",
        ),
    ),
    Answer(
        "nvidia-smi says 'CUDA Version: 12.x'. Is that CUDA installed?",
        "No: it is the newest CUDA version the installed driver supports, not an installed"
        " toolkit. Builds for that CUDA version and older run on it (CUDA 11 and newer: any"
        " M.x build runs on a driver at least as new as major M's floor, through minor-version"
        " compatibility).",
        ("https://docs.nvidia.com/deploy/cuda-compatibility/",),
    ),
)


def render(answers: tuple[Answer, ...] = FAQ) -> str:
    blocks = []
    for a in answers:
        lines = [f"Q: {a.question}", f"A: {a.answer}"]
        lines += [f"   source: {s}" for s in a.sources]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
