"""Fills the bench agents' logs with routing traffic, straight into SQLite (npm run bench:scale).

Each agent's log is the SQLite file of its Durable Object (miniflare keeps one per object under
`v3/do/`). `wrangler dev` is not running while this writes: the rows are those the API would write
(turns as `/route` stores them, calls as `POST .../calls` does, outcomes as `POST .../outcomes` does,
ISO times with milliseconds as `Date.toISOString()` prints them), only a thousand times faster than
over HTTP.

  python3 fill-log.py agents <do folder>             {agent: file} of the objects holding a call
  python3 fill-log.py fill <spec.json>               spec: {tools, queries, agents: [{agent, file,
                                                      turns, from_ms, to_ms, outcomes_every, seed}]}
  python3 fill-log.py count <log.sqlite> <agent> <before ISO>   rows of the agent older than that
  python3 fill-log.py failed <log.sqlite> <agent>    the agent's failed calls
  python3 fill-log.py settled <d1.sqlite>            quality_settled as {agent: through}
  python3 fill-log.py memory <d1.sqlite> <spec.json> routing memory written into an agent's tool rows
                                                     (D1): spec {agent, embedder, tools: [{name,
                                                     memory (JSON text), vector (base64 Float32)}]}

Each turn is a routed request (a ToolE request) with five offered tools — the tool that serves it
among them for about 70% of turns, at a random rank — and one call of the labelled tool a few
seconds later, one call in eight failing; three turns per conversation; every `outcomes_every`-th
turn also gets an outcome naming its tool.
"""

import base64
import json
import os
import random
import sqlite3
import sys
import uuid
from datetime import datetime, timezone

ERRORS = [
    "missing required argument",
    "invalid date format, use YYYY-MM-DD",
    "rate limit exceeded, retry later",
    "unknown city name",
    "upstream timeout",
]
BATCH = 20_000


def iso(ms):
    """Date.prototype.toISOString() of a time in ms."""
    d = datetime.fromtimestamp(ms // 1000, tz=timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def uid(rng):
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def rows(agent, spec, tools, queries):
    """Yields (turn, call, outcome or None) per turn, oldest first."""
    rng = random.Random(spec["seed"])
    n, lo, hi = spec["turns"], spec["from_ms"], spec["to_ms"]
    times = sorted(rng.randrange(lo, hi) for _ in range(n))
    every = spec.get("outcomes_every", 0)
    for i, at in enumerate(times):
        q = queries[rng.randrange(len(queries))]
        offered = rng.sample(tools, 5)
        if q["tool"] not in offered and rng.random() < 0.7:
            offered[rng.randrange(5)] = q["tool"]
        score = 0.9 - rng.random() * 0.2
        listed = []
        for rank, name in enumerate(offered, 1):
            listed.append({"name": name, "rank": rank, "score": round(score, 4)})
            score *= 0.9
        turn_id = uid(rng)
        conversation = f"{agent}-conv{i // 3}"
        request = q["text"][:4000]
        turn = (agent, turn_id, request, conversation, 1, json.dumps(listed, separators=(",", ":")), "route", iso(at))
        ok = rng.random() >= 0.125
        call_at = at + rng.randrange(500, 5_000)
        args = {"query": q["text"][:60], "limit": 1 + i % 10}
        call = (
            agent,
            uid(rng),
            q["tool"],
            json.dumps(args, separators=(",", ":")),
            1 if ok else 0,
            None if ok else ERRORS[rng.randrange(len(ERRORS))],
            request,
            turn_id,
            conversation,
            iso(call_at),
        )
        outcome = (agent, turn_id, 1 if ok else 0, q["tool"], iso(call_at + 10_000)) if every and i % every == 0 else None
        yield turn, call, outcome


def agents(folder):
    """Which object file holds which agent's log: the agent of its calls (each bench agent has one)."""
    out = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".sqlite") or name == "metadata.sqlite":
            continue
        path = os.path.join(folder, name)
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        try:
            row = db.execute("SELECT agent FROM calls LIMIT 1").fetchone()
        except sqlite3.OperationalError:
            row = None
        db.close()
        if row:
            out[row[0]] = path
    print(json.dumps(out))


def fill(spec_path):
    with open(spec_path) as f:
        spec = json.load(f)
    for a in spec["agents"]:
        db = sqlite3.connect(a["file"])
        db.execute("PRAGMA synchronous = OFF")
        # The file is in WAL mode (miniflare's): with SQLite's 2 MB default cache a million-row
        # transaction spills pages over and over and the WAL grows past a gigabyte.
        db.execute("PRAGMA cache_size = -1000000")
        total = {"turns": 0, "calls": 0, "outcomes": 0}
        turns, calls, outcomes = [], [], []

        def flush():
            db.executemany(
                "INSERT INTO turns (agent, turn_id, request, conversation_id, routed, offered, source, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                turns,
            )
            db.executemany(
                "INSERT INTO calls (agent, call_id, tool, arguments, success, error, request, turn_id, conversation_id, at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                calls,
            )
            db.executemany("INSERT INTO outcomes (agent, turn_id, ok, served_by, at) VALUES (?, ?, ?, ?, ?)", outcomes)
            total["turns"] += len(turns)
            total["calls"] += len(calls)
            total["outcomes"] += len(outcomes)
            turns.clear()
            calls.clear()
            outcomes.clear()

        for turn, call, outcome in rows(a["agent"], a, spec["tools"], spec["queries"]):
            turns.append(turn)
            calls.append(call)
            if outcome:
                outcomes.append(outcome)
            if len(turns) >= BATCH:
                flush()
                db.commit()
        flush()
        db.commit()
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        print(json.dumps({"agent": a["agent"], **total}), flush=True)


def count(db_path, agent, before):
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
    out = {}
    for table, column in (("turns", "created_at"), ("calls", "at"), ("outcomes", "at")):
        q = f"SELECT COUNT(*) FROM {table} WHERE agent = ? AND {column} < ?"
        out[table] = db.execute(q, (agent, before)).fetchone()[0]
    print(json.dumps(out))


def failed(db_path, agent):
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
    print(json.dumps({"failed": db.execute("SELECT COUNT(*) FROM calls WHERE agent = ? AND success = 0", (agent,)).fetchone()[0]}))


def settled(db_path):
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
    print(json.dumps(dict(db.execute("SELECT agent, through FROM quality_settled").fetchall())))


def memory(db_path, spec_path):
    """Each tool's memory and its vector (head + memory, as an apply writes it) in one transaction."""
    with open(spec_path, encoding="utf8") as f:
        spec = json.load(f)
    db = sqlite3.connect(db_path, timeout=30)
    embedders = {r[0] for r in db.execute("SELECT DISTINCT embedder FROM tools WHERE agent = ?", (spec["agent"],))}
    if embedders != {spec["embedder"]}:
        raise SystemExit(f"{spec['agent']}'s rows were embedded by {sorted(embedders)}, not {spec['embedder']}")
    rows = [(t["memory"], base64.b64decode(t["vector"]), spec["agent"], t["name"]) for t in spec["tools"]]
    updated = db.executemany("UPDATE tools SET memory = ?, vector = ? WHERE agent = ? AND name = ?", rows).rowcount
    db.commit()
    print(json.dumps({"updated": updated}))


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    {"agents": agents, "fill": fill, "count": count, "failed": failed, "settled": settled, "memory": memory}[command](*args)
