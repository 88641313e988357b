// A client for a running mockllm server's admin routes (docs/http-api.md): Node's own
// fetch, no dependencies. Node's fetch ignores HTTP(S)_PROXY, so a CI proxy never
// captures the traffic to a local test server.
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { basename, extname } from "node:path";

import { APIS, WITH_V1, type Api, Calls, type Failure, type LogEntry, type ToolUse, type Verdict, logEntry } from "./records.js";
import { type AdminRoutes, FLAVORS, type RequestFilter, type ScenarioSource, type UrlOptions } from "./routes.js";
import { Session } from "./session.js";

/** An admin call that failed: the server said no (`status`), or could not be reached. */
export class MockllmError extends Error {
  override name = "MockllmError";
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export class Client implements AdminRoutes {
  readonly baseUrl: string;
  /** Named in resets, so the server can tell when two clients use one session at once. */
  readonly id = `c${randomBytes(4).toString("hex")}`;
  readonly epochs = new Map<string, string>();

  /** `new Client("http://127.0.0.1:8000")`: the request log, scenarios and resets of one server. */
  constructor(
    baseUrl: string,
    readonly timeoutMs = 10_000,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
  }

  /** The base URL to give an SDK: OpenAI's carries `/v1`, Anthropic's, Gemini's and Azure's (AzureOpenAI's endpoint) do not; `flavor` starts it with `/f/FLAVOR` (Mistral's: no `/v1`, which its SDK adds). */
  url(scenario: string, { session, api = "openai", flavor }: UrlOptions = {}): string {
    if (!(APIS as readonly string[]).includes(api)) {
      const known = APIS.map((a) => JSON.stringify(a)).join(", ");
      throw new TypeError(`api must be one of ${known}, not ${JSON.stringify(api)}`);
    }
    if (flavor !== undefined && !(FLAVORS as readonly string[]).includes(flavor)) {
      throw new TypeError(`no flavour ${JSON.stringify(flavor)} (${FLAVORS.join(", ")})`);
    }
    if (flavor !== undefined && api !== "openai") {
      throw new TypeError('a flavour is a Chat Completions one: it takes api: "openai"');
    }
    const path = `/s/${encodeURIComponent(scenario)}` + (session ? `/${encodeURIComponent(session)}` : "");
    const prefix = flavor === undefined ? "" : `/f/${flavor}`;
    return this.baseUrl + prefix + path + (WITH_V1.includes(api) && flavor !== "mistral" ? "/v1" : "");
  }

  session(name: string): Session {
    return new Session(this, name);
  }

  async health(): Promise<{ status: string; scenarios: number }> {
    return (await this.call("GET", "/_mockllm/health")) as { status: string; scenarios: number };
  }

  async scenarios(): Promise<Array<Record<string, unknown>>> {
    return (await this.call("GET", "/_mockllm/scenarios")) as Array<Record<string, unknown>>;
  }

  /**
   * Add (or replace) one scenario; resolves to its name. The server checks it and
   * answers a bad one with every problem listed, which this rejects with.
   */
  async addScenario(source: ScenarioSource): Promise<string> {
    const [body, type] = await document(source);
    const answer = (await this.call("POST", "/_mockllm/scenarios", {}, body, type)) as { name: string };
    return answer.name;
  }

  async requests(filter: RequestFilter = {}): Promise<LogEntry[]> {
    const entries = (await this.call("GET", "/_mockllm/requests", { ...filter })) as Array<Record<string, unknown>>;
    return entries.map(logEntry);
  }

  async verdict(session: string): Promise<Verdict> {
    return (await this.call("GET", "/_mockllm/verdict", { session })) as Verdict;
  }

  /** The session's conversation as text, as the server writes it for every client. */
  async transcript(session: string, { full = true }: { full?: boolean } = {}): Promise<string> {
    const text = (await this.call("GET", "/_mockllm/transcript", { session, full: full ? undefined : "0" })) as string;
    return text.replace(/\n$/, "");
  }

  /** Waive verdict checks for one session, each with its reason (docs/verdict.md); the log records them with `origin`. */
  async allow(session: string, allow: Record<string, string>, origin = "Client.allow() (node)"): Promise<void> {
    await this.call("PUT", "/_mockllm/allow", { session, origin }, JSON.stringify(allow));
  }

  /** The tool calls the model made in a session (of one tool; with `args`, a subset match). */
  async calls(session: string, name?: string, args?: Record<string, unknown>): Promise<Calls> {
    const query = { session, name, args: args === undefined ? undefined : JSON.stringify(args) };
    return Calls.fromUses((await this.call("GET", "/_mockllm/calls", query)) as ToolUse[]);
  }

  /** One check of what the agent did, judged by the server: null when it holds. */
  async check(session: string, spec: Record<string, unknown>): Promise<Failure | null> {
    const answer = (await this.call("POST", "/_mockllm/check", { session }, JSON.stringify(spec))) as
      | Failure
      | { ok: true };
    return answer.ok ? null : answer;
  }

  /** Forget the log (of one session); resolves to how many entries went. */
  async clear(session?: string): Promise<number> {
    return ((await this.call("DELETE", "/_mockllm/requests", { session })) as { deleted: number }).deleted;
  }

  /**
   * A fresh start (for one session): attempt counters and log; resolves to entries deleted.
   * The session is this client's until `release`: another client resetting it meanwhile is
   * said in the log (docs/http-api.md).
   */
  async reset(session?: string): Promise<number> {
    const query = { session, client: session === undefined ? undefined : this.id };
    const answer = (await this.call("POST", "/_mockllm/reset", query)) as { deleted: number; epoch?: string };
    if (session !== undefined && answer.epoch) this.epochs.set(session, answer.epoch);
    return answer.deleted;
  }

  /** This client is done with `session`: another may reset it now without a clash. */
  async release(session: string): Promise<void> {
    await this.call("POST", "/_mockllm/release", { session, client: this.id });
  }

  private async call(
    method: string,
    path: string,
    query: Record<string, string | number | undefined> = {},
    body?: string,
    contentType = "application/json",
  ): Promise<unknown> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "" && v !== 0) params.set(k, String(v));
    const url = this.baseUrl + path + (params.size ? `?${params}` : "");
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        body,
        // Always typed when it changes state: the admin guard refuses what a web page could send.
        headers: method === "GET" ? {} : { "content-type": contentType },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      // fetch hides the socket's error in `cause` (an AggregateError when several addresses failed)
      const cause = (error as { cause?: { code?: string; message?: string; errors?: Array<{ code?: string }> } }).cause;
      const reason = cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? (error as Error).message;
      throw new MockllmError(`${method} ${url}: cannot reach mockllm: ${reason}`);
    }
    const text = await response.text();
    if (!response.ok) throw new MockllmError(`${method} ${url}: ${response.status} ${message(text)}`, response.status);
    return response.headers.get("content-type")?.startsWith("application/json") ? JSON.parse(text) : text;
  }
}

async function document(source: ScenarioSource): Promise<[string, string]> {
  if (typeof source !== "string") return [JSON.stringify(source), "application/json"];
  if (source.includes("\n")) return [source, "application/yaml"];
  const text = await readFile(source, "utf8");
  // A file's scenario is named after the file unless it says otherwise; the server
  // cannot know the file's name, so say it (a top-level `name:` key wins).
  const named = /^name\s*:/m.test(text) ? text : `name: ${basename(source, extname(source))}\n${text}`;
  return [named, "application/yaml"];
}

function message(body: string): string {
  try {
    const data = JSON.parse(body) as { error?: { message?: string } };
    return data.error?.message ?? body;
  } catch {
    return body;
  }
}
