// A tool loop under test with vitest: the server starts once for this file, each test gets
// its own session, and the assertions fail with the conversation in the message.
import { MockllmAssertionError, useMockllm } from "mockllm";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from "vitest";

const mock = useMockllm({ beforeAll, afterAll, beforeEach, afterEach });

const WEATHER: Record<string, string> = { 北京: "25度", 上海: "22度" };
const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: "function",
    function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
  },
];

/** The harness under test: runs every tool call and feeds its result back. */
async function answer(client: OpenAI, question: string, runTools = true): Promise<string> {
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: question }];
  for (let step = 0; step < 5; step++) {
    const reply = await client.chat.completions.create({ model: "gpt-4o-mini", messages, tools });
    const message = reply.choices[0]!.message;
    if (!message.tool_calls?.length || !runTools) return message.content ?? "";
    messages.push(message);
    for (const call of message.tool_calls) {
      if (call.type !== "function") continue;
      const { city } = JSON.parse(call.function.arguments) as { city: string };
      messages.push({ role: "tool", tool_call_id: call.id, content: WEATHER[city] ?? "unknown city" });
    }
  }
  throw new Error("no answer in 5 steps");
}

test("parallel calls are all answered", async () => {
  const client = new OpenAI({ baseURL: mock.session.url("weather-parallel"), apiKey: "test" });
  expect(await answer(client, "北京和上海?")).toBe("北京多云25℃，上海小雨22℃。");
  await mock.session.assertAllToolCallsAnswered();
  await mock.session.assertModelCalls({ exactly: 2 });
  expect((await mock.session.verdict()).ok).toBe(true);
});

test("a harness that drops the calls fails with the transcript", async () => {
  const client = new OpenAI({ baseURL: mock.session.url("weather-parallel"), apiKey: "test" });
  expect(await answer(client, "北京和上海?", false)).toBe("我先查一下。");
  const failure = mock.session.assertAllToolCallsAnswered();
  await expect(failure).rejects.toThrow(MockllmAssertionError);
  await expect(failure).rejects.toThrow(/2 tool calls never got a result[^]*user: 北京和上海\?/);
});

test("each test has its own session", async () => {
  expect(await mock.session.requests()).toEqual([]);
  // TEST-HASH~RUN: the run id keeps runs sharing a server apart (docs/node.md)
  expect(mock.session.name).toMatch(/^each-test-has-its-own-session-[0-9a-f]{8}~[A-Za-z0-9._-]+$/);
});
