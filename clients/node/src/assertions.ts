// Checks over one session's log entries, failing with the conversation in the message.
// Pure functions of the entries and the session's transcript (the server's text, from
// GET /_mockllm/transcript), the same checks as the Python client's: a failure reads a
// one-line headline, the transcript, then expected and happened.
import { type Failure, type LogEntry, type ToolCall, type ToolResult, type Verdict, toolCalls } from "./records.js";
import { callText, plural, short } from "./text.js";

export class MockllmAssertionError extends Error {
  override name = "MockllmAssertionError";
}

export interface Unoffered {
  entry: LogEntry; // the request carrying the result
  result: ToolResult;
  name: string;
  offered: string[];
}

export interface CallBounds {
  atMost?: number;
  exactly?: number;
  atLeast?: number;
}

/** Calls mockllm sent that no later request answered with a result carrying their id. */
export function unansweredCalls(entries: readonly LogEntry[]): Array<[LogEntry, ToolCall]> {
  const missing = new Map<string, [LogEntry, ToolCall]>();
  entries.forEach((entry, i) => {
    const answered = resultIds(entries.slice(i + 1));
    for (const call of toolCalls(entry)) {
      // a retried turn repeats its ids: keep the first
      if (!answered.has(call.id) && !missing.has(call.id)) missing.set(call.id, [entry, call]);
    }
  });
  return [...missing.values()];
}

/**
 * Results sent for calls whose tool was not offered in the request the model answered.
 * A result flagged `is_error` (Anthropic), or whose text matches `refusal` (OpenAI wires
 * carry no flag), is the harness saying "no such tool" — not an execution.
 */
export function unofferedExecutions(entries: readonly LogEntry[], refusal?: RegExp | string): Unoffered[] {
  const called = new Map<string, [string, string[]]>(); // id → (name, tools offered)
  const found = new Map<string, Unoffered>();
  for (const entry of entries) {
    for (const result of entry.tool_results) {
      const [name, offered] = called.get(result.call_id) ?? echoed(entry, result.call_id);
      if (name && !offered.includes(name) && !refused(result, refusal) && !found.has(result.call_id)) {
        found.set(result.call_id, { entry, result, name, offered });
      }
    }
    for (const call of toolCalls(entry)) {
      if (!called.has(call.id)) called.set(call.id, [call.name, entry.tools]);
    }
  }
  return [...found.values()];
}

export function assertAllToolCallsAnswered(entries: readonly LogEntry[], transcript: string): void {
  const missing = unansweredCalls(entries);
  if (missing.length > 0) {
    fail(`${plural(missing.length, "tool call")} never got a result`, transcript, {
      expected: "every tool call mockllm sent gets a result with its id in a later request",
      happened: missing.map(
        ([entry, call]) =>
          `${callText(call)}, sent in reply to request ${number(entries, entry)} ` +
          `(turn ${entry.turn}), was never answered`,
      ),
    });
  }
}

export function assertNoUnofferedToolExecuted(
  entries: readonly LogEntry[],
  transcript: string,
  refusal?: RegExp | string,
): void {
  const found = unofferedExecutions(entries, refusal);
  if (found.length > 0) {
    fail(`${plural(found.length, "call")} to a tool that was not offered got a result`, transcript, {
      expected:
        "no result for a call to a tool the request did not offer " +
        "(answer such calls with an error result instead)",
      happened: found.map(
        (u) =>
          `request ${number(entries, u.entry)} sent a result for ${u.name} (${u.result.call_id}): ` +
          `${JSON.stringify(short(u.result.content, 80))}; offered were: ${u.offered.join(", ") || "none"}`,
      ),
    });
  }
}

