"""The types of the HTTP endpoint: WSGI's callables and one reply."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]
Reply = tuple[int, str, bytes]  # status, content type, body
