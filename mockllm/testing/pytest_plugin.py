"""pytest plugin (entry point `pytest11`, loaded when mockllm is installed).

Fixtures:
    mockllm          a fresh `Session` per test: `url()`, `requests()`, assertions
    mockllm_client   the `Client` of this process's server
    mockllm_server   that server, running on a thread of this process (the `RunningServer`)
    mockllm_server_options
                     the `ServerOptions` that server starts with; override this
                     session-scoped fixture in a conftest.py to change them

One server per test process (so one per xdist worker), started on first use. A test's
session is reset before it runs, and at teardown any exception the server hit while
answering it fails the test with the server's traceback.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from mockllm.core.encoding import digest
from mockllm.errors import Problem, ScenarioError
from mockllm.judge.transcript import plural
from mockllm.log.runs import with_run
from mockllm.testing import run_ids

if TYPE_CHECKING:  # the rest is imported by the fixtures: pytest runs that never use them
    from mockllm.log.records import LogEntry
    from mockllm.options import ServerOptions
    from mockllm.testing.background import RunningServer
    from mockllm.testing.client import Client  # should not pay for uvicorn
    from mockllm.testing.html_report import HtmlReport
    from mockllm.testing.session import ScenarioSource, Session


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockllm", "mockllm fake LLM server")
    group.addoption(
        "--mockllm-scenarios",
        action="append",  # repeated, not nargs="+": that would swallow the test paths after it
        default=[],
        metavar="PATH",
        help="a scenario file or folder the server loads, besides the bundled library (repeatable)",
    )
    group.addoption(
        "--mockllm-transcript",
        choices=("short", "full", "off"),
        default=None,
        help="the 'mockllm' section of a failing test's report: the last requests with short "
        "texts (short, the default), every request in full (full, also with -vv), or none",
    )
    group.addoption(
        "--mockllm-record",
        choices=RECORD_MODES,
        default=None,
        help="record the scenario file a test's marker names from the real API at "
        f"${UPSTREAM_ENV}: none (the default: never, a missing file fails the test), once "
        "or new (record files that are missing, replay the others), all (record every one)",
    )
    group.addoption(
        "--mockllm-redact",
        action="append",
        default=[],
        metavar="REGEX",
        help="mask text matching REGEX in every recorded file (repeatable); credentials "
        "from request headers are never written",
    )
    group.addoption(
        "--mockllm-url",
        metavar="URL",
        help="use the mockllm server at URL (e.g. a CI service) instead of starting one",
    )
    _port_options(group, parser)
    group.addoption(
        "--mockllm-html",
        metavar="PATH",
        help="write the run's request log to PATH as one HTML page: a session per test, "
        "failing tests first (the viewer, e.g. a CI artifact)",
    )
    run_ids.addoption(group, parser)
    group.addoption(
        "--mockllm-strict",
        choices=("on", "off"),
        default=None,
        help="fail a test whose session's protocol verdict fails, at teardown (on, the "
        "default; also the ini option mockllm_strict), or leave the verdict to the test's "
        "own assertions (off)",
    )
    _add_ini(parser)


def _add_ini(parser: pytest.Parser) -> None:
    parser.addini(
        "mockllm_strict",
        type="bool",
        default=True,
        help="fail a test whose session's protocol verdict fails, at teardown (default true)",
    )
    parser.addini(
        "mockllm_validation",
        default="strict",
        help="provider history rules of the server: strict (default), warn or off",
    )
    parser.addini(
        "mockllm_scenarios",
        type="paths",
        default=[],
        help="scenario files or folders the server loads, besides the bundled library",
    )


def _port_options(group: Any, parser: pytest.Parser) -> None:
    """Fixed ports, for a machine that lets tests listen only on listed ports."""
    group.addoption(
        "--mockllm-port",
        type=int,
        default=None,
        metavar="PORT",
        help="the port of the fixture's server (default: a free one; under xdist, worker "
        "gwN listens on PORT+N), for a machine that allows only listed ports",
    )
    group.addoption(
        "--mockllm-record-port",
        type=int,
        default=None,
        metavar="PORT",
        help="the port of the in-test recorder (--mockllm-record; default: a free one; "
        "under xdist, worker gwN listens on PORT+N)",
    )
    parser.addini("mockllm_port", default="", help="the ini form of --mockllm-port")
    parser.addini("mockllm_record_port", default="", help="the ini form of --mockllm-record-port")


def pytest_configure(config: pytest.Config) -> None:
    run_ids.configure(config)
    html = config.getoption("mockllm_html")
    if html:
        from mockllm.testing.html_report import HtmlReport

        config.pluginmanager.register(HtmlReport(Path(html).absolute()), _HTML_REPORT)
    config.addinivalue_line(
        "markers",
        "mockllm(*scenarios, scenarios=..., allow={check: reason}, record=MODE, strict=BOOL): "
        "scenarios this test adds to the server (files, folders, YAML text or mappings; paths "
        "relative to the test file), verdict checks it waives, its record mode, and whether "
        "its session's verdict fails it at teardown (strict, the default)",
    )


def _startup_scenarios(config: pytest.Config) -> list[Path]:
    cli = [config.invocation_params.dir / p for p in config.getoption("mockllm_scenarios")]
    return [*config.getini("mockllm_scenarios"), *cli]


@pytest.fixture(scope="session")
def mockllm_server_options(pytestconfig: pytest.Config) -> ServerOptions:
    """The options of this process's server: `mockllm_validation` in the ini file, or
    override the fixture to set any of them (`ServerOptions(log="run.jsonl", ...)`)."""
    from mockllm.options import ServerOptions

    validation = pytestconfig.getini("mockllm_validation")
    if validation not in ("strict", "warn", "off"):
        raise pytest.UsageError(f"mockllm_validation: {validation!r} is not strict, warn or off")
    return ServerOptions(validation=validation)


@pytest.fixture(scope="session")
def mockllm_server(
    pytestconfig: pytest.Config, mockllm_server_options: ServerOptions
) -> Iterator[RunningServer]:
    if pytestconfig.getoption("mockllm_url"):
        raise pytest.UsageError("mockllm_server: no server in this process with --mockllm-url")
    from mockllm.loading.loader import with_bundled
    from mockllm.testing.background import serve

    port = _port(pytestconfig, "mockllm_port")
    problems: list[Problem] = []
    busy: OSError | None = None
    try:
        scenarios = with_bundled(_startup_scenarios(pytestconfig))
        server = serve(scenarios, mockllm_server_options, port=port)
    except ScenarioError as e:
        problems = e.problems  # failed outside the `except`: said once, not chained
    except OSError as e:
        busy = e
    if busy is not None:
        _cannot_listen(port, "--mockllm-port", busy)
    if problems:
        pytest.fail(_problems("cannot start the server", problems, pytestconfig), pytrace=False)
    with server:
        yield server


@pytest.fixture(scope="session")
def mockllm_client(pytestconfig: pytest.Config, request: pytest.FixtureRequest) -> Client:
    url = pytestconfig.getoption("mockllm_url")
    if not url:
        server: RunningServer = request.getfixturevalue("mockllm_server")
        return server.client
    from mockllm.testing.client import Client

    client = Client(url)
    try:
        client.add_scenarios(*_startup_scenarios(pytestconfig))  # that server loaded its own
    except ScenarioError as e:
        problems = e.problems  # failed outside the `except`: said once, not chained
    else:
        return client
    what = f"cannot add the scenarios to the server at {url}"
    pytest.fail(_problems(what, problems, pytestconfig), pytrace=False)


_SESSION = pytest.StashKey["Session"]()


@pytest.fixture
def mockllm(mockllm_client: Client, request: pytest.FixtureRequest) -> Iterator[Session]:
    item = request.node
    name = _session_name(item)
    allow = _marker_allowances(item)
    recording = _recording(item)
    session = (
        mockllm_client.session(name)
        if recording is None
        else _recording_session(mockllm_client, name, recording, request)
    )
    report: HtmlReport | None = request.config.pluginmanager.get_plugin(_HTML_REPORT)
    if report is not None:
        report.begin(item.nodeid, session.name, allow)
    session.reset()  # a rerun of the same test starts clean too
    if allow:  # recorded in the server's log, with where it came from
        session.allow(allow, f"@pytest.mark.mockllm(allow=...) on {item.nodeid}")
    _add_marker_scenarios(mockllm_client, item, skip=recording)
    item.stash[_SESSION] = session
    _transcripts(item.config, full=None)
    yield session
    _transcripts(item.config, full=True)
    if recording is not None:
        _end_recording(session, item.config)
        return
    if report is not None:
        _report_entries(report, session)
    try:
        entries = session.requests()  # read once for both
        _fail_on_server_errors(session, entries)
        _fail_on_clash(session, entries)  # before the verdict: it explains a wrong one
        if _strict(item) and item.stash.get(_BODY_PASSED, False):
            _fail_on_verdict(session, item)
    finally:
        _release(session)


# --- record if missing (docs/record.md, "Record inside pytest") ----------------------------

RECORD_MODES = ("none", "once", "new", "all")
_RECORDED = pytest.StashKey[list[str]]()


def _record_mode(item: pytest.Item) -> str:
    """The option is the switch (none, the default, never records); a marker's `record=`
    picks the mode of its tests once recording is on."""
    option = item.config.getoption("mockllm_record") or "none"
    if option == "none":
        return "none"
    mode = next(
        (m.kwargs["record"] for m in item.iter_markers("mockllm") if "record" in m.kwargs),
        option,
    )
    if mode not in RECORD_MODES:
        raise pytest.UsageError(f"@pytest.mark.mockllm(record={mode!r}): one of {RECORD_MODES}")
    return str(mode)


def _record_targets(item: pytest.Item) -> list[Path]:
    """The scenario files the test's markers name (a `.yaml`/`.yml` path)."""
    found = [s for s in _marker_scenarios(item) if isinstance(s, Path)]
    return [p for p in found if p.suffix in (".yaml", ".yml")]


