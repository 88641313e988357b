"""Command line: parse arguments and delegate."""

from __future__ import annotations

import argparse
import errno
import gc
import json
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from mockllm._version import __version__
from mockllm.core.compiled import remembered
from mockllm.core.scenario import CHAOS_KINDS, FLAVORS, Chaos
from mockllm.errors import ScenarioError, WireError, did_you_mean
from mockllm.judge import DEFAULT_MAX_CALLS

with remembered():  # ServerOptions, from code compiled at an earlier start (core/compiled.py)
    from mockllm.options import DEFAULTS, ServerOptions, field_help

DEFAULT_PORT = 8000


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not hasattr(args, "run"):
        _parser().print_help(sys.stderr)
        return 2
    try:
        code = int(args.run(args))
    except (ScenarioError, WireError) as e:
        print(e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("mockllm: stopped (Ctrl-C)", file=sys.stderr)
        return 130  # 128 + SIGINT, as a shell reports it
    except BrokenPipeError:  # `mockllm schema | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return 0
    return code


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mockllm", description="Offline, deterministic fake LLM server for testing."
    )
    p.add_argument("--version", action="version", version=f"mockllm {__version__}")
    sub = p.add_subparsers(title="commands", metavar="COMMAND")
    for add in (_serve_parser, _record_parser, _mcp_parser, _validate_parser, _list_parser):
        add(sub)
    sc = sub.add_parser("schema", help="print the scenario JSON Schema (for editors)")
    sc.set_defaults(run=_schema)
    st = sub.add_parser(
        "start-script",
        help="print the path of the installed CI start script (docs/ci.md): "
        'sh "$(mockllm start-script)" --scenarios tests/scenarios',
    )
    st.set_defaults(run=_start_script)
    _report_parser(sub)
    return p


def _validate_parser(sub: Any) -> None:
    v = sub.add_parser(
        "validate",
        help="check scenario files; non-zero exit on any error",
        description="Check scenario files: each problem as file:line:column: yaml.path: what "
        "is wrong, then a summary line. Exit 0 when all are valid, 1 otherwise.",
    )
    v.add_argument("paths", nargs="+", metavar="PATH", help="scenario files or folders")
    v.set_defaults(run=_validate)


def _list_parser(sub: Any) -> None:
    ls = sub.add_parser("list", help="names, turn counts and descriptions")
    ls.add_argument("paths", nargs="*", metavar="PATH", help="default: the bundled library")
    ls.add_argument(
        "--long",
        action="store_true",
        help="whole descriptions, the tools each scenario expects and its file, "
        "instead of one line cut to the terminal's width",
    )
    ls.set_defaults(run=_list)


def _report_parser(sub: Any) -> None:
    r = sub.add_parser(
        "report",
        help="the protocol verdict per session of a --log file",
        description="The protocol verdict of each session in a `mockllm serve --log` file, "
        "with every answer that was not a 200. Exit 0 when every session is ok, 1 when one "
        "failed, 2 when LOGFILE is missing, empty or not a mockllm log.",
    )
    r.add_argument("logfile", metavar="LOGFILE", help="a file written by `mockllm serve --log`")
    r.add_argument("--session", metavar="NAME", help="only this session")
    r.add_argument(
        "--transcript",
        action="store_true",
        help="print the session's transcript (each request, what was new in it, the answer) "
        "instead of its verdict",
    )
    r.add_argument(
        "--max-calls",
        type=int,
        default=DEFAULT_MAX_CALLS,
        metavar="N",
        help="model calls per session beyond which a tool loop is assumed (default %(default)s)",
    )
    r.add_argument(
        "--allow",
        action="append",
        default=[],
        type=_allowance,
        metavar="CHECK=REASON",
        help="waive a verdict check in every session, with the reason (repeatable); "
        "scenarios and turns give theirs with `allow:` (docs/verdict.md)",
    )
    r.add_argument(
        "--html",
        metavar="PATH",
        help="also write the log as one self-contained HTML page (the viewer), e.g. for CI",
    )
    r.add_argument(
        "--json",
        action="store_true",
        help="print each session's verdict as JSON, one object a line: the objects "
        "GET /_mockllm/verdict returns (for scripts and CI annotations)",
    )
    r.set_defaults(run=_report)


