"""Read back what a viewer page embeds."""

from __future__ import annotations

import json
import re
from typing import Any


def embedded(page: str) -> dict[str, Any]:
    found = re.search(
        r'<script type="application/json" id="mockllm-data">(.*?)</script>', page, re.S
    )
    assert found, "the page embeds its data"
    data: dict[str, Any] = json.loads(found[1])
    return data
