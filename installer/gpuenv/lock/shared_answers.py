"""uv's answers shared by the locks of one run: a lab's classes whose pip part is the same
request (an RTX 3090 and an RTX 4090 class of one driver usually plan the same builds) are
locked by one uv run. Two equal requests get the same answer (PipRequest); only within one
command's run, since an index changes between runs."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from gpuenv.lock.pypi import PipLock, PipRequest

_shared: Optional[dict[PipRequest, PipLock]] = None


@contextlib.contextmanager
def shared_answers() -> Iterator[None]:
    """Within this block, a request uv answered once is answered from that answer."""
    global _shared
    outer, _shared = _shared, {} if _shared is None else _shared
    try:
        yield
    finally:
        _shared = outer


def shared_answer(request: PipRequest) -> Optional[PipLock]:
    return _shared.get(request) if _shared is not None else None


def keep_answer(request: PipRequest, answer: PipLock) -> None:
    if _shared is not None:
        _shared[request] = answer
