"""One retry policy for every HTTP read gpuenv makes (index pages, wheels' byte ranges,
downloads): what is worth another try and how long to wait before it.

Worth another try: a dropped connection, a timeout, a body cut short, a 5xx, a 429 (the server
asks to slow down). Not: a 4xx, or a host name that does not exist (the answer will not change
within seconds, and every lock that probes an index offline would wait out the backoff). A host
that could not be reached in all its tries is not tried again in the same run: a command that
reads many pages of one index (`recipes check --online` reads one per project) would otherwise
wait out the backoff once per page, a minute against an index that is down.

How many retries: uv's own setting, UV_HTTP_RETRIES (3 when unset, as uv's default), so one
number governs every retry of a lock or an install, gpuenv's reads and uv's alike.
"""

from __future__ import annotations

import os
import time
from typing import Optional
from urllib.parse import urlsplit

from gpuenv.errors import USAGE_EXIT, GpuenvError

ATTEMPTS = 4  # one try and three retries (UV_HTTP_RETRIES unset) ...
BACKOFF_S = 0.5  # ... 0.5 s, 1 s and 2 s apart
MAX_PAUSE_S = 8.0  # the growing pause stops growing here: many retries wait minutes, not days
RETRIES_ENV = "UV_HTTP_RETRIES"


class RetrySettingError(GpuenvError):
    """UV_HTTP_RETRIES is not a count of retries: exit 2."""

    exit_code = USAGE_EXIT


def attempts() -> int:
    """Tries per read: one, and the retries UV_HTTP_RETRIES asks for (3 when unset or empty)."""
    raw = os.environ.get(RETRIES_ENV, "").strip()
    if not raw:
        return ATTEMPTS
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 6:
        raise RetrySettingError(
            f"{RETRIES_ENV}={raw[:40]!r} is not a number of retries: set it to a whole number"
            " (0 for none; uv reads it too) or unset it for the default, 3"
        )
    return int(raw) + 1


def transient_status(status: int) -> bool:
    """An HTTP status worth asking again for."""
    return status >= 500 or status == 429


def pause(attempt: int) -> None:
    """Wait before the try after `attempt` (1-based)."""
    time.sleep(min(MAX_PAUSE_S, BACKOFF_S * 2 ** min(attempt - 1, 30)))


# scheme://host:port -> why the last read gave up on it, for this run
_given_up: dict[str, str] = {}


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}:{parts.port}"


def give_up_on(url: str, why: str) -> None:
    """No read of this run tries the URL's host again (it failed every try just now)."""
    _given_up[_origin(url)] = why


def given_up(url: str) -> Optional[str]:
    """Why this run gave up on the URL's host, or None."""
    return _given_up.get(_origin(url))
