"""One word of a command line, quoted for the shell that will read it.

Activation lines are pasted or `eval`ed, so a folder named `proj$(touch x)`, `a;b` or `it's`
must reach the shell as that one word and nothing else. Each shell has its own rules, and a
path with a control character (a newline ends a command in all of them) is refused outright:
no quoting survives being copied from a terminal.
"""

from __future__ import annotations

import re
import unicodedata

# Words made only of these need no quotes in any shell here (what shlex.quote leaves bare).
_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
# cmd.exe splits words at `,`, `;` and `=` as well as at spaces and tabs (outside double quotes),
# reads a leading `@` as "do not echo" and a leading `:` as a label: its bare words are fewer.
_CMD_PLAIN = re.compile(r"[A-Za-z0-9_+./-]+")
# PowerShell treats the typographic single quotes as quotes too, so they are doubled as well.
_PS_SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"
# cmd.exe expands %VAR% (and !VAR! under delayed expansion) even inside double quotes, and a
# double quote cannot be escaped inside them: such a path cannot be written for cmd at all.
_CMD_UNQUOTABLE = '%!"'


class UnquotableError(ValueError):
    """The word cannot be written safely for this shell."""


def check_printable(text: str) -> None:
    """Refuse control characters (newline, escape, ...) and line or paragraph separators."""
    for char in text:
        if unicodedata.category(char) in ("Cc", "Zl", "Zp"):
            raise UnquotableError(
                f"{text!r} holds the control character {char!r}, which no shell line can carry"
            )


def quote(text: str, shell: str) -> str:
    """`text` as one word for `shell` (bash, zsh, sh, fish, csh, tcsh, powershell, pwsh, cmd)."""
    check_printable(text)
    if shell in ("powershell", "pwsh"):
        return "'" + "".join(c * 2 if c in _PS_SINGLE_QUOTES else c for c in text) + "'"
    if shell == "cmd":
        bad = sorted({c for c in text if c in _CMD_UNQUOTABLE})
        if bad:
            raise UnquotableError(f"{text!r} holds {' '.join(bad)}, which cmd.exe cannot quote")
        return text if _CMD_PLAIN.fullmatch(text) else f'"{text}"'
    if _PLAIN.fullmatch(text):
        return text
    if shell == "fish":
        # inside fish's single quotes only \\ and \' are escapes
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if shell in ("csh", "tcsh"):
        # csh expands history (!) even inside single quotes
        return "'" + text.replace("'", "'\\''").replace("!", "'\\!'") + "'"
    if shell in ("bash", "zsh", "sh"):
        return "'" + text.replace("'", "'\\''") + "'"
    raise UnquotableError(f"no quoting rules for shell {shell!r}")


# What each shell still interprets inside double quotes: rattler writes conda hooks with the
# prefix inside "...", so a prefix holding one of these cannot be activated by its hook.
DOUBLE_QUOTE_SPECIAL = {
    "bash": '$`"\\!',
    "zsh": '$`"\\!',
    "sh": '$`"\\',
    "fish": '$"\\',
    "powershell": '$`"\u201c\u201d\u201e',
    "pwsh": '$`"\u201c\u201d\u201e',
    "cmd": '%!"^',
}


def check_double_quotable(text: str, shell: str) -> None:
    """Refuse `text` where a "..." string for `shell` would interpret part of it."""
    check_printable(text)
    bad = sorted({c for c in text if c in DOUBLE_QUOTE_SPECIAL.get(shell, "")})
    if bad:
        raise UnquotableError(
            f"{text!r} holds {' '.join(bad)}, which {shell} would interpret in the activation script"
        )
