// The MCP assertions (docs/mcp.md) against a real `mockllm serve` the client starts: a
// harness that runs the scripted MCP tool passes, one that fabricates its result fails.
// MCP is spoken with plain fetch (JSON-RPC over streamable HTTP): the client needs no SDK.
import assert from "node:assert/strict";
import { test } from "node:test";

import { MockllmAssertionError } from "mockllm";
import { useMockllm } from "mockllm/node-test";

const mock = useMockllm();
const SCENARIO = `name: node-orders
mcp_servers:
  orders:
    tools:
      - name: lookup_order
        results: [{when: {order_id: A1}, text: "Order A1: shipped"}]
turns:
  - reply: {tool_calls: [{name: {mcp: orders/lookup_order}, arguments: {order_id: A1}}]}
  - reply: {text: "A1 shipped."}
`;

/** One JSON-RPC message; the answer is JSON or an SSE stream of them. */
async function rpc(url, message, sessionId) {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  if (sessionId) headers["mcp-session-id"] = sessionId;
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(message) });
  const text = await response.text();
  const data = text.split("\n").filter((l) => l.startsWith("data:")).map((l) => JSON.parse(l.slice(5)));
  return { sessionId: response.headers.get("mcp-session-id"), body: data.at(-1) ?? (text ? JSON.parse(text) : null) };
}

async function loop({ runTool }) {
  await mock.session.addScenario(SCENARIO);
  const mcp = mock.session.mcpUrl("node-orders", "orders");
  const init = await rpc(mcp, {
    jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "node", version: "0" } },
  });
  await rpc(mcp, { jsonrpc: "2.0", method: "notifications/initialized" }, init.sessionId);
  const tools = [{ type: "function", function: { name: "lookup_order", parameters: { type: "object", properties: { order_id: { type: "string" } } } } }];
  const chat = async (messages) => {
    const response = await fetch(`${mock.session.url("node-orders")}/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o", messages, tools }),
    });
    const body = await response.json();
    assert.equal(response.status, 200, JSON.stringify(body));
    return body.choices[0].message;
  };
  const messages = [{ role: "user", content: "Where is A1?" }];
  const first = await chat(messages);
  const call = first.tool_calls[0];
  let content = "Order A1: shipped";
  if (runTool) {
    const ran = await rpc(mcp, {
      jsonrpc: "2.0", id: 2, method: "tools/call",
      params: { name: call.function.name, arguments: JSON.parse(call.function.arguments) },
    }, init.sessionId);
    content = ran.body.result.content[0].text;
  }
  messages.push(first, { role: "tool", tool_call_id: call.id, content });
  return (await chat(messages)).content;
}

test("a harness that runs the MCP tool closes the loop", async () => {
  assert.equal(await loop({ runTool: true }), "A1 shipped.");
  await mock.session.assertToolExecuted("lookup_order", { server: "orders", arguments: { order_id: "A1" }, times: 1 });
  await mock.session.assertMcpLoopClosed();
  await mock.session.assertModelCalls({ exactly: 2 });
});

test("a harness that fabricates the result fails both assertions", async () => {
  assert.equal(await loop({ runTool: false }), "A1 shipped.");
  await assert.rejects(mock.session.assertToolExecuted("lookup_order"), (e) =>
    e instanceof MockllmAssertionError && e.message.startsWith("mockllm: MCP tool lookup_order was not executed"));
  await assert.rejects(mock.session.assertMcpLoopClosed(), (e) =>
    e instanceof MockllmAssertionError && /mcp_calls_executed: .*the tool never ran before that/.test(e.message));
});
