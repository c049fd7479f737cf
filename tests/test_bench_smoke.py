"""The benchmark harness runs end to end on tiny files of the real formats.

No numbers are asserted beyond their shape: this keeps the harness from
rotting; the measurements themselves live in docs/benchmarks.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def lme_question(n: int) -> dict[str, Any]:
    sessions = [
        [
            {"role": "user", "content": "I graduated with a degree in marine biology."},
            {"role": "assistant", "content": "Congratulations on your degree!"},
        ],
        [
            {"role": "user", "content": "Can you suggest a pasta recipe for tonight?"},
            {"role": "assistant", "content": "Try cacio e pepe: pasta, pecorino and pepper."},
        ],
        [
            {"role": "user", "content": "My cat Miso knocked over a plant again."},
            {"role": "assistant", "content": "Cats love plants; try a higher shelf."},
        ],
    ]
    return {
        "question_id": f"q{n}",
        "question_type": "single-session-user",
        "question": "What degree did I graduate with?",
        "question_date": "2023/05/30 (Tue) 23:40",
        "answer": "marine biology",
        "answer_session_ids": [f"s{n}-0"],
        "haystack_dates": [
            "2023/05/20 (Sat) 02:21",
            "2023/05/21 (Sun) 10:00",
            "2023/05/22 (Mon) 18:30",
        ],
        "haystack_session_ids": [f"s{n}-{i}" for i in range(3)],
        "haystack_sessions": sessions,
    }


LOCOMO = [
    {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {
                    "speaker": "Ana",
                    "dia_id": "D1:1",
                    "text": "I started pottery classes last week!",
                },
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice, what did you make?"},
                {"speaker": "Ana", "dia_id": "D1:3", "text": "A wobbly blue bowl."},
            ],
            "session_2_date_time": "10:00 am on 20 May, 2023",
            "session_2": [
                {"speaker": "Ben", "dia_id": "D2:1", "text": "I adopted a dog named Rex."},
                {"speaker": "Ana", "dia_id": "D2:2", "text": "Rex is a great name!"},
            ],
        },
        "qa": [
            {
                "question": "What class did Ana start?",
                "answer": "pottery",
                "evidence": ["D1:1"],
                "category": 1,
            },
            {
                "question": "What is Ben's dog called?",
                "answer": "Rex",
                "evidence": ["D2:1; D9:9"],
                "category": 4,
            },
            {
                "question": "adversarial",
                "adversarial_answer": "x",
                "evidence": ["D1:2"],
                "category": 5,
            },
        ],
    }
]


def bench(tmp_path: Path, *args: str) -> dict[str, Any]:
    out = tmp_path / "report.json"
    env = {**os.environ, "MEMORYD_BENCH_DIR": str(tmp_path / "work")}
    result = subprocess.run(
        [sys.executable, "-m", "bench", *args, "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    report: dict[str, Any] = json.loads(out.read_text())
    for key in ("metrics", "questions", "config", "commit", "cores", "wall_s"):
        assert key in report
    return report


@pytest.fixture
def lme_file(tmp_path: Path) -> Path:
    path = tmp_path / "lme.json"
    path.write_text(
        json.dumps([lme_question(0), lme_question(1), {**lme_question(2), "question_id": "q2_abs"}])
    )
    return path


def test_longmemeval_harness(tmp_path: Path, lme_file: Path) -> None:
    report = bench(tmp_path, "longmemeval", str(lme_file), "--limit", "2")
    assert report["questions"] == 2  # abstention questions are not scored
    metrics = report["metrics"]
    for key in ("R@5_any", "R@5_all", "R@10_any", "R@10_all", "NDCG@10"):
        assert 0.0 <= metrics[key] <= 1.0
    assert set(metrics["by_type"]) == {"single-session-user"}
    assert set(report["baselines"]) == {"bm25", "dense"}
    assert [q["question_id"] for q in report["per_question"]] == ["q0", "q1"]


def test_locomo_harness(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(LOCOMO))
    report = bench(tmp_path, "locomo", str(path), "--limit", "1")
    # category 5 is left out; the malformed "D2:1; D9:9" keeps its resolvable id
    assert report["questions"] == 2
    assert report["per_question"][1]["evidence"] == ["D2:1"]
    for key in ("recall@5", "recall@10", "session_R@5_any"):
        assert 0.0 <= report["metrics"][key] <= 1.0
    assert set(report["baselines"]) == {"bm25", "dense"}


def test_locomo_a_session_per_call_finds_what_a_turn_per_call_does(tmp_path: Path) -> None:
    # a turn is read with the line before it however the conversation arrives
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(LOCOMO))
    turns = bench(tmp_path, "locomo", str(path), "--limit", "1", "--no-baselines")
    sessions = bench(
        tmp_path, "locomo", str(path), "--limit", "1", "--no-baselines", "--per-session"
    )
    assert sessions["config"]["ingest"].startswith("a session per call")
    assert [q["top10"] for q in sessions["per_question"]] == [
        q["top10"] for q in turns["per_question"]
    ]
    assert all(q["top10"] for q in sessions["per_question"])


def test_context_harness(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(LOCOMO))
    report = bench(tmp_path, "context", str(path), "--budget", "300")
    assert report["questions"] == 2
    for key in ("evidence_in_context", "evidence_dated", "grep_top10", "search_top10"):
        assert 0.0 <= report["metrics"][key] <= 1.0
    assert set(report["baselines"]) == {"truncation"}
    assert report["config"]["budget_tokens"] == 300


def test_context_harness_on_longmemeval(tmp_path: Path) -> None:
    question = lme_question(0)
    question["haystack_sessions"][0][0]["has_answer"] = True  # the degree
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([question, lme_question(1)]))  # q1 marks nothing: not scored
    report = bench(tmp_path, "context", str(path), "--budget", "300")
    assert report["benchmark"] == "context_longmemeval" and report["questions"] == 1
    assert report["metrics"]["evidence_in_context"] == 1.0  # six short turns fit the budget
    assert set(report["metrics"]["by_type"]) == {"single-session-user"}


def test_ops_harness(tmp_path: Path) -> None:
    report = bench(tmp_path, "ops", "--size", "300", "--repeats", "2", "--embed-limit", "200")
    assert report["config"]["size"] == 300
    for name in ("add", "get by prefix", "update", "list a session", "forget"):
        row = report["metrics"][name]
        assert 0 < row["p50_ms"] <= row["max_ms"]
    assert not list((tmp_path / "work" / "stores").glob("*-ops"))  # the copy is gone


def test_speed_harness(tmp_path: Path) -> None:
    # 100 synthetic rows past the 200 embedded ones, and an HNSW graph past 150 rows
    args = ["--sizes", "300", "--queries", "5", "--embed-limit", "200", "--hnsw-threshold", "150"]
    report = bench(tmp_path, "speed", *args, "--peers", "chroma,sqlite-vec")
    row = report["metrics"]["300"]
    # the bare stores on the same rows and queries, under memoryd's keys
    for peer in ("chroma", "sqlite-vec"):
        side = report["peers"][peer]["300"]
        for key in ("store_search_p95_ms", "e2e_search_p95_ms", "disk_bytes_per_memory"):
            assert side[key] > 0 and row[key] > 0
    assert row["synthetic_rows"] == 100
    assert row["graph"] == "built, then loaded"
    assert row["index_rows"] == "store, then store"  # too few to keep on disk (ROWS_FILE_MIN)
    assert 0.0 <= row["hnsw_recall_at_10"] <= 1.0
    for key in (
        "first_search_s",
        "first_search_saved_graph_s",
        "first_search_after_writes_s",
        "ingest_per_s",
        "search_p50_ms",
        "search_p95_ms",
        "search_p99_ms",
        "peak_rss_mb",
        "disk_mb",
        "bare_embed_per_s",
        "search_cached_p50_ms",
    ):
        assert row[key] > 0
    # every query of the timed pass was new: none came from the query cache
    assert row["query_cache_hit_rate"] == 0.0


def test_startup_harness(tmp_path: Path) -> None:
    report = bench(tmp_path, "startup", "--runs", "2")
    rows = report["metrics"]
    assert set(rows) == {
        "--help",
        "list",
        "get",
        "stats",
        "forget",
        "hook user-prompt (no resident)",
        "hook user-prompt (resident)",
    }
    assert all(r["p95_ms"] >= r["p50_ms"] > 0 and r["cpu_p50_ms"] > 0 for r in rows.values())


def test_server_harness(tmp_path: Path) -> None:
    args = ["--size", "200", "--seconds", "1", "--clients", "1,2", "--workers", "1"]
    report = bench(tmp_path, "server", *args)
    assert report["config"]["size"] == 200
    [one] = report["metrics"]
    assert one["workers"] == 1 and one["database"] == "sqlite" and one["errors"] == 0
    assert [r["clients"] for r in one["levels"]] == [1, 2]
    for row in one["levels"]:
        for kind in ("search", "add"):
            assert row[kind]["requests"] > 0 and row[kind]["per_s"] > 0
            assert row[kind]["p99_ms"] >= row[kind]["p95_ms"] >= row[kind]["p50_ms"] > 0
        # four searches to one add, each client finishing its round
        assert row["search"]["requests"] >= 4 * row["add"]["requests"] > 0
        assert row["search"]["query_cache_hit_rate"] == 0.0  # no query asked twice
        assert row["health"]["samples"] > 0 and row["health"]["errors"] == 0


def test_proxy_harness(tmp_path: Path) -> None:
    report = bench(tmp_path, "proxy", "--size", "200", "--requests", "6", "--clients", "1,2")
    assert report["config"]["size"] == 200 and report["config"]["strategy"] == "hybrid"
    assert [r["clients"] for r in report["metrics"]] == [1, 2]
    for row in report["metrics"]:
        for path in ("direct", "proxied"):
            assert row[path]["streams"] == 6
            assert 0 < row[path]["ttfc_p50_ms"] <= row[path]["total_p50_ms"]
        assert row["search_1_client_ms"]["p50"] > 0


def test_rerank_harness(tmp_path: Path) -> None:
    report = bench(tmp_path, "rerank", "--size", "200", "--queries", "4")
    metrics = report["metrics"]
    assert metrics["calls"] == 4  # one chat call a search
    assert metrics["prompt_tokens_p50"] > 0
    assert metrics["with_llm_rerank"]["p50"] > 0 and metrics["without"]["p50"] > 0


def test_ingest_latency_harness(tmp_path: Path) -> None:
    report = bench(tmp_path, "ingest-latency", "--rounds", "2", "--messages", "3", "--chars", "300")
    assert report["config"]["messages"] == 3 and report["questions"] == 2
    for key in ("accept_ms", "searchable_by_words_ms", "searchable_by_meaning_ms"):
        assert report["metrics"][key]["p95"] > 0


def test_import_harness(tmp_path: Path) -> None:
    report = bench(tmp_path, "import", "--size", "200")
    metrics = report["metrics"]
    assert metrics["memories"] == report["questions"] == 200  # every memory of the export
    assert metrics["import_per_s"] > 0 and metrics["bare_embed_per_s"] > 0
    assert metrics["import_vs_bare"] > 0


def test_import_text_harness(tmp_path: Path) -> None:
    report = bench(tmp_path, "import-text", "--mb", "0.05")
    metrics = report["metrics"]
    assert sum(metrics["memories"].values()) > 0  # what the file became
    assert metrics["kb_per_s"] > 0 and metrics["peak_rss_mb"] > 0


def test_first_add_harness(tmp_path: Path) -> None:
    report = bench(tmp_path, "first-add", "--size", "200")
    metrics = report["metrics"]
    assert metrics["memories"] == 200 and metrics["graph"] == "none"  # below the threshold
    assert metrics["first_add_s"] > 0 and metrics["second_add_s"] > 0


def test_speed_and_server_on_postgres(tmp_path: Path, postgres_server: str) -> None:
    """Both benches beside SQLite on a PostgreSQL given by URL: the store is built once in
    its own database and reused by the next bench, each measuring a copy."""
    report = bench(
        tmp_path, "speed", "--sizes", "200", "--queries", "3", "--database", postgres_server
    )
    assert set(report["metrics"]) == {"200", "200 postgres"}
    row = report["metrics"]["200 postgres"]
    assert row["backend"] == "postgres" and "baseline_bm25_p95_ms" not in row
    assert row["ingest_per_s"] > 0 and row["search_p95_ms"] >= row["search_p50_ms"] > 0
    assert row["disk_mb"] > 0 and "postgres" in report["config"]
    args = ["--size", "200", "--seconds", "0.5", "--clients", "2", "--workers", "1,2"]
    report = bench(tmp_path, "server", *args, "--database", postgres_server)
    assert [(r["workers"], r["database"], r["errors"]) for r in report["metrics"]] == [
        (1, "postgres", 0),
        (2, "postgres", 0),
    ]
    assert all(r["levels"][0]["add"]["requests"] > 0 for r in report["metrics"])


def test_crosslingual_harness(tmp_path: Path) -> None:
    path = tmp_path / "crosslingual.json"
    facts = [
        {"memory": "我喜欢喝绿茶", "en": "what does the user drink", "zh": "用户喜欢喝什么"},
        {
            "memory": "My son is allergic to penicillin",
            "en": "what is the son allergic to",
            "zh": "用户的儿子对什么药过敏",
        },
    ]
    suite = {
        "memories": ["我的猫叫小白", "I like coffee"],
        "questions": [{"q": "猫叫什么", "memory": "我的猫叫小白"}],
    }
    path.write_text(
        json.dumps({"facts": facts, "distractors": ["I bought a keyboard"], "test_suite": suite})
    )
    report = bench(tmp_path, "crosslingual", str(path), "--models", "multilingual")
    assert report["questions"] == 5
    result = report["metrics"]["multilingual"]
    assert result["model"] == "use-multilingual-v3"
    assert set(result["dense"]) == {"en→zh", "zh→zh", "zh→en", "en→en", "test suite"}
    for leg in ("dense", "memoryd"):
        for scores in result[leg].values():
            assert 0.0 <= scores["recall@1"] <= scores["recall@5"] <= 1.0
    assert result["speed"]["texts_per_s"] > 0 and result["speed"]["query_p50_ms"] > 0


def _state_and_parent(stat: Path) -> tuple[str, int] | None:
    """A process's state letter and parent pid from its /proc stat file (None: gone)."""
    try:
        fields = stat.read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[0], int(fields[1])


