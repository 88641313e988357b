"""Scenario files in: YAML (or a mapping) to schema-checked `Scenario`s, errors located
to file:line:column, and the JSON Schema that editors use."""
