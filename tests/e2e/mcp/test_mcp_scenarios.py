"""`mcp_servers:` at load time (docs/mcp.md, "The keys"): every mistake at file:line:column
with its YAML path, a schema cannot see included; and the model side's helpers made
concrete (`{mcp: SERVER/TOOL}` names, `from_mcp` texts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mockllm.core.mcp import names_mcp_tool
from mockllm.errors import ScenarioError
from mockllm.loading.loader import load_paths, load_text

BAD = """\
name: bad-mcp
mcp_servers:
  orders:
    tools:
      - name: lookup_order
        results:
          - is_error: true
      - name: lookup_order
        output_schema: {type: array}
        results:
          - text: ok
            fault: {delay_ms: 3}
turns:
  - reply:
      tool_calls:
        - name: {mcp: orders/lookup_ordr}
        - name: {mcp: billing/charge}
  - expect:
      tool_results: [{from_mcp: true}, {from_mcp: true}]
    reply: {text: done}
"""


def problems(tmp_path: Path, text: str) -> list[str]:
    file = tmp_path / "bad.yaml"
    file.write_text(text)
    with pytest.raises(ScenarioError) as raised:
        load_paths([file])
    return [str(p).removeprefix(str(tmp_path) + "/") for p in raised.value.problems]


def test_mistakes_a_schema_cannot_see_name_their_place(tmp_path: Path) -> None:
    assert problems(tmp_path, BAD) == [
        "bad.yaml:7:13: mcp_servers.orders.tools[0].results[0]: give text or structured (or a fault that answers instead: error, hang, drop)",
        "bad.yaml:8:15: mcp_servers.orders.tools[1].name: tool 'lookup_order' is declared twice on server 'orders'",
        "bad.yaml:9:31: mcp_servers.orders.tools[1].output_schema.type: an MCP output schema describes a JSON object: its type must be object",
        "bad.yaml:16:23: turns[0].reply.tool_calls[0].name.mcp: server 'orders' declares no tool 'lookup_ordr'; did you mean 'lookup_order'? (declared: lookup_order)",
        "bad.yaml:17:23: turns[0].reply.tool_calls[1].name.mcp: no MCP server 'billing' in this scenario's mcp_servers (declared: orders)",
        "bad.yaml:19:33: turns[1].expect.tool_results[0].from_mcp: call 0 of turn 0 names no scripted MCP tool with a result for its arguments",
        "bad.yaml:19:51: turns[1].expect.tool_results[1].from_mcp: call 1 of turn 0 names no scripted MCP tool with a result for its arguments",
    ]


def test_schema_mistakes_name_their_place_too(tmp_path: Path) -> None:
    text = BAD.replace("{delay_ms: 3}", "{delya_ms: 3}").replace(
        "  orders:\n", "  'bad name!': {}\n  orders:\n"
    )
    assert problems(tmp_path, text) == [
        "bad.yaml:3:3: mcp_servers: 'bad name!' may only use letters, digits, '.', '_' and '-', starting with a letter or digit",
        "bad.yaml:13:21: mcp_servers.orders.tools[1].results[0].fault.delya_ms: unknown key 'delya_ms' (allowed here: delay_ms, hang, error, huge_bytes, drop, progress, list_changed); did you mean 'delay_ms'?",
    ]


def test_from_mcp_without_servers_is_refused(tmp_path: Path) -> None:
    text = """\
turns:
  - reply: {tool_calls: [{name: lookup_order, arguments: {order_id: A1}}]}
  - expect: {tool_results: [{from_mcp: true}]}
    reply: {text: done}
"""
    assert problems(tmp_path, text) == [
        "bad.yaml:3:40: turns[1].expect.tool_results[0].from_mcp: call 0 of turn 0 names no scripted MCP tool with a result for its arguments"
    ]


def test_from_mcp_is_made_concrete_when_built() -> None:
    scenario = load_text(
        """\
name: concrete
mcp_servers:
  orders:
    tools:
      - name: lookup_order
        results:
          - {when: {order_id: A1}, text: shipped}
          - {when: {order_id: B2}, text: lost}
          - {structured: {status: unknown}}
turns:
  - reply:
      tool_calls:
        - {name: mcp__orders__lookup_order, arguments: {order_id: B2}}
        - {name: {mcp: orders/lookup_order}, arguments: {order_id: Z9}}
  - expect: {tool_results: [{from_mcp: true}, {from_mcp: true}]}
    reply: {text: done}
"""
    )
    expect = scenario.turns[1].expect
    assert expect is not None and expect.tool_results is not None
    assert [r.from_mcp for r in expect.tool_results] == [("lost",), ('{"status":"unknown"}',)]
    call = scenario.turns[0].reply.tool_calls[1]
    assert (call.name, call.mcp) == ("lookup_order", ("orders", "lookup_order"))


@pytest.mark.parametrize(
    ("offered", "named"),
    [
        ("lookup_order", True),
        ("mcp__orders__lookup_order", True),
        ("orders_lookup_order", True),
        ("orders.lookup_order", True),
        ("orders/lookup_order", True),
        ("orders-lookup_order", True),
        ("orders:lookup_order", True),
        ("mcp__billing__lookup_order", False),
        ("lookup_orders", False),
        ("Lookup_order", False),
    ],
)
def test_client_prefixes_name_the_tool(offered: str, named: bool) -> None:
    assert names_mcp_tool(offered, "orders", "lookup_order") is named


def test_a_session_named_mcp_still_reaches_the_model_routes() -> None:
    from mockllm.providers import ADAPTERS
    from mockllm.serving.routing import Routes

    routes = Routes(cls() for cls in ADAPTERS.values())
    assert routes.split("/s/orders/mcp/v1/chat/completions") == (
        "orders",
        "mcp",
        "v1/chat/completions",
    )
    assert routes.split("/s/orders/mcp/orders") == ("orders", None, "mcp/orders")
    assert routes.split("/s/orders/t1/mcp/orders") == ("orders", "t1", "mcp/orders")


def test_the_stdio_command_refuses_what_it_cannot_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mockllm import cli

    file = tmp_path / "plain.yaml"
    file.write_text("name: plain-one\nturns: [{reply: {text: hi}}]\n")
    assert cli.main(["mcp", "plain-one", "orders", "--scenarios", str(file)]) == 2
    assert capsys.readouterr().err == (
        "mockllm mcp: scenario 'plain-one' has no MCP server 'orders' (declared: none)\n"
    )
    assert cli.main(["mcp", "plain-onee", "orders", "--scenarios", str(file)]) == 2
    assert (
        "mockllm mcp: no scenario 'plain-onee'; did you mean 'plain-one'?"
        in capsys.readouterr().err
    )
