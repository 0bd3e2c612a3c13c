#!/usr/bin/env python3
"""Bytes per turn and per call row as an agent's log stores them (its Durable Object's SQLite, in the
same tables and indexes as schema.sql's log tables), and per settled quality hour as D1 does: the
schema (schema.sql, every index included) is loaded into a SQLite file, N routes are written (one
turn with five offered tools and one call each, with request texts, ids and arguments shaped like
real traffic) and N quality-hour rows (one per tool and hour), the file is vacuumed and SQLite's own
page accounting (dbstat) is read per table and index.

    python3 scripts/capacity.py [N]      # default 100000; docs/capacity.md holds the figures
"""
import json, os, random, sqlite3, sys, tempfile, uuid

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
here = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(tempfile.mkdtemp(), "capacity.db")
db = sqlite3.connect(path)
db.executescript(open(os.path.join(here, "..", "schema.sql")).read())
random.seed(1)
words = "refund order status weather forecast invoice claim upload file reserve raise set look up the my for please on of".split()
turns, calls = [], []
for i in range(N):
    turn_id = str(uuid.uuid4())
    at = f"2026-11-{1 + i * 30 // N:02d}T{i % 24:02d}:{i % 60:02d}:00.000Z"
    request = " ".join(random.choice(words) for _ in range(random.randint(6, 14)))
    offered = json.dumps([{"name": f"tool_{random.randint(0, 199)}", "rank": r + 1, "score": round(random.random(), 6)} for r in range(5)])
    turns.append((turn_id, "agent-a", request, f"conv-{i // 3}", 1, offered, "route", at))
    args = json.dumps({"claim_ref": f"CW-{random.randint(100000, 999999)}", "amount": random.randint(1, 1000)})
    calls.append(("agent-a", str(uuid.uuid4()), f"tool_{random.randint(0, 199)}", args, 1, None, None, turn_id, f"conv-{i // 3}", at))
db.executemany("INSERT INTO turns (turn_id, agent, request, conversation_id, routed, offered, source, created_at) VALUES (?,?,?,?,?,?,?,?)", turns)
db.executemany("INSERT INTO calls (agent, call_id, tool, arguments, success, error, request, turn_id, conversation_id, at) VALUES (?,?,?,?,?,?,?,?,?,?)", calls)
hours = [("agent-a", f"tool_{i % 200}", f"2026-11-{1 + i // 200 // 24 % 28:02d}T{i // 200 % 24:02d}", 7, 5, 4, 3.2, 1, 0, 1) for i in range(N)]
db.executemany("INSERT INTO quality_hours (agent, tool, hour, routed_turns, served_turns, hits, rr, misses, confusions, failed_calls) VALUES (?,?,?,?,?,?,?,?,?,?)", hours)
db.commit()
db.execute("VACUUM")
sizes = dict(db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall())
owner = dict(db.execute("SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')").fetchall())
per = {"turns": 0, "calls": 0, "quality_hours": 0}
for name, size in sizes.items():
    table = owner.get(name, name)
    if table in per:
        per[table] += size
total = per["turns"] + per["calls"]
print(f"{N} routes (1 turn + 1 call each): {total / 1e6:.1f} MB")
print(f"turn: {per['turns'] / N:.0f} B (row {sizes['turns'] / N:.0f} B + indexes)")
print(f"call: {per['calls'] / N:.0f} B (row {sizes['calls'] / N:.0f} B + indexes)")
print(f"per route with one call: {total / N:.0f} B; per million routes: {total / N * 1e6 / 1e9:.2f} GB")
print(f"quality hour (one tool, one hour; D1): {per['quality_hours'] / N:.0f} B (row {sizes['quality_hours'] / N:.0f} B + indexes)")
