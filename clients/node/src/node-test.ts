// `useMockllm()` for the Node test runner: its hooks, wired.
import { after, afterEach, before, beforeEach } from "node:test";

import { type TestMockllm, type TestOptions, useMockllm as withHooks } from "./hooks.js";

export type { TestMockllm, TestOptions } from "./hooks.js";

export function useMockllm(options: TestOptions = {}): TestMockllm {
  return withHooks({ before, after, beforeEach, afterEach }, options);
}