def _option(p: Any, name: str, more: str = "", **kwargs: Any) -> None:
    """The flag of the `ServerOptions` field `name`: --NAME, its default and, as its help,
    the field's doc (options.py), then what only the command line needs (`more`)."""
    kwargs.setdefault("default", getattr(DEFAULTS, name))
    help = field_help(name) + more
    p.add_argument("--" + name.replace("_", "-"), dest=name, help=help, **kwargs)


def _listening(p: argparse.ArgumentParser) -> None:
    """The options of every command that listens: serve and record."""
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="0 picks a free port (default 8000)"
    )
    p.add_argument("--ready-file", metavar="FILE", help="write the URL here once listening")
    more = " (e.g. 10MB; default %(default)s)"
    _option(p, "max_body", more, type=_size, metavar="BYTES")
    _option(p, "keep_alive", " (default %(default)s)", type=_whole_seconds, metavar="SECONDS")


def _serve_parser(sub: Any) -> None:
    s = sub.add_parser("serve", help="serve scenarios over the OpenAI / Anthropic wire formats")
    _listening(s)
    s.add_argument(
        "--scenarios",
        nargs="+",
        metavar="PATH",
        help="scenario files or folders, served besides the bundled library (a scenario of "
        "yours replaces a bundled one of the same name), as the pytest plugin does",
    )
    s.add_argument(
        "--no-bundled",
        dest="bundled",
        action="store_false",
        help="serve only the --scenarios given, without the bundled library",
    )
    _option(s, "default", metavar="NAME")
    _option(s, "validation", " (default %(default)s)", choices=("strict", "warn", "off"))
    _option(s, "flavor", " (default %(default)s)", choices=FLAVORS)
    _log_flags(s)
    _fault_flags(s)
    _limit_flags(s)
    _state_flags(s)
    _option(s, "real_time", action="store_true")
    websocket = "by default: " + field_help("websocket")  # the flag turns it off
    s.add_argument("--no-websocket", dest="websocket", action="store_false", help=websocket)
    s.add_argument(
        "--quiet", action="store_true", help="no console line per request (the banner stays)"
    )
    s.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="the console line per request: text for people (coloured on a terminal unless "
        "NO_COLOR is set), json for machines (one object per line)",
    )
    s.set_defaults(run=_serve)


def _log_flags(s: Any) -> None:
    _option(s, "log", metavar="FILE")
    _option(s, "log_limit", " (default %(default)s)", type=int, metavar="N")
    _option(s, "log_body_cap", " (default %(default)s)", type=_size, metavar="BYTES")
    _option(s, "log_request_cap", " (default %(default)s)", type=_size, metavar="BYTES")
    _option(s, "log_bytes", " (default %(default)s)", type=_size, metavar="BYTES")


def _fault_flags(s: Any) -> None:
    kinds = ", ".join(CHAOS_KINDS)
    more = f", e.g. 429=0.1,truncate=0.05 (kinds: {kinds})"
    _option(s, "chaos", more, type=_chaos, metavar="KIND=RATE,...")
    _option(s, "seed", " (default %(default)s)", type=int)
    _option(s, "max_stall", " (default %(default)s)", type=float, metavar="SECONDS")


