"""tau2-bench results (``--format tau2-bench``): both layouts (one results document, or
results.json + simulations/<id>.json), detection, ids, the user's own device calls
dropped, a failed call and its retry as one logical action, and calls counted in the raw
file independently of the adapter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from pipeline.cli import main
from pipeline.ingest.discovery import detect_format
from pipeline.ingest.reader import iter_records
from tests.adapter_runs import step_counts


def _call(call_id: str, name: str, requestor: str = "assistant", **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments, "requestor": requestor}


def _result(call_id: str, content: str, error: bool = False, requestor: str = "assistant") -> dict[str, Any]:
    return {"id": call_id, "role": "tool", "content": content, "requestor": requestor, "error": error,
            "turn_idx": None, "timestamp": "2025-06-01T10:00:00"}


def simulation(sim_id: str, task_id: str, trial: int = 0) -> dict[str, Any]:
    """An airline simulation: a lookup that fails on a mistyped id, its retry, then a
    change; on the way the simulated user toggles airplane mode on their own phone."""
    messages = [
        {"role": "assistant", "content": "Hi! How can I help you today?", "tool_calls": None, "turn_idx": 0},
        {"role": "user", "content": "Change reservation 8JX2WO to economy. I'm mia_li_3668.", "tool_calls": None},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", "get_reservation_details",
                                                                    reservation_id="8JX2W0")]},
        _result("c1", "Error: Reservation 8JX2W0 not found", error=True),
        {"role": "assistant", "content": None, "tool_calls": [_call("c2", "get_reservation_details",
                                                                    reservation_id="8JX2WO")]},
        _result("c2", json.dumps({"reservation_id": "8JX2WO", "user_id": "mia_li_3668", "cabin": "business"})),
        {"role": "user", "content": None, "tool_calls": [_call("u1", "toggle_airplane_mode", requestor="user")]},
        _result("u1", "Airplane mode is now OFF", requestor="user"),
        {"role": "assistant", "content": None, "tool_calls": [_call("c3", "update_reservation_flights",
                                                                    reservation_id="8JX2WO", cabin="economy",
                                                                    payment_id="credit_card_4421486")]},
        {"role": "tool", "tool_messages": [_result("c3", json.dumps({"reservation_id": "8JX2WO", "cabin": "economy"}))]},
        {"role": "assistant", "content": "Done: your reservation is now economy.", "tool_calls": None},
    ]
    return {"id": sim_id, "task_id": task_id, "trial": trial, "timestamp": "2025-06-01T10:00:00",
            "start_time": "2025-06-01T10:00:00", "end_time": "2025-06-01T10:01:00", "duration": 60.0,
            "termination_reason": "user_stop", "agent_cost": 0.01, "user_cost": 0.002,
            "reward_info": {"reward": 1.0, "db_check": {"db_match": True, "db_reward": 1.0}}, "messages": messages}


INFO = {"git_commit": "abc", "num_trials": 1, "max_steps": 100, "max_errors": 10,
        "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1"},
        "agent_info": {"implementation": "llm_agent", "llm": "claude-3-7-sonnet-20250219"},
        "environment_info": {"domain_name": "airline", "policy": "# Airline agent policy ..."}}


def results(sims: list[dict[str, Any]]) -> dict[str, Any]:
    return {"timestamp": "2025-06-01T10:00:00", "info": INFO,
            "tasks": [{"id": s["task_id"], "user_scenario": {"instructions": "change cabin"}} for s in sims],
            "simulations": sims}


def test_a_results_document_gives_one_record_per_simulation(tmp_path: Path) -> None:
    path = tmp_path / "claude-3-7-sonnet_airline.json"
    path.write_text(json.dumps(results([simulation("5f0c-1", "7"), simulation("5f0c-2", "7", trial=1)]), indent=2))
    assert detect_format(path)[0] == "tau2-bench"
    records = [r for r in iter_records([path])]
    assert [r.source_line for r in records] == [1, 2]
    first = json.loads(records[0].text or "")
    assert (first["trajectory_id"], first["suite"]) == ("5f0c-1", "tau2-airline")
    assert first["meta"]["model"] == "claude-3-7-sonnet-20250219" and first["meta"]["reward"] == 1.0
    roles = [m["role"] for m in first["messages"]]
    assert roles == ["assistant", "user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
    assert first["messages"][3]["error"] == "Error: Reservation 8JX2W0 not found"
    names = [c["function"]["name"] for m in first["messages"] for c in m.get("tool_calls") or []]
    assert "toggle_airplane_mode" not in names  # the user's own device


def test_the_dir_layout_reads_each_simulation_file_and_no_record_from_results_json(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "simulations").mkdir(parents=True)
    meta = results([])
    meta.pop("simulations")
    meta["simulation_index"] = [{"id": "a1", "task_id": "7", "trial": 0}, {"id": "a2", "task_id": "9", "trial": 0}]
    (run / "results.json").write_text(json.dumps(meta, indent=2))
    for sid, task in (("a1", "7"), ("a2", "9")):
        (run / "simulations" / f"{sid}.json").write_text(json.dumps(simulation(sid, task), indent=2))
    assert detect_format(run / "results.json")[0] == "tau2-bench"
    assert detect_format(run / "simulations" / "a1.json")[0] == "tau2-bench"
    records = [json.loads(r.text or "") for r in iter_records([run])]
    assert sorted(r["trajectory_id"] for r in records) == ["a1", "a2"]
    assert {r["suite"] for r in records} == {"tau2-airline"}  # from results.json beside simulations/
    (run / "results.json").unlink()
    assert {json.loads(r.text or "")["suite"] for r in iter_records([run])} == {"tau2-bench"}


def test_the_failed_lookup_and_its_retry_are_one_action_and_scoring_conserves(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    voice = {**simulation("v1", "3"), "messages": None, "ticks": [{"tick_id": 0, "timestamp": "t"}]}
    path.write_text(json.dumps(results([simulation("s1", "7"), voice])))
    out = tmp_path / "out"
    assert main(["score", str(path), "--out", str(out), "--workers", "1"]) == 0
    con = duckdb.connect()
    [(attempts, executed)] = con.execute(
        "select attempts, executed from read_parquet($p) where tool_name = 'get_reservation_details'",
        {"p": f"{out}/actions/**/*.parquet"}).fetchall()
    assert (attempts, executed) == (2, True)
    [(reason, line)] = con.execute("select reason, source_line from read_parquet($p)",
                                   {"p": f"{out}/attrition/**/*.parquet"}).fetchall()
    assert (reason, line) == ("malformed_record", 2)  # the voice simulation: ticks, no messages


def test_calls_and_results_counted_in_the_raw_file(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results([simulation(f"s{i}", str(i)) for i in range(3)])))
    raw = json.loads(path.read_text())
    msgs = [m for s in raw["simulations"] for m in s["messages"]]
    n_calls = sum(1 for m in msgs for c in m.get("tool_calls") or [] if c["requestor"] == "assistant")
    results_ = [r for m in msgs if m["role"] == "tool" for r in m.get("tool_messages", [m])]
    n_results = sum(1 for r in results_ if r["requestor"] == "assistant")
    n_errors = sum(1 for r in results_ if r["requestor"] == "assistant" and r["error"])
    assert step_counts(path, tmp_path / "out") == (n_calls, n_results, n_errors) == (9, 9, 3)
