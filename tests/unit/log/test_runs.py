"""`mockllm.log.runs` and the journal's `Uses`: the run a session name carries, one use of
a session from one reset to the next, reruns, and two clients on one session
(tests/e2e/log/test_runs.py drives the same through real pytest runs)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mockllm.judge.uses import clash, name_of, reruns, uses
from mockllm.log import runs
from mockllm.log.journal import Journal, Uses
from mockllm.log.runs import run_of, with_run


def test_a_session_name_carries_its_run_after_the_last_tilde() -> None:
    assert run_of("test_weather-0-a3b2ec68~k3x9q2") == "k3x9q2"
    assert run_of(with_run("a~b-1234", "ci-42")) == "ci-42"
    assert runs.test_of("test_weather-0-a3b2ec68~k3x9q2") == "test_weather-0-a3b2ec68"
    for plain in ("default", "test-1", "trailing~", "a~has space", None, ""):
        assert run_of(plain) is None
    assert runs.test_of("trailing~") == "trailing~"


def e(session: str, epoch: str | None = None, seq: int = 0) -> dict[str, Any]:
    return {"seq": seq, "session": session, **({"epoch": epoch} if epoch else {})}


def test_uses_split_a_name_by_epoch_and_the_last_use_keeps_the_name() -> None:
    log = [
        e("t~r1", "aaaaaaaa", 1),
        e("u~r1", "cccccccc", 2),
        e("t~r1", "aaaaaaaa", 3),
        e("t~r1", "bbbbbbbb", 4),
        e("old"),  # a log written before epochs: by name alone
        e("old"),
    ]
    grouped = uses(log)
    assert list(grouped) == ["t~r1#aaaaaaaa", "u~r1", "t~r1", "old"]
    assert [x["seq"] for x in grouped["t~r1#aaaaaaaa"]] == [1, 3]
    assert [x["seq"] for x in grouped["t~r1"]] == [4]
    # The server's memory holds the last use only: it keys that use the same.
    assert list(uses(log[3:4])) == ["t~r1"]
    assert name_of("t~r1#aaaaaaaa") == "t~r1" and name_of("a#b") == "a#b"


def test_reruns_are_the_same_test_in_other_runs_or_uses() -> None:
    keys = ["t-1~r1", "u-2~r1", "t-1~r2#aaaaaaaa", "t-1~r2"]
    assert reruns(keys) == {"t-1~r1": (1, 3), "t-1~r2#aaaaaaaa": (2, 3), "t-1~r2": (3, 3)}


@given(st.lists(st.tuples(st.sampled_from(["a", "b~r", "c~r2"]), st.sampled_from("0123"))))
def test_uses_never_pool_two_epochs_and_keep_every_entry(picks: list[tuple[str, str]]) -> None:
    log = [e(name, "0000000" + d if d != "0" else None, i) for i, (name, d) in enumerate(picks)]
    grouped = uses(log)
    assert sorted(x["seq"] for found in grouped.values() for x in found) == list(range(len(log)))
    for found in grouped.values():
        assert len({x["session"] for x in found}) == 1
        assert len({x.get("epoch") for x in found if x.get("epoch")}) <= 1


def test_a_reset_by_another_client_while_one_holds_the_session_is_a_clash() -> None:
    held = Uses()
    first = held.reset("s", "c1")
    assert held.epoch("s") == first and held.shared(first) is None
    second = held.reset("s", "c2")  # c1 still holds it
    assert second != first and held.shared(second) == ("c1", "c2")
    assert held.shared(first) == ("c1", "c2")
    held.release("s", "c1")  # not the holder: nothing changes
    held.release("s", "c2")
    third = held.reset("s", "c1")  # released: a rerun
    assert held.shared(third) is None
    assert held.reset("s", "c1") and held.shared(held.epoch("s")) is None  # its own rerun
    assert held.reset("s", None) and held.shared(held.epoch("s")) is None  # an old client


def test_a_never_reset_session_shares_the_servers_epoch_until_all_are_reset() -> None:
    held = Uses()
    boot = held.epoch("x")
    assert held.epoch("y") == boot and held.epoch(None) == boot
    held.reset(None, None)
    assert held.epoch("x") != boot


def test_the_uses_kept_are_bounded() -> None:
    held = Uses()
    held.LIMIT = 3
    for i in range(10):
        held.reset(f"s{i}", f"c{i}")
    assert len(held._epochs) == 3 and len(held._owners) == 3


def test_an_entry_says_its_run_epoch_and_the_two_clients() -> None:
    log = Journal(10, None, 100)
    log.uses.reset("t~r1", "c1")
    log.uses.reset("t~r1", "c2")
    entry = log.open("/s/hello/t~r1/v1/chat/completions", [])
    entry.session = "t~r1"
    log.close(entry)
    shown = entry.to_json()
    assert shown["run"] == "r1" and shown["epoch"] == log.uses.epoch("t~r1")
    assert shown["clients"] == ["c1", "c2"]
    said = clash([shown])
    assert said is not None and said.startswith("two clients (c1 and c2) used this session")
    assert "both runs are named 'r1'" in said
    plain = log.open("/s/hello/v1/chat/completions", [])
    plain.session = "default"
    log.close(plain)
    assert "run" not in plain.to_json() and "clients" not in plain.to_json()


def test_report_picks_every_use_of_a_name_and_names_the_reruns() -> None:
    from mockllm.judge import report

    log = [
        {**e("t~r", "aaaaaaaa", 1), "api": "openai-chat", "response": {"status": 200}},
        {**e("t~r", "bbbbbbbb", 2), "api": "openai-chat", "response": {"status": 200}},
    ]
    picked = report.pick(log, "t~r", "log.jsonl")
    assert isinstance(picked, dict) and list(picked) == ["t~r#aaaaaaaa", "t~r"]
    assert report.pick(log, "t~r#aaaaaaaa", "log.jsonl") == {"t~r#aaaaaaaa": log[:1]}
    missing = report.pick(log, "t~x", "log.jsonl")
    assert isinstance(missing, str) and missing.endswith("sessions: t~r")
    text, verdicts = report.summary(picked, 10, {})
    lines = text.splitlines()
    assert lines[0].endswith("t~r (1 request) · run 1 of 2")
    assert lines[1].endswith("t~r (1 request) · run 2 of 2 (a rerun)")
    assert verdicts["t~r#aaaaaaaa"]["session"] == "t~r"
