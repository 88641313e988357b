"""Run the app on uvicorn: bind (port 0 allowed), announce the real URL, serve in the
foreground (`mockllm serve`). `mockllm.testing.background` runs the same on a thread."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterable
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import uvicorn
from uvicorn.config import LOGGING_CONFIG

from mockllm.core import schema_budget
from mockllm.core.engine import Engine
from mockllm.core.scenario import Scenario
from mockllm.log.shared import open_journal
from mockllm.options import DEFAULTS, ServerOptions
from mockllm.serving.app import MockLLM
from mockllm.serving.coalesce import http_protocol
from mockllm.serving.responder import quiet_scripted_aborts
from mockllm.serving.upgrades import handshakes_only, quiet_websocket
from mockllm.state import is_shared
from mockllm.state.memory import MemoryStore
from mockllm.state.store import Store


def build_app(scenarios: Iterable[Scenario], options: ServerOptions = DEFAULTS) -> MockLLM:
    """The app `mockllm serve` runs, with the same options (see `mockllm serve --help`)."""
    scenarios = list(scenarios)
    if options.default and options.default not in {s.name for s in scenarios}:
        raise ValueError(f"default {options.default!r} is not a loaded scenario")
    engine = Engine(
        scenarios,
        default=options.default,
        validation=options.validation,
        real_time=options.real_time,
        flavor=options.flavor,
        chaos=options.chaos,
        seed=options.seed,
    )
    schema_budget.configure(options.max_schema_work)
    journal = open_journal(options)  # the fleet's on a shared --state
    return MockLLM(engine, journal, options, state_of(options, engine))


def state_of(options: ServerOptions, engine: Engine) -> Store:
    """The store of attempts, cuts, stored responses and run-time scenarios (--state): the
    one place the server picks memory or Redis; everything after takes the `Store`."""
    if not is_shared(options.state):
        return MemoryStore(engine, options.max_sessions)
    from mockllm.serving.redis_store import RedisStore
    from mockllm.state.redis_state import RedisState

    return RedisStore(RedisState(options.state, options.state_prefix, options.state_ttl), engine)


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit this on Linux; uvicorn's own bind would set it per
    # connection, but a pre-bound socket must not fall into the 40 ms Nagle trap.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    """The URL a client on this machine reaches `sock` at: on a wildcard bind (every
    interface, as in a container) that is loopback, not the unroutable 0.0.0.0."""
    host, port = sock.getsockname()[:2]
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_ready = on_ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._on_ready()


def uvicorn_config(app: MockLLM, in_process: bool) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        http=_protocols(app.options.websocket)[0],
        lifespan="off",
        access_log=False,
        log_level="warning",
        # In someone else's process, leave their logging configuration alone.
        log_config=None if in_process else LOGGING_CONFIG,
        server_header=False,
        date_header=False,  # byte-identical responses, headers included
        timeout_graceful_shutdown=1,
        timeout_keep_alive=app.options.keep_alive,
        # Codex's Responses over WebSocket (serving/websocket.py); "none" hands an upgrade
        # to the app as plain HTTP, answered 426.
        ws=_protocols(app.options.websocket)[1],
        ws_max_size=app.options.max_body,
        # No permessage-deflate: on loopback compressing every frame only costs CPU (about a
        # quarter of a WebSocket turn's); a client that offers it goes on without it.
        ws_per_message_deflate=False,
    )


@cache
def _protocols(websocket: bool) -> tuple[type[Any], Any]:
    """uvicorn's HTTP protocol writing one write per response (serving/coalesce.py) and
    upgrading only a real handshake, built once, before the heap is frozen; and what
    makes its WebSocket protocol, quiet about a client's bad frame (serving/upgrades.py)."""
    http = handshakes_only(http_protocol())
    return http, _websocket_protocol if websocket and _has_websockets() else "none"


def _websocket_protocol(**kwargs: Any) -> Any:
    """uvicorn makes its WebSocket protocol only for a handshake, calling this as it would
    the class: the library (its imports cost every start about 10 ms) loads with the first
    handshake instead."""
    return _quiet_websocket()(**kwargs)


_quiet_websocket = cache(quiet_websocket)  # one class, made on first use


def _has_websockets() -> bool:
    return find_spec("websockets") is not None


def announce(url: str, banner: str, ready_file: str | None) -> None:
    """Print the banner, and write the URL to the ready file for whoever waits on it."""
    print(banner, flush=True)
    if ready_file:
        tmp = Path(ready_file + ".tmp")
        tmp.write_text(url + "\n")
        tmp.replace(ready_file)  # atomic: a waiter never reads half a URL


