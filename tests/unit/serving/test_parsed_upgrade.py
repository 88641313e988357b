"""The upgrade request handed to the WebSocket library as uvicorn parsed it
(serving/upgrades.py's `parsed_request`), not written back as bytes for the library to
parse again: wherever it is handed so, it is the request the library's own parse reads
from those bytes; wherever that parse could refuse it or read it otherwise, it is not
handed (None), and the library parses the bytes as before. These tests fail if the
library's parse (websockets' http11.py) comes to read a request otherwise."""

from __future__ import annotations

import base64
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from websockets import http11
from websockets.server import ServerProtocol

from mockllm.serving.upgrades import _TOKENS, parsed_request
from tests.support.hypothesis_profiles import examples

KEY = base64.b64encode(b"0123456789abcdef")
HANDSHAKE = [
    (b"host", b"127.0.0.1:8000"),
    (b"upgrade", b"websocket"),
    (b"connection", b"Upgrade"),
    (b"sec-websocket-key", KEY),
    (b"sec-websocket-version", b"13"),
    (b"sec-websocket-extensions", b"permessage-deflate; client_max_window_bits"),
    (b"user-agent", b"Python/3.11 websockets/16.1.1"),
]
URL = b"/s/hello/session/v1/responses"
LINE, MAX_HEADERS = http11.MAX_LINE_LENGTH, http11.MAX_NUM_HEADERS


def library_reads(method: str, url: bytes, headers: list[tuple[bytes, bytes]]) -> Any:
    """What the library reads from the bytes uvicorn writes back (its
    `handle_websocket_upgrade`), or None where it refuses them."""
    written = [method.encode(), b" ", url, b" HTTP/1.1\r\n"]
    for name, value in headers:
        written += [name, b": ", value, b"\r\n"]
    protocol = ServerProtocol()
    protocol.receive_data(b"".join([*written, b"\r\n"]))
    events = protocol.events_received()
    return events[0] if events else None


def same_read(method: str, url: bytes, headers: list[tuple[bytes, bytes]]) -> Any:
    """`parsed_request`'s answer, checked against the library's own read."""
    handed = parsed_request(method, url, headers)
    if handed is not None:
        read = library_reads(method, url, headers)
        assert read is not None, (url, headers)
        assert handed.path == read.path
        assert list(handed.headers.raw_items()) == list(read.headers.raw_items())
    return handed


def test_a_clients_handshake_is_handed_as_the_library_reads_it() -> None:
    handed = same_read("GET", URL, HANDSHAKE)
    assert handed is not None and handed.headers["Sec-WebSocket-Key"] == KEY.decode()
    query = same_read("GET", URL + b"?a=1&b=%20", HANDSHAKE)
    assert query is not None and query.path.endswith("?a=1&b=%20")


def test_what_the_library_refuses_or_reads_otherwise_is_left_to_it() -> None:
    cases = {
        "a body": [*HANDSHAKE, (b"content-length", b"5")],
        "a zero length (allowed, but the library's to say)": [
            *HANDSHAKE,
            (b"content-length", b"0"),
        ],
        "chunked": [*HANDSHAKE, (b"transfer-encoding", b"chunked")],
        "too many headers": [*HANDSHAKE, *[(b"x-h", b"v")] * (MAX_HEADERS - len(HANDSHAKE) + 1)],
        "a header line over the limit": [*HANDSHAKE, (b"x-long", b"a" * LINE)],
        # websockets 16 reads it with surrogate escapes, 17 as ISO-8859-1
        "non-ASCII": [*HANDSHAKE, (b"x-n", "café".encode())],
        "a control character": [*HANDSHAKE, (b"x-n", b"a\x7fb")],
        "a name that is no token": [*HANDSHAKE, (b"x n", b"v")],
        "an empty name": [*HANDSHAKE, (b"", b"v")],
    }
    for case, headers in cases.items():
        assert same_read("GET", URL, headers) is None, case
    assert same_read("POST", URL, HANDSHAKE) is None
    assert same_read("GET", b"/a b", HANDSHAKE) is None
    # a non-ASCII URL: websockets 16 reads it with surrogate escapes, 17 refuses it
    assert same_read("GET", b"\x80", HANDSHAKE) is None
    assert same_read("GET", "/s/café".encode(), HANDSHAKE) is None
    assert same_read("GET", b"/" + b"q" * LINE, HANDSHAKE) is None


def test_the_limits_are_the_librarys_to_the_byte() -> None:
    most = [*HANDSHAKE, *[(b"x-h", b"v")] * (MAX_HEADERS - len(HANDSHAKE))]
    assert same_read("GET", URL, most) is not None  # the most headers the library reads
    longest = b"/" + b"q" * (LINE - 16)  # "GET " + URL + " HTTP/1.1\r\n": LINE bytes
    assert same_read("GET", longest, HANDSHAKE) is not None
    assert library_reads("GET", longest + b"q", HANDSHAKE) is None  # one more: refused
    assert same_read("GET", longest + b"q", HANDSHAKE) is None


def test_the_header_name_check_is_the_librarys() -> None:
    # websockets' own pattern (an internal: this fails loudly if it moves or changes)
    token = http11._token_re.pattern
    assert _TOKENS.pattern == token + b"(?::" + token + b")*"
    assert re.compile(token).fullmatch(b"sec-websocket-key")


def test_every_value_handed_passes_the_librarys_value_check() -> None:
    # what `parsed_request` hands is a subset of what the library's parse lets through
    printable = bytes(range(0x20, 0x7F)) + b"\t"
    assert http11._value_re.fullmatch(printable)
    assert same_read("GET", URL, [*HANDSHAKE, (b"x-p", printable.strip(b" \t"))]) is not None


_TOKEN_CHARS = b"-!#$%&'*+.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_names = st.one_of(
    st.binary(min_size=1, max_size=12).filter(lambda n: all(c in _TOKEN_CHARS for c in n)),
    st.binary(max_size=12),  # anything: ":", spaces, CR LF, control bytes, empty
)
_values = st.one_of(
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=20).map(
        str.encode
    ),
    st.binary(max_size=20),  # tabs, spaces at the ends, CR LF, DEL, non-ASCII
)


@settings(max_examples=examples(300))
@given(
    method=st.sampled_from(["GET", "GET", "POST"]),
    url=st.one_of(st.just(URL), st.binary(max_size=30)),
    extra=st.lists(st.tuples(_names, _values), max_size=6),
)
def test_any_request_handed_is_the_one_the_library_reads(
    method: str, url: bytes, extra: list[tuple[bytes, bytes]]
) -> None:
    same_read(method, url, [*HANDSHAKE, *extra])