def _children(pid: int) -> list[int]:
    """Live processes whose parent is ``pid`` (from /proc)."""
    return [
        int(stat.parent.name)
        for stat in Path("/proc").glob("[0-9]*/stat")
        if (found := _state_and_parent(stat)) is not None and found[1] == pid and found[0] != "Z"
    ]


def _alive(pid: int) -> bool:
    found = _state_and_parent(Path(f"/proc/{pid}/stat"))
    return found is not None and found[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_killed_run_leaves_no_worker_behind(tmp_path: Path) -> None:
    import signal
    import time

    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{**LOCOMO[0], "sample_id": f"conv-{n}"} for n in range(40)]))
    env = {**os.environ, "MEMORYD_BENCH_DIR": str(tmp_path / "work")}
    args = ["locomo", str(path), "--no-baselines", "--jobs", "2", "--out", str(tmp_path / "r")]
    run = subprocess.Popen(
        [sys.executable, "-m", "bench", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        workers: list[int] = []
        while len(workers) < 2 and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.2)
            workers = [p for p in _children(run.pid) if "bench" not in _cmdline(p)]
        assert len(workers) >= 2, "the workers did not start"
        os.kill(run.pid, signal.SIGKILL)  # nothing of the run's own cleanup runs
        run.wait()
        deadline = time.monotonic() + 15
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [_cmdline(p) for p in workers if _alive(p)]
    finally:
        if run.poll() is None:
            run.kill()


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except OSError:
        return ""


def test_truth_harness(tmp_path: Path) -> None:
    moved = {
        "id": "moved",
        "lang": "en",
        "kinds": ["chain"],
        "attribute": "residence",
        "others": [],
        "steps": [
            {"say": "I live in Trondheim.", "at": "2024-01-02"},
            {"say": "We just relocated to Bergen.", "at": "2025-03-02"},
        ],
        "checks": [
            {"ask": "Which city is the user's home?", "current": ["Bergen"], "stale": ["Trondheim"]}
        ],
    }
    # a value never said: every door must count it wrong, or the harness cannot fail
    unsaid = {**moved, "id": "unsaid", "lang": "zh"}
    unsaid["checks"] = [{"ask": "用户的家在哪个城市？", "current": ["西宁"], "stale": []}]
    path = tmp_path / "stories.json"
    path.write_text(json.dumps({"half": "smoke", "scenarios": [moved, unsaid]}))
    report = bench(tmp_path, "truth", str(path))
    doors = report["metrics"]["smoke"]
    assert set(doors) == {"ingest", "add", "profile", "hook", "proxy", "consolidate", "import"}
    assert all(cells["zh"] == 0.0 for cells in doors.values()), doors
    assert doors["ingest"]["en"] == doors["add"]["en"] == 1.0, report["failures"]
    assert {f["scenario"] for f in report["failures"]} >= {"unsaid"}
