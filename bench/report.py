"""Medians, ratios to the floors, target verdicts: the table and the JSONL record."""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from .run import Samples, Settings
from .servers import PARSE_FLOOR, ROOT, ServerDef
from .workload import HISTORY_LENGTHS


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str
    digits: int = 0


METRICS = [
    Metric("startup_ms", "startup to first answer", "ms", 1),
    Metric("ns_c1_rps", "non-stream c=1 throughput", "req/s"),
    Metric("ns_c1_p50_us", "non-stream c=1 latency p50", "µs"),
    Metric("ns_c1_p99_us", "non-stream c=1 latency p99 ^", "µs"),
    Metric("ns_c1_max_us", "non-stream c=1 latency max", "µs"),
    Metric("ns_c1_cpu_us", "non-stream c=1 server CPU", "µs/req", 1),
    Metric("ns_c32_rps", "non-stream c=32 throughput", "req/s"),
    Metric("ns_c32_p50_us", "non-stream c=32 latency p50", "µs"),
    Metric("ns_c32_p99_us", "non-stream c=32 latency p99 ^", "µs"),
    Metric("ns_c32_cpu_us", "non-stream c=32 server CPU *", "µs/req", 1),
    Metric("st_c1_ttfb_us", "stream c=1 first byte p50 +", "µs"),
    Metric("st_c1_full_us", "stream c=1 full stream p50 +", "µs"),
    Metric("st_c1_rps", "stream c=1 throughput", "streams/s"),
    Metric("st_c1_cpu_us", "stream c=1 server CPU", "µs/stream", 1),
    Metric("st_c32_ttfb_us", "stream c=32 first byte p50 +", "µs"),
    Metric("st_c32_full_us", "stream c=32 full stream p50 +", "µs"),
    Metric("st_c32_rps", "stream c=32 throughput", "streams/s"),
    Metric("st_c32_cpu_us", "stream c=32 server CPU *", "µs/stream", 1),
    Metric("cold_ns_c1_p50_us", "distinct non-stream c=1 latency p50", "µs"),
    Metric("cold_ns_c1_p99_us", "distinct non-stream c=1 latency p99 ^", "µs"),
    Metric("cold_ns_c32_p99_us", "distinct non-stream c=32 latency p99 ^", "µs"),
    Metric("cold_ns_c32_cpu_us", "distinct non-stream c=32 server CPU *", "µs/req", 1),
    Metric("cold_st_c32_cpu_us", "distinct stream c=32 server CPU *", "µs/stream", 1),
    Metric("cold_anthropic_c32_cpu_us", "distinct Anthropic c=32 server CPU *", "µs/req", 1),
    Metric("cold_responses_c32_cpu_us", "distinct Responses c=32 server CPU *", "µs/req", 1),
    Metric("cold_gemini_c32_cpu_us", "distinct Gemini c=32 server CPU *", "µs/req", 1),
    Metric("cold_bedrock_c32_cpu_us", "distinct Bedrock c=32 server CPU *", "µs/req", 1),
    Metric("cold_azure_c32_cpu_us", "distinct Azure c=32 server CPU *", "µs/req", 1),
    Metric("cold_mistral_c32_cpu_us", "distinct Mistral c=32 server CPU *", "µs/req", 1),
    Metric("cold_embeddings_c32_cpu_us", "embeddings, 16 inputs, 1 new c=32 CPU *", "µs/req", 1),
    Metric("cold_vertex_gemini_c32_cpu_us", "distinct Vertex Gemini c=32 CPU *", "µs/req", 1),
    Metric("cold_vertex_claude_c32_cpu_us", "distinct Vertex Claude c=32 CPU *", "µs/req", 1),
    Metric("cold_ollama_c32_cpu_us", "distinct Ollama c=32 server CPU *", "µs/req", 1),
    *(
        Metric(f"hist_{n}_c32_cpu_us", f"history of {n} messages c=32 CPU *", "µs/req", 1)
        for n in HISTORY_LENGTHS
    ),
    Metric("rss_idle_mb", "RSS idle", "MB", 1),
    Metric("rss_after_mb", "RSS after {n} distinct requests", "MB", 1),
    Metric("rss_per_request_b", "RSS growth per request, log filling", "bytes", 0),
]


