// Typed views of what the admin routes return (docs/http-api.md, "A log entry").
// Only the fields the client reads are typed; `raw` keeps the whole object.

/** The wire an SDK speaks, for its base URL: OpenAI's SDKs want `/v1` on it, Anthropic's and
 * Google's (@google/genai) add their own version path, Azure's (AzureOpenAI's endpoint) its
 * `/openai/deployments/{deployment}/…`. */
export const APIS = ["openai", "anthropic", "gemini", "vertex-gemini", "vertex-anthropic", "azure"] as const;
// The SDKs whose base URL carries `/v1` (AnthropicVertex's ends in it, as Google's endpoint does).
export const WITH_V1: readonly string[] = ["openai", "vertex-anthropic"];
export type Api = (typeof APIS)[number];

export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ToolResult {
  call_id: string;
  content: string;
  is_error: boolean | null;
}

export interface Message {
  role: string;
  at?: string;
  text: string;
  reasoning?: string | null;
  tool_calls: ToolCall[];
  tool_results: ToolResult[];
}

export interface Finding {
  rule: string;
  message: string;
}

/** A served call, with what a careful harness must refuse about it (`problem`). */
export interface ServedCall extends ToolCall {
  problem?: string;
}

/** What a client received of a reply that did not arrive whole (docs/http-api.md). */
export interface Delivered {
  text: string;
  reasoning: string;
  tool_calls: { name: string; arguments: string }[];
  cut: { by: string; in: string };
}

export interface LogResponse {
  status: number;
  finish: string | null;
  /** A valid reply that is still wrong (refusal, content_filter, empty, …), else null. */
  misbehaviour: string | null;
  text: string | null;
  /** The reasoning the client could read; null when the wire sent none or only encrypted. */
  reasoning: string | null;
  tool_calls: ServedCall[];
  /** Null when the reply arrived whole. */
  delivered: Delivered | null;
  fault: { kind: string; detail: string; why: string | null } | null;
  error: { kind: string; message: string } | null;
  notes: string[];
  /** Seconds an error answer asked the client to wait. */
  retry_after: number | null;
  bytes_sent: number;
  /** The body sent, up to --log-body-cap. */
  body: string;
  body_truncated: boolean;
}

export interface LogEntry {
  seq: number;
  time: string;
  session: string | null;
  scenario: string | null;
  api: string | null;
  path: string;
  stream: boolean;
  turn: number | null;
  attempt: number | null;
  conversation: Message[];
  tools: string[];
  tool_results: ToolResult[];
  violations: Finding[];
  expectation_failures: Finding[];
  response: LogResponse | null;
  server_error: string | null;
  /** As requested: `POST` for model calls. */
  method: string;
  /** Request headers, credentials shown as `[redacted <hash>]`. */
  headers: Record<string, string>;
  request: unknown;
  /** Which rule picked the turn (docs/scenarios.md); absent when no turn was picked. */
  why?: string;
  /** A side request: `{name, why, rules?}`; then `turn` and `attempt` are null. */
  side?: { name: string; why: string; rules?: string };
  /** From arrival to the last byte. */
  duration_ms: number | null;
  /** Whether the client hung up first. */
  client_disconnected: boolean;
  /** The run id the session name carries (`TEST-HASH~RUN`), when it carries one. */
  run?: string;
  /** Which use of the session: a new one at each reset (docs/http-api.md). */
  epoch?: string;
  /** Two clients that used the session at once: one reset it while the other held it. */
  clients?: string[];
  /** On an MCP message (`api: "mcp"`, docs/mcp.md): what it asked and what it got. */
  mcp?: McpInfo | null;
}

export interface McpInfo {
  server: string;
  transport?: string;
  method?: string;
  id?: string | number;
  tool?: string;
  arguments?: Record<string, unknown> | null;
  result?: { text: string; is_error: boolean; structured?: unknown; text_chars?: number };
  error?: { code: number; message: string };
  fault?: string;
  problem?: string;
  tools?: string[];
}

export interface Check {
  name: string;
  /** Not failed: passed or waived. */
  ok: boolean;
  status: "passed" | "failed" | "waived";
  message: string;
  /** The reason, when waived. */
  waived?: string;
}

export interface Verdict {
  session: string;
  ok: boolean;
  /** The words every view shows: `✓ verdict: pass`, `✗ verdict: FAIL`. */
  label: string;
  requests: number;
  checks: Check[];
}

/** One tool call the model made and the result the harness sent back (GET /_mockllm/calls). */
export interface ToolUse {
  id: string;
  name: string;
  arguments: string;
  /** The arguments parsed; null when they are not JSON. */
  args: unknown;
  turn: number | null;
  seq: number;
  result: { content: string; is_error: boolean | null } | null;
  answered_in: number | null;
}

/** Tool uses in the order the model made them, with `.last` and `.first`. */
export class Calls extends Array<ToolUse> {
  get last(): ToolUse | undefined {
    return this[this.length - 1];
  }
  get first(): ToolUse | undefined {
    return this[0];
  }
  static fromUses(uses: readonly ToolUse[]): Calls {
    const calls = new Calls();
    calls.push(...uses);
    return calls;
  }
}

/** What a check of the server's (POST /_mockllm/check) found wrong, worded for every client. */
export interface Failure {
  ok: false;
  headline: string;
  expected: string;
  happened: string[];
}

/** The calls mockllm sent in its reply to this request (none for an error or a pending reply). */
export function toolCalls(entry: LogEntry): ToolCall[] {
  return entry.response?.tool_calls ?? [];
}

/** A log entry read from JSON, with the list fields always present (older servers may omit some). */
export function logEntry(data: Record<string, unknown>): LogEntry {
  const entry = data as unknown as LogEntry;
  const conversation = (entry.conversation ?? []).map((m) => ({
    ...m,
    text: m.text ?? "",
    tool_calls: m.tool_calls ?? [],
    tool_results: (m.tool_results ?? []).map(result),
  }));
  const response = entry.response ? { ...entry.response, tool_calls: entry.response.tool_calls ?? [] } : null;
  return {
    ...entry,
    conversation,
    tools: entry.tools ?? [],
    tool_results: (entry.tool_results ?? []).map(result),
    violations: entry.violations ?? [],
    expectation_failures: entry.expectation_failures ?? [],
    response,
    server_error: entry.server_error ?? null,
  };
}

function result(r: ToolResult): ToolResult {
  return { call_id: r.call_id, content: r.content ?? "", is_error: r.is_error ?? null };
}