export function assertModelCalls(entries: readonly LogEntry[], bounds: CallBounds, transcript: string): void {
  const named: Array<[string, number | undefined]> = [
    ["exactly", bounds.exactly],
    ["at most", bounds.atMost],
    ["at least", bounds.atLeast],
  ];
  const wanted = named
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k} ${v}`)
    .join(" and ");
  if (!wanted) throw new TypeError("assertModelCalls needs atMost, exactly or atLeast");
  const count = entries.filter((e) => e.api !== "mcp").length; // MCP messages are not model calls
  const { exactly, atMost, atLeast } = bounds;
  if (
    (exactly !== undefined && count !== exactly) ||
    (atMost !== undefined && count > atMost) ||
    (atLeast !== undefined && count < atLeast)
  ) {
    fail(`${plural(count, "model request")}, expected ${wanted}`, transcript, {
      expected: `${wanted} model request(s)`,
      happened: [`${plural(count, "model request")} made`],
    });
  }
}

export interface ToolExecuted {
  server?: string;
  arguments?: Record<string, unknown>;
  times?: number;
}

/** The MCP `tools/call` entries that ran `tool` (of `server`, if given), in order. */
export function mcpExecutions(entries: readonly LogEntry[], tool: string, server?: string): LogEntry[] {
  return entries.filter(
    (e) =>
      e.api === "mcp" &&
      e.mcp?.method === "tools/call" &&
      e.mcp.tool === tool &&
      (server === undefined || e.mcp.server === server),
  );
}

export function assertToolExecuted(
  entries: readonly LogEntry[],
  transcript: string,
  tool: string,
  { server, arguments: args, times }: ToolExecuted = {},
): void {
  const ran = mcpExecutions(entries, tool, server);
  const same = (e: LogEntry) => args === undefined || canonical(e.mcp?.arguments ?? {}) === canonical(args);
  const matching = ran.filter(same);
  const name = server ? `${server}/${tool}` : tool;
  const wanted = args ? ` with arguments ${JSON.stringify(args)}` : "";
  const count = times === undefined ? "" : ` ${plural(times, "time")}`;
  if ((times === undefined && matching.length === 0) || (times !== undefined && matching.length !== times)) {
    fail(`MCP tool ${name} was not executed${wanted}${count}`, transcript, {
      expected: `the harness calls MCP tool ${name}${wanted}${count || " at least once"}`,
      happened: ran.length
        ? ran.map((e) => `MCP entry #${e.seq} ran it with ${JSON.stringify(e.mcp?.arguments ?? null)}`)
        : [`${name} was never called on the MCP server`],
    });
  }
}

/** The verdict's `mcp_*` checks passed (docs/mcp.md, "The verdict's loop checks"). */
export function assertMcpLoopClosed(verdict: Verdict, transcript: string): void {
  const loop = verdict.checks.filter((c) => c.name.startsWith("mcp_"));
  if (loop.length === 0) {
    fail("no MCP tool was involved in this session", transcript, {
      expected: "a model call to a scripted MCP tool, run on the MCP server",
      happened: ["no model call named a scripted MCP tool and no MCP tool ran"],
    });
  }
  const failed = loop.filter((c) => !c.ok);
  if (failed.length > 0) {
    fail(`the MCP loop failed ${plural(failed.length, "check")}`, transcript, {
      expected: "every model call to an MCP tool ran on the fake, and its result went back",
      happened: failed.map((c) => `${c.name}: ${c.message}`),
    });
  }
}

/** JSON with sorted keys: arguments compare as values, whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
  }

/** Raise what a server check found (its headline, expected and happened), with the transcript. */
export function assertHolds(failure: Failure | null, transcript: string): void {
  if (failure) fail(failure.headline, transcript, failure);
}

export function assertCleanVerdict(verdict: Verdict, transcript: string): void {
  if (!verdict.ok) {
    const failed = verdict.checks.filter((c) => (c.status ?? (c.ok ? "passed" : "failed")) === "failed");
    fail(`the protocol verdict failed ${plural(failed.length, "check")}`, transcript, {
      expected: "every verdict check passes",
      happened: failed.length ? failed.map((c) => `${c.name}: ${c.message}`) : ["the verdict is not ok"],
    });
  }
}

function fail(
  headline: string,
  transcript: string,
  { expected, happened }: { expected: string; happened: string[] },
): never {
  const lines = [`mockllm: ${headline}`, "", transcript, ""];
  lines.push(`expected: ${expected}`, "happened:", ...happened.map((h) => `  - ${h}`));
  throw new MockllmAssertionError(lines.join("\n"));
}

/** The entry's place in the transcript (1-based), which is what the reader sees. */
function number(entries: readonly LogEntry[], entry: LogEntry): number {
  return entries.filter((e) => e.api !== "mcp").indexOf(entry) + 1; // MCP messages are not numbered
}

function resultIds(entries: readonly LogEntry[]): Set<string> {
  const ids = new Set<string>();
  for (const entry of entries) {
    for (const r of entry.tool_results) ids.add(r.call_id);
    for (const m of entry.conversation) for (const r of m.tool_results) ids.add(r.call_id);
  }
  return ids;
}

/** A call mockllm did not log (history written by the client): judge it by this request. */
function echoed(entry: LogEntry, callId: string): [string, string[]] {
  for (const message of entry.conversation) {
    for (const call of message.tool_calls) if (call.id === callId) return [call.name, entry.tools];
  }
  return ["", entry.tools];
}

function refused(result: ToolResult, refusal?: RegExp | string): boolean {
  return Boolean(result.is_error) || (refusal !== undefined && new RegExp(refusal).test(result.content));
}
