"""What verifying an installed environment means: its interpreter, and the plan it was locked
from as the expectations. Shared by `gpuenv verify` and the API."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gpuenv.envs.errors import CorruptEnvironment
from gpuenv.verify.expectations import Expectations

if TYPE_CHECKING:
    from gpuenv.envs.store import EnvLocation


class UnreadablePlan(CorruptEnvironment):
    """An environment whose metadata reads, but holds no plan gpuenv can read (exit 2)."""


def installed_environment(where: EnvLocation) -> Path:
    """The environment's live version folder; none there is EnvironmentNotFound (exit 2)."""
    from gpuenv.envs.errors import EnvironmentNotFound

    env_dir = where.current()
    if env_dir is None:
        raise EnvironmentNotFound(
            f"no gpuenv environment at {where.link}: install one (`gpuenv install LOCKFILE`)"
            " or pass --python PATH"
        )
    return env_dir


def stored_expectations(env_dir: Path) -> Expectations:
    """The plan an environment was installed from; its metadata is untrusted, so a corrupt one
    is a clear error (CorruptEnvironment, exit 2), not a traceback."""
    from gpuenv.envs.store import read_metadata
    from gpuenv.resolve.plan import Plan

    metadata = read_metadata(env_dir)  # CorruptEnvironment says what is wrong
    try:
        return Expectations.from_plan(Plan.from_json(dict(metadata["plan"])))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UnreadablePlan(
            f"{env_dir}: its metadata has no readable plan ({type(exc).__name__}: {exc});"
            " reinstall it, or pass --expect-json FILE"
        ) from exc
