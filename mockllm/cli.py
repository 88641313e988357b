"""Command line: parse arguments and delegate."""

from __future__ import annotations

import argparse
import errno
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from mockllm.core.scenario import Chaos
from mockllm.errors import ScenarioError
from mockllm.log.verdict import DEFAULT_MAX_CALLS
from mockllm.options import DEFAULTS, ServerOptions

DEFAULT_PORT = 8000


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not hasattr(args, "run"):
        _parser().print_help(sys.stderr)
        return 2
    try:
        code = int(args.run(args))
    except ScenarioError as e:
        print(e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("mockllm: stopped (Ctrl-C)", file=sys.stderr)
        return 130  # 128 + SIGINT, as a shell reports it
    return code


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mockllm", description="Offline, deterministic fake LLM server for testing."
    )
    sub = p.add_subparsers(title="commands", metavar="COMMAND")

    _serve_parser(sub)
    v = sub.add_parser("validate", help="check scenario files; non-zero exit on any error")
    v.add_argument("paths", nargs="+", metavar="PATH")
    v.set_defaults(run=_validate)

    ls = sub.add_parser("list", help="names, turn counts and descriptions")
    ls.add_argument("paths", nargs="*", metavar="PATH", help="default: the bundled library")
    ls.set_defaults(run=_list)

    sc = sub.add_parser("schema", help="print the scenario JSON Schema (for editors)")
    sc.set_defaults(run=_schema)

    r = sub.add_parser("report", help="the protocol verdict per session of a --log file")
    r.add_argument("logfile", metavar="LOGFILE")
    r.add_argument(
        "--max-calls",
        type=int,
        default=DEFAULT_MAX_CALLS,
        metavar="N",
        help="model calls per session beyond which a tool loop is assumed (default %(default)s)",
    )
    r.set_defaults(run=_report)
    return p


def _serve_parser(sub: Any) -> None:
    # Over 60 lines: one add_argument per flag, a table rather than logic.
    d = DEFAULTS
    s = sub.add_parser("serve", help="serve scenarios over the OpenAI / Anthropic wire formats")
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    s.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="0 picks a free port (default 8000)"
    )
    s.add_argument(
        "--scenarios",
        nargs="+",
        metavar="PATH",
        help="files or folders (default: the bundled library)",
    )
    s.add_argument("--default", metavar="NAME", help="scenario for requests that name none")
    s.add_argument(
        "--validation",
        choices=("strict", "warn", "off"),
        default=d.validation,
        help="provider history rules: reject (strict, the default), log only (warn), skip (off)",
    )
    s.add_argument(
        "--flavor",
        choices=("openai", "deepseek"),
        default=d.flavor,
        help="Chat Completions validation flavour (deepseek: DeepSeek's rules and texts)",
    )
    s.add_argument("--log", metavar="FILE", help="append every request to FILE as JSON lines")
    s.add_argument(
        "--log-limit",
        type=int,
        default=d.log_limit,
        metavar="N",
        help="entries kept in memory (default %(default)s; the --log file keeps all)",
    )
    s.add_argument(
        "--log-body-cap",
        type=_size,
        default=d.log_body_cap,
        metavar="BYTES",
        help="response bytes kept per log entry (default %(default)s)",
    )
    s.add_argument(
        "--max-body",
        type=_size,
        default=d.max_body,
        metavar="BYTES",
        help="largest request body accepted, e.g. 10MB (default %(default)s); larger gets 413",
    )
    s.add_argument(
        "--chaos",
        type=_chaos,
        metavar="KIND=RATE,...",
        help="seeded random faults, e.g. 429=0.1,truncate=0.05 (kinds: "
        "429, 500, 503, 529, truncate, stream_error, delay)",
    )
    s.add_argument("--seed", type=int, default=d.seed, help="seed of the chaos draws (default 0)")
    s.add_argument(
        "--max-stall",
        type=float,
        default=d.max_stall,
        metavar="SECONDS",
        help="longest a stall fault holds a connection (default %(default)s)",
    )
    s.add_argument(
        "--max-sessions",
        type=int,
        default=d.max_sessions,
        metavar="N",
        help="sessions whose attempt counters are kept; the least recently used beyond N "
        "start afresh (default %(default)s)",
    )
    s.add_argument(
        "--allow-host",
        action="append",
        default=list(d.allow_host),
        metavar="NAME",
        help="a host name the admin routes answer under, besides loopback and the bound "
        "address (repeatable; e.g. a docker service name)",
    )
    s.add_argument("--ready-file", metavar="FILE", help="write the URL here once listening")
    s.add_argument("--real-time", action="store_true", help="real clock in `created` fields")
    s.set_defaults(run=_serve)


def _options(args: argparse.Namespace) -> ServerOptions:
    """The parsed flags, by the options' own field names."""
    values: dict[str, Any] = {f.name: getattr(args, f.name) for f in fields(ServerOptions)}
    values["allow_host"] = tuple(values["allow_host"])  # argparse appends to a list
    return ServerOptions(**values)