def _recording(item: pytest.Item) -> Path | None:
    """The file this test records into, or None when it replays. A missing file in `none`
    mode fails the test with how to record it."""
    mode = _record_mode(item)
    targets = _record_targets(item)
    missing = [t for t in targets if not t.exists()]
    wanted = targets if mode == "all" else missing if mode in ("once", "new") else []
    if mode == "none" and missing:
        where = _relative(missing[0], item.config)
        pytest.fail(
            f"mockllm: the scenario {where} of {item.name} does not exist. Record it from the "
            f"real API: {UPSTREAM_ENV}=https://api.openai.com pytest --mockllm-record=once "
            f"{item.nodeid} (the SDK's key from its usual variable; docs/record.md), then "
            "commit the file: later runs replay it offline",
            pytrace=False,
        )
    if len(wanted) > 1:
        pytest.fail(
            f"mockllm: {item.name} records one scenario file, not {len(wanted)}", pytrace=False
        )
    return wanted[0] if wanted else None


UPSTREAM_ENV = "MOCKLLM_RECORD_UPSTREAM"


def _recording_session(
    client: Client, name: str, target: Path, request: pytest.FixtureRequest
) -> Session:
    from mockllm.testing.recording import RecordingSession

    recorder = request.getfixturevalue("mockllm_recorder")
    return RecordingSession(client, name, recorder, target)


