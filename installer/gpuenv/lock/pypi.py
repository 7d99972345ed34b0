"""The PyPI part of a lock: uv resolves the plan's pip requirements for the target.

Each framework build is routed to the index that publishes it (`[tool.uv.sources]` with an
explicit index), everything else comes from the user's configured index. uv writes PEP 751
(`pylock.toml`), which names the one file per package for the target and its sha256.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional
from urllib.parse import unquote, urlsplit

from gpuenv.lock import early_interpreter, uv_picks, uv_start
from gpuenv.lock.errors import LockError, SourceUnreachableError, UnsatisfiableError

if TYPE_CHECKING:  # light to import: `gpuenv lock` starts a PipCompile first (last_request)
    from gpuenv.index.config import IndexConfig
    from gpuenv.index.wheel_records import RecordReader, RecordSource
    from gpuenv.resolve.plan import Plan
    from gpuenv.uv.spawn import Process

UV_TIMEOUT = 900.0
_NETWORK_HINTS = re.compile(
    r"(failed to fetch|error sending request|dns error|connection refused|timed out|"
    r"could not connect|network is unreachable|tcp connect error|failed to download)",
    re.I,
)
_URL = re.compile(r"(?:https?|file)://[^\s`'\")]+")


@dataclass(frozen=True)
class PipArtifact:
    name: str  # canonical project name
    version: str
    url: str
    sha256: str
    index: Optional[str]  # the plan's framework index it came from; None: the user's indexes

    @property
    def filename(self) -> str:
        return unquote(urlsplit(self.url).path.rsplit("/", 1)[-1])


@dataclass(frozen=True)
class PipLock:
    artifacts: list[PipArtifact]
    notes: tuple[str, ...] = ()
    cutoff_applied: bool = True
    uv_pylock: Optional[dict[str, Any]] = None  # uv's own PEP 751 output, parsed


# uv's words when the cut-off is what made the resolution fail
_CUTOFF_FAILED = ("filtered by `exclude-newer`", "has no publish time", "missing an upload date")


@dataclass(frozen=True)
class PipRequest:
    """Everything uv is given for one pip lock. Two equal requests get the same answer, which
    is what lets a lock reuse a uv run started before the index probe confirmed the plan."""

    uv: str
    project: str  # the pyproject.toml uv resolves
    constraints: str  # constraints.txt
    options: tuple[str, ...]  # target, format and safety options
    index_args: tuple[str, ...]  # the user's indexes
    cutoff: tuple[str, ...]  # --exclude-newer and its exceptions, dropped on a retry
    exclude_newer: Optional[str]
    requirements: tuple[str, ...]
    routed: tuple[tuple[str, str], ...]  # project -> the explicit index it comes from
    sources: str  # the indexes, for people

    @property
    def empty(self) -> bool:
        return not self.requirements


def pip_request(
    plan: Plan, indexes: IndexConfig, exclude_newer: Optional[str], uv: Optional[str] = None
) -> PipRequest:
    from gpuenv.lock.targets import uv_python_platform
    from gpuenv.uv.binary import find_uv

    requirements = [p.requirement for p in plan.pip] + list(plan.companions)
    routed: dict[str, str] = {}  # project -> explicit index
    for req in plan.pip:
        if req.index:
            from packaging.requirements import Requirement  # only routed requirements need it
            from packaging.utils import canonicalize_name

            routed[canonicalize_name(Requirement(req.requirement).name)] = req.index
    options = (
        "--format",
        "pylock.toml",
        "--python-version",
        plan.python,
        "--python-platform",
        uv_python_platform(plan.platform, plan.glibc),
        # uv looks for an interpreter of that version otherwise; any will do for a lock
        "--python",
        sys.executable,
        "--no-header",
        "--quiet",
        # never build an sdist to read its metadata: a build runs the package's code
        "--no-build",
    )
    return PipRequest(
        uv=(uv or find_uv()) if requirements else "",
        project=_project(requirements, routed),
        constraints="".join(c + "\n" for c in plan.constraints),
        options=options,
        index_args=tuple(indexes.uv_args()),
        cutoff=tuple(_cutoff_args(exclude_newer, routed, plan.exclude_newer_exempt)),
        exclude_newer=exclude_newer,
        requirements=tuple(requirements),
        routed=tuple(routed.items()),
        sources=", ".join(indexes.all_indexes() + tuple(routed.values())) or "the default index",
    )


class PipCompile:
    """One `uv pip compile`, started at once in its own folder; `result()` waits for it,
    `cancel()` (or leaving the `with` block without a result) stops it and removes its files.
    """

    def __init__(
        self,
        request: PipRequest,
        plan: Optional[Plan],
        started: Optional[tuple[Process, str]] = None,
    ) -> None:
        """`started`: uv already running on `request` in its work folder (uv_start.start; the
        `gpuenv` program's early run, lock.last_request), instead of starting it here."""
        self.request = request
        # for messages: its platform and Python are in the request. None: started on the
        # request of an earlier run (lock.last_request) until a plan that makes it adopts it
        self._plan = plan
        self._work: Optional[Path] = None
        self._cleanup = contextlib.ExitStack()
        self._process: Optional[Process] = None
        self._picks: Optional[uv_picks.Picks] = None
        self._watched: Optional[uv_picks.Watched] = None
        if request.empty:
            return
        fresh = started is None
        if started is None:
            r = request
            early_interpreter.settle(r.uv)  # the program's look at the interpreter, if any
            started = uv_start.start(
                r.uv, r.project, r.constraints, r.options, r.index_args, r.cutoff, picks=True
            )
            from gpuenv.index.remote_wheel import read_record

            self._picks = uv_picks.Picks(read_record)
            self._watched = uv_picks.Watched(started[0], self._picks, UV_TIMEOUT)
        self._took(*started)
        if fresh:  # the early run's command is shown when a lock adopts it
            from gpuenv.output import log_command

            log_command(self._command(with_cutoff=True))

    def _took(self, process: Process, work: str) -> None:
        from gpuenv.fs.workdir import remove_workdir

        self._cleanup.callback(remove_workdir, work)
        self._work, self._process = Path(work), process

    def _command(self, with_cutoff: bool) -> list[str]:
        assert self._work is not None
        r = self.request
        cutoff = r.cutoff if with_cutoff else ()
        return uv_start.compile_command(r.uv, str(self._work), r.options, r.index_args, cutoff)

    def _start(self, with_cutoff: bool) -> Process:
        from gpuenv.output import log_command

        assert self._work is not None
        cmd = self._command(with_cutoff)
        log_command(cmd)
        return uv_start.run(cmd, str(self._work))

    def _wait(self) -> tuple[int, str]:
        import subprocess  # its TimeoutExpired; not at the top, as uv starts without it (uv.spawn)

        assert self._process is not None
        watched = self._watched
        try:
            if watched is not None and watched.process is self._process:  # not a retry's
                return watched.result()
            _, stderr = self._process.communicate(timeout=UV_TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            self.cancel()
            raise SourceUnreachableError(
                f"uv did not finish resolving within {UV_TIMEOUT:.0f}s; an index may be"
                f" unreachable ({_redacted(self.request.sources)})"
            ) from exc
        returncode = self._process.returncode
        assert returncode is not None  # communicate waited for it
        return returncode, stderr

    def result(self) -> PipLock:
        if self._process is None or self._work is None:
            if self.request.empty:
                return PipLock([])
            raise LockError("this uv run was cancelled")
        try:
            r = self.request
            notes: tuple[str, ...] = ()
            cutoff = bool(r.exclude_newer)
            toml = _tomllib()  # imported while uv works, not after
            from gpuenv.lock.last_request import freeze_what_lasts

            freeze_what_lasts()
            returncode, stderr = self._wait()
            if returncode != 0 and r.exclude_newer and any(h in stderr for h in _CUTOFF_FAILED):
                notes = (
                    f"the dependencies could not be locked as of {r.exclude_newer} (the index"
                    " publishes no upload times, or a pinned package is newer); locked without"
                    " that cut-off, with the knowledge base's companion pins",
                )
                cutoff = False
                self._process = self._start(with_cutoff=False)
                returncode, stderr = self._wait()
            if returncode != 0:
                raise _uv_error(stderr, list(r.requirements), self._plan)
            text = (self._work / uv_start.OUTPUT).read_text(encoding="utf-8")
            data = toml.loads(text)
            return PipLock(_artifacts(data, dict(r.routed)), notes, cutoff, data)
        finally:
            self.cancel()

    def cancel(self) -> None:
        """Stop uv if it still runs and remove its folder; safe to call again."""
        process, self._process = self._process, None
        watched, self._watched = self._watched, None
        if watched is not None:
            watched.stop()  # its thread reads and reaps it
        if process is not None and (watched is None or watched.process is not process):
            if process.poll() is None:
                process.kill()
            process.communicate()  # reap it and close its pipes
        self._work = None
        self._cleanup.close()

    def record_reader(self, fallback: RecordReader) -> RecordSource:
        """wheel_records' reader for uv's answer: the RECORDs read while uv ran (uv_picks),
        `fallback` for the others."""
        return self._picks.reader(fallback) if self._picks is not None else fallback

    def adopt(self, plan: Plan) -> PipCompile:
        """This run, for `plan`, whose request it is (-v shows its command now: it started
        before the command line was read)."""
        from gpuenv.output import log_command

        self._plan = plan
        if self._work is not None:
            log_command(self._command(with_cutoff=True), "running (started first, as last time)")
        return self

    def __enter__(self) -> PipCompile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()


def _cutoff_args(
    exclude_newer: Optional[str], routed: dict[str, str], exempt: tuple[str, ...] = ()
) -> list[str]:
    if not exclude_newer:
        return []
    args = ["--exclude-newer", exclude_newer]
    # framework indexes publish no upload times, and the plan's exempt companions had no wheel
    # in the stack's era: the cut-off cannot apply to them
    for project in sorted(set(routed) | set(exempt)):
        args += ["--exclude-newer-package", f"{project}=false"]
    return args


def _project(requirements: list[str], routed: dict[str, str]) -> str:
    lines = [
        "[project]",
        'name = "gpuenv-lock-input"',
        'version = "0"',
        f"dependencies = {json.dumps(requirements)}",
        "",
        # Its own workspace root, and (a [tool.uv] table) the project configuration uv finds
        # first from its working folder, this one: uv looks upwards for both, so a planted
        # parent pyproject.toml (`members = ["*"]`, with its own sources and indexes) or
        # uv.toml would otherwise steer the lock.
        "[tool.uv.workspace]",
        "members = []",
    ]
    names = {url: f"gpuenv-{i}" for i, url in enumerate(sorted(set(routed.values())))}
    for url, name in names.items():
        lines += [
            "",
            "[[tool.uv.index]]",
            f'name = "{name}"',
            f"url = {json.dumps(url)}",
            "explicit = true",
        ]
        if url.endswith(".html"):
            # a find-links page (the JAX CUDA wheels), not a PEP 503 index: uv reads it as flat
            lines.append('format = "flat"')
    if routed:
        lines += ["", "[tool.uv.sources]"]
        lines += [
            f'{project} = {{ index = "{names[url]}" }}' for project, url in sorted(routed.items())
        ]
    return "\n".join(lines) + "\n"


def _tomllib() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib


def _artifacts(data: dict[str, Any], routed: dict[str, str]) -> list[PipArtifact]:
    """uv's pylock.toml (parsed): one wheel per package, for the target."""
    from packaging.utils import canonicalize_name

    out: list[PipArtifact] = []
    for package in data.get("packages", []):
        name = canonicalize_name(package["name"])
        wheels = package.get("wheels") or []
        if not wheels:
            raise LockError(
                f"{name} {package.get('version')} has no wheel for this platform (only a source"
                " distribution); gpuenv locks wheels only, so that installs need no compiler"
            )
        if len(wheels) > 1:  # uv lists only the target's wheel; take the first if not
            wheels = sorted(wheels, key=lambda w: w["url"])
        wheel = wheels[0]
        sha = (wheel.get("hashes") or {}).get("sha256")
        if not sha:
            raise LockError(f"{name}: the index gave no sha256 for {wheel['url']}")
        out.append(PipArtifact(name, str(package["version"]), wheel["url"], sha, routed.get(name)))
    return sorted(out, key=lambda a: a.name)


# uv's words for "this package has only source distributions (for this target)"
_NO_WHEEL = (
    re.compile(r"Wheels are required for `([^`]+)`"),
    re.compile(r"Because (?:only )?([A-Za-z0-9][A-Za-z0-9._-]*)\S* has no (?:usable )?wheels"),
    re.compile(r"\b([A-Za-z0-9][A-Za-z0-9._-]*)==\S+ has no (?:usable )?wheels"),
)


def no_wheel_packages(stderr: str) -> list[str]:
    """The packages uv could not use because they publish no wheel for the target."""
    from packaging.utils import canonicalize_name

    names: list[str] = []
    for pattern in _NO_WHEEL:
        for match in pattern.finditer(stderr):
            name = str(canonicalize_name(match.group(1)))
            if name not in names:
                names.append(name)
    return names


def _redacted(sources: object) -> str:
    from gpuenv.output.redact import redact_text

    return redact_text(str(sources))


def _uv_error(stderr: str, requirements: list[str], plan: Optional[Plan] = None) -> LockError:
    from gpuenv.output.redact import redact_text

    text = redact_text(stderr.strip())  # uv's words, without an index URL's password
    lines = [line for line in text.splitlines() if line.strip()]
    summary = "\n".join(lines[-12:])
    sdist_only = no_wheel_packages(text)
    if sdist_only:
        target = f" for {plan.platform}, Python {plan.python}" if plan else ""
        return LockError(
            f"no wheel of {', '.join(sdist_only)}{target}: gpuenv locks wheels only and never"
            " builds a source distribution (building runs the package's own code). Pin a version"
            " that publishes a wheel for this target, or drop the package:\n" + summary
        )
    if _NETWORK_HINTS.search(text):
        urls = sorted(set(_URL.findall(text)))
        where = ", ".join(urls[:3]) or "the package index"
        return SourceUnreachableError(f"could not reach {where}:\n{summary}")
    if "unsatisfiable" in text or "No solution found" in text:
        return UnsatisfiableError(
            "the pip requirements conflict (" + ", ".join(requirements) + "):\n" + summary
        )
    return LockError(f"uv failed:\n{summary}")
