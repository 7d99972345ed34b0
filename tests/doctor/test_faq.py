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
