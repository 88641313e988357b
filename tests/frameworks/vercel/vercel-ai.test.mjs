// The Vercel AI SDK (`ai` with @ai-sdk/openai, @ai-sdk/anthropic, @ai-sdk/deepseek):
// generateText and streamText with tools, per provider, against a mockllm server that the
// Node client starts for this file. Each case asserts what the SDK did and the verdict.
import { attempts } from "../no-network.mjs";

import assert from "node:assert/strict";
import { after, test } from "node:test";

import { createAnthropic } from "@ai-sdk/anthropic";
import { createDeepSeek } from "@ai-sdk/deepseek";
import { createOpenAI } from "@ai-sdk/openai";
import { APICallError, generateText, stepCountIs, streamText, tool } from "ai";
import { createOpenAI as createOpenAI5 } from "ai-sdk-openai2";
import { generateText as generateText5, stepCountIs as stepCountIs5, tool as tool5 } from "ai5";
import { useMockllm } from "mockllm/node-test";
import { z } from "zod";

const mock = useMockllm();

const PROMPTS = {
  "weather-parallel": "北京和上海?",
  "malformed-arguments": "What's the weather in Paris?",
  "stream-cut": "What's the weather in Paris?",
  "deepseek-reasoning": "What's the weather in Paris?",
};
const PARALLEL_TEXT = "北京多云25℃，上海小雨22℃。";
const PARIS_TEXT = "It is 18 °C and sunny in Paris.";
const WEATHER = { 北京: "25度", 上海: "22度", Paris: "18 °C" };

const tools = {
  get_weather: tool({
    description: "Get the current weather of a city.",
    inputSchema: z.object({ city: z.string(), unit: z.string().optional() }),
    execute: async ({ city }) => {
      if (!(city in WEATHER)) throw new Error(`no weather for ${city}`);
      return WEATHER[city];
    },
  }),
};

// The providers' base URLs differ: Anthropic's provider wants `/v1` (its SDK does not),
// DeepSeek's wants none (its paths have none).
const PROVIDERS = {
  "openai-responses": (s) => createOpenAI({ baseURL: mock.session.url(s), apiKey: "test" }).responses("gpt-4.1"),
  "openai-chat": (s) => createOpenAI({ baseURL: mock.session.url(s), apiKey: "test" }).chat("gpt-4o-mini"),
  anthropic: (s) =>
    createAnthropic({ baseURL: mock.session.url(s, { api: "anthropic" }) + "/v1", apiKey: "test" })("claude-sonnet-4-6"),
  deepseek: (s) => createDeepSeek({ baseURL: mock.session.url(s).replace(/\/v1$/, ""), apiKey: "test" })("deepseek-chat"),
};

/** Run the loop; a streamed run's error is what onError saw (streamText does not throw). */
async function run(provider, streamed, scenario, model = PROVIDERS[provider](scenario)) {
  const options = { model, tools, prompt: PROMPTS[scenario], stopWhen: stepCountIs(5), maxRetries: 0 };
  try {
    if (!streamed) return { text: (await generateText(options)).text };
    let error;
    const result = streamText({ ...options, onError: ({ error: e }) => (error = e) });
    const text = await result.text;
    return error ? { error, text } : { text };
  } catch (error) {
    return { error };
  }
}

async function observed() {
  const entries = await mock.session.requests();
  const results = entries.flatMap((e) => e.tool_results);
  const verdict = await mock.session.verdict();
  return { results, failed: verdict.checks.filter((c) => !c.ok).map((c) => c.name).sort() };
}

for (const provider of Object.keys(PROVIDERS)) {
  for (const streamed of [false, true]) {
    const how = streamed ? "streamText" : "generateText";

    test(`${provider} ${how}: parallel calls, then the scenario's text`, async () => {
      const { text, error } = await run(provider, streamed, "weather-parallel");
      assert.equal(error, undefined, await mock.session.transcript());
      assert.equal(text, PARALLEL_TEXT);
      const { results, failed } = await observed();
      assert.deepEqual(results.map((r) => r.content), ["25度", "22度"]);
      assert.deepEqual(failed, []);
      await mock.session.assertAllToolCallsAnswered();
    });

    test(`${provider} ${how}: malformed arguments are fed back as an error result`, async () => {
      const { text, error } = await run(provider, streamed, "malformed-arguments");
      assert.equal(error, undefined, await mock.session.transcript());
      assert.equal(text, PARIS_TEXT);
      const { results, failed } = await observed();
      assert.match(results[0].content, /^Invalid input for tool get_weather/);
      assert.equal(results[0].is_error, provider === "anthropic" ? true : null); // only Anthropic has the flag
      assert.deepEqual(failed, []);
    });

    test(`${provider} ${how}: a stream cut mid-call is an APICallError, nothing run`, async () => {
      const { error } = await run(provider, streamed, "stream-cut");
      assert.ok(APICallError.isInstance(error), String(error));
      assert.match(error.message, /Failed to process successful response/);
      const { results, failed } = await observed();
      assert.deepEqual(results, []);
      assert.deepEqual(failed, []); // the cut call never reached the SDK whole: not held against it
    });
  }
}

