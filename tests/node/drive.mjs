// Plays a two-turn tool round trip against mockllm with an official Node SDK and prints
// what the SDK saw, in neutral terms, as JSON on stdout.
//
//   node drive.mjs API BASE_URL MODE USER_TEXT RESULT...
//     API   chat | responses | anthropic | gemini
//     MODE  create | stream   (stream uses the SDK's helper: finalChatCompletion,
//                              finalResponse, finalMessage; @google/genai has none, so its
//                              chunks' parts are joined in order)
//     RESULT one tool result per call of the first reply, in call order
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";

const [api, baseURL, mode, userText, ...results] = process.argv.slice(2);
const parameters = { type: "object", properties: { city: { type: "string" } } };

const drivers = {
  chat: {
    client: () => new OpenAI({ baseURL, apiKey: "test", maxRetries: 0 }),
    request: (history) => ({
      model: "gpt-4o-mini",
      messages: history,
      tools: [{ type: "function", function: { name: "get_weather", parameters } }],
    }),
    user: (text) => [{ role: "user", content: text }],
    async call(client, body) {
      if (mode === "stream") return client.chat.completions.stream(body).finalChatCompletion();
      return client.chat.completions.create(body);
    },
    view(c) {
      const m = c.choices[0].message;
      const calls = (m.tool_calls ?? []).map((t) => [t.id, t.function.name, t.function.arguments]);
      return { text: m.content || null, calls, finish: c.choices[0].finish_reason };
    },
    followUp: (raw, ids) => [
      raw.choices[0].message,
      ...ids.map((id, i) => ({ role: "tool", tool_call_id: id, content: results[i] })),
    ],
  },
  responses: {
    client: () => new OpenAI({ baseURL, apiKey: "test", maxRetries: 0 }),
    request: (history) => ({
      model: "gpt-4.1",
      input: history,
      tools: [{ type: "function", name: "get_weather", parameters, strict: false }],
    }),
    user: (text) => [{ role: "user", content: text }],
    async call(client, body) {
      if (mode === "stream") return client.responses.stream(body).finalResponse();
      return client.responses.create(body);
    },
    view(r) {
      const calls = r.output.filter((i) => i.type === "function_call").map((i) => [i.call_id, i.name, i.arguments]);
      const text = r.output.filter((i) => i.type === "message").flatMap((i) => i.content.map((c) => c.text)).join("");
      const finish = r.status === "incomplete" ? "length" : calls.length ? "tool_calls" : "stop";
      return { text: text || null, calls, finish };
    },
    followUp: (raw, ids) => [
      ...raw.output,
      ...ids.map((id, i) => ({ type: "function_call_output", call_id: id, output: results[i] })),
    ],
  },
  anthropic: {
    client: () => new Anthropic({ baseURL, apiKey: "test", maxRetries: 0 }),
    request: (history) => ({
      model: "claude-sonnet-4-6",
      max_tokens: 1024,
      messages: history,
      tools: [{ name: "get_weather", input_schema: parameters }],
    }),
    user: (text) => [{ role: "user", content: text }],
    async call(client, body) {
      if (mode === "stream") return client.messages.stream(body).finalMessage();
      return client.messages.create(body);
    },
    view(m) {
      const calls = m.content.filter((b) => b.type === "tool_use").map((b) => [b.id, b.name, JSON.stringify(b.input)]);
      const text = m.content.filter((b) => b.type === "text").map((b) => b.text).join("");
      const finish = { end_turn: "stop", tool_use: "tool_calls", max_tokens: "length" }[m.stop_reason];
      return { text: text || null, calls, finish };
    },
    followUp: (raw, ids) => [
      { role: "assistant", content: raw.content },
      { role: "user", content: ids.map((id, i) => ({ type: "tool_result", tool_use_id: id, content: results[i] })) },
    ],
  },
  gemini: {
    // No ids on this wire: a call is answered by name, in order.
    client: () => new GoogleGenAI({ apiKey: "test", httpOptions: { baseUrl: baseURL } }),
    request: (history) => ({
      model: "gemini-2.5-flash",
      contents: history,
      config: { tools: [{ functionDeclarations: [{ name: "get_weather", parametersJsonSchema: parameters }] }] },
    }),
    user: (text) => [{ role: "user", parts: [{ text }] }],
    async call(client, body) {
      if (mode !== "stream") return client.models.generateContent(body);
      const chunks = [];
      for await (const chunk of await client.models.generateContentStream(body)) chunks.push(chunk);
      const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []).filter((p) => p.text !== "");
      const last = chunks[chunks.length - 1].candidates[0];
      return { candidates: [{ ...last, content: { role: "model", parts } }] };
    },
    view(r) {
      const candidate = r.candidates[0];
      const parts = candidate.content?.parts ?? [];
      const calls = parts.filter((p) => p.functionCall).map((p) => [p.functionCall.id ?? p.functionCall.name, p.functionCall.name, JSON.stringify(p.functionCall.args)]);
      const text = parts.filter((p) => p.text && !p.thought).map((p) => p.text).join("");
      const finish = { STOP: calls.length ? "tool_calls" : "stop", MAX_TOKENS: "length" }[candidate.finishReason] ?? candidate.finishReason;
      return { text: text || null, calls, finish };
    },
    followUp: (raw, ids) => [
      raw.candidates[0].content,
      { role: "user", parts: ids.map((id, i) => ({ functionResponse: { name: "get_weather", response: { result: results[i] } } })) },
    ],
  },
};

const driver = drivers[api];
const client = driver.client();
let history = driver.user(userText);
const first = await driver.call(client, driver.request(history));
const firstView = driver.view(first);
history = [...history, ...driver.followUp(first, firstView.calls.map((c) => c[0]))];
const second = await driver.call(client, driver.request(history));
console.log(JSON.stringify({ turns: [firstView, driver.view(second)] }));
