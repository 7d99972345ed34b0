"""Using an environment without thinking about its layout: the variables a command run inside it
needs, and the line each shell needs to activate it.

venvs carry their own activation scripts (uv writes one per shell). conda prefixes have none, so
for them the shell hook is py-rattler's activation, generated when asked: it runs the packages'
`etc/conda/activate.d` scripts too, and the PATH it bakes in is right because the hook is
evaluated at once (`eval "$(gpuenv activate)"`), never stored.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

from gpuenv.envs.shell_quote import UnquotableError, check_double_quotable, quote
from gpuenv.errors import USAGE_EXIT, GpuenvError
from gpuenv.fs.safe_paths import is_regular_file

_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

SHELLS = ("bash", "zsh", "sh", "fish", "csh", "tcsh", "powershell", "pwsh", "cmd")

# Folders a conda prefix puts on PATH on Windows (the order conda itself uses).
_CONDA_WINDOWS_DIRS = ("", "Library/mingw-w64/bin", "Library/usr/bin", "Library/bin", "Scripts")


class ActivationError(GpuenvError):
    exit_code = USAGE_EXIT


def detect_shell(environ: Mapping[str, str], windows: bool) -> str:
    """The user's shell, from the environment; the platform's default when it cannot be told."""
    if windows:
        # PowerShell sets PSModulePath for its children; cmd.exe does not set it per user.
        return "powershell" if "PSModulePath" in environ and "PROMPT" not in environ else "cmd"
    name = Path(environ.get("SHELL", "")).name
    if name in ("dash", "ash"):
        return "sh"  # POSIX shells without `source`
    return name if name in SHELLS else "bash"


def bin_dirs(env_dir: Path, backend: str, windows: bool) -> list[Path]:
    """Where the environment's programs are, first on PATH first."""
    if not windows:
        return [env_dir / "bin"]
    if backend == "conda":
        return [env_dir / d if d else env_dir for d in _CONDA_WINDOWS_DIRS]
    return [env_dir / "Scripts"]


def command_environment(
    env_dir: Path, backend: str, base: Mapping[str, str], windows: bool
) -> dict[str, str]:
    """`base` as a command run inside the environment sees it: its folders first on PATH, and
    VIRTUAL_ENV or CONDA_PREFIX set; a venv's own PYTHONHOME would break it, so it goes."""
    env = dict(base)
    path_key = next((k for k in env if k.upper() == "PATH"), "PATH")
    front = os.pathsep if not windows else ";"
    dirs = [str(d) for d in bin_dirs(env_dir, backend, windows)]
    env[path_key] = front.join([*dirs, env[path_key]]) if env.get(path_key) else front.join(dirs)
    env.pop("PYTHONHOME", None)
    if backend == "conda":
        env["CONDA_PREFIX"] = str(env_dir)
        env.pop("VIRTUAL_ENV", None)
    else:
        env["VIRTUAL_ENV"] = str(env_dir)
        env.pop("CONDA_PREFIX", None)
    return env


def point_activation_at(env_dir: Path, link: Path) -> int:
    """uv writes a venv's own folder into its activation scripts, but the environment is used
    through its link, and every rebuild makes a new folder: each script names the link instead,
    so a shell activated before a rebuild runs the new version's programs after it (the old
    folder is deleted by a later install). Returns how many scripts were changed.

    uv writes the path inside single quotes, a `'` in it as `'"'"'`: that form is replaced
    first, then the path as it is (activate.bat names it unquoted)."""
    old, new = str(env_dir), str(link)
    forms = list(dict.fromkeys([(_single_quoted(old), _single_quoted(new)), (old, new)]))
    changed = 0
    for folder in ("bin", "Scripts"):
        scripts = env_dir / folder
        if not scripts.is_dir() or scripts.is_symlink():
            continue
        for script in sorted(scripts.glob("activate*")):
            if not is_regular_file(script):
                continue
            text = script.read_text(encoding="utf-8", errors="surrogateescape")
            if old not in text and forms[0][0] not in text:
                continue
            for was, now in forms:
                if script.name == "activate.csh":
                    # csh expands history (`!1`, `!$`) even inside single quotes, and
                    # sourcing the script would fail ("Event not found"): `\!` is a `!`
                    now = now.replace("!", "\\!")
                text = text.replace(was, now)
            script.write_text(text, encoding="utf-8", errors="surrogateescape")
            changed += 1
    return changed


