// One session of a server: its URLs, its log, and the assertions over them. This is what
// the per-test helper hands each test, and what `client.session(name)` gives a script.
import * as assertions from "./assertions.js";
import type { Client, ScenarioSource } from "./client.js";
import type { Api, LogEntry, Verdict } from "./records.js";

export class Session {
  constructor(
    readonly client: Client,
    readonly name: string,
  ) {}

  /** Base URL for an SDK, carrying this session: `{server}/s/{scenario}/{session}[/v1]`. */
  url(scenario: string, { api = "openai" }: { api?: Api } = {}): string {
    return this.client.url(scenario, { session: this.name, api });
  }

  /** A scripted MCP server of `scenario` (streamable HTTP), carrying this session (docs/mcp.md). */
  mcpUrl(scenario: string, server: string): string {
    return `${this.client.baseUrl}/s/${encodeURIComponent(scenario)}/${encodeURIComponent(this.name)}/mcp/${encodeURIComponent(server)}`;
  }

  /** Scenarios are server-wide (sessions isolate requests, not scenarios). */
  addScenario(source: ScenarioSource): Promise<string> {
    return this.client.addScenario(source);
  }

  requests(scenario?: string): Promise<LogEntry[]> {
    return this.client.requests({ session: this.name, scenario });
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

  /** Entries on which mockllm itself failed; each carries the server's traceback. */
  async serverErrors(): Promise<LogEntry[]> {
    return (await this.requests()).filter((e) => e.server_error);
  }

  // --- assertions: each rejects with this session's conversation -------------------------

  async assertAllToolCallsAnswered(): Promise<void> {
    assertions.assertAllToolCallsAnswered(...(await this.log()));
  }

  /** `refusal`: a pattern marking a result as the harness's "no such tool" answer. */
  async assertNoUnofferedToolExecuted({ refusal }: { refusal?: RegExp | string } = {}): Promise<void> {
    assertions.assertNoUnofferedToolExecuted(...(await this.log()), refusal);
  }

  async assertModelCalls(bounds: assertions.CallBounds): Promise<void> {
    const [entries, transcript] = await this.log();
    assertions.assertModelCalls(entries, bounds, transcript);
  }

  /** The harness ran scripted MCP tool `tool` on mockllm's MCP server (docs/mcp.md). */
  async assertToolExecuted(tool: string, options: assertions.ToolExecuted = {}): Promise<void> {
    const [entries, transcript] = await this.log();
    assertions.assertToolExecuted(entries, transcript, tool, options);
  }

  /** Every model call to a scripted MCP tool ran there and its result went back: the verdict's `mcp_*` checks. */
  async assertMcpLoopClosed(): Promise<void> {
    const [verdict, transcript] = await Promise.all([this.verdict(), this.transcript()]);
    assertions.assertMcpLoopClosed(verdict, transcript);
  }

  async assertCleanVerdict(): Promise<void> {
    const [verdict, transcript] = await Promise.all([this.verdict(), this.transcript()]);
    assertions.assertCleanVerdict(verdict, transcript);
  }

  /** The entries and their transcript, read together for an assertion. */
  private log(): Promise<[LogEntry[], string]> {
    return Promise.all([this.requests(), this.transcript()]);
  }
}
