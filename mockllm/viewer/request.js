// @ts-check
// One model request: what the client sent, the findings on it, mockllm's answer (and
// where a stream was cut), and the raw bodies behind lazy <details>.

// Which rule picked the turn, when it is not the plain count (docs/scenarios.md).
function pickedBy(why) {
  return why && !/^counted: \d+ assistant repl(y|ies)$/.test(why) ? why : null;
}

function renderEntry(entry, number, ctx) {
  if (entry.api === "mcp") return renderMcp(entry);
  var r = entry.response;
  var status = r ? r.status : null;
  var head = el("header", null, [
    el("h3", { text: "Request " + number }),
    el("span", {
      class: "meta",
      text: [
        "#" + entry.seq,
        entry.side
          ? "side request " + entry.side.name + (entry.side.rules ? " (" + entry.side.rules + ")" : "")
          : entry.turn === null || entry.turn === undefined
            ? "turn ?"
            : "turn " + entry.turn,
        entry.attempt ? "attempt " + entry.attempt : null,
        entry.side ? entry.side.why : pickedBy(entry.why),
        entry.api || entry.path,
        entry.stream ? "stream" : "not streamed",
        entry.duration_ms === null || entry.duration_ms === undefined
          ? null
          : entry.duration_ms + " ms",
        entry.time ? String(entry.time).slice(11, 23) : null,
      ]
        .filter(Boolean)
        .join(" · "),
    }),
    badge(
      status === null ? "none" : status >= 400 ? "fail" : "pass",
      status === null ? "pending" : "status " + status,
    ),
    r && r.fault ? badge("fault", "fault: " + r.fault.kind) : null,
  ]);
  var parts = [head];
  parts.push(renderInput(entry, ctx));
  if (entry.expectation_failures && entry.expectation_failures.length)
    parts.push(renderFindings("Expectation failures", entry.expectation_failures, "expectation"));
  if (entry.violations && entry.violations.length) {
    parts.push(renderFindings("Provider rule violations", entry.violations, "violation"));
    entry.violations.forEach(function (v) {
      if (v.rule === "history_diverged") parts.push(renderDivergence(entry, ctx));
    });
  }
  parts.push(renderReply(entry, ctx));
  parts.push(renderRaw(entry));
  var cls =
    "entry" +
    (status !== null && status >= 400 ? " error" : "") +
    (r && r.fault ? " faulted" : "");
  return el(
    "article",
    { class: cls, id: "req-" + entry.seq, "data-seq": entry.seq, tabindex: "-1" },
    parts,
  );
}

// An embeddings request (docs/embeddings.md): its texts, as OpenAI's `input` or Gemini's
// `content` / `requests[].content` carry them; a token array shows as its ids.
function embeddingTexts(request) {
  if (!request || typeof request !== "object") return [];
  var parts = function (content) {
    return ((content && content.parts) || [])
      .map(function (p) {
        return p && typeof p.text === "string" ? p.text : "";
      })
      .join("\n");
  };
  if ("input" in request || "prompt" in request) {
    var input = "input" in request ? request.input : request.prompt;
    if (!Array.isArray(input) || (input.length && typeof input[0] === "number")) input = [input];
    return input.map(function (i) {
      return Array.isArray(i) ? "tokens: " + i.join(" ") : String(i);
    });
  }
  if (Array.isArray(request.requests))
    return request.requests.map(function (r) {
      return parts(r && r.content);
    });
  return [parts(request.content)];
}

function isEmbeddings(entry) {
  return /-embeddings$/.test(entry.api || "");
}

function renderEmbeddingInputs(entry) {
  var texts = embeddingTexts(entry.request);
  var shown = texts.slice(0, 20).map(function (t, i) {
    return el("div", { class: "msg user" }, [
      el("span", { class: "role", text: "input " + i }),
      el("pre", { class: "text short", text: t }),
    ]);
  });
  var more =
    texts.length > 20 ? [el("p", { class: "meta", text: texts.length - 20 + " more inputs" })] : [];
  return el("section", { class: "input", "aria-label": "Sent by the client" }, shown.concat(more));
}

