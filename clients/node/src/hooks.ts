// A server per test file and a fresh session per test, for any runner with the usual
// four hooks: the Node test runner (`mockllm/node-test` wires its hooks) and vitest
// (pass its hooks). Like the pytest fixture: a test's session is reset before it runs,
// and at its end an exception the server hit while answering it fails the test.
import { createHash, randomBytes } from "node:crypto";

import { Client } from "./client.js";
import { type MockllmServer, type ServerOptions, startServer } from "./server.js";
import type { Session } from "./session.js";

type Hook = (fn: (context?: unknown) => unknown) => unknown;

/** `before`/`after` (Node test runner) or `beforeAll`/`afterAll` (vitest), and the per-test two. */
export interface Hooks {
  before?: Hook;
  beforeAll?: Hook;
  after?: Hook;
  afterAll?: Hook;
  beforeEach: Hook;
  afterEach: Hook;
}

export interface TestOptions extends ServerOptions {
  /** Use the server at this URL (default $MOCKLLM_URL) instead of starting one. */
  url?: string;
  /**
   * The run id every session name ends in (`TEST-HASH~ID`), so runs sharing a server never
   * share a session: default $MOCKLLM_RUN_ID, else drawn afresh for each test process.
   */
  runId?: string;
}

/** This process's run id, drawn once: every file's tests in it share it (docs/node.md). */
const DRAWN_RUN_ID = randomBytes(3).toString("hex");
const RUN_ID = /^[A-Za-z0-9._-]{1,40}$/;

function runIdOf(options: TestOptions): string {
  const given = options.runId ?? process.env.MOCKLLM_RUN_ID;
  if (given === undefined || given === "") return DRAWN_RUN_ID;
  if (!RUN_ID.test(given)) throw new TypeError(`runId: ${JSON.stringify(given)} is not a run id (1 to 40 letters, digits, '.', '_' or '-')`);
  return given;
}

export interface TestMockllm {
  /** The running test's session (only inside a test). */
  readonly session: Session;
  readonly client: Client;
  /** The server this file started (undefined when given a URL). */
  readonly server: MockllmServer | undefined;
}

export function useMockllm(hooks: Hooks, options: TestOptions = {}): TestMockllm {
  const before = hooks.before ?? hooks.beforeAll;
  const after = hooks.after ?? hooks.afterAll;
  if (!before || !after) throw new TypeError("useMockllm needs before/after (or beforeAll/afterAll) hooks");
  let server: MockllmServer | undefined;
  let client: Client | undefined;
  let session: Session | undefined;
  const url = options.url ?? process.env.MOCKLLM_URL;
  const runId = runIdOf(options);

  before(async () => {
    if (url) {
      client = new Client(url);
      for (const scenario of options.scenarios ?? []) await client.addScenario(scenario);
    } else {
      server = await startServer(options);
      client = server.client;
    }
  });
  after(async () => {
    await server?.stop();
  });
  hooks.beforeEach(async (context) => {
    session = ready(client).session(`${sessionName(context)}~${runId}`);
    await session.reset(); // a rerun of the same test starts clean too
  });
  hooks.afterEach(async () => {
    const ending = session;
    session = undefined;
    if (!ending) return;
    try {
      const entries = await ending.requests();
      const crashed = entries.filter((e) => e.server_error);
      if (crashed.length) {
        const lines = crashed.map((e) => `log seq ${e.seq}: ${e.path} (${e.api}, turn ${e.turn ?? "?"})\n${e.server_error}`);
        throw new Error(`mockllm: the server raised an exception while answering this test:\n\n${lines.join("\n\n")}`);
      }
      const clash = ending.clash(entries);
      if (clash) throw new Error(`mockllm: session ${JSON.stringify(ending.name)}: ${clash}`);
    } finally {
      await ending.release().catch(() => undefined); // the server gone: the test says so already
    }
  });

  return {
    get session() {
      if (!session) throw new Error("mockllm: there is a session only inside a test");
      return session;
    },
    get client() {
      return ready(client);
    },
    get server() {
      return server;
    },
  };
}

function ready(client: Client | undefined): Client {
  if (!client) throw new Error("mockllm: the server is not started yet (use it inside tests or hooks)");
  return client;
}

/** Readable in the log and a URL path segment; unique per test of a file (the run id follows). */
function sessionName(context: unknown): string {
  const c = context as { name?: string; fullName?: string; task?: { name: string; file?: { filepath?: string } } };
  const name = c?.task?.name ?? c?.name ?? "test";
  const where = c?.task?.file?.filepath ?? process.argv[1] ?? "";
  const digest = createHash("sha256").update(`${where}::${c?.fullName ?? name}`).digest("hex").slice(0, 8);
  let clean = name.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "");
  // Bounded (a URL path segment), keeping the end: a parametrised test's id is there.
  if (clean.length > 200) clean = `${clean.slice(0, 66)}--${clean.slice(-132)}`;
  return `${clean}-${digest}`;
}
