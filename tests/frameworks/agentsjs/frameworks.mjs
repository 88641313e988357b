// OpenAI Agents JS and Mastra (with AI SDK 5 providers), each as its users run it, pointed
// at mockllm by its base URL alone: `runCell(framework, wire, streamed, baseURL, prompt)`
// runs one tool loop and returns `{ text }` or `{ error }` (what ended it).
import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { Agent as MastraAgent } from "@mastra/core/agent";
import { createTool } from "@mastra/core/tools";
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from "@openai/agents";
import { z } from "zod";

setTracingDisabled(true); // Agents JS exports traces to OpenAI by default

export const WEATHER = { 北京: "25度", 上海: "22度", Paris: "18 °C" };

function weather(city) {
  if (!(city in WEATHER)) throw new Error(`no weather for ${city}`);
  return WEATHER[city];
}

const INSTRUCTIONS = "You answer questions about the weather with your tool.";

async function agentsJs(wire, streamed, baseURL, prompt) {
  const getWeather = tool({
    name: "get_weather",
    description: "Get the current weather of a city.",
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => weather(city),
  });
  const agent = new Agent({ name: "weather", instructions: INSTRUCTIONS, model: "gpt-4.1", tools: [getWeather] });
  const provider = new OpenAIProvider({ baseURL, apiKey: "test", useResponses: wire === "openai-responses" });
  const runner = new Runner({ modelProvider: provider, tracingDisabled: true });
  if (!streamed) return (await runner.run(agent, prompt)).finalOutput;
  const result = await runner.run(agent, prompt, { stream: true });
  for await (const _ of result); // drain the events
  await result.completed;
  if (result.error) throw result.error;
  return result.finalOutput;
}

const MODELS = {
  "openai-chat": (url) => createOpenAI({ baseURL: url, apiKey: "test" }).chat("gpt-4o-mini"),
  "openai-responses": (url) => createOpenAI({ baseURL: url, apiKey: "test" }).responses("gpt-4.1"),
  anthropic: (url) => createAnthropic({ baseURL: url + "/v1", apiKey: "test" })("claude-sonnet-4-6"),
  gemini: (url) => createGoogleGenerativeAI({ baseURL: url + "/v1beta", apiKey: "test" })("gemini-2.5-flash"),
};

async function mastra(wire, streamed, baseURL, prompt) {
  const getWeather = createTool({
    id: "get_weather",
    description: "Get the current weather of a city.",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ context }) => weather(context.city),
  });
  const agent = new MastraAgent({
    name: "weather",
    instructions: INSTRUCTIONS,
    model: MODELS[wire](baseURL),
    tools: { get_weather: getWeather },
  });
  const options = { maxSteps: 5, modelSettings: { maxRetries: 0 } };
  if (!streamed) {
    const result = await agent.generate(prompt, options);
    if (result.error) throw result.error;
    return result.text;
  }
  const stream = await agent.stream(prompt, options);
  const text = await stream.text;
  if (stream.error) throw stream.error;
  return text;
}

export async function runCell(framework, wire, streamed, baseURL, prompt) {
  try {
    const run = framework === "mastra" ? mastra : agentsJs;
    return { text: String(await run(wire, streamed, baseURL, prompt)).trim() };
  } catch (error) {
    return { error: `${error?.constructor?.name}: ${error?.message ?? error}` };
  }
}
