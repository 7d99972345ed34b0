"""The carried wheelhouse: pure wheels only, unpacked without pip, never outside its folder."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from gpuenv.gpucheck import wheelhouse
from gpuenv.gpucheck.wheelhouse import WheelhouseError


def make_wheel(folder: Path, name: str, members: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    with zipfile.ZipFile(path, "w") as zf:
        for member, text in members.items():
            zf.writestr(member, text)
    return path


def test_needed_distributions_follow_the_python_version() -> None:
    assert wheelhouse.wanted("3.12") == ("click", "packaging", "platformdirs", "nvidia-ml-py")
    assert wheelhouse.wanted("3.10")[-1] == "tomli"


def test_pins_are_the_versions_installed_here() -> None:
    from importlib import metadata

    assert f"click=={metadata.version('click')}" in wheelhouse.pinned(("click",))
    assert wheelhouse.pinned(("no-such-dist-here",)) == ["no-such-dist-here"]


def test_unpack_makes_modules_importable_and_is_done_once(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "demo_mod-1.0-py3-none-any.whl", {"demo_mod.py": "X = 1\n"})
    site = tmp_path / "site"
    assert wheelhouse.unpack(wheels, site) is True
    assert (site / "demo_mod.py").read_text() == "X = 1\n"
    stamp = json.loads((site / wheelhouse.STAMP).read_text())
    assert stamp["wheels"] == ["demo_mod-1.0-py3-none-any.whl"]
    (site / "demo_mod.py").write_text("edited")
    assert wheelhouse.unpack(wheels, site) is True  # same wheel set: not unpacked again
    assert (site / "demo_mod.py").read_text() == "edited"


def test_no_wheels_is_false(tmp_path: Path) -> None:
    assert wheelhouse.unpack(tmp_path / "absent", tmp_path / "site") is False


@pytest.mark.parametrize(
    "name",
    [
        "numpy-2.0-cp312-cp312-manylinux_2_17_x86_64.whl",
        "old-1.0-py2-none-any.whl",
        "notawheel.zip.whl",
    ],
)
def test_only_pure_python_wheels(tmp_path: Path, name: str) -> None:
    make_wheel(tmp_path / "w", name, {"x.py": ""})
    with pytest.raises(WheelhouseError):
        wheelhouse.unpack(tmp_path / "w", tmp_path / "site")
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize("member", ["../escape.py", "/abs/escape.py", "a/../../escape.py"])
def test_a_member_that_leaves_the_folder_is_refused(tmp_path: Path, member: str) -> None:
    make_wheel(tmp_path / "w", "evil-1.0-py3-none-any.whl", {member: "boom"})
    with pytest.raises(WheelhouseError, match="leaves the folder"):
        wheelhouse.unpack(tmp_path / "w", tmp_path / "site")
    assert not (tmp_path / "escape.py").exists()


def test_a_linked_wheel_is_refused(tmp_path: Path) -> None:
    real = make_wheel(tmp_path / "elsewhere", "demo-1.0-py3-none-any.whl", {"demo.py": ""})
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / real.name).symlink_to(real)
    with pytest.raises(WheelhouseError, match="not a plain wheel"):
        wheelhouse.unpack(tmp_path / "w", tmp_path / "site")


def test_a_corrupt_wheel_is_refused(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "demo-1.0-py3-none-any.whl").write_bytes(b"not a zip")
    with pytest.raises(WheelhouseError, match="not a zip"):
        wheelhouse.unpack(tmp_path / "w", tmp_path / "site")


def test_cli_reports_bad_input_with_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_wheel(tmp_path / "w", "evil-1.0-py3-none-any.whl", {"../x.py": ""})
    code = wheelhouse.main(
        ["unpack", "--wheels", str(tmp_path / "w"), "--site", str(tmp_path / "s")]
    )
    assert code == 2 and "leaves the folder" in capsys.readouterr().err


def test_this_python_has_what_the_check_needs() -> None:
    assert wheelhouse.missing_modules() == []
