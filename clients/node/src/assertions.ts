// A session's assertions fail with the words of the server's checks (POST /_mockllm/check,
// mockllm/judge/checks.py and calls.py): the code the Python client's assertions run, so a
// failure reads the same in both languages and no text is kept here. What this module
// adds is the shape of the error: a one-line headline, the session's transcript (the
// server's text, GET /_mockllm/transcript), then expected and happened.
import type { Failure } from "./records.js";

export class MockllmAssertionError extends Error {
  override name = "MockllmAssertionError";
}

export interface CallBounds {
  atMost?: number;
  exactly?: number;
  atLeast?: number;
}

export interface ToolExecuted {
  server?: string;
  arguments?: Record<string, unknown>;
  times?: number;
}

/** Raise what a server check found (its headline, expected and happened), with the transcript. */
export function assertHolds(failure: Failure | null, transcript: string): void {
  if (!failure) return;
  const lines = [`mockllm: ${failure.headline}`, "", transcript, ""];
  lines.push(`expected: ${failure.expected}`, "happened:", ...failure.happened.map((h) => `  - ${h}`));
  throw new MockllmAssertionError(lines.join("\n"));
}

/**
 * A refusal pattern as the server reads it (Python's `re` syntax): a RegExp's source with
 * its `i`, `m` and `s` flags written inline; the others do not change whether it matches.
 */
export function refusalPattern(refusal: RegExp | string): string {
  if (typeof refusal === "string") return refusal;
  const flags = [...refusal.flags].filter((f) => "ims".includes(f)).join("");
  return (flags ? `(?${flags})` : "") + refusal.source;
}
