"""`recipes check --online`: each build's recorded NVIDIA pins against its wheel's METADATA."""

from __future__ import annotations

import dataclasses
from typing import Optional

from gpuenv.maint.online_pins import pin_findings

WHEEL = "torch-9.0.0-cp312-cp312-manylinux_2_28_x86_64.whl"


def _one_torch(kb, pins: tuple[str, ...]):  # type: ignore[no-untyped-def]
    torch = kb.framework("torch")
    release = next(r for r in torch.releases if any("linux-64" in b.pypi_default for b in r.builds))
    build = next(b for b in release.builds if "linux-64" in b.pypi_default)
    build = dataclasses.replace(build, pip_libs=pins, pip_libs_declared=True)
    release = dataclasses.replace(release, version="9.0.0", builds=(build,))
    return dataclasses.replace(
        kb, frameworks={"torch": dataclasses.replace(torch, releases=(release,))}
    )


def _metadata(*requires: str) -> bytes:
    lines = ["Metadata-Version: 2.1", "Name: torch", "Version: 9.0.0"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return ("\n".join(lines) + "\n\n").encode()


def _index(metadata: Optional[bytes]):  # type: ignore[no-untyped-def]
    def listing(index: str, project: str) -> dict[str, str]:
        return {WHEEL: f"https://idx.test/{WHEEL}"} if project == "torch" else {}

    def getter(url: str) -> Optional[bytes]:
        if metadata is None:
            raise ConnectionError("no route")
        return metadata if url.endswith(".metadata") else None

    return listing, getter


LINUX = "platform_system == 'Linux' and platform_machine == 'x86_64'"


def test_pins_that_match_the_wheel_give_no_finding(kb) -> None:  # type: ignore[no-untyped-def]
    small = _one_torch(kb, ("nvidia-cudnn-cu12==9.5.1.17", "nvidia-nccl-cu12==2.26.2"))
    meta = _metadata(
        f"nvidia-cudnn-cu12==9.5.1.17; {LINUX}", f"nvidia-nccl-cu12==2.26.2; {LINUX}", "numpy"
    )
    assert pin_findings(small, "https://idx.test/", *_index(meta)) == []


def test_a_pin_that_drifted_is_an_error_naming_it(kb) -> None:  # type: ignore[no-untyped-def]
    small = _one_torch(kb, ("nvidia-cudnn-cu12==9.5.1.17", "nvidia-nccl-cu12==2.26.2"))
    meta = _metadata(f"nvidia-cudnn-cu12==9.5.1.17; {LINUX}", f"nvidia-nccl-cu12==2.27.3; {LINUX}")
    (finding,) = pin_findings(small, "https://idx.test/", *_index(meta))
    assert finding.level == "error" and not finding.upstream
    assert "nvidia-nccl-cu12: recorded ==2.26.2, declared ==2.27.3" in finding.message
    assert WHEEL in finding.message


def test_an_unreachable_index_is_a_warning_not_a_crash(kb) -> None:  # type: ignore[no-untyped-def]
    small = _one_torch(kb, ("nvidia-cudnn-cu12==9.5.1.17",))
    (finding,) = pin_findings(small, "https://idx.test/", *_index(None))
    assert finding.level == "warning" and "not compared" in finding.message


def test_an_extras_pins_count_only_with_that_extra(kb) -> None:  # type: ignore[no-untyped-def]
    small = _one_torch(kb, ("nvidia-cudnn-cu12==9.5.1.17",))
    build = small.frameworks["torch"].releases[0].builds[0]
    assert build.extra is None
    meta = _metadata(
        f"nvidia-cudnn-cu12==9.5.1.17; {LINUX}", 'nvidia-nccl-cu12==2.27.3; extra == "nccl"'
    )
    assert pin_findings(small, "https://idx.test/", *_index(meta)) == []