@pytest.fixture(scope="session")
def mockllm_recorder(pytestconfig: pytest.Config) -> Iterator[Any]:
    """The recorder the recording tests go through (started only when one records)."""
    upstream = os.environ.get(UPSTREAM_ENV)
    if not upstream:
        pytest.fail(
            f"mockllm: --mockllm-record needs {UPSTREAM_ENV}, the real API to record from "
            "(e.g. https://api.openai.com, https://api.anthropic.com)",
            pytrace=False,
        )
    try:
        from mockllm.recording.in_test import TestRecorder
    except ImportError as e:  # httpx: the one dependency only the recorder needs
        pytest.fail(
            f"mockllm: recording needs {e.name}: pip install 'mockllm-server[record]'",
            pytrace=False,
        )
    port = _port(pytestconfig, "mockllm_record_port")
    busy: OSError | None = None
    try:
        recorder = TestRecorder(upstream, pytestconfig.getoption("mockllm_redact"), port=port)
    except OSError as e:
        busy = e
    if busy is not None:  # said outside the `except`: once, not chained
        _cannot_listen(port, "--mockllm-record-port", busy)
    recorder.start()
    yield recorder
    recorder.stop()


def _port(config: pytest.Config, name: str) -> int:
    """The fixed port the flag or the ini file gives (0: a free one), one per xdist worker."""
    given: int | None = config.getoption(name)
    if given is None:
        ini = str(config.getini(name) or "").strip()
        if ini and not ini.isdigit():
            raise pytest.UsageError(f"{name}: {ini!r} is not a port number")
        given = int(ini) if ini else 0
    if not 0 <= given <= 65535:
        raise pytest.UsageError(f"--{name.replace('_', '-')}: {given} is not a port number")
    workerid = getattr(config, "workerinput", {}).get("workerid", "")  # xdist's workers only
    worker = re.fullmatch(r"gw(\d+)", str(workerid))
    return given + int(worker[1]) if given and worker else given


