"""The hint printed when the index is newer than the knowledge base names what really updates
gpuenv: the checkout it was installed from, never a package name on the index."""

from __future__ import annotations

from pathlib import Path

from gpuenv.recipes.fresh import newer_releases, update_hint


def _checkout(root: Path) -> Path:
    (root / "recipes").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'gpuenv'\n")
    package = root / "installer" / "gpuenv"
    package.mkdir(parents=True)
    return package / "__init__.py"


def test_an_editable_install_is_told_to_pull_its_checkout(tmp_path: Path) -> None:
    hint = update_hint(str(_checkout(tmp_path / "my lab" / "gpuenv")), "/venv/bin/python")
    where = str(tmp_path / "my lab" / "gpuenv")
    assert f"git -C '{where}' pull" in hint
    assert f"/venv/bin/python -m pip install -e '{where}'" in hint


def test_a_wheel_install_is_told_to_reinstall_from_a_checkout(tmp_path: Path) -> None:
    site = tmp_path / "site-packages" / "gpuenv"
    site.mkdir(parents=True)
    hint = update_hint(str(site / "__init__.py"), "/venv/bin/python")
    assert "checkout" in hint and "pip install -U" not in hint and "pip install gpuenv" not in hint


def test_the_newer_release_line_carries_the_hint(kb) -> None:  # type: ignore[no-untyped-def]
    (line,) = newer_releases(kb, ["jax"], {"jax": ["99.0.0", "100.0.0rc1"]})
    assert (
        "jax 99.0.0" in line and "pip install gpuenv" not in line and "pip install -U" not in line
    )
    assert "checkout" in line
