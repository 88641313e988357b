"""Bedrock Converse history rules (docs/validation.md, Bedrock), with the API's own texts."""

from __future__ import annotations

from mockllm.core.validation import RuleSet

RULES = RuleSet()
