// OpenAI Agents JS 0.20 and Mastra 0.24 (AI SDK 5 providers; Mastra 1.x needs Node 22.13)
// against a mockllm server the Node client starts for this file: each framework on each
// wire it speaks, run and streamed, through the parallel round trip, malformed arguments
// and a stream cut. Each case asserts what the framework did and the server's verdict;
// docs/frameworks.md ("The framework matrix") records the same table.
import { attempts } from "../no-network.mjs";

import assert from "node:assert/strict";
import { after, test } from "node:test";

import { useMockllm } from "mockllm/node-test";

import { runCell } from "./frameworks.mjs";

const mock = useMockllm();

const PROMPTS = {
  "weather-parallel": "北京和上海?",
  "malformed-arguments": "What's the weather in Paris?",
  "stream-cut": "What's the weather in Paris?",
};
const PARALLEL = "北京多云25℃，上海小雨22℃。";
const PARIS = "It is 18 °C and sunny in Paris.";
const API = { "openai-chat": "openai", "openai-responses": "openai", anthropic: "anthropic", gemini: "gemini" };
const CUT = /^APICallError: Failed to process successful response/;

// framework -> wire -> scenario -> what it does: { text | error, fedBack, isError, failed }
function expected(framework, wire, scenario) {
  if (framework === "agentsjs") {
    return {
      "weather-parallel": { text: PARALLEL, fedBack: /^25度$/ },
      "malformed-arguments": { text: PARIS, fedBack: /^An error occurred while parsing tool arguments/ },
      "stream-cut": { error: /^TypeError: terminated/ },
    }[scenario];
  }
  // Mastra returns every step's text joined: the reply's text before its calls comes first.
  const parallel = { text: "我先查一下。" + PARALLEL, fedBack: wire === "gemini" ? /"content":"25度"/ : /^25度$/ };
  const malformed = {
    anthropic: { error: /expected is_error true, got false/, fedBack: /Tool validation failed/, failed: ["errors_fed_back", "expectations_met"] },
    gemini: { text: "" }, // MALFORMED_FUNCTION_CALL ends the run with no text and no error
  }[wire] ?? { text: PARIS, fedBack: /^\{"error":true,"message":"Tool validation failed/ };
  return { "weather-parallel": parallel, "malformed-arguments": malformed, "stream-cut": { error: CUT } }[scenario];
}

const WIRES = { agentsjs: ["openai-chat", "openai-responses"], mastra: ["openai-chat", "openai-responses", "anthropic", "gemini"] };

for (const [framework, wires] of Object.entries(WIRES)) {
  for (const wire of wires) {
    for (const streamed of [false, true]) {
      for (const scenario of Object.keys(PROMPTS)) {
        test(`${framework} ${wire} ${streamed ? "streamed" : "run"}: ${scenario}`, async () => {
          const want = expected(framework, wire, scenario);
          const base = mock.session.url(scenario, { api: API[wire] }); // Gemini's carries /v1beta
          const got = await runCell(framework, wire, streamed, base, PROMPTS[scenario]);
          const transcript = await mock.session.transcript();
          if (want.error) assert.match(got.error ?? "", want.error, transcript);
          else assert.deepEqual(got, { text: want.text }, transcript);
          const results = (await mock.session.requests()).flatMap((e) => e.tool_results);
          if (want.fedBack) assert.match(results[0]?.content ?? "", want.fedBack, transcript);
          else assert.deepEqual(results, [], transcript);
          const verdict = await mock.session.verdict();
          const failed = verdict.checks.filter((c) => !c.ok).map((c) => c.name).sort();
          assert.deepEqual(failed, want.failed ?? [], transcript);
        });
      }
    }
  }
}

after(() => assert.deepEqual(attempts, [], "a framework tried to reach the network"));
