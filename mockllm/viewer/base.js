// @ts-check
/* mockllm request-log viewer: the one renderer of GET /_mockllm/ui and of the static
 * report. It reads {title, live, entries, verdicts, tests} (docs/viewer.md) and builds
 * the page with createElement/textContent only, so no logged string is ever parsed as
 * HTML. The live page polls the admin routes next to it; the report has its data inline.
 *
 * page.py joins the viewer's files in one fixed order (page.py: SCRIPTS) inside one
 * function, so they share its scope as one file would:
 * this one holds the page's state and the DOM helpers the others build with.
 */

/**
 * A log entry as the server writes it: its fields are mockllm/log/entry.schema.json's
 * (tests/unit/log/test_entry_schema.py holds them equal), so tsc refuses a field the log
 * never writes. It arrives as JSON, which the viewer reads defensively field by field, so
 * their values stay untyped here.
 * @typedef {object} Entry
 * @property {any} [seq]
 * @property {any} [time]
 * @property {any} [session]
 * @property {any} [run]
 * @property {any} [epoch]
 * @property {any} [clients]
 * @property {any} [scenario]
 * @property {any} [api]
 * @property {any} [method]
 * @property {any} [path]
 * @property {any} [stream]
 * @property {any} [turn]
 * @property {any} [attempt]
 * @property {any} [scripted_turns]
 * @property {any} [why]
 * @property {any} [side]
 * @property {any} [request_truncated]
 * @property {any} [headers]
 * @property {any} [request]
 * @property {any} [conversation]
 * @property {any} [tools]
 * @property {any} [tool_results]
 * @property {any} [violations]
 * @property {any} [expectation_failures]
 * @property {EntryResponse | null} [response]
 * @property {any} [duration_ms]
 * @property {any} [client_disconnected]
 * @property {any} [server_error]
 * @property {any} [allow]
 * @property {any} [allowance]
 * @property {any} [mcp]
 */

/**
 * What mockllm answered (an entry's `response`), as entry.schema.json declares it.
 * @typedef {object} EntryResponse
 * @property {any} [status]
 * @property {any} [finish]
 * @property {any} [misbehaviour]
 * @property {any} [text]
 * @property {any} [reasoning]
 * @property {any} [tool_calls]
 * @property {any} [delivered]
 * @property {any} [fault]
 * @property {any} [error]
 * @property {any} [notes]
 * @property {any} [retry_after]
 * @property {any} [bytes_sent]
 * @property {any} [body]
 * @property {any} [body_truncated]
 */

/**
 * One session as the list shows it (log.js: sessions), with what its badges say.
 * @typedef {object} Session
 * @property {string} name its key: one use of a session (log.js useKey)
 * @property {string} session the session's name, as the log says it
 * @property {number[] | null} rerun [place, count] when its test ran more than once here
 * @property {Entry[]} entries in arrival order
 * @property {string[]} scenarios
 * @property {number} first where it first appeared: the order of the list after failing ones
 * @property {any} test pytest's {session, test, outcome, message}, or null
 * @property {any} verdict the server's verdict of the session, or null
 * @property {number | null | undefined} lastStatus undefined: no requests; null: pending
 * @property {boolean} testFailed
 * @property {boolean} failed
 * @property {number} errors
 * @property {boolean} faults
 */

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
