// One session of a server: its URLs, its log, and the assertions over them. This is what
// the per-test helper hands each test, and what `client.session(name)` gives a script.
import * as assertions from "./assertions.js";
import type { Client, ScenarioSource } from "./client.js";
import type { Api, LogEntry, Verdict } from "./records.js";
import { transcript } from "./transcript.js";

export class Session {
  constructor(
    readonly client: Client,
    readonly name: string,
  ) {}

  /** Base URL for an SDK, carrying this session: `{server}/s/{scenario}/{session}[/v1]`. */
  url(scenario: string, { api = "openai" }: { api?: Api } = {}): string {
    return this.client.url(scenario, { session: this.name, api });
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

  async transcript(): Promise<string> {
    return transcript(await this.requests(), this.name);
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
    assertions.assertAllToolCallsAnswered(await this.requests(), this.name);
  }

  /** `refusal`: a pattern marking a result as the harness's "no such tool" answer. */
  async assertNoUnofferedToolExecuted({ refusal }: { refusal?: RegExp | string } = {}): Promise<void> {
    assertions.assertNoUnofferedToolExecuted(await this.requests(), this.name, refusal);
  }

  async assertModelCalls(bounds: assertions.CallBounds): Promise<void> {
    assertions.assertModelCalls(await this.requests(), bounds, this.name);
  }

  async assertCleanVerdict(): Promise<void> {
    const [verdict, entries] = await Promise.all([this.verdict(), this.requests()]);
    assertions.assertCleanVerdict(verdict, entries, this.name);
  }
}
