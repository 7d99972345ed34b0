"""The newcomer answers: short, sourced, consistent with the knowledge base."""

from __future__ import annotations

from gpuenv.doctor.environment import last_windows_gpu_tensorflow
from gpuenv.doctor.faq import FAQ, render
from gpuenv.recipes import KnowledgeBase


def test_every_answer_cites_a_primary_source() -> None:
    assert len(FAQ) >= 5
    for answer in FAQ:
        assert answer.question.endswith("?")
        assert answer.sources and all(s.startswith("https://") for s in answer.sources)
        assert len(answer.answer) < 1200


def test_sources_are_the_projects_own_pages() -> None:
    allowed = (
        "pytorch.org",
        "www.tensorflow.org",
        "github.com",
        "docs.nvidia.com",
        "developer.nvidia.com",
        "docs.jax.dev",
    )
    for answer in FAQ:
        for source in answer.sources:
            assert source.split("/")[2] in allowed, source


def test_answers_agree_with_the_knowledge_base(kb: KnowledgeBase) -> None:
    text = render()
    last, _ = last_windows_gpu_tensorflow(kb)
    assert last.startswith("2.10") and "TensorFlow 2.10" in text
    tf = kb.framework("tensorflow")
    first_and_cuda = min(
        (r for r in tf.releases if any(b.extra == "and-cuda" for b in r.builds)),
        key=lambda r: r.parsed_version,
    )
    assert first_and_cuda.version.startswith("2.14") and "2.14" in text
    assert "tensorflow[and-cuda]" in text
    for needle in ("tensorflow-gpu", "2.11.0", "2.12.0", "no kernel image", "nvidia-*"):
        assert needle in text


def _answer(question: str) -> str:
    return next(a.answer for a in FAQ if a.question == question)


def test_the_merge_after_1_15_is_told_as_it_happened(kb: KnowledgeBase) -> None:
    # TensorFlow 1.15.0 release notes: "tensorflow pip package will by default include GPU
    # support"; tensorflow/tensorflow#36347: 1.15.2 "no longer has GPU support" (a build-script
    # change: tensorflow_gpu for GPU, tensorflow for CPU); 2.1.0 release notes: tensorflow
    # includes GPU support again, for good.
    text = _answer("Did TensorFlow merge CPU and GPU after 1.15?")
    for needed in ("1.15.0", "1.15.2", "2.0.x", "2.1.0", "#36347", "tensorflow-gpu"):
        assert needed in text, needed
    assert "Up to TensorFlow 1.15 and 2.0" not in render()  # the old, wrong summary
    tf = {r.version: r for r in kb.framework("tensorflow").releases}

    def gpu_package(version: str) -> set[str]:
        r = tf[version]
        return {b.package or r.package or "tensorflow" for b in r.builds if b.is_gpu}

    assert gpu_package("1.15.0") == {"tensorflow"}
    assert gpu_package("1.15.2") == gpu_package("2.0.4") == {"tensorflow-gpu"}
    assert gpu_package("2.1.0") == {"tensorflow"}


def test_cudnn_is_explained() -> None:
    text = _answer("What is cuDNN and do TensorFlow and PyTorch use it?")
    for needed in ("convolution", "PyTorch", "TensorFlow", "CPU"):
        assert needed in text, needed
