// mockllm for Node: start a server, read its log, assert over a session's conversation.
export * from "./assertions.js";
export { Client, MockllmError } from "./client.js";
export { type Hooks, type TestMockllm, type TestOptions, useMockllm } from "./hooks.js";
export * from "./records.js";
export { type AdminRoutes, FLAVORS, type Flavor, type RequestFilter, type ScenarioSource, type UrlOptions } from "./routes.js";
export { MockllmServer, type ServerOptions, startServer } from "./server.js";
export { type RequestQuery, Session } from "./session.js";
