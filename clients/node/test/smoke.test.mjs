import assert from "node:assert/strict";
import { test } from "node:test";
import { useMockllm } from "mockllm/node-test";
const mock = useMockllm();
test("hello round trip", async () => {
  const r = await fetch(mock.session.url("hello") + "/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "Hi" }] }) });
  assert.equal(r.status, 200);
  await mock.session.assertModelCalls({ exactly: 1 });
  await assert.rejects(mock.session.assertModelCalls({ exactly: 2 }), /mockllm session 'hello-round-trip-[0-9a-f]{8}', 1 model request/);
  console.log(await mock.session.transcript());
});
