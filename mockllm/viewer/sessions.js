// @ts-check
// The session list, and one session's head: its test, its verdict and checks, where it
// first went wrong, then its requests (request.js) as one list.

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

/** @param {Session[]} all */
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
        el("span", { class: "name", text: s.test ? s.test.test : s.session }),
        el("span", { class: "badges" }, sessionBadges(s).concat([
          s.errors ? badge("warn", "⚠ " + plural(s.errors, "error")) : null,
        ])),
        el("span", {
          class: "meta",
          text:
            (s.rerun && s.rerun[0] > 1 ? "rerun " + s.rerun[0] + " of " + s.rerun[1] + " · " : "") +
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

/** @param {Session[]} all */
function renderScenarioOptions(all) {
  var select = /** @type {HTMLSelectElement} */ (document.getElementById("f-scenario"));
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

/** @param {Session[]} all */
function renderSession(all) {
  var main = document.getElementById("detail");
  /** @type {Session | null} */
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
  main.appendChild(el("h2", { id: "session-title", text: s.test ? s.test.test : s.session }));
  var facts = [
    s.test ? "session " + s.session : null,
    // as `mockllm report` says it: the same test in another run, or its name used again
    s.rerun ? "run " + s.rerun[0] + " of " + s.rerun[1] + (s.rerun[0] > 1 ? " (a rerun)" : "") : null,
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