// The messages new in this request: those after the last assistant reply it carries.
function renderInput(entry, ctx) {
  if (isEmbeddings(entry)) return renderEmbeddingInputs(entry);
  var conv = entry.conversation;
  if (!conv)
    return el("p", {
      class: "note",
      text: entry.request_truncated
        ? "The request body was kept cut" + cutNote(entry.request_truncated) +
          ": its messages are in the --log file."
        : "The request body did not parse as a conversation (see the raw request).",
    });
  var last = -1;
  conv.forEach(function (m, i) {
    if (m.role === "assistant") last = i;
  });
  var items = [];
  conv.slice(last + 1).forEach(function (m) {
    (m.tool_results || []).forEach(function (r) {
      var known = ctx.served[r.call_id];
      items.push(
        el("div", { class: "msg tool" + (known ? "" : " stands-out") }, [
          el("span", { class: "role", text: "tool result" }),
          " for ",
          el("code", { text: r.call_id }),
          known ? null : badge("fail", "⚠ answers no call mockllm made"),
          r.is_error ? badge("note", "is_error") : null,
          el("pre", { class: "text short", text: r.content }),
        ]),
      );
    });
    if (m.text || !(m.tool_results || []).length)
      items.push(
        el("div", { class: "msg " + m.role }, [
          el("span", { class: "role", text: m.role }),
          m.at ? el("span", { class: "at", text: " (" + m.at + ")" }) : null,
          el("pre", { class: "text", text: m.text || "" }),
        ]),
      );
  });
  var tools =
    entry.tools && entry.tools.length
      ? "tools offered: " + entry.tools.join(", ")
      : "no tools offered";
  return el(
    "section",
    { class: "input", "aria-label": "Sent by the client" },
    items.concat([el("p", { class: "meta", text: tools })]),
  );
}

function renderFindings(title, findings, kind) {
  return el("section", { class: "findings " + kind, "aria-label": title }, [
    el("h4", { text: title }),
    el(
      "ul",
      null,
      findings.map(function (f) {
        return el("li", null, [
          el("code", { class: "rule", text: f.rule }),
          " ",
          el("span", { text: f.message }),
        ]);
      }),
    ),
  ]);
}

function renderReply(entry, ctx) {
  var r = entry.response;
  var box = el("section", { class: "reply", "aria-label": "mockllm's answer" });
  if (!r) {
    box.appendChild(el("p", { class: "note", text: "No response yet: it is still being sent." }));
    return box;
  }
  if (r.fault) {
    box.appendChild(
      el("p", { class: "fault-line" }, [
        badge("fault", "⚡ fault " + r.fault.kind),
        " " + (r.fault.detail || ""),
        r.fault.why ? el("span", { class: "meta", text: " (" + r.fault.why + ")" }) : null,
      ]),
    );
  }
  if (r.error) {
    box.appendChild(
      el("div", { class: "msg error" }, [
        el("span", { class: "role", text: "error " + r.status }),
        " ",
        el("code", { class: "rule", text: r.error.kind || "" }),
        el("pre", { class: "text", text: r.error.message || "" }),
        r.retry_after
          ? el("p", { class: "meta", text: "retry-after " + r.retry_after + " s" })
          : null,
      ]),
    );
    if (entry.server_error)
      box.appendChild(
        lazy("Server traceback", "tb-" + entry.seq, function () {
          return el("pre", { class: "text", text: entry.server_error });
        }),
      );
    return box;
  }
  if (isEmbeddings(entry)) {
    (r.notes || []).forEach(function (n) {
      box.appendChild(el("p", { class: "meta", text: n }));
    });
    return box;
  }
  // What the client received, as the server recorded it (docs/http-api.md,
  // response.delivered): null when the reply arrived whole.
  var got = r.delivered || null;
  var cut = got && got.cut;
  var parts = [];
  if (r.reasoning || (got && got.reasoning))
    parts.push({ kind: "reasoning", full: r.reasoning || got.reasoning });
  if (r.text) parts.push({ kind: "text", full: r.text });
  (r.tool_calls || []).forEach(function (call, i) {
    parts.push({ kind: "call", full: call.arguments, call: i });
  });
  var label = null;
  if (cut && cut["in"] !== "body" && cut.by !== "stall") {
    label =
      cut.by === "stream_error"
        ? "✂ error event here"
        : cut.by === "disconnect"
          ? "✂ client hung up here"
          : "✂ cut here · " +
            ((/then (\w+)$/.exec((r.fault && r.fault.detail) || "") || [])[1] || "the end");
    placeCut(parts, got);
  }
  var msg = el("div", { class: "msg assistant" }, [
    el("span", { class: "role", text: "assistant" }),
    el("span", { class: "meta", text: " · finish " + (r.finish || "?") }),
  ]);
  if (cut && cut["in"] === "body" && cut.by !== "stall")
    msg.appendChild(
      el("p", { class: "cut-note" }, [
        el("mark", { class: "cut", text: "✂ body cut" }),
        " after " +
          r.bytes_sent +
          " bytes: the JSON body is incomplete, so the client got no usable reply (see the raw response)",
      ]),
    );
  if (cut && cut.by === "stall")
    msg.appendChild(
      el("p", { class: "cut-note" }, [
        el("mark", { class: "cut", text: "✂ nothing sent" }),
        " after the headers: the connection stalled",
      ]),
    );
  parts.forEach(function (p) {
    if (p.kind === "reasoning")
      msg.appendChild(
        el("div", { class: "reasoning" }, [
          el("span", { class: "role", text: "reasoning" }),
          piece(p, label),
        ]),
      );
    if (p.kind === "text") msg.appendChild(piece(p, label));
  });
  var calls = parts.filter(function (p) {
    return p.kind === "call";
  });
  if (calls.length) msg.appendChild(renderCalls(r.tool_calls, ctx, calls, label, entry.seq));
  (r.notes || []).forEach(function (n) {
    msg.appendChild(el("p", { class: "note", text: "note: " + n }));
  });
  box.appendChild(msg);
  return box;
}

