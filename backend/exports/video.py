"""What ingest stored about one video, in formats other programs read.

The transcript as SubRip (`srt`) and WebVTT (`webvtt-py`), one cue per speech segment; the
tracks as CSV, one row per detection with its instance's kind and what it is doing then; the
knowledge graph as GraphML
(networkx), its attributes made scalars since GraphML has no lists and no nulls.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from datetime import timedelta

import networkx as nx
import sqlite_utils
import srt
import webvtt

from backend import actions
from backend.errors import ExportError
from backend.graph.network import has_graph, to_networkx

_TRACKED = ("instance_id", "category", "t", "frame", "x1", "y1", "x2", "y2", "confidence",
            "posture", "arm_raised", "facing")
TRACK_COLUMNS = (*_TRACKED, "actions")  # actions: those whose span holds t, joined by "; "


def render(db: sqlite_utils.Database, fmt: str) -> str:
    """The video's export in `fmt`, one of backend.exports.VIDEO_FORMATS."""
    return {"srt": transcript_srt, "vtt": transcript_vtt, "csv": tracks_csv,
            "graphml": graph_graphml}[fmt](db)


def speech_segments(db: sqlite_utils.Database) -> list[tuple[float, float, str]]:
    """(start, end, text) of each segment that has words, in time order, each on one line:
    a blank line would end a cue in both subtitle formats."""
    rows = db.query("SELECT t_start, t_end, text FROM speech ORDER BY t_start, id")
    segments = [(r["t_start"], max(r["t_start"], r["t_end"]), " ".join((r["text"] or "").split()))
                for r in rows]
    return [s for s in segments if s[2]]


def transcript_srt(db: sqlite_utils.Database) -> str:
    return srt.compose([srt.Subtitle(index=i, start=timedelta(seconds=start),
                                     end=timedelta(seconds=end), content=text)
                        for i, (start, end, text) in enumerate(speech_segments(db), start=1)])


def transcript_vtt(db: sqlite_utils.Database) -> str:
    # Cue text is markup in WebVTT: '<' opens a tag and '-->' is refused, so both are escaped.
    captions = [webvtt.Caption(str(webvtt.models.Timestamp.from_seconds(start)),
                               str(webvtt.models.Timestamp.from_seconds(end)),
                               html.escape(text, quote=False))
                for start, end, text in speech_segments(db)]
    return webvtt.WebVTT(captions=captions).content


def tracks_csv(db: sqlite_utils.Database) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(TRACK_COLUMNS)
    doing = actions.by_instance(actions.read(db))
    columns = ", ".join(f"i.{c}" if c == "category" else f"d.{c}" for c in _TRACKED)
    for row in db.execute(f"SELECT {columns} FROM detections d JOIN instances i "
                          "ON i.id = d.instance_id ORDER BY d.t, d.instance_id"):
        iid, t = row[0], row[2]
        writer.writerow([*row, "; ".join(a.action for a in doing.get(iid, [])
                                         if a.t_start <= t <= a.t_end)])
    return out.getvalue()


def graph_graphml(db: sqlite_utils.Database) -> str:
    if not has_graph(db):
        raise ExportError("This video has no knowledge graph yet (it was ingested before graphs "
                          "were built); `python -m backend info VIDEO_ID` builds it.")
    out = io.BytesIO()
    nx.write_graphml(graphml_safe(to_networkx(db)), out, infer_numeric_types=True)
    return out.getvalue().decode("utf-8")


def graphml_safe(graph: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """A copy whose attributes GraphML can hold: None dropped, lists and dicts as JSON text, an
    attribute that is a number somewhere and text elsewhere text everywhere (GraphML gives each
    attribute one type), and no character XML 1.0 forbids in a name or a value (a fact node is
    named by an answer, which may hold a question's control characters or terminal escapes)."""
    safe = nx.relabel_nodes(graph, {n: _xml_text(n) for n in graph if isinstance(n, str)
                                    and _XML_FORBIDDEN.search(n)}, copy=True)
    for items in ([safe.graph], [data for _, data in safe.nodes(data=True)],
                  [data for *_, data in safe.edges(keys=True, data=True)]):
        _scalars(items)
    return safe


# Characters XML 1.0 cannot hold at all (only tab, newline and carriage return of the C0 controls).
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _XML_FORBIDDEN.sub("\ufffd", text)


def _scalars(items: list[dict]) -> None:
    for data in items:
        for name, value in list(data.items()):
            if value is None:
                del data[name]
            elif not isinstance(value, (str, int, float)):
                data[name] = json.dumps(value, default=str)
    texts = {name for data in items for name, value in data.items() if isinstance(value, str)}
    for data in items:
        for name in texts & data.keys():
            data[name] = _xml_text(str(data[name]))
