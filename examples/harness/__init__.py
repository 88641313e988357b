"""A reference tool-calling harness, proven against every bundled mockllm scenario.

- `loop`: the correct loop, written once for every API;
- `chat_completions`, `responses`, `anthropic_messages`, `gemini`, `bedrock_converse`: the
  wire of each API;
- `naive`: the classic mistakes, for contrast (do not copy);
- `toolbox`: the fake tools both run.

See README.md here and docs/failure-modes.md for what each scenario proves.
"""