def _single_quoted(path: str) -> str:
    """`path` as uv writes it between single quotes: each `'` closes, is quoted, reopens."""
    return path.replace("'", "'\"'\"'")


def activate_hint(link: Path, backend: str, shell: str, name: Optional[str]) -> str:
    """The one line a person types in `shell` to activate the environment at `link`.

    Every path in it is quoted by `shell`'s own rules, because the line is pasted or `eval`ed:
    a folder named `proj$(touch x)` must stay a folder name. A path no line can carry (a
    newline in it) raises ActivationError.
    """
    _check_shell(shell)
    try:
        if backend == "conda":
            return _conda_hint(link, shell, name)
        windows_layout = (link / "Scripts").is_dir() and not (link / "bin").is_dir()
        scripts = link / ("Scripts" if windows_layout else "bin")
        if shell in ("powershell", "pwsh"):
            return f"& {quote(str(scripts / 'activate.ps1'), shell)}"
        if shell == "cmd":
            return quote(str(scripts / "activate.bat"), shell)
        if shell == "fish":
            return f"source {quote(str(scripts / 'activate.fish'), shell)}"
        if shell in ("csh", "tcsh"):
            return f"source {quote(str(scripts / 'activate.csh'), shell)}"
        if shell == "sh":
            return f". {quote(str(scripts / 'activate'), shell)}"
        return f"source {quote(str(scripts / 'activate'), shell)}"
    except UnquotableError as exc:
        raise ActivationError(f"cannot write an activation line for {shell}: {exc}") from None


def _conda_hint(link: Path, shell: str, name: Optional[str]) -> str:
    # store names are plain words; one that is not (never, today) would still be quoted
    plain = name is not None and _PLAIN_NAME.fullmatch(name)
    named = name if plain else quote(name or "", shell)
    selector = f"-n {named}" if name else f"--prefix {quote(str(link), shell)}"
    if shell in ("powershell", "pwsh"):
        return f"gpuenv activate {selector} --shell powershell | Out-String | Invoke-Expression"
    if shell == "cmd":
        return f"gpuenv run {selector} -- cmd"
    if shell in ("csh", "tcsh"):
        return f"gpuenv run {selector} -- {shell}"  # rattler has no csh activation
    if shell == "fish":
        return f"gpuenv activate {selector} --shell fish | source"
    return f'eval "$(gpuenv activate {selector} --shell {shell})"'


def shell_hook(env_dir: Path, backend: str, shell: str, platform: str) -> str:
    """The script that activates the environment in `shell`, to be evaluated at once."""
    _check_shell(shell)
    if backend != "conda":
        return activate_hint(env_dir, backend, shell, None)
    try:
        from rattler import Subdir
        from rattler.shell import ActivationVariables, Shell, activate
    except ImportError as exc:  # pragma: no cover - py-rattler is a dependency
        raise ActivationError(f"py-rattler is needed to activate conda prefixes: {exc}") from exc
    try:
        # rattler writes the prefix inside "...": refuse what the shell would interpret there
        check_double_quotable(str(env_dir), shell)
    except UnquotableError as exc:
        raise ActivationError(
            f"cannot write a {shell} activation script for this conda prefix: {exc};"
            " use `gpuenv run` instead"
        ) from None
    kinds = {
        "bash": Shell.bash,
        "sh": Shell.bash,  # rattler's bash hook is export lines and `.` of activate.d scripts
        "zsh": Shell.zsh,
        "fish": Shell.fish,
        "powershell": Shell.powershell,
        "pwsh": Shell.powershell,
        "cmd": Shell.cmd_exe,
    }
    if shell not in kinds:
        raise ActivationError(
            f"conda prefixes cannot be activated in {shell}; use `gpuenv run` instead"
        )
    try:
        subdir = Subdir(platform)
    except Exception:  # rattler's ParseSubdirError: metadata gpuenv did not write
        shown = repr(platform) if len(platform) <= 40 else repr(platform[:40]) + "..."
        raise ActivationError(
            f"cannot activate {env_dir}: its platform {shown} is not a conda platform"
        ) from None
    result = activate(Path(env_dir), ActivationVariables(None, None), kinds[shell], subdir)
    return str(result.script)


def _check_shell(shell: str) -> None:
    if shell not in SHELLS:
        raise ActivationError(f"unknown shell {shell!r}: choose one of {', '.join(SHELLS)}")