def _cannot_listen(port: int, flag: str, error: OSError) -> NoReturn:
    pytest.fail(f"mockllm: cannot listen on 127.0.0.1:{port} ({flag}): {error}", pytrace=False)


def _end_recording(session: Any, config: pytest.Config) -> None:
    written = session.end()
    lines = config.stash.setdefault(_RECORDED, [])
    for path, turns in written:
        lines.append(f"mockllm: recorded {_relative(path, config)} ({plural(turns, 'turn')})")


def _relative(path: Path, config: pytest.Config) -> str:
    base = config.invocation_params.dir
    return str(path.relative_to(base)) if path.is_relative_to(base) else str(path)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    for line in config.stash.get(_RECORDED, []):
        terminalreporter.write_line(line)


def _report_entries(report: HtmlReport, session: Session) -> None:
    from mockllm.errors import ClientError

    # The server gone: the test's own teardown says so; the report just lacks the entries.
    with contextlib.suppress(ClientError):
        report.end([e.raw for e in session.logged()])  # its allowance's record too


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Any failing test that used the fixture shows its session, however it failed: an
    SDK exception, a timeout, an assert of its own, a mockllm assertion."""
    report = yield
    if report.when == "call":  # strict mode judges the verdict only of a test that passed
        item.stash[_BODY_PASSED] = report.passed
    session = item.stash.get(_SESSION, None)
    recorded = getattr(session, "recording", False)
    if session is not None and report.failed and not recorded:
        del item.stash[_SESSION]  # one section, even when teardown fails too
        mode = _transcript_mode(item.config)
        if mode != "off" and not _carries_transcript(call, session.name):
            report.sections.append(("mockllm", _section(session, mode == "full")))
    return report


def _transcript_mode(config: pytest.Config) -> str:
    mode = config.getoption("mockllm_transcript")
    return str(mode) if mode else "full" if _verbose_flags(config) >= 2 else "short"


def _transcripts(config: pytest.Config, full: bool | None) -> None:
    """How much of the session a mockllm assertion's message shows: as the report section
    would (None), or all of it (outside a test)."""
    from mockllm.testing.assertions import FULL_TRANSCRIPT

    FULL_TRANSCRIPT.set(_transcript_mode(config) == "full" if full is None else full)


def _carries_transcript(call: pytest.CallInfo[None], session: str) -> bool:
    """A mockllm assertion's failure: its message has the transcript already (printed
    once, not again in a section under it)."""
    error = call.excinfo.value if call.excinfo is not None else None
    text = str(error) if isinstance(error, AssertionError) else ""
    return text.startswith("mockllm: ") and f"mockllm session {session!r}" in text


def _verbose_flags(config: pytest.Config) -> int:
    """The -v flags given: `-vv -q` still asks for the full transcript (pytest nets the
    flags into one verbosity, 1 there; -q keeps its own count)."""
    return int(config.option.verbose) + int(getattr(config.option, "quiet", 0) or 0)


def _section(session: Session, full: bool) -> str:
    from mockllm.errors import ClientError

    try:
        text = session.transcript(full=full)
    except ClientError as e:
        return f"mockllm: could not read the session's log: {e}"
    if full or "\n" not in text:
        return text
    return text + "\n(short: -vv or --mockllm-transcript=full shows every request in full)"


_HTML_REPORT = "mockllm-html-report"


def _session_name(item: pytest.Item) -> str:
    """Readable in the log and a URL path segment; unique per test id and run:
    `TEST-HASH~RUN` (log/runs.py)."""
    tag = digest(item.nodeid.encode(), 4).hex()
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", item.name).strip("-")
    if len(name) > _NAME_CHARS:  # keep the end too: pytest's [param] id is there
        name = name[: _NAME_CHARS // 3] + "--" + name[-(_NAME_CHARS - _NAME_CHARS // 3 - 2) :]
    return with_run(name + "-" + tag, run_ids.run_id(item.config))


_NAME_CHARS = 200  # a session name is a URL path segment and a log field: bounded


def _add_marker_scenarios(client: Client, item: pytest.Item, skip: Path | None = None) -> None:
    sources = [s for s in _marker_scenarios(item) if s != skip]  # `skip`: being recorded
    problems = [p for source in sources for p in _check_in_place(source, item)]
    if not problems:
        try:
            client.add_scenarios(*sources)
        except ScenarioError as e:
            problems = e.problems
    if problems:  # the problems say where; a traceback into mockllm would not
        what = "a scenario of @pytest.mark.mockllm is wrong"
        pytest.fail(_problems(what, problems, item.config), pytrace=False)


def _check_in_place(source: ScenarioSource, item: pytest.Item) -> list[Problem]:
    """Problems of a marker's YAML text or mapping, located in the test file itself."""
    if isinstance(source, Path) or not isinstance(source, (str, Mapping)):
        return []  # files name themselves
    from mockllm.loading.loader import load_mapping, load_text

    try:
        if isinstance(source, str):
            load_text(source, "<text>")
        else:
            load_mapping(source)
    except ScenarioError as e:
        return [_in_test_file(p, source, item) for p in e.problems]
    return []


