"""The semantic graph across answers, and a person's edits to the graph.

A checked answer becomes an edge from the node its question is about (the strongest seed: 'car 3',
the kind 'person', the word 'convenience') to a `fact` node holding the answer, with the answer's
times and origin 'answer:<semantic entry id>'. Facts merge as semantic memory merges them (the
same question about the same time and words is one entry): a newer answer to it replaces the
edge, and the old one stays in `graph_history`.

A person may delete or correct any edge (from the inspector). The edit is logged under the
edge's key (source, relation and what it points at: the target, or for a fact the question), and
every later write respects it: the same fact answered again, or the graph rebuilt from the
tables, does not bring a deleted edge back, and a correction is applied again.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import sqlite_utils

from backend.graph import schema

_CONFIDENCE = {"high": 1.0, "medium": 0.7, "low": 0.4}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def edge_key(source: str, relation: str, target: str, question: str = "") -> str:
    """What an edge says, whatever its id: a fact's key is its question, so a new answer to the
    same question is the same edge."""
    about = question_key(question) if question else target
    return f"{source}|{relation}|{about}"


def question_key(question: str) -> str:
    return " ".join(question.lower().split())


def key_of(db: sqlite_utils.Database, edge: dict) -> str:
    question = ""
    if edge["target"].startswith("fact:"):
        node = next(db.query("SELECT detail FROM graph_nodes WHERE id = ?", [edge["target"]]), None)
        question = json.loads((node or {}).get("detail") or "{}").get("question", "")
    return edge_key(edge["source"], edge["relation"], edge["target"], question)


def record(db_path: Path, *, entry_id: str, question: str, answer: str, times: list[float],
           source: str | None, confidence: str = "medium") -> str:
    """Write (or replace) the fact edge of a checked answer; returns what happened: 'added',
    'replaced', 'unchanged', 'deleted by a person' or 'nothing to attach it to'."""
    if source is None:
        return "nothing to attach it to"
    db = sqlite_utils.Database(db_path)
    try:
        ensure_tables(db)
        key = edge_key(source, "answered", "", question)
        if key in _deleted(db):
            return "deleted by a person"
        span = [min(times), max(times)] if times else [0.0, 0.0]
        # Named with its question: a fact node called "6" says nothing in the graph panel.
        node = {"id": f"fact:{entry_id}", "kind": "fact", "name": f"{question.strip()} {answer.strip()}"[:160],
                "t_start": span[0],
                "t_end": span[1], "segments": json.dumps(segments_over(db, [span])),
                "detail": json.dumps({"question": question, "entry_id": entry_id})}
        edge = {"source": source, "target": node["id"], "relation": "answered",
                "t_start": span[0], "t_end": span[1], "segments": node["segments"],
                "confidence": _CONFIDENCE.get(confidence, 0.7), "origin": f"answer:{entry_id}"}
        old = next((e for e in db.query("SELECT * FROM graph_edges WHERE relation = 'answered' "
                                        "AND source = ?", [source])
                    if key_of(db, e) == key), None)
        before = ""
        with db.conn:
            if old is not None:
                was = next(db.query("SELECT name FROM graph_nodes WHERE id = ?", [old["target"]]), None)
                before = was["name"] if was else ""
                if before == node["name"] and old["target"] == node["id"]:
                    return "unchanged"
                db["graph_edges"].delete(old["id"])
                db["graph_nodes"].delete_where("id = ?", [old["target"]])
            db["graph_nodes"].upsert(node, pk="id")
            db["graph_edges"].insert({"id": next_edge_id(db), **edge})
            edge = _apply_correction(db, key, edge)
            _log(db, key, "replaced" if old else "added", before=before, after=node["name"],
                 origin=edge["origin"])
        return "replaced" if old else "added"
    finally:
        db.close()


def delete(db_path: Path, edge_id: int, by: str = "inspector") -> str:
    """Delete an edge and remember it: nothing later writes it back. Returns its key."""
    db = sqlite_utils.Database(db_path)
    try:
        ensure_tables(db)
        edge = _edge(db, edge_id)
        key = key_of(db, edge)
        with db.conn:
            db["graph_edges"].delete(edge_id)
            if edge["target"].startswith("fact:"):
                db["graph_nodes"].delete_where("id = ?", [edge["target"]])
            _log(db, key, "deleted", before=_said(edge), after="", origin=by)
        return key
    finally:
        db.close()


def correct(db_path: Path, edge_id: int, *, relation: str | None = None,
            confidence: float | None = None, by: str = "inspector") -> str:
    """Change an edge's relation or confidence and remember it, so a rebuild or a later answer
    gives the corrected edge. Returns its key."""
    if relation is not None and relation not in (*schema.RELATIONS, "answered"):
        raise ValueError(f"unknown relation {relation!r}: one of {', '.join(schema.RELATIONS)}")
    if confidence is not None and not 0.0 <= confidence <= 1.0:
        raise ValueError("confidence is between 0 and 1")
    db = sqlite_utils.Database(db_path)
    try:
        ensure_tables(db)
        edge = _edge(db, edge_id)
        key = key_of(db, edge)
        change = {k: v for k, v in (("relation", relation), ("confidence", confidence))
                  if v is not None}
        with db.conn:
            db["graph_edges"].update(edge_id, change)
            _log(db, key, "corrected", before=_said(edge), after=json.dumps(change), origin=by)
        return key
    finally:
        db.close()


def history(db: sqlite_utils.Database) -> list[dict]:
    """Every change to the graph after ingest, oldest first."""
    if not db["graph_history"].exists():
        return []
    return list(db.query("SELECT * FROM graph_history ORDER BY id"))


def respect_edits(db: sqlite_utils.Database, edges: list[dict]) -> list[dict]:
    """Edges as the graph should hold them after the person's edits: deleted ones left out,
    corrected ones corrected (for a graph rebuilt from the tables)."""
    if not db["graph_history"].exists():
        return edges
    deleted, corrections = _deleted(db), _corrections(db)
    kept = []
    for edge in edges:
        # A corrected relation is a new key, under which later edits are logged: follow the
        # corrections key by key, and drop the edge if any of its keys was deleted.
        keys = [edge_key(edge["source"], edge["relation"], edge["target"])]
        while keys[-1] in corrections and len(keys) <= len(corrections):
            edge = {**edge, **corrections[keys[-1]]}
            key = edge_key(edge["source"], edge["relation"], edge["target"])
            if key in keys:
                break
            keys.append(key)
        if not deleted.intersection(keys):
            kept.append(edge)
    return kept


def edited_answers(db_path: Path) -> set[str]:
    """Memory entry ids whose answer edge a person deleted or corrected: what they said is in
    doubt, so nothing distilled from them may answer."""
    return in_doubt(db_path)[0]


def in_doubt(db_path: Path) -> tuple[set[str], set[str]]:
    """(memory entry ids, questions as `question_key` gives them) of the answer edges a person
    deleted or corrected: a fact learnt again for such a question, under a new entry id, is in
    as much doubt as the one whose edge was edited."""
    db = sqlite_utils.Database(db_path)
    try:
        if not db["graph_history"].exists():
            return set(), set()
        keys = {row["edge_key"] for row in db.query(
            "SELECT edge_key FROM graph_history WHERE action IN ('deleted', 'corrected')")}
        ids = {row["origin"].removeprefix("answer:") for row in db.query(
            "SELECT edge_key, origin FROM graph_history WHERE origin LIKE 'answer:%'")
            if row["edge_key"] in keys}
    finally:
        db.close()
    questions = {about for _, relation, about in (k.split("|", 2) for k in keys
                                                   if k.count("|") >= 2)
                 if relation == "answered"}
    return ids, questions


def ensure_tables(db: sqlite_utils.Database) -> None:
    if not db["graph_history"].exists():
        db["graph_history"].create({"id": int, "edge_key": str, "action": str, "before": str,
                                    "after": str, "origin": str, "at": str}, pk="id")


def _deleted(db: sqlite_utils.Database) -> set[str]:
    """Keys whose last edit deleted them."""
    last: dict[str, str] = {}
    for row in db.query("SELECT edge_key, action FROM graph_history ORDER BY id"):
        last[row["edge_key"]] = row["action"]
    return {k for k, action in last.items() if action == "deleted"}


def _corrections(db: sqlite_utils.Database) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for row in db.query("SELECT edge_key, after FROM graph_history WHERE action = 'corrected' "
                        "ORDER BY id"):
        out.setdefault(row["edge_key"], {}).update(json.loads(row["after"]))
    return out


def _apply_correction(db: sqlite_utils.Database, key: str, edge: dict) -> dict:
    change = _corrections(db).get(key)
    if change:
        row = next(db.query("SELECT id FROM graph_edges WHERE source = ? AND target = ?",
                            [edge["source"], edge["target"]]))
        db["graph_edges"].update(row["id"], change)
        edge = {**edge, **change}
    return edge


def _edge(db: sqlite_utils.Database, edge_id: int) -> dict:
    edge = next(db.query("SELECT * FROM graph_edges WHERE id = ?", [edge_id]), None)
    if edge is None:
        raise LookupError(f"the graph has no edge {edge_id}")
    return edge


def _said(edge: dict) -> str:
    return f"{edge['source']} {edge['relation']} {edge['target']} (confidence {edge['confidence']})"


def next_edge_id(db: sqlite_utils.Database) -> int:
    return (next(db.query("SELECT MAX(id) AS m FROM graph_edges"))["m"] or 0) + 1


def segments_over(db: sqlite_utils.Database, spans: list[tuple[float, float]]) -> list[int]:
    """The scenes ids (fine segments) that overlap any of the spans."""
    return sorted({r["id"] for a, b in spans
                   for r in db.query("SELECT id FROM scenes WHERE t_end >= ? AND t_start <= ?",
                                     [a, b])})


def _log(db: sqlite_utils.Database, key: str, action: str, *, before: str, after: str,
         origin: str) -> None:
    db["graph_history"].insert({"edge_key": key, "action": action, "before": before,
                                "after": after, "origin": origin, "at": _now()})
