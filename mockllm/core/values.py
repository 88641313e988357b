"""Cheap immutable values for the hot path: `@value` and `once`.

`@value`: a frozen dataclass to the type checker, a plain slotted one at run time.

A frozen dataclass sets each field in `__init__` through `object.__setattr__`, about three
times the cost of a plain `__init__`, and a request builds one of these objects per message
of its history, per tool, per stage. mypy still refuses an assignment to a field (the
decorator declares `frozen_default`), so immutability is checked where it is written;
`unsafe_hash` keeps instances hashable by value, as frozen ones are.

`assert_never`: typing's (3.11), for the `match` over a union that must stay exhaustive:
mypy refuses the call while some member is unmatched.

`once`: a property computed on its first read and kept in the instance's `__dict__`, as
`functools.cached_property` does, without the lock that one takes on every first read
before Python 3.12 (about twice the cost, and a request reads several).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, NoReturn, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import assert_never as assert_never
    from typing_extensions import dataclass_transform
else:  # run time needs nothing of it: the decorator only informs the type checker

    def dataclass_transform(**_: object) -> object:
        return lambda decorator: decorator

    def assert_never(arg: object) -> NoReturn:  # typing.assert_never is 3.11's
        raise AssertionError(f"unhandled: {arg!r}")


T = TypeVar("T")


@dataclass_transform(frozen_default=True)
def value(cls: type[T]) -> type[T]:
    return dataclass(slots=True, unsafe_hash=True)(cls)


@dataclass_transform(frozen_default=True)
def record(cls: type[T]) -> type[T]:
    """`value` without slots: for a class whose instance keeps `once` views in its
    `__dict__` (the request's `Conversation`), built once per request."""
    return dataclass(unsafe_hash=True)(cls)


class once(Generic[T]):
    def __init__(self, compute: Callable[[Any], T]) -> None:
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type[Any] | None = None) -> once[T]: ...

    @overload
    def __get__(self, instance: object, owner: type[Any] | None = None) -> T: ...

    def __get__(self, instance: object, owner: type[Any] | None = None) -> T | once[T]:
        if instance is None:
            return self
        found = instance.__dict__[self.name] = self.compute(instance)
        return found
