// @ts-check
// The model of the log: entries grouped into sessions, filtered, and what each holds.

function sessionName(entry) {
  return entry.session === null || entry.session === undefined ? "(none)" : String(entry.session);
}

function statusOf(entry) {
  return entry.response ? entry.response.status : null;
}

// One use of a session, as judge/uses.py `uses`: a name reset into a new use (a rerun
// under one run id) is two sessions, here as in `mockllm report`. The last use of a name
// keeps the name, an earlier one is "NAME#EPOCH": the server's verdicts are keyed so.
function epochOf(entry) {
  return typeof entry.epoch === "string" && /^[0-9a-f]{8}$/.test(entry.epoch) ? entry.epoch : null;
}

function lastEpochs(entries) {
  var last = map();
  entries.forEach(function (e) {
    if (epochOf(e)) last[sessionName(e)] = epochOf(e);
  });
  return last;
}

function useKey(entry, last) {
  var name = sessionName(entry);
  var epoch = epochOf(entry);
  return epoch && last[name] !== epoch ? name + "#" + epoch : name;
}

// The test a session name is of in any run (log/runs.py test_of): "TEST-HASH~RUN" -> TEST-HASH.
function testOf(name) {
  var at = name.lastIndexOf("~");
  return at > 0 && /^[A-Za-z0-9._-]{1,40}$/.test(name.slice(at + 1)) ? name.slice(0, at) : name;
}

/** @returns {Session[]} */
function sessions() {
  var byName = map();
  var order = [];
  function get(key, name) {
    if (!byName[key]) {
      byName[key] = { name: key, session: name, entries: [], scenarios: [], first: order.length };
      order.push(byName[key]);
    }
    return byName[key];
  }
  var last = lastEpochs(state.entries);
  Object.keys(state.tests).forEach(function (name) {
    get(name, name); // a test's session is its name's last use
  });
  state.entries.forEach(function (entry) {
    var s = get(useKey(entry, last), sessionName(entry));
    s.entries.push(entry);
    if (entry.scenario && s.scenarios.indexOf(entry.scenario) < 0)
      s.scenarios.push(entry.scenario);
  });
  var runs = map();
  order.forEach(function (s) {
    var test = testOf(s.session);
    (runs[test] = runs[test] || []).push(s);
  });
  order.forEach(function (s) {
    var test = state.tests[s.session];
    var verdict = state.verdicts[s.name];
    var same = runs[testOf(s.session)];
    s.rerun = same.length > 1 ? [same.indexOf(s) + 1, same.length] : null;
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

/** @param {Session} s */
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
