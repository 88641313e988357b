// A mockllm server for a test run: spawns the Python CLI (`python -m mockllm serve
// --port 0 --ready-file FILE`) and waits until it listens. Python and the
// `mockllm-server` package are the only things needed besides Node.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import { Client, MockllmError } from "./client.js";

export interface ServerOptions {
  /** The Python that has mockllm-server installed (default: $MOCKLLM_PYTHON, else python3). */
  python?: string;
  /** Scenario files or folders added to the bundled library once the server listens. */
  scenarios?: string[];
  /** More `mockllm serve` flags, e.g. ["--validation", "warn"]. */
  args?: string[];
  /** How long to wait for the server to listen (default 20 s). */
  timeoutMs?: number;
}

const OUTPUT_KEPT = 8_000; // characters of the server's output kept for error messages

export class MockllmServer {
  readonly client: Client;

  constructor(
    readonly url: string,
    private readonly process: ChildProcess,
    private readonly output: () => string,
  ) {
    this.client = new Client(url);
  }

  /** What the server printed (its last few thousand characters). */
  get log(): string {
    return this.output();
  }

  async stop(): Promise<void> {
    const child = this.process;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

export async function startServer(options: ServerOptions = {}): Promise<MockllmServer> {
  const python = options.python ?? process.env.MOCKLLM_PYTHON ?? "python3";
  const dir = await mkdtemp(join(tmpdir(), "mockllm-"));
  const ready = join(dir, "ready");
  const command = ["-m", "mockllm", "serve", "--port", "0", "--ready-file", ready, ...(options.args ?? [])];
  const child = spawn(python, command, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PYTHONUNBUFFERED: "1" },
  });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-OUTPUT_KEPT);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const killOnExit = () => child.kill("SIGKILL"); // never outlive the test process
  process.once("exit", killOnExit);
  child.once("exit", () => process.removeListener("exit", killOnExit));
  try {
    const url = await waitReady(child, ready, python, () => output, options.timeoutMs ?? 20_000);
    const server = new MockllmServer(url, child, () => output);
    for (const file of await scenarioFiles(options.scenarios ?? [])) await server.client.addScenario(file);
    return server;
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function waitReady(
  child: ChildProcess,
  ready: string,
  python: string,
  output: () => string,
  timeoutMs: number,
): Promise<string> {
  await spawned(child, python);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const url = await readFile(ready, "utf8").catch(() => "");
    if (url.trim()) return url.trim();
    if (child.exitCode !== null) {
      await new Promise((resolve) => setImmediate(resolve)); // let the pipes drain
      const said = output().trim();
      if (/No module named mockllm/.test(said)) {
        throw new MockllmError(
          `mockllm: the Python package is not installed for '${python}': run ` +
            `\`${python} -m pip install mockllm-server\`, or set MOCKLLM_PYTHON to the Python that has it.`,
        );
      }
      throw new MockllmError(`mockllm: \`mockllm serve\` exited with ${child.exitCode}:\n${said}`);
    }
    await sleep(20);
  }
  throw new MockllmError(`mockllm: the server did not listen within ${timeoutMs} ms:\n${output()}`);
}

/** Resolves once the process runs; rejects, saying what to do, when it cannot start. */
function spawned(child: ChildProcess, python: string): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", (error: NodeJS.ErrnoException) => {
      reject(
        new MockllmError(
          error.code === "ENOENT"
            ? `mockllm: cannot start the server: no Python at '${python}'. Install Python 3.10+ and ` +
              "`pip install mockllm-server`, or set MOCKLLM_PYTHON (or the `python` option) to the " +
              "Python that has it."
            : `mockllm: cannot start '${python}': ${error.message}`,
        ),
      );
    });
  });
}

/** The YAML files of these files and folders (folders searched recursively), in name order. */
async function scenarioFiles(paths: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    if (!(await stat(path)).isDirectory()) {
      files.push(path);
      continue;
    }
    const names = (await readdir(path, { recursive: true })).filter((n) => /\.ya?ml$/.test(n));
    files.push(...names.sort().map((n) => join(path, n)));
  }
  return files;
}