for (const streamed of [false, true]) {
  const how = streamed ? "streamText" : "generateText";

  test(`deepseek ${how}: reasoning_content goes back with the call (deepseek-reasoner)`, async () => {
    const model = createDeepSeek({ baseURL: mock.session.url("deepseek-reasoning").replace(/\/v1$/, ""), apiKey: "test" })(
      "deepseek-reasoner",
    );
    const { text, error } = await run("deepseek", streamed, "deepseek-reasoning", model);
    assert.equal(error, undefined, await mock.session.transcript());
    assert.equal(text, PARIS_TEXT);
  });

  // A framework bug the mock catches: the OpenAI provider drops DeepSeek's reasoning_content
  // from the assistant message it sends back, and DeepSeek answers 400. streamText does not
  // reject: its text is empty and the error goes to onError only.
  test(`openai-chat ${how} against deepseek-reasoner drops reasoning_content: DeepSeek's 400`, async () => {
    const model = createOpenAI({ baseURL: mock.session.url("deepseek-reasoning"), apiKey: "test" }).chat("deepseek-reasoner");
    const { text, error } = await run("openai-chat", streamed, "deepseek-reasoning", model);
    assert.ok(APICallError.isInstance(error), String(error));
    assert.equal(error.statusCode, 400);
    assert.match(error.message, /Missing `reasoning_content` field in the assistant message/);
    assert.equal(text, streamed ? "" : undefined);
    const [, second] = await mock.session.requests();
    assert.equal(second.request.messages[1].reasoning_content, undefined);
  });
}

// @ai-sdk/openai's Responses model (store on, its default) sends a served assistant message
// back as `{"type": "item_reference", "id": "msg_…"}` (AI SDK 5 does so for calls too): the
// API reads it as the stored item, so the second question is turn 1, not turn 0 again.
test("openai-responses: a served message sent back as an item_reference is that reply", async () => {
  const name = await mock.session.addScenario({
    name: "two-questions",
    turns: [{ reply: { text: "Paris." } }, { reply: { text: "About 2.1 million." } }],
  });
  const model = createOpenAI({ baseURL: mock.session.url(name), apiKey: "test" }).responses("gpt-4.1");
  const ask = { role: "user", content: "Capital of France?" };
  const first = await generateText({ model, messages: [ask], maxRetries: 0 });
  assert.equal(first.text, "Paris.");
  const messages = [ask, ...first.response.messages, { role: "user", content: "Its population?" }];
  const second = await generateText({ model, messages, maxRetries: 0 });
  assert.equal(second.text, "About 2.1 million.", await mock.session.transcript());
  const [, request] = await mock.session.requests();
  assert.deepEqual(request.request.input[1], { type: "item_reference", id: first.response.body.output[0].id });
});

// AI SDK 5 (Mastra 0.24's providers) sends served calls back as item_references too: its
// tool loop on Responses failed at the second request ("No tool call found for function
// call output with call_id …") while mockllm did not resolve them.
test("AI SDK 5 openai-responses: a tool loop whose calls go back as item_references", async () => {
  const get_weather = tool5({
    description: "Get the current weather of a city.",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => WEATHER[city],
  });
  const model = createOpenAI5({ baseURL: mock.session.url("weather-parallel"), apiKey: "test" }).responses("gpt-4.1");
  const { text } = await generateText5({
    model,
    tools: { get_weather },
    prompt: PROMPTS["weather-parallel"],
    stopWhen: stepCountIs5(5),
    maxRetries: 0,
  });
  assert.equal(text, PARALLEL_TEXT, await mock.session.transcript());
  const [, second] = await mock.session.requests();
  assert.deepEqual(
    second.request.input.filter((i) => i.type === "item_reference").length,
    3, // the message and both calls
  );
  const { failed } = await observed();
  assert.deepEqual(failed, []);
});

test("the network guard refuses the internet", async () => {
  await assert.rejects(fetch("http://203.0.113.7/"), (e) => /network guard/.test(String(e.cause ?? e)));
  assert.deepEqual(attempts.splice(0), ["203.0.113.7"]);
});

after(() => assert.deepEqual(attempts, [], "a test tried to reach the network"));
