"""`gpuenv recipes check --online`: the knowledge base against what the default index publishes."""

from __future__ import annotations

import pytest

from gpuenv.recipes.online import compare, wheel_pythons


def test_python_lists_come_from_wheel_tags() -> None:
    found = wheel_pythons(
        [
            "torch-2.7.1-cp311-cp311-manylinux_2_28_x86_64.whl",
            "torch-2.7.1-cp313-cp313t-manylinux_2_28_x86_64.whl",  # free-threaded: left out
            "torch-2.7.1-cp311-none-macosx_11_0_arm64.whl",
            "torch-2.7.1-cp311-cp311-win_amd64.whl",
            "torch-2.7.1.tar.gz",
        ]
    )
    (version,) = found
    assert found[version] == {"linux-64": {"3.11"}, "osx-arm64": {"3.11"}, "win-64": {"3.11"}}


def test_a_wrong_python_list_is_an_error(kb) -> None:
    release = kb.framework("torch").releases[-1]  # 1.13.0
    wheels = [f"torch-{release.version}-cp37-cp37m-manylinux1_x86_64.whl"]

    def fetch(index: str, project: str) -> list[str]:
        return wheels if project == "torch" else []

    findings = [
        f
        for f in compare(kb, "file:///unused/", fetch)
        if "torch" in f.where or "pytorch" in f.where
    ]
    assert any(
        f.level == "error" and "python.linux-64" in f.where and release.version in f.where
        for f in findings
    )


@pytest.mark.network
def test_the_knowledge_base_agrees_with_the_index(gpuenv_cli) -> None:
    result = gpuenv_cli(
        "recipes", "check", "--online", env={"PIP_CONFIG_FILE": "/dev/null", "PIP_FIND_LINKS": ""}
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 errors" in result.stdout
