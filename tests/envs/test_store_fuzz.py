"""Property tests: whatever a store entry holds (metadata of any JSON shape, any entry name),
reading the store never raises anything but its own error, and never calls a bad entry good."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuenv.envs.errors import CorruptEnvironment, StoreInputError
from gpuenv.envs.inventory import scan_store
from gpuenv.envs.store import (
    METADATA,
    EnvLocation,
    check_name,
    metadata_problem,
    read_metadata,
    store_root,
)
from storehelpers import fake_env, fake_metadata

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
fields = st.sampled_from(sorted(fake_metadata("x")))
SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return any(_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_non_finite(v) for v in value)
    return False


def _fresh_store() -> None:
    shutil.rmtree(store_root(), ignore_errors=True)


@SETTINGS
@given(data=json_values)
def test_any_json_is_read_or_refused_cleanly(data: Any) -> None:
    _fresh_store()
    version = fake_env("lab", raw=json.dumps(data).encode())
    try:
        read = read_metadata(version)
    except CorruptEnvironment:
        # refused for its shape, or for a number JSON has no word for (the strict reader)
        assert metadata_problem(data) is not None or _non_finite(data)
    else:
        assert isinstance(read, dict) and metadata_problem(read) is None
    scan = scan_store(sizes=False)
    assert len(scan.envs) + len(scan.broken) == 1


@SETTINGS
@given(field=fields, value=json_values)
def test_a_field_of_the_wrong_type_never_passes_as_good(field: str, value: Any) -> None:
    _fresh_store()
    metadata = {**fake_metadata("lab"), field: value}
    fake_env("lab", raw=json.dumps(metadata).encode())
    fake_env("good")
    scan = scan_store(sizes=False)
    assert "good" in [e.name for e in scan.envs]  # the other entry is never hidden
    for env in scan.envs:
        stack = env.metadata.get("stack", {})
        assert isinstance(stack, dict) and all(isinstance(v, str) for v in stack.values())
        assert isinstance(env.metadata.get("plan", {}), dict)


@SETTINGS
@given(name=st.text(max_size=70))
def test_a_name_is_plain_or_refused(name: str) -> None:
    try:
        check_name(name)
    except StoreInputError:
        return
    location = EnvLocation.named(name)
    assert location.link.parent == store_root() and location.link.name == name
    assert "/" not in name and "\\" not in name and "\0" not in name and name not in (".", "..")
    assert name == name.strip() and name[0].isalnum()


def test_metadata_as_a_link_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(fake_metadata("lab")))
    version = fake_env("lab")
    (version / METADATA).unlink()
    (version / METADATA).symlink_to(outside)
    assert EnvLocation.named("lab").current() is None
    scan = scan_store(sizes=False)
    assert [b.name for b in scan.broken] == ["lab"] and not scan.envs