// The cut sits where the server says it fell (response.delivered.cut.in): parts before
// it arrived whole, parts after it never did, and of the part it fell in the client has
// what `got` says. A part the reply has no text for (reasoning a wire sends encrypted)
// leaves the cut at the start of the next one; "tail" is after them all.
function rank(where) {
  if (where === "head") return 0;
  if (where === "reasoning") return 1;
  if (where === "text") return 2;
  var call = /^call:(\d+)$/.exec(where);
  return call ? 3 + Number(call[1]) : Infinity;
}

function placeCut(parts, got) {
  var where = rank(got.cut["in"]);
  var at = parts.length - 1;
  for (var i = parts.length - 1; i >= 0; i--) {
    var p = parts[i];
    if (rank(p.kind === "call" ? "call:" + p.call : p.kind) >= where) at = i;
  }
  parts.forEach(function (p, i) {
    var call = p.kind === "call" ? got.tool_calls[p.call] : null;
    p.got = p.kind === "call" ? (call ? call.arguments : "") : got[p.kind] || "";
    p.mode = i < at ? "whole" : i === at ? "cut" : "lost";
    if (p.mode === "cut" && p.full.slice(0, p.got.length) !== p.got) p.got = "";
  });
}

function piece(p, label) {
  var pre = el("pre", { class: "text" + (p.kind === "call" ? " args" : "") });
  if (!p.mode || p.mode === "whole") {
    pre.textContent = p.full;
    return pre;
  }
  if (p.mode === "cut") {
    pre.appendChild(document.createTextNode(p.got));
    pre.appendChild(el("mark", { class: "cut", text: label }));
  }
  var rest = p.mode === "cut" ? p.full.slice(p.got.length) : p.full;
  if (rest) pre.appendChild(el("del", { class: "lost", title: "not delivered", text: rest }));
  return pre;
}

function renderCalls(calls, ctx, parts, label, seq) {
  var rows = calls.map(function (call, i) {
    var answer = ctx.answers[call.id];
    var ran = ranOnMcp(call, seq, ctx);
    var problem = call.problem
      ? badge(call.problem === "not offered" ? "fail" : "warn", "⚠ " + call.problem)
      : null;
    var left = el("div", { class: "call-side" }, [
      el("p", null, [
        el("span", { class: "role", text: "tool call " }),
        el("code", { class: "tool", text: call.name }),
        " ",
        el("code", { class: "id", text: call.id }),
        " ",
        problem,
      ]),
      piece(parts[i], label),
      ran
        ? el("p", { class: "mcp-ran" }, [
            badge("pass", "ran on MCP " + (ran.mcp.server || "?")),
            el("span", { class: "meta", text: " as " + ran.mcp.tool + " in #" + ran.seq }),
          ])
        : null,
    ]);
    var right = answer
      ? el("div", { class: "result-side" + (answer.result.is_error ? " is-error" : "") }, [
          el("p", null, [
            el("span", { class: "role", text: "result" }),
            el("span", { class: "meta", text: " sent in the request at log seq " + answer.seq }),
            answer.result.is_error ? badge("note", "is_error") : null,
          ]),
          el("pre", { class: "text", text: answer.result.content }),
        ])
      : el("div", { class: "result-side unanswered" }, [
          badge("fail", "⚠ unanswered"),
          el("p", { class: "meta", text: "No later request carried a result for this call." }),
        ]);
    return el(
      "div",
      {
        class: "call-row" + (call.problem ? " problem" : "") + (answer ? "" : " unanswered"),
        role: "group",
        "aria-label": "call " + call.name + " " + call.id,
      },
      [left, right],
    );
  });
  return el("div", { class: "calls" }, rows);
}