def run(app: MockLLM, host: str, port: int, ready_file: str | None, banner: str) -> None:
    """Serve until stopped; in `app.options.workers` processes when more than one."""
    quiet_scripted_aborts()
    _protocols(app.options.websocket)  # imports uvicorn's HTTP side before the freeze
    settle_heap()
    workers = app.options.workers
    sock = bind(host, port)
    url = url_of(sock)

    def ready() -> None:
        announce(url, banner.format(url=url), ready_file)

    try:
        if workers > 1:
            _serve_workers(app, sock, workers, ready)
        else:
            Server(uvicorn_config(app, in_process=False), ready).run(sockets=[sock])
    finally:
        stopped(app)
        sock.close()
    sys.stdout.flush()


def settle_heap() -> None:
    """Tune the garbage collector for a server, before it serves.

    - Freeze what start-up built (modules, scenarios, compiled schemas: about 29,000
      objects): it lives as long as the server, and a full collection would otherwise
      walk all of it again every few thousand requests (10-25 ms each on the bench
      machine, a tail-latency spike). Before forking workers, this also keeps the
      collector from touching, and so copying, the pages they share. No collection
      first: it would add milliseconds to start-up, to free the little garbage it leaves.
    - Collect the youngest objects every 10,000 allocations, not 700: one request that
      resends a 200-message history allocates more than 700 containers, so it met a
      collection almost every time (about 5 % of its CPU in-process), and each one moved
      the request's live objects a generation up, toward full collections. What waits
      longer is only cyclic garbage, a few megabytes at most.

    - Hand the interpreter lock between threads every millisecond, not five: while a big
      log read is formatted on a worker thread, the loop waits for the lock at each turn,
      and a health check answered meanwhile waited 8 to 10 ms at the median (4 to 5 ms now;
      `python -m bench.bytes log 600`).

    Only `mockllm serve` does this: in someone else's process (`mockllm.serve()`, the
    pytest plugin) the collector is not ours to tune.
    """
    gc.freeze()
    sys.setswitchinterval(GIL_SWITCH_SECONDS)
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_EVERY, older, oldest)
    gc.enable()  # `mockllm serve` starts with it off (cli.py)


YOUNG_COLLECTION_EVERY = 10_000  # allocations (Python's default: 700)
GIL_SWITCH_SECONDS = 0.001  # Python's default: 0.005


def stopped(app: MockLLM) -> None:
    """Close the log, and write the console lines still held for the loop's last turn."""
    app.journal.shutdown()
    flush = getattr(app.journal.console, "flush", None)  # the Console holds lines a turn
    if flush is not None:
        flush()


# A stop signal that arrives while the workers are being forked waits (blocked, pending)
# until the parent can pass it on to every worker.
_STOPS = {signal.SIGTERM, signal.SIGINT}
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _serve_workers(
    app: MockLLM, sock: socket.socket, count: int, ready: Callable[[], None]
) -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    children: list[int] = []
    try:
        for _ in range(count):
            children.append(_fork(app, sock))
    except BaseException:  # a failed fork: the workers forked must not outlive the parent
        _stop_all(children)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
        raise
    _supervise(children, ready)


def _fork(app: MockLLM, sock: socket.socket) -> int:
    """A worker process serving the shared listening socket (TCP_NODELAY set on it, so
    every worker's connections inherit it). Forked before any event loop or Redis
    connection exists: each worker opens its own."""
    parent = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        _die_with(parent)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)  # uvicorn handles them
        Server(uvicorn_config(app, in_process=False), lambda: None).run(sockets=[sock])
        code = 0
    finally:
        try:  # a stdout gone away must not let the worker unwind into the parent's code
            stopped(app)
            sys.stdout.flush()
        finally:
            os._exit(code)


def _die_with(parent: int) -> None:
    """Have the kernel stop this worker (SIGTERM) when the parent dies, even by SIGKILL,
    so that no worker keeps serving the port alone (Linux; elsewhere only an orderly stop
    of the parent stops the workers)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # died before prctl took effect
        os._exit(1)


def _stop_all(children: list[int]) -> None:
    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    for pid in children:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _supervise(children: list[int], ready: Callable[[], None]) -> None:
    """Wait for the workers; SIGTERM or SIGINT stops them all, and so does one dying
    (then the exit status is 1, so that a supervisor such as systemd sees it)."""
    alive = set(children)
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    # Ctrl-C reaches every worker from the terminal too; uvicorn takes a SIGTERM after the
    # SIGINT as the same graceful stop (only a second SIGINT forces it), and a SIGINT sent
    # to the parent alone must stop the workers as well.
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)  # one that came meanwhile runs now
    ready()
    failed = False
    while alive:
        pid, status = os.wait()
        alive.discard(pid)
        code = os.waitstatus_to_exitcode(status)
        # uvicorn ends a worker it stopped on a signal by raising that signal again
        if not stopping and code != 0:
            failed = True
            message = f"mockllm: worker {pid} exited with {code}; stopping the others"
            print(message, file=sys.stderr, flush=True)
            stop()
    if failed:
        raise SystemExit(1)
