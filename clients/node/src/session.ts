// One session of a server: its URLs, its log, and the assertions over them. This is what
// the per-test helper hands each test, and what `client.session(name)` gives a script.
import * as assertions from "./assertions.js";
import type { Api, Calls, LogEntry, ToolUse, Verdict } from "./records.js";
import type { AdminRoutes, Flavor, ScenarioSource } from "./routes.js";

export interface RequestQuery {
  scenario?: string;
  turn?: number;
  status?: number;
  side?: boolean;
}

export class Session {
  constructor(
    readonly client: AdminRoutes,
    readonly name: string,
  ) {}

  /** Base URL for an SDK, carrying this session: `{server}/s/{scenario}/{session}[/v1]`; `flavor` prefixes `/f/FLAVOR`. */
  url(scenario: string, { api = "openai", flavor }: { api?: Api; flavor?: Flavor } = {}): string {
    return this.client.url(scenario, { session: this.name, api, flavor });
  }

  /** A scripted MCP server of `scenario` (streamable HTTP), carrying this session (docs/mcp.md). */
  mcpUrl(scenario: string, server: string): string {
    return `${this.client.baseUrl}/s/${encodeURIComponent(scenario)}/${encodeURIComponent(this.name)}/mcp/${encodeURIComponent(server)}`;
  }

  /** Scenarios are server-wide (sessions isolate requests, not scenarios). */
  addScenario(source: ScenarioSource): Promise<string> {
    return this.client.addScenario(source);
  }

  /**
   * This session's log entries in arrival order: a scenario name, or a filter by
   * `scenario`, `turn`, `status` and `side` (true: side requests; false: the agent's own).
   * `.request` is the body as parsed.
   */
  async requests(filter?: string | RequestQuery): Promise<LogEntry[]> {
    const q: RequestQuery = typeof filter === "string" ? { scenario: filter } : (filter ?? {});
    const found = await this.client.requests({ session: this.name, scenario: q.scenario });
    return found.filter(
      (e) =>
        e.api !== "allowance" && // the record of this session's allowance: no request
        (q.turn === undefined || e.turn === q.turn) &&
        (q.status === undefined || e.response?.status === q.status) &&
        (q.side === undefined || Boolean((e as unknown as { side?: unknown }).side) === q.side),
    );
  }

  /** The tool calls the model made (of tool `name`; with `args`, a subset match), each with its result. */
  calls(name?: string, { args }: { args?: Record<string, unknown> } = {}): Promise<Calls> {
    return this.client.calls(this.name, name, args);
  }

  /**
   * Waive verdict checks for this session, each with its reason; the server's log records it
   * (with `origin`, where it came from), so every view and `mockllm report` show them as waived.
   */
  allow(allow: Record<string, string>, origin = "Session.allow() (node)"): Promise<void> {
    return this.client.allow(this.name, allow, origin);
  }

  verdict(): Promise<Verdict> {
    return this.client.verdict(this.name);
  }

  /** The conversation, turn by turn, as the server writes it (`full: false`: the last requests, shorter). */
  transcript({ full = true }: { full?: boolean } = {}): Promise<string> {
    return this.client.transcript(this.name, { full });
  }

  clear(): Promise<number> {
    return this.client.clear(this.name);
  }

  reset(): Promise<number> {
    return this.client.reset(this.name);
  }

  /** Done with the session (the test hooks' end): another client may reset it now without a clash. */
  release(): Promise<void> {
    return this.client.release(this.name);
  }

  /** What says another client used this session since this one reset it, or null. */
  clash(entries: LogEntry[]): string | null {
    const mine = this.client.epochs.get(this.name);
    const clients = entries.find((e) => e.clients?.length)?.clients;
    const foreign = mine !== undefined && entries.some((e) => e.epoch !== undefined && e.epoch !== mine);
    if (!clients && !foreign) return null;
    const who = clients ? ` (${clients.join(" and ")})` : "";
    return (
      `two clients${who} used this session at once: one reset it while the other held it, ` +
      "so the requests here may be either's. Give each run its own session: the pytest plugin " +
      "and the Node client name sessions after a run id (docs/ci.md)"
    );
  }

  /** Entries on which mockllm itself failed; each carries the server's traceback. */
  async serverErrors(): Promise<LogEntry[]> {
    return (await this.requests()).filter((e) => e.server_error);
  }

  // --- assertions: each rejects with this session's conversation -------------------------