// history_diverged: the calls served at the first turn that differs, against what the
// client sent back for that turn, as a line diff.
function renderDivergence(entry, ctx) {
  var served = map();
  ctx.entries.forEach(function (e) {
    if (
      e.seq < entry.seq &&
      e.response &&
      e.response.status === 200 &&
      e.turn !== null &&
      e.turn !== undefined
    )
      served[e.turn] = e.response.tool_calls || [];
  });
  var turn = 0;
  /** @type {{turn: number, want: string[], got: string[], at?: string} | null} */
  var found = null;
  (entry.conversation || []).forEach(function (m) {
    if (m.role !== "assistant" || found) return;
    var want = callLines(served[turn] || []);
    var got = callLines(m.tool_calls || []);
    if (served[turn] && want.join("\n") !== got.join("\n"))
      found = { turn: turn, want: want, got: got, at: m.at };
    turn += 1;
  });
  var box = el("section", { class: "divergence", "aria-label": "History divergence" }, [
    el("h4", { text: "History divergence" }),
  ]);
  if (!found) {
    box.appendChild(
      el("p", {
        class: "note",
        text: "The served reply is not in this session's log, so there is nothing to compare.",
      }),
    );
    return box;
  }
  box.appendChild(
    el("p", {
      text:
        "The reply of turn " +
        found.turn +
        (found.at ? " (" + found.at + ")" : "") +
        ": − as mockllm served it, + as the client sent it back",
    }),
  );
  var pre = el("pre", { class: "diff" });
  diff(found.want, found.got).forEach(function (line) {
    var tag = line[0] === "-" ? "del" : line[0] === "+" ? "ins" : "span";
    pre.appendChild(el(tag, { text: line[0] + " " + line[1] + "\n" }));
  });
  box.appendChild(pre);
  return box;
}

function callLines(calls) {
  return calls.map(function (c) {
    var args = c.arguments;
    try {
      args = JSON.stringify(JSON.parse(args)); // clients re-encode: compare as JSON
    } catch (e) {
      /* not JSON: as it is */
    }
    return c.name + "(" + args + ") id=" + c.id;
  });
}

function diff(a, b) {
  var n = a.length,
    m = b.length,
    lcs = [],
    i,
    j;
  for (i = 0; i <= n; i++) lcs.push(new Array(m + 1).fill(0));
  for (i = n - 1; i >= 0; i--)
    for (j = m - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  var out = [];
  i = 0;
  j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push([" ", a[i]]);
      i++;
      j++;
    } else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out.push(["-", a[i]]);
      i++;
    } else {
      out.push(["+", b[j]]);
      j++;
    }
  }
  if (!n && !m) out.push([" ", "(no calls)"]);
  return out;
}

// A body the in-memory log kept cut (--log-request-cap): its size and hash, and how much.
function cutNote(cut) {
  return (
    " (cut to " + cut.kept + " of " + cut.bytes + " bytes by --log-request-cap; sha256 " +
    String(cut.sha256).slice(0, 16) + "…)"
  );
}

function renderRaw(entry) {
  var r = entry.response;
  return el("div", { class: "raws" }, [
    lazy(
      "Raw request" + (entry.request_truncated ? cutNote(entry.request_truncated) : ""),
      "rq-" + entry.seq,
      function () {
        return el("pre", { class: "text raw-body", text: pretty(entry.request) });
      },
    ),
    r
      ? lazy(
          "Raw response" + (r.body_truncated ? " (truncated by --log-body-cap)" : ""),
          "rs-" + entry.seq,
          function () {
            var pre = el("pre", { class: "text raw-body", text: r.body });
            if (r.delivered && r.delivered.cut && r.delivered.cut.by !== "stall")
              pre.appendChild(
                el("mark", { class: "cut", text: "✂ " + (r.fault.detail || "cut") }),
              );
            return pre;
          },
        )
      : null,
    lazy("Request headers", "hd-" + entry.seq, function () {
      return el("pre", { class: "text raw-body", text: pretty(entry.headers || {}) });
    }),
  ]);
}
