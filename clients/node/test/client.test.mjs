// The Node client against a real `mockllm serve` it starts: URLs, the log, scenarios,
// resets, the verdict, and each assertion failing on a harness that gets it wrong and
// passing on one that gets it right. Run by `make test` (tests/node/test_node_client.py).
import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { createServer } from "node:net";
import { join } from "node:path";
import { test } from "node:test";

import { Client, MockllmAssertionError, MockllmError, startServer } from "mockllm";
import { useMockllm } from "mockllm/node-test";

const mock = useMockllm();
const tool = (name) => ({ type: "function", function: { name, parameters: { type: "object", properties: {} } } });
const TOOLS = [tool("get_weather")];

/** One Chat Completions request with plain fetch: the client must not depend on an SDK. */
async function chat(scenario, messages, session = mock.session, tools = TOOLS) {
  const response = await fetch(`${session.url(scenario)}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", messages, tools }),
  });
  return { status: response.status, body: await response.json() };
}

/** weather-single's loop; `answer: false` is the harness that forgets to send the result. */
async function weatherLoop({ answer = true, result = "18 °C" } = {}) {
  const messages = [{ role: "user", content: "What's the weather in Paris?" }];
  const first = await chat("weather-single", messages);
  const message = first.body.choices[0].message;
  if (!answer) return message;
  messages.push(message, { role: "tool", tool_call_id: message.tool_calls[0].id, content: result });
  await chat("weather-single", messages);
  return message;
}

test("urls carry scenario, session and api", () => {
  const client = new Client("http://127.0.0.1:9/");
  assert.equal(client.url("hello"), "http://127.0.0.1:9/s/hello/v1");
  assert.equal(client.url("hello", { session: "t 1" }), "http://127.0.0.1:9/s/hello/t%201/v1");
  assert.equal(client.url("hello", { session: "t1", api: "anthropic" }), "http://127.0.0.1:9/s/hello/t1");
  assert.equal(client.url("hello", { session: "t1", api: "gemini" }), "http://127.0.0.1:9/s/hello/t1");
  // AzureOpenAI's azure_endpoint: it appends /openai/deployments/{deployment}/...
  assert.equal(client.url("hello", { session: "t1", api: "azure" }), "http://127.0.0.1:9/s/hello/t1");
  // Vertex AI: @google/genai adds v1beta1/projects/... itself; AnthropicVertex's base URL ends in /v1.
  assert.equal(client.url("hello", { session: "t1", api: "vertex-gemini" }), "http://127.0.0.1:9/s/hello/t1");
  assert.equal(client.url("hello", { session: "t1", api: "vertex-anthropic" }), "http://127.0.0.1:9/s/hello/t1/v1");
  assert.throws(
    () => client.url("hello", { api: "google" }),
    /one of "openai", "anthropic", "gemini", "vertex-gemini", "vertex-anthropic", "azure", not "google"/,
  );
});

test("a flavoured url answers as that provider", async () => {
  const client = new Client("http://127.0.0.1:9/");
  assert.equal(client.url("hello", { flavor: "qwen" }), "http://127.0.0.1:9/f/qwen/s/hello/v1");
  // the mistralai SDK appends /v1/chat/completions itself
  assert.equal(client.url("hello", { flavor: "mistral" }), "http://127.0.0.1:9/f/mistral/s/hello");
  assert.throws(() => client.url("hello", { flavor: "qwne" }), /no flavour "qwne"/);
  assert.throws(() => client.url("hello", { api: "anthropic", flavor: "kimi" }), /api: "openai"/);
  const url = mock.session.url("weather-single", { flavor: "kimi" });
  assert.equal(url, `${mock.session.client.baseUrl}/f/kimi/s/weather-single/${encodeURIComponent(mock.session.name)}/v1`);
  const response = await fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "kimi-k2.6", messages: [{ role: "user", content: "Paris?" }], tools: TOOLS }),
  });
  const body = await response.json();
  assert.equal(body.choices[0].message.tool_calls[0].id, "functions.get_weather:0");
});

test("requests are the session's log, oldest first", async () => {
  const call = (await weatherLoop()).tool_calls[0];
  const [first, second] = await mock.session.requests();
  assert.equal(first.session, mock.session.name);
  assert.deepEqual([first.turn, second.turn, first.api, first.scenario], [0, 1, "openai-chat", "weather-single"]);
  assert.deepEqual(first.response.tool_calls, [{ id: call.id, name: "get_weather", arguments: '{"city":"Paris"}' }]);
  assert.deepEqual(second.tool_results, [{ call_id: call.id, content: "18 °C", is_error: null }]);
  assert.ok(second.seq > first.seq);
  assert.equal((await mock.client.requests({ session: mock.session.name, since: first.seq })).length, 1);
});

test("verdict, clear and reset touch only the session", async () => {
  await weatherLoop();
  const other = mock.client.session(`${mock.session.name}-other`);
  await chat("hello", [{ role: "user", content: "Hi" }], other);
  const verdict = await mock.session.verdict();
  assert.equal(verdict.ok, true);
  assert.equal(verdict.requests, 2);
  assert.ok(verdict.checks.some((c) => c.name === "calls_answered" && c.ok));
  assert.equal(await mock.session.clear(), 2);
  assert.equal((await other.requests()).length, 1);
  assert.equal(await other.reset(), 1);
});

test("addScenario takes YAML text, an object, or a file named by its stem", async () => {
  const reply = (text) => ({ turns: [{ reply: { text } }] });
  assert.equal(await mock.session.addScenario("name: node-text\nturns:\n  - reply: {text: from text}\n"), "node-text");
  assert.equal(await mock.session.addScenario({ name: "node-object", ...reply("from an object") }), "node-object");
  const dir = await mkdtemp(join(tmpdir(), "mockllm-node-"));
  await writeFile(join(dir, "node-file.yaml"), "turns:\n  - reply: {text: from a file}\n");
  assert.equal(await mock.session.addScenario(join(dir, "node-file.yaml")), "node-file");
  for (const [name, text] of [["node-text", "from text"], ["node-object", "from an object"], ["node-file", "from a file"]]) {
    assert.equal((await chat(name, [{ role: "user", content: "Hi" }])).body.choices[0].message.content, text);
  }
});

test("a bad scenario is refused with the server's list of problems", async () => {
  await assert.rejects(mock.session.addScenario({ name: "node-bad", turns: [{ reply: { txet: "typo" } }] }), (e) => {
    assert.ok(e instanceof MockllmError);
    assert.equal(e.status, 400);
    assert.match(e.message, /POST http:\/\/127\.0\.0\.1:\d+\/_mockllm\/scenarios: 400 .*txet/s);
    return true;
  });
});

test("an unreachable server is named in the error", async () => {
  const closed = createServer();
  await new Promise((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const { port } = closed.address();
  await new Promise((resolve) => closed.close(resolve));
  const url = `http://127.0.0.1:${port}`;
  await assert.rejects(new Client(url).requests(), new RegExp(`GET ${url}/_mockllm/requests: cannot reach mockllm: ECONNREFUSED`));
});