  /** Every tool call mockllm sent got a result with its id in a later request. */
  async assertAllToolCallsAnswered(): Promise<void> {
    await this.holds({ check: "all_tool_calls_answered" });
  }

  /** Every turn the session's scenarios script was served: the agent went the whole way (respx's assert_all_called). */
  async assertAllTurnsServed(): Promise<void> {
    await this.holds({ check: "all_turns_served" });
  }

  /** Every result the session's scripted MCP tools script answered a `tools/call` (aimock's MCP fakes fail on unconsumed entries). */
  async assertAllMcpAnswersServed(): Promise<void> {
    await this.holds({ check: "all_mcp_answers_served" });
  }

  /** `refusal`: a pattern marking a result as the harness's "no such tool" answer. */
  async assertNoUnofferedToolExecuted({ refusal }: { refusal?: RegExp | string } = {}): Promise<void> {
    const pattern = refusal === undefined ? undefined : assertions.refusalPattern(refusal);
    await this.holds({ check: "no_unoffered_tool_executed", refusal: pattern });
  }

  async assertModelCalls({ atMost, exactly, atLeast }: assertions.CallBounds): Promise<void> {
    if (atMost === undefined && exactly === undefined && atLeast === undefined) {
      throw new TypeError("assertModelCalls needs atMost, exactly or atLeast");
    }
    await this.holds({ check: "model_calls", at_most: atMost, exactly, at_least: atLeast });
  }

  /** The harness ran scripted MCP tool `tool` on mockllm's MCP server (docs/mcp.md). */
  async assertToolExecuted(tool: string, { server, arguments: args, times }: assertions.ToolExecuted = {}): Promise<void> {
    await this.holds({ check: "tool_executed", tool, server, arguments: args, times });
  }

  /** Every model call to a scripted MCP tool ran there and its result went back: the verdict's `mcp_*` checks. */
  async assertMcpLoopClosed(): Promise<void> {
    await this.holds({ check: "mcp_loop_closed" });
  }

  /**
   * The model asked for tool `name` (with `args`: a subset match), at least once or exactly
   * `times`. Says nothing of the harness running it: that is `assertToolResultFedBack`.
   */
  async assertToolRequested(name: string, { args, times }: { args?: Record<string, unknown>; times?: number } = {}): Promise<Calls> {
    await this.holds({ check: "tool_requested", name, args, times });
    return this.calls(name, { args });
  }

  /**
   * The model asked for tool `name` (with `args`), and the harness ran it and sent its result
   * back: every such call was answered, by its id, in a later request (at least once, or `times`).
   */
  async assertToolResultFedBack(name: string, { args, times }: { args?: Record<string, unknown>; times?: number } = {}): Promise<Calls> {
    await this.holds({ check: "tool_fed_back", name, args, times });
    return this.calls(name, { args });
  }

  /**
   * The model asked for tool `name`: the same check as `assertToolRequested`.
   * @deprecated the name reads as "the tool ran"; use `assertToolRequested` (the model asked
   * for it) or `assertToolResultFedBack` (the harness ran it and sent its result back).
   */
  async assertToolCalled(name: string, { args, times }: { args?: Record<string, unknown>; times?: number } = {}): Promise<Calls> {
    return this.assertToolRequested(name, { args, times });
  }

  /** `first` was called and its result sent back before the model called `then`. */
  async assertCalledBefore(first: string, then: string): Promise<void> {
    await this.holds({ check: "called_before", first, then });
  }

  /**
   * The result of `call` (a ToolUse or its id) reached the model unchanged: equal to
   * `content` (what your tool produced) if given, flagged `isError` if given, kept in the history.
   */
  async assertResultReachedModel(
    call: ToolUse | string,
    { content, isError }: { content?: string; isError?: boolean } = {},
  ): Promise<void> {
    const callId = typeof call === "string" ? call : call.id;
    await this.holds({ check: "result_reached_model", call_id: callId, content, is_error: isError });
  }

  /** No verdict check failed (a waived one does not fail it). */
  async assertCleanVerdict(): Promise<void> {
    await this.holds({ check: "clean_verdict" });
  }

  /** A check the server judges (mockllm/judge/checks.py): the same words as the Python client's. */
  private async holds(spec: Record<string, unknown>): Promise<void> {
    const failure = await this.client.check(this.name, spec);
    if (failure) assertions.assertHolds(failure, await this.transcript());
  }
}