def _in_test_file(problem: Problem, source: str | Mapping[str, Any], item: pytest.Item) -> Problem:
    """Text written verbatim in the test file maps line for line; otherwise the test's line."""
    test_file = str(item.path)
    code = item.path.read_text("utf-8") if item.path.is_file() else ""
    start = code.find(source) if isinstance(source, str) else -1
    if start >= 0 and problem.line is not None:
        first_line = code.count("\n", 0, start) + 1
        return replace(problem, source=test_file, line=first_line + problem.line - 1)
    line = item.reportinfo()[1]
    where = f"the scenario of @pytest.mark.mockllm on {item.name}"
    message = f"{problem.message} (in {where}" + (
        f", its line {problem.line})" if problem.line is not None else ")"
    )
    return replace(problem, source=test_file, line=(line or 0) + 1, column=1, message=message)


def _problems(what: str, problems: list[Problem], config: pytest.Config) -> str:
    """One line per problem, with paths relative to where pytest was started."""
    base = config.invocation_params.dir
    lines = [f"mockllm: {what}:"]
    for p in problems:
        path = Path(p.source)
        if path.is_absolute() and path.is_relative_to(base):
            p = replace(p, source=str(path.relative_to(base)))
        lines.append(str(p))
    return "\n".join(lines)


_MARKER_KEYS = frozenset({"scenarios", "allow", "record", "strict"})


def _marker_allowances(item: pytest.Item) -> dict[str, str]:
    """`allow={check: reason}` of the markers, the test's own winning over its class's."""
    from mockllm.judge.allowances import allowance_problem

    allow: dict[str, str] = {}
    for marker in reversed(list(item.iter_markers("mockllm"))):  # module, class, then test
        given = marker.kwargs.get("allow") or {}
        problem = allowance_problem(given)
        if problem:
            pytest.fail(
                f"mockllm: @pytest.mark.mockllm(allow=...) on {item.name}: {problem}", pytrace=False
            )
        allow.update(given)
    return allow


