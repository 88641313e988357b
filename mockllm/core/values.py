"""`@value`: a frozen dataclass to the type checker, a plain slotted one at run time.

A frozen dataclass sets each field in `__init__` through `object.__setattr__`, about three
times the cost of a plain `__init__`, and a request builds one of these objects per message
of its history, per tool, per stage. mypy still refuses an assignment to a field (the
decorator declares `frozen_default`), so immutability is checked where it is written;
`unsafe_hash` keeps instances hashable by value, as frozen ones are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:  # run time needs nothing of it: the decorator only informs the type checker

    def dataclass_transform(**_: object) -> object:
        return lambda decorator: decorator


T = TypeVar("T")


@dataclass_transform(frozen_default=True)
def value(cls: type[T]) -> type[T]:
    return dataclass(slots=True, unsafe_hash=True)(cls)