def _chaos(text: str) -> Chaos:
    from mockllm.core.engine import CHAOS_FAULTS

    rates = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        kind, _, rate = part.partition("=")
        try:
            value = float(rate)
        except ValueError:
            value = -1.0
        if kind not in CHAOS_FAULTS or not 0 <= value <= 1:
            kinds = ", ".join(CHAOS_FAULTS)
            raise argparse.ArgumentTypeError(
                f"{part!r}: expected KIND=RATE with KIND one of {kinds} and RATE in 0..1"
            )
        rates.append((kind, value))
    if sum(r for _, r in rates) > 1:
        raise argparse.ArgumentTypeError("the rates add up to more than 1")
    order = list(CHAOS_FAULTS)  # a fixed order, so the same draw picks the same fault
    return Chaos(tuple(sorted(rates, key=lambda kr: order.index(kr[0]))))


def _size(text: str) -> int:
    match = re.fullmatch(r"(\d+)\s*([kKmMgG]?)[bB]?", text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (try 65536, 64KB or 10MB)")
    return int(match[1]) << (10 * " kmg".index((match[2] or " ").lower()))


def _serve(args: argparse.Namespace) -> int:
    from mockllm.loading.loader import BUNDLED, load_paths
    from mockllm.serving.server import build_app, run

    if args.ready_file and Path(args.ready_file).is_dir():
        print(f"mockllm: --ready-file {args.ready_file!r} is a folder", file=sys.stderr)
        return 2
    scenarios = load_paths(args.scenarios or [BUNDLED])
    names = {s.name for s in scenarios}
    if args.default and args.default not in names:
        print(f"mockllm: --default {args.default!r} is not a loaded scenario", file=sys.stderr)
        return 2
    try:
        app = build_app(scenarios, _options(args))
    except OSError as e:
        if not args.log:
            raise
        reason = e.strerror or str(e)
        print(
            f"mockllm: cannot write the log to {args.log!r}: {reason}; "
            "give --log a file in an existing folder you can write to",
            file=sys.stderr,
        )
        return 2
    try:
        run(app, args.host, args.port, args.ready_file, _banner(len(scenarios), args.default))
    except OSError as e:
        if e.errno not in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES):
            raise
        print(
            f"mockllm: cannot listen on {args.host}:{args.port}: {e.strerror}; stop what is "
            "using it, or pick another --port (0 picks a free one)",
            file=sys.stderr,
        )
        return 2
    return 0


def _banner(count: int, default: str | None) -> str:
    from mockllm.providers import ADAPTERS

    example = default or "SCENARIO"
    families = {cls.family for cls in ADAPTERS.values()}
    lines = [f"mockllm: serving {count} scenarios on {{url}}"]
    if "openai" in families:
        lines.append(f'  OpenAI SDK:    OpenAI(base_url="{{url}}/s/{example}/v1", api_key="test")')
    if "anthropic" in families:
        lines.append(f'  Anthropic SDK: Anthropic(base_url="{{url}}/s/{example}", api_key="test")')
    lines.append(
        "  scenarios:     {url}/_mockllm/scenarios    request log: {url}/_mockllm/requests"
    )
    return "\n".join(lines)


def _validate(args: argparse.Namespace) -> int:
    from mockllm.loading.loader import load_paths

    scenarios = load_paths(args.paths)
    print(f"ok: {len(scenarios)} scenario(s)")
    return 0


def _list(args: argparse.Namespace) -> int:
    from mockllm.loading.loader import BUNDLED, load_paths

    scenarios = sorted(load_paths(args.paths or [BUNDLED]), key=lambda s: s.name)
    width = max((len(s.name) for s in scenarios), default=0)
    for s in scenarios:
        first_line = s.description.splitlines()[0] if s.description else ""
        print(f"{s.name:<{width}}  {len(s.turns):>2} turn(s)  {first_line}")
    return 0


def _report(args: argparse.Namespace) -> int:
    from mockllm.log.verdict import sessions, verdict

    entries = []
    with open(args.logfile, encoding="utf-8") as log:
        for number, line in enumerate(log, 1):
            try:
                entries.append(json.loads(line))
            except ValueError as e:
                print(f"{args.logfile}:{number}: not a JSON log entry: {e}", file=sys.stderr)
                return 2
    failed = 0
    for session, found in sessions(entries).items():
        result = verdict(session, found, args.max_calls)
        failures = [f"{c['name']}: {c['message']}" for c in result["checks"] if not c["ok"]]
        failed += bool(failures)
        status = "FAIL" if failures else "ok  "
        print(
            f"{status} {session} ({result['requests']} requests)"
            + "".join(f"\n     {f}" for f in failures)
        )
    return 1 if failed else 0


def _schema(args: argparse.Namespace) -> int:
    from mockllm.loading.loader import schema

    print(json.dumps(schema(), indent=2))
    return 0
