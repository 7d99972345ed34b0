"""Parts of the pickled knowledge base that are unpickled when first read, not when loaded.

The knowledge base is cached as one pickle, but most commands read a small part of it: `resolve
torch` reads torch's releases and the CUDA tables, not TensorFlow's or JAX's releases, nor the
~2,000 GPU records and their name tables (needed only to name a GPU). Unpickling all of it was
a third of `gpuenv resolve`'s own time. These parts are pickled on their own, inside the
knowledge base's pickle, and unpickled on first use.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar

from gpuenv.cache import loads_pickle

V = TypeVar("V")


class Pickled:
    """One value, pickled: unpickled by `load`."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    @classmethod
    def of(cls, value: object) -> Pickled:
        import pickle  # only where the knowledge base is parsed

        return cls(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))

    def load(self) -> Any:
        return loads_pickle(self.data)

    def __reduce__(self) -> tuple[type[Pickled], tuple[bytes]]:
        return (Pickled, (self.data,))


class DeferredMapping(Mapping[str, V], Generic[V]):
    """A mapping whose values are unpickled one by one, when first looked up; its keys (and
    their order) are known without unpickling any value."""

    def __init__(self, pickled: dict[str, Pickled]) -> None:
        self._pickled = dict(pickled)
        self._loaded: dict[str, V] = {}

    @classmethod
    def of(cls, values: Mapping[str, V]) -> DeferredMapping[V]:
        return cls({key: Pickled.of(value) for key, value in values.items()})

    def __getitem__(self, key: str) -> V:
        try:
            return self._loaded[key]
        except KeyError:
            value: V = self._pickled[key].load()  # KeyError here: not a key at all
            self._loaded[key] = value
            return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._pickled)

    def __len__(self) -> int:
        return len(self._pickled)

    def __contains__(self, key: object) -> bool:
        return key in self._pickled

    def __repr__(self) -> str:
        return f"DeferredMapping({list(self._pickled)!r})"

    def __reduce__(self) -> tuple[type[DeferredMapping[V]], tuple[dict[str, Pickled]]]:
        return (DeferredMapping, (self._pickled,))  # the records are immutable: still these