@dataclass(frozen=True)
class Goal:
    """A target from the issue: reported with a verdict, never asserted."""

    metric: str
    limit: float
    relative: bool  # True: × the floor's figure; False: absolute, in the metric's unit
    # Which floor a relative goal is against: the first (starlette) unless named. A history's
    # body is mostly JSON to parse, which no server can skip: its goal is against the parse
    # floor, as issue 36's table had it (starlette_json alone is 3.7x starlette at 200 messages).
    floor: str | None = None

    def describe(self, unit: str) -> str:
        if not self.relative:
            return f"<={self.limit:g} {unit}"
        return f"<={self.limit:g}x {self.floor or 'floor'}"

    def met(self, value: float, floor: float) -> bool | None:
        bound = self.limit * floor if self.relative else self.limit
        return None if math.isnan(value) or math.isnan(bound) else value <= bound


GOALS = {
    g.metric: g
    for g in (
        Goal("startup_ms", 1.3, relative=True),
        Goal("ns_c1_p50_us", 2.0, relative=True),
        Goal("ns_c32_cpu_us", 1.3, relative=True),
        Goal("st_c32_cpu_us", 0.6, relative=True),
        Goal("rss_after_mb", 60, relative=False),
        Goal("cold_ns_c32_cpu_us", 1.3, relative=True),
        Goal("cold_ns_c1_p99_us", 1.5, relative=True),
        Goal("cold_ns_c32_p99_us", 1.5, relative=True),
        Goal("cold_st_c32_cpu_us", 0.6, relative=True),
        Goal("cold_anthropic_c32_cpu_us", 1.3, relative=True),
        Goal("cold_responses_c32_cpu_us", 1.3, relative=True),
        Goal("cold_gemini_c32_cpu_us", 1.3, relative=True),
        Goal("cold_bedrock_c32_cpu_us", 1.3, relative=True),
        Goal("cold_vertex_gemini_c32_cpu_us", 1.3, relative=True),
        Goal("cold_vertex_claude_c32_cpu_us", 1.3, relative=True),
        Goal("cold_ollama_c32_cpu_us", 1.3, relative=True),
        Goal("cold_azure_c32_cpu_us", 1.3, relative=True),
        Goal("cold_mistral_c32_cpu_us", 1.3, relative=True),
        *(
            Goal(f"hist_{n}_c32_cpu_us", 1.5, relative=True, floor="starlette_json")
            for n in HISTORY_LENGTHS
        ),
    )
}


# --- medians and ratios --------------------------------------------------------------------------


def medians(samples: Samples) -> dict[str, dict[str, float]]:
    return {
        server: {key: _median(values) for key, values in metrics.items()}
        for server, metrics in samples.items()
    }


