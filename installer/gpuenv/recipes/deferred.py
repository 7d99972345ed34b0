"""Parts of the pickled knowledge base that are unpickled when first read, not when loaded.

The knowledge base is cached as one pickle, but most commands read a small part of it: `resolve
torch` reads torch's releases and the CUDA tables, not TensorFlow's or JAX's releases, nor the
~2,000 GPU records and their name tables (needed only to name a GPU). Unpickling all of it was
a third of `gpuenv resolve`'s own time. These parts are pickled on their own, inside the
knowledge base's pickle, and unpickled on first use. So is each release of a framework: a
search that stops at the newest few releases (gpuenv.resolve.ranked) reads only those.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar, Union, overload

from gpuenv.cache import loads_pickle

V = TypeVar("V")
_UNREAD = object()  # an item of a DeferredTuple not unpickled yet


class Pickled:
    """One value, pickled: unpickled by `load`."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    @classmethod
    def of(cls, value: object, shared: Sequence[object] = ()) -> Pickled:
        """`value` pickled; the objects of `shared` it holds are pickled as their places there
        (load must be given the same objects)."""
        import io
        import pickle  # only where the knowledge base is parsed

        out = io.BytesIO()
        pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
        if shared:
            places = {id(obj): place for place, obj in enumerate(shared)}
            pickler.persistent_id = lambda obj: places.get(id(obj))  # type: ignore[method-assign]
        pickler.dump(value)
        return cls(out.getvalue())

    def load(self, shared: Sequence[object] = ()) -> Any:
        return loads_pickle(self.data, shared)

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


class DeferredTuple(Sequence[V], Generic[V]):
    """A tuple whose items are unpickled one by one, when first read; its length is known
    without unpickling any. Equal to the tuple of its items (a knowledge base parsed afresh
    equals the same one unpickled). `shared`: objects
    that several items hold (a framework's architecture sets), pickled once, beside the items,
    and the very same objects in every item once unpickled."""

    def __init__(self, pickled: Iterable[Pickled], shared: Iterable[object] = ()) -> None:
        self._pickled = tuple(pickled)
        self._shared = tuple(shared)
        self._loaded: list[Any] = [_UNREAD] * len(self._pickled)

    @classmethod
    def of(cls, values: Iterable[V], shared: Iterable[object] = ()) -> DeferredTuple[V]:
        shared = tuple(shared)
        return cls((Pickled.of(value, shared) for value in values), shared)

    @overload
    def __getitem__(self, index: int) -> V: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[V, ...]: ...

    def __getitem__(self, index: Union[int, slice]) -> Union[V, tuple[V, ...]]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        value = self._loaded[index]  # IndexError here: as a tuple's
        if value is _UNREAD:
            value = self._loaded[index] = self._pickled[index].load(self._shared)
        return value  # type: ignore[no-any-return]

    def __len__(self) -> int:
        return len(self._pickled)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (tuple, DeferredTuple)):
            return NotImplemented  # as a tuple: never equal to a list or a string
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # as a list's: the records hold dicts

    def __repr__(self) -> str:
        return f"DeferredTuple(<{len(self)} items>)"

    def __reduce__(
        self,
    ) -> tuple[type[DeferredTuple[V]], tuple[tuple[Pickled, ...], tuple[object, ...]]]:
        return (DeferredTuple, (self._pickled, self._shared))