def _marker_scenarios(item: pytest.Item) -> list[ScenarioSource]:
    here = item.path.parent
    sources: list[ScenarioSource] = []
    for marker in reversed(list(item.iter_markers("mockllm"))):  # module, class, then test
        unknown = set(marker.kwargs) - _MARKER_KEYS
        if unknown:
            raise TypeError(
                "@pytest.mark.mockllm takes scenarios=, allow=, record= and strict=, not "
                f"{sorted(unknown)}"
            )
        given = marker.kwargs.get("scenarios", ())
        listed = [given] if isinstance(given, (str, Path, Mapping)) else list(given)
        sources += [_resolve(s, here) for s in [*marker.args, *listed]]
    return sources


def _resolve(source: Any, here: Path) -> ScenarioSource:
    if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source):
        return here / source  # an absolute path stays as it is
    if not isinstance(source, (str, Mapping)):
        raise TypeError(f"mockllm marker: cannot load a scenario from {source!r}")
    return source


def _fail_on_clash(session: Session, entries: list[LogEntry]) -> None:
    """Another client reset this session while the test used it (two runs with one run
    id): its log is not the test's alone, so no verdict on it can be trusted."""
    said = session.clash(entries)
    if said:
        pytest.fail(f"mockllm: session {session.name!r}: {said}", pytrace=False)


def _release(session: Session) -> None:
    from mockllm.errors import ClientError

    with contextlib.suppress(ClientError):  # the server gone: the test says so already
        session.release()


def _fail_on_server_errors(session: Session, entries: list[LogEntry]) -> None:
    crashed = [e for e in entries if e.server_error]
    if crashed:
        count = plural(len(crashed), "request")
        lines = [f"mockllm: the server raised an exception while answering {count} of this test:"]
        for entry in crashed:
            turn = "?" if entry.turn is None else entry.turn
            lines += ["", f"log seq {entry.seq}: {entry.path} ({entry.api}, turn {turn})"]
            lines.append(str(entry.server_error).rstrip())
        pytest.fail("\n".join(lines), pytrace=False)


# --- strict: a test fails when its session's verdict does (docs/pytest.md) ------------------

_BODY_PASSED = pytest.StashKey[bool]()


def _strict(item: pytest.Item) -> bool:
    """The test's marker (`strict=`), else `--mockllm-strict`, else the ini option."""
    marked = next(
        (m.kwargs["strict"] for m in item.iter_markers("mockllm") if "strict" in m.kwargs), None
    )
    if marked is not None:
        if not isinstance(marked, bool):
            raise pytest.UsageError(f"@pytest.mark.mockllm(strict={marked!r}): True or False")
        return marked
    option = item.config.getoption("mockllm_strict")
    return option == "on" if option is not None else bool(item.config.getini("mockllm_strict"))


def _fail_on_verdict(session: Session, item: pytest.Item) -> None:
    """At teardown, after a test body that passed: its session's verdict, as every other
    view of the server shows it, fails the test when it fails."""
    from mockllm.errors import ClientError

    try:
        judged = session.verdict()
    except ClientError as e:
        pytest.fail(f"mockllm: strict: cannot read the session's verdict: {e}", pytrace=False)
    if judged.ok:
        return
    failed = [c for c in judged.checks if c.status == "failed"]
    lines = [
        f"mockllm: {judged.label} ({len(failed)} of {plural(len(judged.checks), 'check')} "
        f"failed) in session {session.name!r}, judged at teardown:",
        *(f"  ✗ {c.name}: {c.message}" for c in failed),
        "",
        "strict by default: a test fails when its session's verdict does. Fix the harness, "
        f"waive a check with @pytest.mark.mockllm(allow={{{failed[0].name!r}: 'why'}}), or "
        "opt out: @pytest.mark.mockllm(strict=False), --mockllm-strict=off, or "
        "mockllm_strict = false in the ini file (docs/pytest.md).",
    ]
    # The transcript now, while the server runs: the last test's session-scoped server
    # stops before pytest reports its teardown, so the report section could not read it.
    mode = _transcript_mode(item.config)
    if mode != "off":
        lines += ["", _section(session, mode == "full")]
    if _SESSION in item.stash:
        del item.stash[_SESSION]  # said here: no second copy in a section
    pytest.fail("\n".join(lines), pytrace=False)