test("assertAllToolCallsAnswered: fails on the forgetful harness, with the conversation", async () => {
  const call = (await weatherLoop({ answer: false })).tool_calls[0];
  await assert.rejects(mock.session.assertAllToolCallsAnswered(), (e) => {
    assert.ok(e instanceof MockllmAssertionError);
    const lines = e.message.split("\n");
    assert.equal(lines[0], "mockllm: 1 tool call never got a result");
    assert.match(e.message, /user: What's the weather in Paris\?/);
    assert.match(e.message, new RegExp(`calls get_weather\\(\\{"city":"Paris"\\}\\) id=${call.id}`));
    assert.match(e.message, /happened:\n {2}- get_weather\(\{"city":"Paris"\}\) id=call_\w+, sent in reply to request 1 \(turn 0\), was never answered$/);
    return true;
  });
});

test("assertAllToolCallsAnswered: passes on the careful harness", async () => {
  await weatherLoop();
  await mock.session.assertAllToolCallsAnswered();
  await mock.session.assertCleanVerdict();
});

test("assertModelCalls: bounds, and a message that says which", async () => {
  await weatherLoop();
  await mock.session.assertModelCalls({ exactly: 2 });
  await mock.session.assertModelCalls({ atLeast: 1, atMost: 2 });
  await assert.rejects(mock.session.assertModelCalls({ atMost: 1 }), /^MockllmAssertionError: mockllm: 2 model requests, expected at most 1\n/);
  await assert.rejects(mock.session.assertModelCalls({}), TypeError);
});

test("assertNoUnofferedToolExecuted: a result for a hallucinated tool fails, a refusal passes", async () => {
  const ask = async (result) => {
    const tools = [tool("read_file"), tool("search")];
    const messages = [{ role: "user", content: "Tidy up my notes" }];
    const first = await chat("hallucinated-tool", messages, mock.session, tools);
    const message = first.body.choices[0].message;
    messages.push(message, { role: "tool", tool_call_id: message.tool_calls[0].id, content: result });
    await chat("hallucinated-tool", messages, mock.session, tools);
  };
  await ask("it ran: 18 °C");
  await assert.rejects(mock.session.assertNoUnofferedToolExecuted(), /1 call to a tool that was not offered got a result[^]*offered were: read_file, search/);
  await mock.session.reset();
  await ask("Error: no such tool");
  await mock.session.assertNoUnofferedToolExecuted({ refusal: /^Error: no such tool/ });
  // The server reads the pattern (Python's syntax): a RegExp's i flag goes with it.
  await mock.session.assertNoUnofferedToolExecuted({ refusal: /^error: NO SUCH tool/i });
  await assert.rejects(mock.session.assertNoUnofferedToolExecuted({ refusal: /^error: NO SUCH tool/ }), /offered were/);
  await assert.rejects(mock.session.assertNoUnofferedToolExecuted({ refusal: "(" }), /400 refusal is not a regular expression/);
});

test("transcript reads the session turn by turn, full or short", async () => {
  await weatherLoop();
  const text = await mock.session.transcript();
  assert.match(text, new RegExp(`^mockllm session '${mock.session.name}', 2 model requests:\n  request 1 \\(log seq \\d+\\) · turn 0 · openai-chat · scenario weather-single · tools offered: get_weather\n`));
  assert.match(text, /tool result for call_\w+: 18 °C\n.*← assistant \(200, stop\): It is 18 °C and sunny in Paris\.\n  ✓ verdict: pass \(\d+ checks\)$/s);
  assert.ok(!text.endsWith("\n"));
  assert.equal(await mock.client.transcript(mock.session.name), text);
  assert.match(await mock.session.transcript({ full: false }), /^mockllm session '.*', 2 model requests:/);
});

test("each test gets its own, empty session", async () => {
  assert.deepEqual(await mock.session.requests(), []);
  // ~RUN: the run id of this process (drawn, or $MOCKLLM_RUN_ID), so runs never share one
  const run = process.env.MOCKLLM_RUN_ID ?? "[0-9a-f]{6}";
  assert.match(mock.session.name, new RegExp(`^each-test-gets-its-own-empty-session-[0-9a-f]{8}~${run}$`));
  const [entry] = await (async () => (await weatherLoop({ answer: false }), mock.session.requests()))();
  assert.equal(entry.run, mock.session.name.split("~")[1]);
  assert.match(entry.epoch, /^[0-9a-f]{8}$/);
});

test("two clients resetting one session at once: the log and the holder say so", async () => {
  const [a, b] = [new Client(mock.client.baseUrl), new Client(mock.client.baseUrl)];
  const name = `${mock.session.name}-shared`;
  await a.session(name).reset();
  await chat("hello", [{ role: "user", content: "hi" }], a.session(name));
  await b.session(name).reset(); // while a holds it
  await chat("hello", [{ role: "user", content: "hi" }], a.session(name));
  const entries = await a.session(name).requests();
  assert.deepEqual(entries.map((e) => e.clients), [[a.id, b.id]]);
  assert.match(a.session(name).clash(entries), /^two clients \(c\w+ and c\w+\) used this session at once/);
  // Released first, the next client's reset is a rerun, not a clash.
  await b.session(name).release();
  await a.session(name).reset();
  await chat("hello", [{ role: "user", content: "hi" }], a.session(name));
  const rerun = await a.session(name).requests();
  assert.equal(rerun[0].clients, undefined);
  assert.equal(a.session(name).clash(rerun), null);
});

test("no Python, or no mockllm in it: a clear error", async () => {
  await assert.rejects(startServer({ python: "/nonexistent/python3" }), /no Python at '\/nonexistent\/python3'.*pip install mockllm-server.*MOCKLLM_PYTHON/s);
  // A Python without the package: this one, told to ignore site-packages (-S) and the
  // environment (-I).
  const dir = await mkdtemp(join(tmpdir(), "mockllm-node-"));
  const bare = join(dir, "bare-python");
  await writeFile(bare, `#!/bin/sh\nexec ${process.env.MOCKLLM_PYTHON ?? "python3"} -I -S "$@"\n`, { mode: 0o755 });
  await assert.rejects(startServer({ python: bare }), (e) => {
    assert.ok(e instanceof MockllmError);
    assert.match(e.message, /the Python package is not installed for '.*bare-python': run `.*bare-python -m pip install mockllm-server`/);
    return true;
  });
});
