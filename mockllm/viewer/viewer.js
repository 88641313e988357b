/* mockllm request-log viewer: the one renderer of GET /_mockllm/ui and of the static
 * report. It reads {title, live, entries, verdicts, tests} (docs/viewer.md) and builds
 * the page with createElement/textContent only, so no logged string is ever parsed as
 * HTML. The live page polls the admin routes next to it; the report has its data inline.
 */
(function () {
  "use strict";

  var PAGE = 200; // requests drawn at once in a session; "Show more" draws the next ones
  var POLL_MS = 1000;

  var state = {
    entries: [], // in arrival order
    index: map(), // seq -> position in entries (live)
    verdicts: map(),
    tests: map(),
    selected: null,
    shown: PAGE,
    filter: { text: "", scenario: "", status: "" },
  };

  // ---- DOM helpers -------------------------------------------------------------------

  function el(tag, props, children) {
    var node = document.createElement(tag);
    if (props) {
      Object.keys(props).forEach(function (key) {
        var value = props[key];
        if (value === undefined || value === null || value === false) return;
        if (key === "text") node.textContent = String(value);
        else if (key === "class") node.className = value;
        else if (key.slice(0, 2) === "on") node.addEventListener(key.slice(2), value);
        else node.setAttribute(key, value === true ? "" : String(value));
      });
    }
    (children || []).forEach(function (child) {
      if (child === null || child === undefined || child === false) return;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  // Keyed by logged strings: a session named "constructor" or "__proto__" must be a key
  // like any other, so no map inherits from Object.prototype.
  function map() {
    return Object.create(null);
  }

  function badge(kind, text) {
    return el("span", { class: "badge " + kind, text: text });
  }

  function pretty(value) {
    if (typeof value === "string") return value;
    return JSON.stringify(value, null, 2);
  }

  function plural(count, noun) {
    return count + " " + noun + (count === 1 ? "" : "s");
  }

  // A <details> whose body is built only when first opened: raw bodies of thousands of
  // requests would otherwise be most of the page's weight.
  function lazy(summary, key, build) {
    var details = el("details", { class: "raw", "data-key": key }, [
      el("summary", { text: summary }),
    ]);
    details.addEventListener("toggle", function () {
      if (details.open && details.childNodes.length === 1) details.appendChild(build());
    });
    return details;
  }

  // ---- the model of the log ----------------------------------------------------------

  function sessionName(entry) {
    return entry.session === null || entry.session === undefined ? "(none)" : String(entry.session);
  }

  function statusOf(entry) {
    return entry.response ? entry.response.status : null;
  }

  function sessions() {
    var byName = map();
    var order = [];
    function get(name) {
      if (!byName[name]) {
        byName[name] = { name: name, entries: [], scenarios: [], first: order.length };
        order.push(byName[name]);
      }
      return byName[name];
    }
    Object.keys(state.tests).forEach(function (name) {
      get(name);
    });
    state.entries.forEach(function (entry) {
      var s = get(sessionName(entry));
      s.entries.push(entry);
      if (entry.scenario && s.scenarios.indexOf(entry.scenario) < 0)
        s.scenarios.push(entry.scenario);
    });
    order.forEach(function (s) {
      var test = state.tests[s.name];
      var verdict = state.verdicts[s.name];
      var last = s.entries[s.entries.length - 1];
      s.test = test || null;
      s.verdict = verdict || null;
      s.lastStatus = last ? statusOf(last) : undefined;
      s.testFailed = !!test && (test.outcome === "failed" || test.outcome === "error");
      s.failed = s.testFailed || (!!verdict && !verdict.ok);
      s.errors = s.entries.filter(function (e) {
        return (statusOf(e) || 0) >= 400 || !!e.server_error;
      }).length;
      s.faults = s.entries.some(function (e) {
        return !!(e.response && e.response.fault);
      });
    });
    // Failing first (a failed test, then a failed verdict), then in order of appearance.
    return order.slice().sort(function (a, b) {
      var rank = b.testFailed - a.testFailed || b.failed - a.failed;
      return rank || a.first - b.first;
    });
  }

  function matches(s) {
    var f = state.filter;
    if (f.text) {
      var hay = (s.name + " " + (s.test ? s.test.test : "")).toLowerCase();
      if (hay.indexOf(f.text.toLowerCase()) < 0) return false;
    }
    if (f.scenario && s.scenarios.indexOf(f.scenario) < 0) return false;
    if (f.status === "failing" && !s.failed) return false;
    if (f.status === "errors" && !s.errors) return false;
    if (f.status === "faults" && !s.faults) return false;
    if (f.status === "passing" && s.failed) return false;
    return true;
  }

  // call id -> the first tool result that answers it, and the request that carried it.
  function answers(entries) {
    var found = map();
    entries.forEach(function (entry) {
      (entry.conversation || []).forEach(function (m) {
        (m.tool_results || []).forEach(function (r) {
          if (!found[r.call_id]) found[r.call_id] = { result: r, seq: entry.seq };
        });
      });
    });
    return found;
  }

  function servedIds(entries) {
    var ids = map();
    entries.forEach(function (e) {
      ((e.response && e.response.tool_calls) || []).forEach(function (c) {
        ids[c.id] = true;
      });
    });
    return ids;
  }

  // ---- rendering: the session list ---------------------------------------------------

  // Two subjects, told apart in words and colour: the test (pytest's outcome, solid
  // badges) and the verdict (mockllm's checks, its label as the server words it).
  function testLabel(test) {
    var failed = test.outcome === "failed" || test.outcome === "error";
    if (failed) return "✗ test " + test.outcome.toUpperCase();
    return (test.outcome === "passed" ? "✓ " : "") + "test " + test.outcome;
  }

  function testBadge(test) {
    var failed = test.outcome === "failed" || test.outcome === "error";
    return badge(
      "test " + (failed ? "test-fail" : test.outcome === "passed" ? "test-pass" : "none"),
      testLabel(test),
    );
  }

  function verdictLabel(verdict) {
    return verdict.label || (verdict.ok ? "✓ verdict: pass" : "✗ verdict: FAIL");
  }

  function verdictBadge(verdict) {
    return badge("verdict " + (verdict.ok ? "pass" : "fail"), verdictLabel(verdict));
  }

  function sessionBadges(s) {
    var out = [];
    if (s.test) out.push(testBadge(s.test));
    if (s.verdict) out.push(verdictBadge(s.verdict));
    if (!out.length) out.push(badge("none", "no verdict"));
    return out;
  }

  function renderList(all) {
    var list = document.getElementById("sessions");
    var shown = all.filter(matches);
    list.textContent = "";
    shown.forEach(function (s) {
      var last =
        s.lastStatus === undefined
          ? "no requests"
          : "last " + (s.lastStatus === null ? "pending" : s.lastStatus);
      var button = el(
        "button",
        {
          type: "button",
          class: "session" + (s.failed ? " failed" : ""),
          "data-session": s.name,
          "aria-current": s.name === state.selected ? "true" : null,
          onclick: function () {
            select(s.name);
          },
        },
        [
          el("span", { class: "name", text: s.test ? s.test.test : s.name }),
          el("span", { class: "badges" }, sessionBadges(s).concat([
            s.errors ? badge("warn", "⚠ " + plural(s.errors, "error")) : null,
          ])),
          el("span", {
            class: "meta",
            text:
              (s.scenarios.join(", ") || "no scenario") +
              " · " +
              entryCounts(s.entries) +
              " · " +
              last,
          }),
        ],
      );
      list.appendChild(el("li", null, [button]));
    });
    document.getElementById("count").textContent =
      shown.length === all.length
        ? plural(all.length, "session") + ", " + entryCounts(state.entries)
        : shown.length + " of " + plural(all.length, "session") + " shown";
    return shown;
  }

  function renderScenarioOptions(all) {
    var select = document.getElementById("f-scenario");
    var names = map();
    all.forEach(function (s) {
      s.scenarios.forEach(function (n) {
        names[n] = true;
      });
    });
    var sorted = Object.keys(names).sort();
    var current = Array.prototype.map.call(select.options, function (o) {
      return o.value;
    });
    if (current.join("\n") === [""].concat(sorted).join("\n")) return;
    select.textContent = "";
    select.appendChild(el("option", { value: "", text: "all scenarios" }));
    sorted.forEach(function (n) {
      select.appendChild(
        el("option", { value: n, text: n, selected: n === state.filter.scenario }),
      );
    });
  }

  // ---- rendering: one session --------------------------------------------------------

  function renderSession(all) {
    var main = document.getElementById("detail");
    var s = null;
    all.forEach(function (x) {
      if (x.name === state.selected) s = x;
    });
    var keep = keepState(main);
    main.textContent = "";
    if (!s) {
      main.appendChild(
        el("p", {
          class: "empty",
          text: all.length ? "Choose a session." : "No requests logged yet.",
        }),
      );
      return;
    }
    main.appendChild(el("h2", { id: "session-title", text: s.test ? s.test.test : s.name }));
    var facts = [
      s.test ? "session " + s.name : null,
      "scenario " + (s.scenarios.join(", ") || "none"),
      entryCounts(s.entries),
    ];
    main.appendChild(el("p", { class: "meta", text: facts.filter(Boolean).join(" · ") }));
    if (s.test) main.appendChild(renderTest(s.test));
    if (s.verdict) main.appendChild(renderVerdict(s.verdict));
    if (!s.entries.length) {
      main.appendChild(
        el("p", { class: "empty", text: "No model requests were logged for this session." }),
      );
      return;
    }
    var problem = firstProblem(s.entries);
    if (problem) main.appendChild(renderFirstProblem(problem));
    var ctx = { answers: answers(s.entries), served: servedIds(s.entries), entries: s.entries };
    var list = el("ol", { class: "requests", "aria-label": "Requests" });
    var numbers = modelNumbers(s.entries);
    s.entries.slice(0, state.shown).forEach(function (entry, i) {
      list.appendChild(el("li", null, [renderEntry(entry, numbers[i], ctx)]));
    });
    main.appendChild(list);
    if (s.entries.length > state.shown) {
      var rest = s.entries.length - state.shown;
      main.appendChild(
        el("button", {
          type: "button",
          class: "more",
          text: "Show " + Math.min(rest, PAGE) + " more (" + rest + " not shown)",
          onclick: function () {
            state.shown += PAGE;
            render();
          },
        }),
      );
    }
    restoreState(main, keep);
  }

  // "N requests", and beside them the MCP messages of the session (docs/mcp.md), which are
  // log entries too but not model requests (the transcript counts them apart as well).
  function entryCounts(entries) {
    var mcp = entries.filter(function (e) {
      return e.api === "mcp";
    }).length;
    var model = plural(entries.length - mcp, "request");
    return mcp ? model + " · " + plural(mcp, "MCP message") : model;
  }

  // Each model request's number in its session (1, 2, ...): MCP messages between them are
  // not counted, so "Request 2" is the model's second request, as in the transcript.
  function modelNumbers(entries) {
    var n = 0;
    return entries.map(function (e) {
      return e.api === "mcp" ? null : ++n;
    });
  }

  // The first request that went wrong, and why in one word: where to start reading.
  function firstProblem(entries) {
    var numbers = modelNumbers(entries);
    for (var i = 0; i < entries.length; i++) {
      var why = problemOf(entries[i]);
      if (why) return { entry: entries[i], number: numbers[i], index: i + 1, why: why };
    }
    return null;
  }

  function problemOf(e) {
    var r = e.response || {};
    if (e.server_error) return "mockllm raised an exception";
    if ((e.violations || []).length) return e.violations[0].rule;
    if ((e.expectation_failures || []).length) return e.expectation_failures[0].rule;
    if (r.fault) return "fault " + r.fault.kind;
    if ((r.status || 0) >= 400) return "status " + r.status + (r.error ? " " + r.error.kind : "");
    return null;
  }

  function renderFirstProblem(problem) {
    var e = problem.entry;
    var turn = e.turn === null || e.turn === undefined ? "?" : e.turn;
    var go = el("button", {
      type: "button",
      class: "link",
      text:
        problem.number === null
          ? "MCP " + ((e.mcp && e.mcp.server) || "?") + " #" + e.seq
          : "request " + problem.number + ", turn " + turn,
      onclick: function () {
        if (problem.index > state.shown) {
          state.shown = problem.index;
          render();
        }
        var article = document.getElementById("req-" + e.seq);
        if (article) {
          article.scrollIntoView({ block: "start" });
          article.focus();
        }
      },
    });
    return el("p", { class: "first-problem" }, [
      badge("warn", "⚠ first problem"),
      " ",
      go,
      ": ",
      el("code", { class: "rule", text: problem.why }),
    ]);
  }

  function renderTest(test) {
    var failed = test.outcome === "failed" || test.outcome === "error";
    return el(
      "section",
      { class: "test " + (failed ? "failed" : "passed"), "aria-label": "Test" },
      [
        el("p", null, [
          testBadge(test),
          " ",
          el("code", { text: test.test }),
        ]),
        test.message ? el("pre", { class: "text", text: test.message }) : null,
      ],
    );
  }

  function renderVerdict(verdict) {
    var failed = verdict.checks.filter(function (c) {
      return c.status ? c.status === "failed" : !c.ok;
    });
    var waived = verdict.checks.filter(function (c) {
      return c.status === "waived";
    });
    var head = el("p", null, [
      verdictBadge(verdict),
      " ",
      failed.length
        ? failed.length + " of " + plural(verdict.checks.length, "check") + " failed"
        : plural(verdict.checks.length, "check"),
    ]);
    var items = failed.map(function (c) {
      return el("li", { class: "check failed" }, [
        badge("verdict fail", "✗ " + c.name),
        " ",
        c.message,
      ]);
    });
    waived.forEach(function (c) {
      items.push(
        el("li", { class: "check waived" }, [
          badge("waived", "~ " + c.name + " waived"),
          " ",
          c.waived,
          c.message ? el("span", { class: "meta", text: " (it found: " + c.message + ")" }) : null,
        ]),
      );
    });
    return el("section", { class: "verdict", "aria-label": "Verdict" }, [
      head,
      items.length ? el("ul", null, items) : null,
    ]);
  }

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

  // Which rule picked the turn, when it is not the plain count (docs/scenarios.md).
  function pickedBy(why) {
    return why && !/^counted: \d+ assistant repl(y|ies)$/.test(why) ? why : null;
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

  // The messages new in this request: those after the last assistant reply it carries.
  function renderInput(entry, ctx) {
    var conv = entry.conversation;
    if (!conv)
      return el("p", {
        class: "note",
        text: "The request body did not parse as a conversation (see the raw request).",
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
              el("span", { class: "meta", text: " sent in request #" + answer.seq }),
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

  function renderRaw(entry) {
    var r = entry.response;
    return el("div", { class: "raws" }, [
      lazy("Raw request", "rq-" + entry.seq, function () {
        return el("pre", { class: "text raw-body", text: pretty(entry.request) });
      }),
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

  // Open <details> and scroll survive a live re-render.
  function keepState(root) {
    var open = map();
    Array.prototype.forEach.call(root.querySelectorAll("details[open]"), function (d) {
      open[d.getAttribute("data-key")] = true;
    });
    return { open: open, x: window.scrollX, y: window.scrollY };
  }

  function restoreState(root, keep) {
    Array.prototype.forEach.call(root.querySelectorAll("details[data-key]"), function (d) {
      if (keep.open[d.getAttribute("data-key")]) d.open = true;
    });
    window.scrollTo(keep.x, keep.y);
  }

  // ---- wiring ------------------------------------------------------------------------

  // `changed`: the sessions a live update touched; the open session is drawn again only
  // when it is one of them, so what a person is reading does not move under them.
  function render(changed) {
    var all = sessions();
    renderScenarioOptions(all);
    var shown = renderList(all);
    var first = state.selected === null;
    if (first && shown.length) state.selected = shown[0].name;
    if (!changed || first || changed[state.selected]) renderSession(all);
    if (
      !document.documentElement.hasAttribute("data-rendered") &&
      window.performance &&
      performance.mark
    )
      performance.mark("mockllm-rendered"); // what `make bench-viewer` reads
    document.documentElement.setAttribute("data-rendered", String(state.entries.length));
  }

  function select(name) {
    var list = document.getElementById("sessions");
    var inList = list.contains(document.activeElement); // the redraw replaces the buttons
    if (name !== state.selected) state.shown = PAGE;
    state.selected = name;
    if (location.hash !== "#" + encodeURIComponent(name))
      history.replaceState(null, "", "#" + encodeURIComponent(name));
    render();
    var button = list.querySelector('button[aria-current="true"]');
    if (button && inList) button.focus();
  }

  function onListKey(event) {
    var keys = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1 };
    if (!(event.key in keys)) return;
    var buttons = Array.prototype.slice.call(document.querySelectorAll("#sessions button"));
    var at = buttons.indexOf(document.activeElement);
    var next = buttons[Math.max(0, Math.min(buttons.length - 1, at + keys[event.key]))];
    if (next) {
      event.preventDefault();
      select(next.getAttribute("data-session"));
    }
  }

  function fromHash() {
    try {
      return decodeURIComponent(location.hash.slice(1));
    } catch (e) {
      return ""; // not one of ours
    }
  }

  function wireFilters() {
    document.getElementById("f-text").addEventListener("input", function (e) {
      state.filter.text = e.target.value;
      render();
    });
    document.getElementById("f-scenario").addEventListener("change", function (e) {
      state.filter.scenario = e.target.value;
      render();
    });
    document.getElementById("f-status").addEventListener("change", function (e) {
      state.filter.status = e.target.value;
      render();
    });
    document.getElementById("sessions").addEventListener("keydown", onListKey);
    window.addEventListener("hashchange", function () {
      var name = fromHash();
      if (name && name !== state.selected) select(name);
    });
  }

  function add(entries) {
    entries.forEach(function (e) {
      if (e.seq in state.index) state.entries[state.index[e.seq]] = e;
      else {
        state.index[e.seq] = state.entries.length;
        state.entries.push(e);
      }
    });
  }

  // Live: new entries since the last complete one; an entry still being sent is
  // fetched again until its response is there.
  function poll() {
    var since = 0;
    state.entries.forEach(function (e) {
      if (e.response) since = Math.max(since, e.seq);
    });
    state.entries.forEach(function (e) {
      if (!e.response) since = Math.min(since, e.seq - 1);
    });
    var live = document.getElementById("live");
    fetch("requests?since=" + since, { headers: { accept: "application/json" } })
      .then(function (r) {
        if (!r.ok) throw new Error("GET requests: " + r.status);
        return r.json();
      })
      .then(function (fresh) {
        var changed = map();
        fresh.forEach(function (e) {
          var old = state.index[e.seq] === undefined ? null : state.entries[state.index[e.seq]];
          if (!old || JSON.stringify(old.response) !== JSON.stringify(e.response))
            changed[sessionName(e)] = true;
        });
        add(fresh);
        if (!Object.keys(changed).length) return changed;
        return fetch("verdicts?since=" + since)
          .then(function (r) {
            if (!r.ok) throw new Error("GET verdicts: " + r.status);
            return r.json();
          })
          .then(function (verdicts) {
            Object.keys(verdicts).forEach(function (name) {
              state.verdicts[name] = verdicts[name];
            });
            return changed;
          });
      })
      .then(function (changed) {
        live.textContent = "Live: watching the server (updates every second).";
        if (!document.documentElement.hasAttribute("data-rendered")) render();
        else if (Object.keys(changed).length) render(changed);
      })
      .catch(function (err) {
        live.textContent = "Live: cannot reach the server (" + err.message + "); retrying.";
      })
      .then(function () {
        setTimeout(poll, POLL_MS);
      });
  }

  function start() {
    var data = JSON.parse(document.getElementById("mockllm-data").textContent);
    (data.tests || []).forEach(function (t) {
      state.tests[t.session] = t;
    });
    Object.keys(data.verdicts || {}).forEach(function (name) {
      state.verdicts[name] = data.verdicts[name];
    });
    add(data.entries || []);
    if (fromHash()) state.selected = fromHash();
    wireFilters();
    if (data.live) poll();
    else render();
  }

  start();
})();
