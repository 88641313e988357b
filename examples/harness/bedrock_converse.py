"""The reference harness on Amazon Bedrock's ConverseStream (boto3 `bedrock-runtime`).

What differs from the other wires: the stream is AWS's binary event stream, which botocore
parses (CRC-checked) into events; a toolUse's input arrives as string fragments that the
loop joins and parses itself; a stream cut cleanly simply ends — without `messageStop` —
so the loop checks for it; botocore's retries ignore retry-after(-ms) (a random backoff),
so they are off and `ask` retries a 429 or 5xx as the other SDKs do; an in-stream exception
is an `EventStreamError` while iterating.
"""

from __future__ import annotations

import json
import time
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError, EventStreamError
from urllib3.exceptions import HTTPError

from . import loop
from .toolbox import OFFERED, Toolbox

TOOL_CONFIG = {
    "tools": [
        {
            "toolSpec": {
                "name": t.name,
                "description": t.description,
                "inputSchema": {"json": t.parameters},
            }
        }
        for t in OFFERED
    ]
}
SDK_ATTEMPTS = 3  # as the OpenAI and Anthropic SDKs' default: the first and two retries
FINISH = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls"}
FINISH |= {"max_tokens": "length", "content_filtered": "content_filter"}


class Converse:
    # An HTTP error (4xx ones are raised again by loop.retry_delay), an exception frame
    # mid-stream (EventStreamError is a ClientError), a broken connection (botocore's own
    # errors, or urllib3's raised mid-iteration).
    transient: tuple[type[Exception], ...] = (ClientError, BotoCoreError, HTTPError)

    def __init__(self, client: Any, model: str) -> None:
        self.client, self.model = client, model

    def ask(self, history: list[Any]) -> loop.Reply:
        """One reply; an HTTP 429 or 5xx is asked again up to twice, after the delay the
        answer asks for, as the other SDKs do: botocore's own retries ignore
        retry-after(-ms), so the client is made with them off (README.md here)."""
        for attempt in range(1, SDK_ATTEMPTS + 1):
            try:
                return self._ask(history)
            except EventStreamError:  # after the 200: the loop's own retry decides
                raise
            except ClientError as error:
                delay = loop.retry_delay(error, attempt)
                if delay is None or attempt == SDK_ATTEMPTS:
                    raise
                time.sleep(delay)
        raise AssertionError("unreachable")

    def _ask(self, history: list[Any]) -> loop.Reply:
        answer = self.client.converse_stream(
            modelId=self.model, messages=history, toolConfig=TOOL_CONFIG
        )
        blocks: dict[int, dict[str, Any]] = {}
        stop = None
        for event in answer["stream"]:
            if "contentBlockStart" in event:
                start = event["contentBlockStart"]
                use = start["start"]["toolUse"]
                blocks[start["contentBlockIndex"]] = {"toolUse": {**use, "input": ""}}
            elif "contentBlockDelta" in event:
                delta = event["contentBlockDelta"]
                add(blocks.setdefault(delta["contentBlockIndex"], {}), delta["delta"])
            elif "messageStop" in event:
                stop = event["messageStop"]["stopReason"]
        if stop is None:  # botocore ends a cut stream quietly: no messageStop, no error
            raise loop.BrokenReply("the stream ended before messageStop")
        if stop == "malformed_tool_use":  # nothing to answer: ask again
            raise loop.BrokenReply("the model could not form its tool use")
        content = [blocks[i] for i in sorted(blocks)]
        calls = []
        for block in content:
            if "toolUse" in block:
                use = block["toolUse"]
                text = use["input"] or "{}"
                try:
                    use["input"] = json.loads(text)
                except ValueError:  # run nothing: loop.execute answers it with an error
                    use["input"] = {}  # a toolUse must carry a JSON document back
                    calls.append(loop.Call(use["toolUseId"], use["name"], text))
                    continue
                calls.append(loop.Call(use["toolUseId"], use["name"], use["input"]))
        text = "".join(block.get("text", "") for block in content)
        return loop.Reply(text, calls, FINISH.get(stop, stop), raw=content)

    def user(self, text: str) -> list[Any]:
        return [{"role": "user", "content": [{"text": text}]}]

    def assistant(self, reply: loop.Reply) -> list[Any]:
        # Every block back as it came (a reasoning block keeps its signature); an empty
        # reply is not sent back (Bedrock refuses a message with no content).
        return [{"role": "assistant", "content": reply.raw}] if reply.raw else []

    def results(self, answered: list[tuple[loop.Call, loop.Result]]) -> list[Any]:
        # All results in one user message, nothing else in it.
        blocks = [
            {
                "toolResult": {
                    "toolUseId": call.id,
                    "content": [{"text": result.content}],
                    "status": "error" if result.is_error else "success",
                }
            }
            for call, result in answered
        ]
        return [{"role": "user", "content": blocks}]


def add(block: dict[str, Any], delta: dict[str, Any]) -> None:
    """One contentBlockDelta into its block: text, toolUse input, or reasoning."""
    if "text" in delta:
        block["text"] = block.get("text", "") + delta["text"]
    elif "toolUse" in delta:
        block["toolUse"]["input"] += delta["toolUse"]["input"]
    elif "reasoningContent" in delta:
        reasoning = block.setdefault("reasoningContent", {"reasoningText": {"text": ""}})
        inner, piece = reasoning["reasoningText"], delta["reasoningContent"]
        inner["text"] += piece.get("text", "")
        if "signature" in piece:
            inner["signature"] = piece["signature"]


def run(
    client: Any,
    question: str,
    toolbox: Toolbox,
    *,
    model: str = "us.anthropic.claude-sonnet-4-6",
    need_tool: bool = False,
) -> str:
    return loop.run(Converse(client, model), question, toolbox, need_tool=need_tool)
