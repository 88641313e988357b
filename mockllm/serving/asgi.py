"""The ASGI vocabulary of the serving path, typed with starlette's own types."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.types import Message, Receive, Scope, Send
else:  # starlette is imported on the first admin request, not at start-up
    Scope = Message = dict[str, Any]
    Receive = Send = Any

__all__ = ["Message", "Receive", "Scope", "Send"]
