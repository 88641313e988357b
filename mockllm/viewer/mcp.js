// @ts-check
// MCP messages in the log (docs/mcp.md), and which of them a model's tool call led to.

// An MCP message (docs/mcp.md): the tool side of the loop, what the harness called and got.
function renderMcp(entry) {
  var m = entry.mcp || {};
  var r = entry.response;
  var status = r ? r.status : null;
  var what =
    m.method === "tools/call"
      ? "harness called " + m.tool + "(" + JSON.stringify(m.arguments || {}) + ")"
      : m.method || "transport";
  var outcome = m.error
    ? "→ JSON-RPC error " + m.error.code + ": " + m.error.message
    : m.result
      ? "→ returned" +
        (m.result.is_error ? " (isError)" : "") +
        ": " +
        (m.result.text || (m.result.structured ? JSON.stringify(m.result.structured) : ""))
      : m.tools
        ? "→ " + m.tools.join(", ")
        : m.method === "tools/call"
          ? "→ no result: the call did not finish"
          : null;
  // The transport's own requests (the GET stream, DELETE) are one line: the transcript
  // leaves them out, the viewer keeps them (they are in the log) but out of the way.
  var transport = !m.method && !(status >= 400);
  var cls =
    "entry mcp" +
    (m.method === "tools/call" ? " mcp-call" : "") +
    (transport ? " transport" : "") +
    (status >= 400 || m.error ? " error" : "") +
    (m.fault ? " faulted" : "");
  return el("article", { class: cls, id: "req-" + entry.seq, "data-seq": entry.seq, tabindex: "-1" }, [
    el("header", null, [
      el("h3", { text: "MCP " + (m.server || "?") }),
      el("span", { class: "meta", text: ["#" + entry.seq, m.transport, entry.method, transport ? "transport" : null].filter(Boolean).join(" · ") }),
      badge(status === null ? "none" : status >= 400 ? "fail" : "pass", status === null ? "pending" : "status " + status),
      m.fault ? badge("fault", "fault: " + m.fault) : null,
      m.problem ? badge("warn", "⚠ " + m.problem) : null,
    ]),
    transport ? null : el("div", { class: "msg tool" }, [el("code", { text: what })]),
    outcome ? el("pre", { class: "text short mcp-outcome", text: outcome }) : null,
  ]);
}

// The MCP tools/call a model's call led to: the first after the model's request with the
// tool's name (bare or with the client's prefix, core/mcp.py: names_mcp_tool) and the same
// arguments. The verdict's mcp_calls_executed checks the same, with more care.
function ranOnMcp(call, seq, ctx) {
  var args = canonical(call.arguments);
  for (var i = 0; i < ctx.entries.length; i++) {
    var e = ctx.entries[i];
    var m = e.mcp;
    if (e.api !== "mcp" || e.seq <= seq || !m || m.method !== "tools/call" || !m.tool) continue;
    var name = String(call.name || "");
    var bare = name === m.tool;
    var prefixed =
      name.length > m.tool.length &&
      name.slice(-m.tool.length) === m.tool &&
      "_./-:".indexOf(name.charAt(name.length - m.tool.length - 1)) >= 0;
    if ((bare || prefixed) && canonical(m.arguments || {}) === args) return e;
  }
  return null;
}

function canonical(value) {
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch (err) {
      return value;
    }
  }
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    var out = {};
    Object.keys(value)
      .sort()
      .forEach(function (k) {
        out[k] = sortKeys(value[k]);
      });
    return out;
  }
  return value;
}
