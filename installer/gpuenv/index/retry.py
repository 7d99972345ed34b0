"""One retry policy for every HTTP read gpuenv makes (index pages, wheels' byte ranges,
downloads): what is worth another try and how long to wait before it.

Worth another try: a dropped connection, a timeout, a body cut short, a 5xx, a 429 (the server
asks to slow down). Not: a 4xx, or a host name that does not exist (the answer will not change
within seconds, and every lock that probes an index offline would wait out the backoff).
"""

from __future__ import annotations

import time

ATTEMPTS = 4  # one try and three retries ...
BACKOFF_S = 0.5  # ... 0.5 s, 1 s and 2 s apart


def transient_status(status: int) -> bool:
    """An HTTP status worth asking again for."""
    return status >= 500 or status == 429


def pause(attempt: int) -> None:
    """Wait before the try after `attempt` (1-based)."""
    time.sleep(BACKOFF_S * 2 ** (attempt - 1))
