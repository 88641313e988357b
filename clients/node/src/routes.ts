// The admin routes of one server (docs/http-api.md) as an interface: what a Session needs
// from its client. `Client` implements it and `Session` depends only on it, so the two
// modules import this one and never each other (client.ts makes sessions, session.ts
// calls back into the client).
import type { Api, Calls, Failure, LogEntry, Verdict } from "./records.js";

/** YAML text (it has a newline), a path to a YAML file, or a scenario as an object. */
export type ScenarioSource = string | Record<string, unknown>;

/** The Chat Completions flavours (docs/flavours.md): each answers as that provider. */
export const FLAVORS = [
  "openai",
  "deepseek",
  "qwen",
  "kimi",
  "glm",
  "doubao",
  "minimax",
  "mistral",
  "azure",
] as const;
export type Flavor = (typeof FLAVORS)[number];

export interface UrlOptions {
  session?: string;
  api?: Api;
  /** `/f/FLAVOR` first: Chat Completions as that provider (OpenAI's URL only). */
  flavor?: Flavor;
}

export interface RequestFilter {
  session?: string;
  scenario?: string;
  since?: number;
}

/** One server's admin routes, per session where they take one. */
export interface AdminRoutes {
  readonly baseUrl: string;
  url(scenario: string, options?: UrlOptions): string;
  health(): Promise<{ status: string; scenarios: number }>;
  scenarios(): Promise<Array<Record<string, unknown>>>;
  addScenario(source: ScenarioSource): Promise<string>;
  requests(filter?: RequestFilter): Promise<LogEntry[]>;
  verdict(session: string): Promise<Verdict>;
  transcript(session: string, options?: { full?: boolean }): Promise<string>;
  allow(session: string, allow: Record<string, string>, origin?: string): Promise<void>;
  calls(session: string, name?: string, args?: Record<string, unknown>): Promise<Calls>;
  check(session: string, spec: Record<string, unknown>): Promise<Failure | null>;
  clear(session?: string): Promise<number>;
  reset(session?: string): Promise<number>;
  release(session: string): Promise<void>;
  /** The use of each session this client's last reset of it began (its `epoch`). */
  readonly epochs: Map<string, string>;
}
