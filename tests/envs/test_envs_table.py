"""`gpuenv envs` is a table with a header that fits 80 columns: name, stack, accelerator,
Python, size, and when setup last verified that very build."""

from __future__ import annotations

from gpuenv.setup.record import SetupRecord, write_record
from installrepos import gpuenv
from storehelpers import fake_env, fake_metadata

LONG_STACK = {
    "torch": "2.7.1 [cu126]",
    "tensorflow": "2.20.0 [cuda]",
    "jax": "0.6.2 [cuda12]",
}


def _envs() -> list[str]:
    done = gpuenv("envs", env={"GPUENV_COLUMNS": "80"})  # as a terminal of 80 columns, or a pipe
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_table_with_a_header_that_fits_eighty_columns() -> None:
    fake_env("cpu-box")
    fake_env("lab", metadata={**fake_metadata("lab"), "stack": LONG_STACK, "accelerator": "cuda"})
    lines = _envs()
    assert lines[0].split() == ["NAME", "STACK", "ACCEL", "PYTHON", "SIZE", "VERIFIED"]
    assert all(len(line) <= 80 for line in lines), lines
    stack, accel = lines[0].index("STACK"), lines[0].index("ACCEL")
    (lab,) = [i for i, line in enumerate(lines) if line.startswith("lab ")]
    assert lines[lab][accel:].split()[:2] == ["cuda", "3.11"]
    # the stack goes on under its own column: every framework is listed, nothing is cut
    after = [line for line in lines[lab + 1 :] if not line[:stack].strip()]
    assert after
    listed = " ".join([lines[lab][stack:accel], *(a[stack:] for a in after)])
    assert " ".join(listed.split()) == ", ".join(f"{k} {v}" for k, v in sorted(LONG_STACK.items()))


def test_verified_says_when_setup_last_verified_this_build() -> None:
    fake_env("a")
    fake_env("b")
    fake_env("c")
    sha = {n: fake_metadata(n)["lockfile_sha256"] for n in "abc"}
    write_record(
        "a",
        SetupRecord(
            lockfile_sha256=sha["a"], verified=True, verified_at="2026-12-01T10:00:00+00:00"
        ),
    )
    write_record(
        "b",
        SetupRecord(
            lockfile_sha256=sha["b"], verified=False, verified_at="2026-12-01T10:00:00+00:00"
        ),
    )
    write_record(
        "c",
        SetupRecord(
            lockfile_sha256="0" * 64, verified=True, verified_at="2026-12-01T10:00:00+00:00"
        ),
    )
    rows = {line.split()[0]: line.split()[-1] for line in _envs()[1:]}
    assert rows == {"a": "2026-12-01", "b": "FAILED", "c": "-"}  # c: another build was verified