def _median(values: list[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return statistics.median(finite) if finite else math.nan


def ratio(value: float, floor: float) -> float:
    return value / floor if floor and not math.isnan(floor) else math.nan


@dataclass(frozen=True)
class Outcome:
    """Everything a run produced, ready to print or store."""

    servers: list[ServerDef]
    samples: Samples
    settings: Settings
    environment: dict[str, Any]
    state: Samples = field(default_factory=dict)  # bench/state.py's variants
    state_skipped: str = ""  # why there are no shared-state rows
    loops: Samples = field(default_factory=dict)  # bench/loops.py: mockllm and the floor

    @property
    def subject(self) -> ServerDef:
        return self.servers[0]

    @property
    def floors(self) -> list[ServerDef]:
        return [s for s in self.servers if s.role == "floor"]

    @property
    def baselines(self) -> list[ServerDef]:
        """Other trees of mockllm (`--against REF`, bench/against.py)."""
        return [s for s in self.servers if s.role == "baseline"]

    @property
    def medians(self) -> dict[str, dict[str, float]]:
        return medians(self.samples)

    def value(self, server: str, key: str) -> float:
        return self.medians.get(server, {}).get(key, math.nan)

    def verdicts(self) -> dict[str, bool | None]:
        """Each goal checked against its floor (the first, the starlette floor, unless named)."""
        if not self.floors:
            return {}
        first = self.floors[0].name
        return {
            key: goal.met(self.value(self.subject.name, key), self.value(goal.floor or first, key))
            for key, goal in GOALS.items()
        }


# --- the table ---------------------------------------------------------------------------------


def table(outcome: Outcome) -> str:
    medians_ = outcome.medians
    subject, floors = outcome.subject.name, [f.name for f in outcome.floors]
    names = [s.name for s in outcome.servers]
    # --against: this tree / REF, and REF's own ratio to the first floor, beside this tree's
    bases = [b.name for b in outcome.baselines]
    base_floor = [(b, floors[0]) for b in bases] if floors else []
    verdicts = outcome.verdicts()
    header = ["metric", "unit", *names, *(f"x{f}" for f in floors), *(f"x{b}" for b in bases)]
    header += [f"{b} x{f}" for b, f in base_floor] + ["target", ""]
    rows = [header]
    for m in METRICS:

        def figure(name: str, key: str = m.key) -> float:
            return medians_.get(name, {}).get(key, math.nan)

        values = [figure(n) for n in names]
        mine = figure(subject)
        ratios = [ratio(mine, figure(f)) for f in [*floors, *bases]]
        ratios += [ratio(figure(b), figure(f)) for b, f in base_floor]
        goal = GOALS.get(m.key)
        verdict = {True: "PASS", False: "FAIL", None: "n/a"}[verdicts.get(m.key)] if goal else ""
        rows.append(
            [
                m.label.format(n=_count(outcome.settings.memory_requests)),
                m.unit,
                *(_number(v, m.digits) for v in values),
                *(_ratio(r) for r in ratios),
                goal.describe(m.unit) if goal else "",
                verdict,
            ]
        )
    growth = _growth(outcome)
    state = _state(outcome)
    loops = _loops(outcome)
    return "\n".join(
        [*_title(outcome), "", *_grid(rows), "", *growth, *loops, *state, *_legend(outcome)]
    )


LOOP_ROWS = [
    Metric("ws_loop_cpu_us", "10-turn tool loop over WebSocket, server CPU *", "µs/loop"),
    Metric("http_loop_cpu_us", "10-turn tool loop over HTTP (SSE), server CPU *", "µs/loop"),
    Metric("ws_loop_ms", "10-turn tool loop over WebSocket, wall time", "ms/loop", 2),
    Metric("http_loop_ms", "10-turn tool loop over HTTP (SSE), wall time", "ms/loop", 2),
    Metric("model_call_cpu_us", "model request (Chat Completions), server CPU *", "µs/req", 1),
    Metric("mcp_call_cpu_us", "MCP tools/call (streamable HTTP), server CPU *", "µs/call", 1),
]


def _loops(outcome: Outcome) -> list[str]:
    """Conversations (bench/loops.py): one client, one message at a time."""
    if not outcome.loops:
        return []
    m = medians(outcome.loops)
    subject, floor = outcome.subject.name, "starlette"
    bases = [b.name for b in outcome.baselines]
    mine_and_bases = [subject, *bases]

    def value(server: str, key: str) -> float:
        return m.get(server, {}).get(key, math.nan)

    rows = [["conversation", "unit", *mine_and_bases, floor, f"x{floor}"]]
    rows[0] += [f"x{b}" for b in bases] + [""]
    for metric in LOOP_ROWS:
        mine, base = value(subject, metric.key), value(floor, metric.key)
        if metric.key == "mcp_call_cpu_us":  # the floor has no MCP: its model request
            base = value(floor, "model_call_cpu_us")
        rows.append(
            [
                metric.label,
                metric.unit,
                *(_number(value(n, metric.key), metric.digits) for n in mine_and_bases),
                _number(value(floor, metric.key), metric.digits),
                _ratio(ratio(mine, base)),
                *(_ratio(ratio(mine, value(b, metric.key))) for b in bases),
                "",
            ]
        )
    ws_http = [
        ratio(value(n, "ws_loop_cpu_us"), value(n, "http_loop_cpu_us"))
        for n in [*mine_and_bases, floor]
    ]
    blank = [""] * len(bases)
    rows.append(["WebSocket / HTTP, CPU per loop", "ratio", *map(_ratio, ws_http), "", *blank, ""])
    mcp_model = [
        ratio(value(n, "mcp_call_cpu_us"), value(n, "model_call_cpu_us")) for n in mine_and_bases
    ]
    mcp_row = ["MCP tools/call / model request, CPU", "ratio", *map(_ratio, mcp_model), "-"]
    rows.append([*mcp_row, "", *blank, ""])
    return [
        "Conversations (one client, one message at a time; bench/loops.py):",
        *_grid(rows),
        f"{floor} answers every turn with mockllm's first-turn bytes (WebSocket: the same "
        "text frames; HTTP: the SSE body, one frame per send) and has no MCP: the MCP row's "
        f"x{floor} is against {floor}'s model request.",
        "",
    ]


STATE_ROWS = [
    Metric("c1_p50_us", "non-stream c=1 latency p50", "µs"),
    Metric("c1_rps", "non-stream c=1 throughput", "req/s"),
    Metric("c32_rps", "non-stream c=32 throughput", "req/s"),
    Metric("c32_p50_us", "non-stream c=32 latency p50", "µs"),
    Metric("c32_cpu_us", "mockllm CPU c=32 (all workers) *", "µs/req", 1),
    Metric("c32_redis_cpu_us", "redis-server CPU c=32", "µs/req", 1),
]


def _state(outcome: Outcome) -> list[str]:
    """Shared state (docs/scale.md): the store's cost on one process, and 1 vs 2 workers."""
    if outcome.state_skipped:
        return [f"Shared state rows SKIPPED: {outcome.state_skipped}", ""]
    if not outcome.state:
        return []
    m = medians(outcome.state)
    names = ("memory", "redis", "redis_2w")
    header = ["shared state", "unit", *names, "redis - memory", "2w / 1w", ""]
    rows = [header]
    for metric in STATE_ROWS:
        values = [m.get(n, {}).get(metric.key, math.nan) for n in names]
        rows.append(
            [
                metric.label,
                metric.unit,
                *(_number(v, metric.digits) for v in values),
                _number(values[1] - values[0], metric.digits),
                _ratio(ratio(values[2], values[1])),
                "",
            ]
        )
    pinned = outcome.settings.cpus
    where = (
        f"1 process on cpu {pinned[0]} with redis-server; 2 workers on cpus {pinned[0]},"
        f"{pinned[1]}, shared with the load generator"
        if pinned
        else "not pinned"
    )
    return [
        "Shared state (--state redis://, every request counts on Redis; bench/state.py):",
        *_grid(rows),
        f"{where}: on two cores the second worker competes with the load and Redis, so "
        "2w / 1w shows what this machine allows, not what more cores give.",
        *_state_goals(m),
        "",
    ]


def _state_goals(m: dict[str, dict[str, float]]) -> list[str]:
    """Issue 36's shared-state goals, judged on this run's own round trip."""
    trip = m.get("round_trip", {})
    memory, redis = m.get("memory", {}), m.get("redis", {})
    if not trip:
        return []
    rt, cpu = trip.get("c32_cpu_us", math.nan), redis.get("c32_cpu_us", math.nan)
    bound = 2 * memory.get("c32_cpu_us", math.nan) + rt
    c1, c32 = redis.get("c1_rps", math.nan), redis.get("c32_rps", math.nan)
    return [
        f"the round trip: a bare PING over mockllm's pipelined connection costs its client "
        f"{_number(rt, 1)} µs CPU at c=32 ({_number(trip.get('c1_cpu_us', math.nan), 1)} at c=1)",
        f"goal, redis CPU c=32 <= 2x memory + the round trip: {_number(cpu, 1)} <= "
        f"{_number(bound, 1)} µs/req  {_verdict(cpu <= bound, math.isnan(cpu + bound))}",
        f"goal, redis c=32 throughput >= c=1: {_number(c32, 0)} >= {_number(c1, 0)} req/s  "
        f"{_verdict(c32 >= c1, math.isnan(c1 + c32))}",
    ]


def _verdict(met: bool, unknown: bool) -> str:
    return "-" if unknown else "PASS" if met else "FAIL"


def _growth(outcome: Outcome) -> list[str]:
    """How the cost grows with the history: a quadratic step anywhere shows up here. With
    the parse floor in the run, also what mockllm adds per message beyond parsing it."""
    if not outcome.floors:
        return []
    subject, floor = outcome.subject.name, outcome.floors[0].name
    parse = PARSE_FLOOR.name if PARSE_FLOOR in outcome.servers else None

    def cpu(server: str | None, n: int) -> float:
        return outcome.value(server, f"hist_{n}_c32_cpu_us") if server else math.nan

    def per_message(figure: list[float], i: int) -> float:
        """The step from the previous length to this one, per added message."""
        if i == 0:
            return math.nan
        return (figure[i] - figure[i - 1]) / (HISTORY_LENGTHS[i] - HISTORY_LENGTHS[i - 1])

    mine = [cpu(subject, n) for n in HISTORY_LENGTHS]
    beyond = [m - cpu(parse, n) for m, n in zip(mine, HISTORY_LENGTHS, strict=True)]
    parse_columns = [f"{parse} µs", f"beyond {parse} µs/message"] if parse else []
    rows = [["history", f"{floor} µs", f"{subject} µs", "ratio", f"{subject} µs/message"]]
    rows[0] += parse_columns
    for i, n in enumerate(HISTORY_LENGTHS):
        base = cpu(floor, n)
        row = [f"{n} messages", _number(base, 0), _number(mine[i], 0)]
        row += [_ratio(ratio(mine[i], base)), _number(per_message(mine, i), 1)]
        if parse:
            row += [_number(cpu(parse, n), 0), _number(per_message(beyond, i), 1)]
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(
            c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    if parse:
        lines.append(
            f"beyond {parse}: how ({subject} - {parse}) grows per added message, "
            "what each message costs beyond parsing it."
        )
    return ["CPU per request as the history grows (c=32, every body distinct):", *lines, ""]


def _title(outcome: Outcome) -> list[str]:
    env, s = outcome.environment, outcome.settings
    pinned = f"server on cpu {s.cpus[0]}, load on cpu {s.cpus[1]}" if s.cpus else "not pinned"
    loadgen = env["wrk"] or "bundled asyncio client (wrk not installed)"
    return [
        f"mockllm bench  {env['time']}  commit {env['commit']}  {env['cpu']} x{env['cpus']}",
        f"load: {loadgen}; {pinned}",
        f"median of {s.rounds} interleaved round(s), {s.seconds} s per load run; "
        f"startup: median of {s.startups} cold starts",
    ]


def _grid(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
        cells += [cell.rjust(w) for cell, w in zip(row[2:-2], widths[2:-2], strict=True)]
        cells += [row[-2].ljust(widths[-2]), row[-1]]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "-" * len(lines[0]))
    return lines


def _legend(outcome: Outcome) -> list[str]:
    subject = outcome.subject.name
    lines = [f"{s.name}: {s.about}" for s in outcome.servers]
    peers = [s.name for s in outcome.servers if s.role == "peer"]
    if peers:
        lines.append(
            f"peers ({', '.join(peers)}) send their own replies to the same requests (checked: "
            "a 200 with one tool call, a 50-frame stream), so they are measured on startup, "
            "the identical-body rows and RSS after distinct requests; '-' in the distinct "
            "CPU, latency and history rows, which compare mockllm with floors sending its bytes."
        )
    lines += [
        f"x<floor> = {subject} / floor, both from this run; targets compare with the first "
        "floor unless they name one (histories: the parse floor).",
        *(
            f"x{b.name} = {subject} / {b.name}, the same rows of the same run (above 1: this "
            f"tree is dearer); '{b.name} x<floor>' is the baseline's own ratio to the floor."
            for b in outcome.baselines
        ),
        "* primary figure: server CPU (its threads' run time, ns) over the run / completed "
        "requests (steadier than req/s).",
        "stream = 50 SSE data: frames; floors send "
        + (
            "one ASGI send per frame (as an SSE server does)"
            if outcome.settings.stream_sends == "event"
            else "the whole stream in one ASGI send"
        )
        + f", {subject} sends the whole stream in one.",
        "^ wrk's p99 includes its coordinated-omission correction: one stall (see max) "
        "counts as if requests had kept arriving at the measured rate.",
        f"RSS after: a fresh server, {outcome.settings.memory_requests} distinct non-stream "
        "requests at c=32 (mockllm logs each in its ring, default --log-limit 10000); "
        "growth per request: (RSS after the first min(that, 10000) - RSS idle) / their "
        "number, while mockllm's log fills; `python -m bench.profile --memory` shows "
        "where the bytes of one log entry go.",
        "distinct = every request's body differs (a counter in the user message), so no "
        "request cache can answer it; mockllm's log is filled (10 000 entries) first, "
        "unless --warmup 0.",
        "+ from the bundled asyncio client (first byte = first body byte; wrk cannot see it); "
        + ("other figures from wrk." if outcome.settings.use_wrk else "so is everything else."),
    ]
    return lines


def _number(value: float, digits: int) -> str:
    return "-" if math.isnan(value) else f"{value:,.{digits}f}"


def _ratio(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f}x"


def _count(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


# --- the JSONL record ----------------------------------------------------------------------


def record(outcome: Outcome) -> dict[str, Any]:
    medians_, subject = outcome.medians, outcome.subject.name
    settings = asdict(outcome.settings)
    del settings["workdir"]  # a temporary folder, gone by now
    return {
        **outcome.environment,
        "settings": settings,
        "servers": {
            s.name: {
                "role": s.role,
                "about": s.about,
                "median": _clean(medians_.get(s.name, {})),
                "samples": {k: _clean_list(v) for k, v in outcome.samples.get(s.name, {}).items()},
            }
            for s in outcome.servers
        },
        "ratios": {
            other.name: _clean(_ratios(medians_, subject, other.name))
            for other in [*outcome.floors, *outcome.baselines]
        },
        # --against: each baseline's own ratios to the floors (this tree's are in "ratios")
        "baseline_ratios": {
            b.name: {f.name: _clean(_ratios(medians_, b.name, f.name)) for f in outcome.floors}
            for b in outcome.baselines
        },
        "state": {"skipped": outcome.state_skipped}
        if outcome.state_skipped
        else {
            name: {"median": _clean(figures), "samples": {k: _clean_list(v) for k, v in s.items()}}
            for (name, figures), s in zip(
                medians(outcome.state).items(), outcome.state.values(), strict=True
            )
        },
        "loops": {
            name: {"median": _clean(figures), "samples": {k: _clean_list(v) for k, v in s.items()}}
            for (name, figures), s in zip(
                medians(outcome.loops).items(), outcome.loops.values(), strict=True
            )
        },
        "targets": {
            key: {"target": GOALS[key].describe(_unit(key)), "pass": verdict}
            for key, verdict in outcome.verdicts().items()
        },
    }


def _ratios(medians_: dict[str, dict[str, float]], subject: str, floor: str) -> dict[str, float]:
    floor_figures = medians_.get(floor, {})
    return {k: ratio(v, floor_figures.get(k, math.nan)) for k, v in medians_[subject].items()}


def append(path: Path, entry: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as out:
        out.write(json.dumps(entry, ensure_ascii=False) + "\n")


def _unit(key: str) -> str:
    return next(m.unit for m in METRICS if m.key == key)


def _clean(figures: dict[str, float]) -> dict[str, float | None]:
    """JSON has no NaN: a figure that could not be measured is null."""
    return {k: None if math.isnan(v) else round(v, 3) for k, v in figures.items()}


def _clean_list(values: list[float]) -> list[float | None]:
    return [None if math.isnan(v) else round(v, 3) for v in values]


# --- where the run happened -----------------------------------------------------------------


_PACKAGES = ("mockllm-server", "uvicorn", "starlette", "httptools", "uvloop")


def environment(wrk: str | None) -> dict[str, Any]:
    return {
        "time": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": _commit(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "wrk": wrk,
        "packages": {p: _version(p) for p in _PACKAGES},
    }


def _commit() -> str:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return commit + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or sys.platform


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
