// @ts-check
// Wiring: the first render, selection and keys, the filters, and the live page's polling.

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
  var button = /** @type {HTMLButtonElement | null} */ (
    list.querySelector('button[aria-current="true"]')
  );
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
    state.filter.text = /** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value;
    render();
  });
  document.getElementById("f-scenario").addEventListener("change", function (e) {
    state.filter.scenario = /** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value;
    render();
  });
  document.getElementById("f-status").addEventListener("change", function (e) {
    state.filter.status = /** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value;
    render();
  });
  document.getElementById("sessions").addEventListener("keydown", onListKey);
  window.addEventListener("hashchange", function () {
    var name = fromHash();
    if (name && name !== state.selected) select(name);
  });
}

// A test's allowance is a record in the log (api "allowance"), not a request: the
// verdicts read it; the page lists requests only, and polls past it.
var recordSeq = 0;

function add(entries) {
  entries.forEach(function (e) {
    if (e.api === "allowance") recordSeq = Math.max(recordSeq, e.seq);
    else if (e.seq in state.index) state.entries[state.index[e.seq]] = e;
    else {
      state.index[e.seq] = state.entries.length;
      state.entries.push(e);
    }
  });
}

// Live: new entries since the last complete one; an entry still being sent is
// fetched again until its response is there.
function poll() {
  var since = recordSeq;
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