def _limit_flags(s: Any) -> None:
    more = " (1 to 4300, default %(default)s)"
    _option(s, "max_number_digits", more, type=_number_digits, metavar="N")
    _option(s, "max_sessions", " (default %(default)s)", type=int, metavar="N")
    _option(s, "max_schema_work", " (default %(default)s)", type=_positive, metavar="STEPS")
    _option(s, "max_mcp_sessions", " (default %(default)s)", type=int, metavar="N")
    _option(s, "cache_bytes", " (default %(default)s)", type=_size, metavar="BYTES")
    more = " (repeatable; e.g. a docker service name)"
    _option(
        s, "allow_host", more, action="append", default=list(DEFAULTS.allow_host), metavar="NAME"
    )


def _state_flags(s: Any) -> None:
    more = "; default $MOCKLLM_STATE if set (a URL with a password stays out of `ps` there)"
    _option(
        s, "state", more, default=os.environ.get("MOCKLLM_STATE", DEFAULTS.state), metavar="URL"
    )
    _option(s, "state_prefix", " (default %(default)s; no ':')", metavar="NAME")
    _option(s, "state_ttl", " (default %(default)s, a day)", type=int, metavar="SECONDS")
    _option(s, "workers", " (default %(default)s)", type=int, metavar="N")


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


def _number_digits(text: str) -> int:
    from mockllm.core.wirejson import HIGHEST_NUMBER_DIGITS

    if not text.isdigit() or not 1 <= int(text) <= HIGHEST_NUMBER_DIGITS:
        # Python converts no longer integer (sys.get_int_max_str_digits)
        raise argparse.ArgumentTypeError(
            f"{text!r}: give a count from 1 to {HIGHEST_NUMBER_DIGITS}"
        )
    return int(text)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number from 1")
    return int(text)


def _allowance(text: str) -> tuple[str, str]:
    from mockllm.judge.allowances import allowance_problem

    name, _, reason = text.partition("=")
    problem = allowance_problem({name.strip(): reason.strip()})
    if problem:
        raise argparse.ArgumentTypeError(f"{text!r}: {problem} (give CHECK=REASON)")
    return name.strip(), reason.strip()


