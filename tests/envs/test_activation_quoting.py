"""Activation lines are pasted or `eval`ed: a path in them must reach the shell as one word.

Hostile round three found `source <path>/bin/activate` printed bare, so a `--prefix` folder named
`proj$(touch x)` ran `touch x` under `eval "$(gpuenv activate ...)"`. Each case here is read
by the real shell where one is installed (bash and sh here; the others are skipped when absent),
with a canary file that must never appear.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gpuenv.envs.activation import ActivationError, activate_hint, shell_hook
from gpuenv.envs.shell_quote import UnquotableError, check_double_quotable, quote
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock

HOSTILE_WORDS = (
    "proj$(touch canary)",
    "proj`touch canary`",
    "a;touch canary",
    "a&&touch canary",
    "it's",
    "it's; touch canary; '",
    "with space",
    "a!b",
    "back\\slash",
    'dq"$(touch canary)"',
    "star*?[x]",
    "~tilde",
    "a|b>c<d",
    "$HOME",
    "{a,b}",
)
POSIX_SHELLS = ("bash", "sh", "zsh")


def _shell_argv(shell: str, script: str) -> list[str]:
    found = shutil.which(shell)
    if found is None:
        pytest.skip(f"{shell} is not installed")
    if shell == "fish":
        return [found, "--no-config", "-c", script]
    if shell in ("csh", "tcsh"):
        return [found, "-f", "-c", script]
    if shell == "pwsh":
        return [found, "-NoProfile", "-NonInteractive", "-Command", script]
    return [found, "-c", script]


@pytest.mark.parametrize("shell", (*POSIX_SHELLS, "fish", "csh", "tcsh", "pwsh"))
@pytest.mark.parametrize("word", HOSTILE_WORDS)
def test_a_quoted_word_reaches_the_shell_as_itself(shell: str, word: str, tmp_path: Path) -> None:
    printer = "Write-Output" if shell == "pwsh" else "printf '%s\\n'"
    argv = _shell_argv(shell, f"{printer} {quote(word, shell)}")
    out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert not (tmp_path / "canary").exists()
    assert out.returncode == 0, out.stderr
    assert out.stdout.rstrip("\r\n") == word


@pytest.mark.parametrize("shell", ("bash", "zsh", "sh", "fish", "csh", "tcsh", "pwsh", "cmd"))
@pytest.mark.parametrize("char", ("\n", "\r", "\x1b", "\x00", "\x7f", "\u2028", "\u0085"))
def test_control_characters_are_refused_for_every_shell(shell: str, char: str) -> None:
    with pytest.raises(UnquotableError, match="control character"):
        quote(f"/srv/a{char}touch canary", shell)
    with pytest.raises(ActivationError):
        activate_hint(Path(f"/srv/a{char}b"), "venv", shell, None)


def test_powershell_doubles_every_kind_of_single_quote() -> None:
    # PowerShell ends a '...' string at a typographic quote as well as at '
    assert quote("it's", "pwsh") == "'it''s'"
    assert quote("it\u2019s", "powershell") == "'it\u2019\u2019s'"
    assert activate_hint(Path("/e/it's"), "venv", "pwsh", None) == "& '/e/it''s/bin/activate.ps1'"


@pytest.mark.parametrize("path", ("C:\\a&b", "C:\\a|b", "C:\\a^b", "C:\\a<b>", "C:\\with space"))
def test_cmd_lines_put_its_operators_inside_double_quotes(path: str) -> None:
    assert quote(path, "cmd") == f'"{path}"'


@pytest.mark.parametrize("path", ("C:\\100%", "C:\\%PATH%", "C:\\a!b", 'C:\\a"&calc'))
def test_cmd_refuses_what_it_expands_inside_quotes(path: str) -> None:
    with pytest.raises(UnquotableError, match=r"cmd\.exe"):
        quote(path, "cmd")


def test_conda_hint_quotes_the_prefix() -> None:
    hint = activate_hint(Path("/e/proj$(touch x)"), "conda", "bash", None)
    assert hint == "eval \"$(gpuenv activate --prefix '/e/proj$(touch x)' --shell bash)\""


@pytest.mark.parametrize("shell", ("bash", "fish", "powershell", "cmd"))
def test_conda_hook_refuses_a_prefix_its_double_quotes_would_interpret(
    shell: str, tmp_path: Path
) -> None:
    # rattler writes `export CONDA_PREFIX="<prefix>"`: `$(...)` in the prefix would run there
    special = "%x%" if shell == "cmd" else "$(touch canary)"
    with pytest.raises(ActivationError, match="gpuenv run"):
        shell_hook(tmp_path / f"c{special}", "conda", shell, "linux-64")
    check_double_quotable(str(tmp_path / "plain with space"), shell)


@pytest.fixture
def hostile_prefix_env(install_repos: InstallRepos, tmp_path: Path) -> Path:
    lockfile = make_lock(install_repos, tmp_path / "jax.lock.yml", jax_plan())
    work = tmp_path / "work"
    work.mkdir()
    prefix = work / "proj$(touch canary); touch canary2 it's"
    done = gpuenv("install", str(lockfile), "--prefix", str(prefix), "--no-smoke-test")
    assert done.returncode == 0, done.stderr
    return prefix


@pytest.mark.parametrize("shell", ("bash", "sh"))
def test_eval_of_activate_works_for_a_hostile_prefix(hostile_prefix_env: Path, shell: str) -> None:
    work = hostile_prefix_env.parent
    for hint in (False, True):
        args = ["activate", "--prefix", str(hostile_prefix_env), "--shell", shell]
        line = gpuenv(*args, *(["--hint"] if hint else []))
        assert line.returncode == 0, line.stderr
        # what `eval "$(gpuenv activate ...)"` does with the printed text
        script = 'eval "$LINE" && printf "%s" "$VIRTUAL_ENV"'
        out = subprocess.run(
            _shell_argv(shell, script),
            cwd=work,
            env={**os.environ, "LINE": line.stdout},
            capture_output=True,
            text=True,
            check=False,
        )
        assert not (work / "canary").exists() and not (work / "canary2").exists()
        assert out.returncode == 0, out.stderr
        assert Path(out.stdout).resolve() == hostile_prefix_env.resolve()


def test_activate_refuses_a_prefix_with_a_newline(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "jax.lock.yml", jax_plan())
    prefix = tmp_path / "a\ntouch canary"
    done = gpuenv("install", str(lockfile), "--prefix", str(prefix), "--no-smoke-test")
    assert done.returncode == 0, done.stderr
    shown = gpuenv("activate", "--prefix", str(prefix), "--shell", "bash")
    assert shown.returncode == 2 and "control character" in shown.stderr
    assert shown.stdout == ""


# cmd.exe splits a command line into words at spaces, tabs, commas, semicolons and equals signs
# outside double quotes, and acts on & | < > ( ) ^ there; %VAR% (and !VAR!) expand everywhere.
# cmd.exe is not available here: this is its tokenizer, as far as a quoted word is concerned.
_CMD_DELIMITERS = " \t,;="
_CMD_OPERATORS = "&|<>()^"


def _cmd_words(line: str) -> list[str]:
    words, word, quoted, started = [], "", False, False
    for char in line:
        assert char not in "%!", f"cmd.exe would expand {char!r} in {line!r}"
        if char == '"':
            quoted, started = not quoted, True
        elif not quoted and char in _CMD_DELIMITERS:
            if started:
                words.append(word)
            word, started = "", False
        else:
            assert quoted or char not in _CMD_OPERATORS, f"cmd.exe acts on {char!r} in {line!r}"
            word, started = word + char, True
    assert not quoted, f"unbalanced quotes in {line!r}"
    return [*words, word] if started else words


CMD_WORDS = (
    "C:/a,b",
    "C:/a=b",
    "C:/a;b",
    "a,b",
    "x=1",
    "C:\\with space\\a,b=c;d",
    "C:\\a&b",
    "C:\\a^b",
    "C:\\(x86)",
    "plain",
)


@pytest.mark.parametrize("word", CMD_WORDS)
def test_cmd_gets_each_delimiter_inside_double_quotes(word: str) -> None:
    # hostile round four: `,` and `=` were left bare, and cmd.exe splits a word there
    assert _cmd_words(quote(word, "cmd")) == [word]


@pytest.mark.parametrize("folder", ("/e/a,b", "/e/a=b", "/e/x;y", "/e/a b,c=d"))
def test_cmd_activation_line_for_a_prefix_with_delimiters(folder: str) -> None:
    line = activate_hint(Path(folder), "venv", "cmd", None)
    assert _cmd_words(line) == [f"{folder}/bin/activate.bat"]
    conda = activate_hint(Path(folder), "conda", "cmd", None)
    assert _cmd_words(conda) == ["gpuenv", "run", "--prefix", folder, "--", "cmd"]


@pytest.mark.parametrize("platform", ["bogus", "", "linux-64\x00", "zz-99"])
def test_conda_hook_refuses_a_platform_rattler_cannot_read(platform: str, tmp_path: Path) -> None:
    # hostile round four: rattler's ParseSubdirError was a traceback
    with pytest.raises(ActivationError, match="not a conda platform") as caught:
        shell_hook(tmp_path, "conda", "bash", platform)
    assert "\x00" not in str(caught.value)


def test_a_long_bad_platform_is_shown_cut_at_40_characters(tmp_path: Path) -> None:
    platform = "x" * 39 + "yz" + "w" * 60
    with pytest.raises(ActivationError) as caught:
        shell_hook(tmp_path, "conda", "bash", platform)
    assert f"its platform {platform[:40]!r}... is not a conda platform" in str(caught.value)


@pytest.mark.parametrize("backend", ["uv", "venv", ""])
def test_on_windows_only_a_conda_prefix_has_condas_folders(backend: str) -> None:
    from gpuenv.envs.activation import bin_dirs

    env = Path("/e")
    assert bin_dirs(env, backend, windows=True) == [env / "Scripts"]
    conda = bin_dirs(env, "conda", windows=True)
    assert env in conda and env / "Scripts" in conda and len(conda) > 1
    assert bin_dirs(env, "conda", windows=False) == [env / "bin"]
