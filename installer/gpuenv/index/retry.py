"""One retry policy for every HTTP read gpuenv makes (index pages, wheels' byte ranges,
downloads): what is worth another try and how long to wait before it.

Worth another try: a dropped connection, a timeout, a body cut short, a 5xx, a 429 (the server
asks to slow down). Not: a 4xx, or a host name that does not exist (the answer will not change
within seconds, and every lock that probes an index offline would wait out the backoff). A host
that could not be reached in all its tries is not tried again in the same run: a command that
reads many pages of one index (`recipes check --online` reads one per project) would otherwise
wait out the backoff once per page, a minute against an index that is down.
"""

from __future__ import annotations

import time
from typing import Optional
from urllib.parse import urlsplit

ATTEMPTS = 4  # one try and three retries ...
BACKOFF_S = 0.5  # ... 0.5 s, 1 s and 2 s apart


def transient_status(status: int) -> bool:
    """An HTTP status worth asking again for."""
    return status >= 500 or status == 429


def pause(attempt: int) -> None:
    """Wait before the try after `attempt` (1-based)."""
    time.sleep(BACKOFF_S * 2 ** (attempt - 1))


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