def _size(text: str) -> int:
    match = re.fullmatch(r"(\d+)\s*([kKmMgG]?)[bB]?", text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (try 65536, 64KB or 10MB)")
    return int(match[1]) << (10 * " kmg".index((match[2] or " ").lower()))


def _whole_seconds(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1 or len(text.strip()) > 9:
        raise argparse.ArgumentTypeError(f"not a whole number of seconds from 1: {text!r}")
    return int(text)


def _record_parser(sub: Any) -> None:
    r = sub.add_parser(
        "record",
        help="a proxy to a real API that records each session as a scenario file",
        description="Forward every request to --upstream unchanged, stream each answer back "
        "as it arrives, and write each session (/s/NAME/SESSION/... or the X-Mockllm-* "
        "headers) as OUT/NAME-SESSION.yaml, a scenario `mockllm serve` replays.",
    )
    r.add_argument(
        "--upstream",
        required=True,
        metavar="URL",
        help="the API to forward to, e.g. https://api.openai.com ({scenario} and {session} "
        "are replaced by the request's)",
    )
    r.add_argument(
        "--out",
        default="recordings",
        metavar="DIR",
        help="where scenario files go (default %(default)s)",
    )
    _listening(r)
    r.add_argument(
        "--redact",
        action="append",
        default=[],
        metavar="REGEX",
        help="mask text matching REGEX in everything written (repeatable); credentials from "
        "request headers are never written",
    )
    r.set_defaults(run=_record)


def _mcp_parser(sub: Any) -> None:
    m = sub.add_parser(
        "mcp",
        help="serve one scenario's scripted MCP server over stdio (for a harness to spawn)",
        description="Serve SERVER of SCENARIO's mcp_servers over stdio (docs/mcp.md). Each "
        "message is logged: with --url into that running mockllm's log (the same session "
        "as the model requests), with --log appended to a JSONL file; both may be given.",
    )
    m.add_argument("scenario", metavar="SCENARIO", help="the scenario's name")
    m.add_argument("server", metavar="SERVER", help="a key of its mcp_servers")
    m.add_argument(
        "--scenarios",
        nargs="+",
        default=[],
        metavar="PATH",
        help="scenario files or folders, besides the bundled library",
    )
    m.add_argument("--url", metavar="URL", help="a running mockllm whose log gets each message")
    m.add_argument("--session", default="default", help="the session to log under")
    m.add_argument("--log", metavar="FILE", help="append each message's entry to this JSONL file")
    m.add_argument(
        "--max-stall",
        type=float,
        default=DEFAULTS.max_stall,
        metavar="SECONDS",
        help="how long a `hang` fault holds a call (default %(default)s)",
    )
    m.add_argument(
        "--max-body",
        type=_size,
        default=DEFAULTS.max_body,
        metavar="BYTES",
        help="the longest line read; a longer one is answered with JSON-RPC -32600 "
        "(e.g. 10MB; default %(default)s)",
    )
    m.set_defaults(run=_mcp)


def _mcp(args: argparse.Namespace) -> int:
    from mockllm.loading.loader import with_bundled

    scenarios = {s.name: s for s in with_bundled(args.scenarios)}
    scenario = scenarios.get(args.scenario)
    if scenario is None:
        print(
            f"mockllm mcp: no scenario {args.scenario!r}{did_you_mean(args.scenario, scenarios)}",
            file=sys.stderr,
        )
        return 2
    if scenario.mcp_server(args.server) is None:
        declared = ", ".join(s.name for s in scenario.mcp_servers) or "none"
        print(
            f"mockllm mcp: scenario {scenario.name!r} has no MCP server {args.server!r} "
            f"(declared: {declared})",
            file=sys.stderr,
        )
        return 2
    try:
        from mockllm.serving.mcp_stdio import run
    except ImportError as e:
        print(f"mockllm mcp needs {e.name}: pip install 'mockllm-server[mcp]'", file=sys.stderr)
        return 2
    return run(
        scenario, args.server, args.session, args.url, args.log, args.max_stall, args.max_body
    )


def _record(args: argparse.Namespace) -> int:
    for pattern in args.redact:
        try:
            re.compile(pattern)
        except re.error as e:
            print(f"mockllm: --redact {pattern!r}: {e}", file=sys.stderr)
            return 2
    try:
        from mockllm.recording.run import record
    except ImportError as e:  # httpx: the one dependency only the recorder needs
        print(
            f"mockllm record needs {e.name}: pip install 'mockllm-server[record]'",
            file=sys.stderr,
        )
        return 2
    record(
        args.upstream,
        Path(args.out),
        args.host,
        args.port,
        args.redact,
        args.max_body,
        args.ready_file,
        args.keep_alive,
    )
    return 0


def _serve(args: argparse.Namespace) -> int:
    # No collection while the server starts: the objects start-up makes (modules, the
    # scenarios) live as long as the server, and a collector running every 700 of them
    # walked them all again and again (about a tenth of a start's CPU). settle_heap
    # freezes them and turns the collector back on before the first request.
    gc.disable()
    try:
        return _start_and_serve(args)
    finally:
        gc.enable()  # a start that stopped early (a bad flag, a scenario error)


def _start_and_serve(args: argparse.Namespace) -> int:
    from mockllm.loading.loader import load_paths, with_bundled

    with remembered():  # the server's dataclasses, from code compiled at an earlier start
        from mockllm.serving.server import build_app, run

    if args.ready_file and Path(args.ready_file).is_dir():
        print(f"mockllm: --ready-file {args.ready_file!r} is a folder", file=sys.stderr)
        return 2
    if not args.bundled and not args.scenarios:
        print("mockllm: --no-bundled needs --scenarios PATH: nothing to serve", file=sys.stderr)
        return 2
    scenarios = with_bundled(args.scenarios or []) if args.bundled else load_paths(args.scenarios)
    names = {s.name for s in scenarios}
    if args.default and args.default not in names:
        print(f"mockllm: --default {args.default!r} is not a loaded scenario", file=sys.stderr)
        return 2
    refused = _state_refused(args)
    if refused:
        print(refused, file=sys.stderr)
        return 2
    try:
        app = build_app(scenarios, _options(args))
    except ValueError as e:  # a --state that is not a store, or no redis client
        print(f"mockllm: {e}", file=sys.stderr)
        return 2
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
    if not args.quiet:
        from mockllm.log.console import Console, wants_colour

        app.journal.console = Console(sys.stdout, args.log_format, wants_colour(sys.stdout))
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


def _state_refused(args: argparse.Namespace) -> str | None:
    """Why --workers, --state-prefix or --state-ttl cannot be served, if they cannot."""
    from mockllm.state import is_shared

    workers, state, prefix = args.workers, args.state, args.state_prefix
    if ":" in prefix or not prefix:
        # Keys are PREFIX:KIND:NAME: a prefix `x` would match `x:response:y`'s keys of the
        # prefix `x:response` when it resets, and the two mocks would share keys.
        return f"mockllm: --state-prefix {prefix!r}: give a non-empty name without ':'"
    if args.state_ttl < 1:
        return f"mockllm: --state-ttl {args.state_ttl}: give 1 second or more"
    if workers < 1:
        return f"mockllm: --workers {workers}: give 1 or more"
    if workers > 1 and not is_shared(state):
        return (
            f"mockllm: --workers {workers} needs a shared --state: with the state in memory "
            "each worker would count attempts and store responses of its own, so a retry "
            "landing on another worker would not be a retry. Give --state "
            "redis://HOST:PORT/DB (pip install 'mockllm-server[redis]'), or one worker"
        )
    return None


def _banner(count: int, default: str | None) -> str:
    from mockllm.providers import ADAPTERS

    example = default or "SCENARIO"
    families = {cls.family for cls in ADAPTERS.values()}
    lines = [f"mockllm: serving {count} scenarios on {{url}}"]
    if "openai" in families:
        lines.append(f'  OpenAI SDK:    OpenAI(base_url="{{url}}/s/{example}/v1", api_key="test")')
    if "anthropic" in families:
        lines.append(f'  Anthropic SDK: Anthropic(base_url="{{url}}/s/{example}", api_key="test")')
    if "gemini" in families:  # doubled braces: the banner goes through str.format(url=...)
        lines.append(
            '  Gemini SDK:    genai.Client(api_key="test", '
            f'http_options={{{{"base_url": "{{url}}/s/{example}"}}}})'
        )
    if "bedrock" in families:
        lines.append(
            f'  Bedrock:       boto3.client("bedrock-runtime", endpoint_url="{{url}}/s/{example}", '
            "...)  (any credentials)"
        )
    apis = set(ADAPTERS)
    if "vertex-gemini" in apis:
        lines.append(
            '  Vertex Gemini: genai.Client(vertexai=True, project="p", location="us-central1", '
            f'http_options={{{{"base_url": "{{url}}/s/{example}"}}}}, '
            'credentials=Credentials(token="test"))  (google.oauth2.credentials)'
        )
    if "vertex-anthropic" in apis:
        lines.append(
            f'  Vertex Claude: AnthropicVertex(base_url="{{url}}/s/{example}/v1", '
            'region="us-east5", project_id="p", access_token="test")'
        )
    if "openai" in families:  # Azure's routes and Mistral's flavour ride on the Chat wire
        lines.append(
            f'  Azure OpenAI:  AzureOpenAI(azure_endpoint="{{url}}/s/{example}", '
            'api_version="2024-10-21", api_key="test")'
        )
        lines.append(
            f'  Mistral SDK:   Mistral(server_url="{{url}}/f/mistral/s/{example}", api_key="test")'
        )
    if "ollama" in families:
        lines.append(f'  Ollama:        ollama.Client(host="{{url}}/s/{example}")')
    lines.append(
        "  scenarios:     {url}/_mockllm/scenarios    request log: {url}/_mockllm/requests"
    )
    lines.append("  viewer:        {url}/_mockllm/ui    (the log live, each session's verdict)")
    return "\n".join(lines)


def _validate(args: argparse.Namespace) -> int:
    from mockllm.judge.transcript import plural
    from mockllm.loading.loader import load_paths, scenario_files

    files = scenario_files(args.paths)
    try:
        scenarios = load_paths(args.paths)
    except ScenarioError as e:
        print(e, file=sys.stderr)
        bad = {p.source for p in e.problems}
        ok = len({str(f) for f in files} - bad)
        print(
            f"{plural(len(e.problems), 'problem')} in {plural(len(bad), 'file')}; "
            f"{plural(ok, 'file')} ok",
            file=sys.stderr,
        )
        return 1
    print(f"ok: {plural(len(scenarios), 'scenario')} in {plural(len(files), 'file')}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from mockllm.loading.loader import BUNDLED, load_paths

    scenarios = sorted(load_paths(args.paths or [BUNDLED]), key=lambda s: s.name)
    width = max((len(s.name) for s in scenarios), default=0)
    columns = shutil.get_terminal_size((100, 24)).columns
    for s in scenarios:
        head = f"{s.name:<{width}}  {len(s.turns):>2} turn(s)"
        if args.long:
            tools = ", ".join(s.tools()) or "none"
            print(f"{head}  tools: {tools}  file: {s.source}")
            for line in textwrap.wrap(s.description, max(columns - 4, 40)):
                print(f"    {line}")
            continue
        first_line = s.description.splitlines()[0] if s.description else ""
        line = f"{head}  {first_line}".rstrip()
        print(line if len(line) <= columns else line[: max(columns - 1, len(head))] + "…")
    return 0


def _report(args: argparse.Namespace) -> int:
    from mockllm.judge import report

    entries = report.read_log(args.logfile)
    grouped = (
        entries if isinstance(entries, str) else report.pick(entries, args.session, args.logfile)
    )
    if isinstance(grouped, str):
        print(f"mockllm report: {grouped}", file=sys.stderr)
        return 2
    if args.transcript and args.json:
        print("mockllm report: --json prints verdicts, --transcript text: one", file=sys.stderr)
        return 2
    if args.transcript:
        print(report.transcripts(grouped))
        return 0
    text, verdicts = report.summary(grouped, args.max_calls, dict(args.allow))
    if args.json:  # stdout is the verdicts alone; what else is said goes to stderr
        from mockllm.core.wirejson import dumps_line  # a name's line break stays escaped

        print("\n".join(dumps_line(v) for v in verdicts.values()))
    else:
        print(text)
    if args.html:
        from mockllm.judge.transcript import plural
        from mockllm.viewer.page import report_page

        shown = [e for found in grouped.values() for e in found]  # --session: that one
        title = f"mockllm report: {Path(args.logfile).name}"
        Path(args.html).write_text(report_page(shown, verdicts=verdicts, title=title), "utf-8")
        requests = sum(1 for e in shown if e.get("api") != "allowance")  # records: no requests
        counts = f"{plural(len(verdicts), 'session')}, {plural(requests, 'request')}"
        print(f"wrote {args.html} ({counts})", file=sys.stderr if args.json else sys.stdout)
    return 1 if any(not v["ok"] for v in verdicts.values()) else 0


def _start_script(args: argparse.Namespace) -> int:
    # Shipped in the package, so a release (wheel, sdist or image) carries it: docs/ci.md.
    print(Path(__file__).parent / "testing" / "mockllm-start.sh")
    return 0


def _schema(args: argparse.Namespace) -> int:
    from mockllm.loading.loader import schema

    print(json.dumps(schema(), indent=2))
    return 0
