"""What is said, what is shown on screen and what the descriptions say: the typed queries behind
"what word is said at 40 s", "what text is on screen" and the timeline the model reads.

Speech is read from the transcript's segments and words (a word said at a time, an interval's
sentences, when given words are said); on-screen text from the OCR reads, with where on screen
they were and the typed values they hold (timecodes, dates); both return their words as typed
evidence (`Result.typed`) for options to be matched against.
"""

from __future__ import annotations

import re
from collections import Counter

from backend.agent import typed_values
from backend.agent.timephrases import Span
from backend.agent.video_tables import Result, Target, VideoTables, quoted

SPEECH_WINDOW = 1.5       # seconds either side of an asked time whose words are quoted


def speech(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    if reason := tables.no_speech():
        return Result(reason, support="unobserved")
    if words and not (span and span.is_moment):
        return _said_where(tables, words)
    if span and span.is_moment:
        return _said_at(tables, span)
    bounds = f" WHERE t_end >= {span.start} AND t_start <= {span.end}" if span else ""
    sql = f"SELECT t_start, t_end, text FROM speech{bounds} ORDER BY t_start LIMIT 12"
    rows = tables.rows(sql)
    if not rows:
        return Result("Nothing is said" + (f" between {span.start:.1f} and {span.end:.1f} s." if span
                                           else " in the video."), value="", sql=sql, rows=[])
    quoted = " ".join(f'[{r["t_start"]:.1f} s] "{r["text"].strip()}"' for r in rows)
    return Result(f"Said: {quoted}", value=" ".join(r["text"].strip() for r in rows) if span else "",
                  sql=sql, rows=rows, times=[r["t_start"] for r in rows],
                  support="computed" if span else "read",
                  typed={"texts": [r["text"].strip() for r in rows]})


def _said_at(tables: VideoTables, span: Span) -> Result:
    t = span.start
    sql = (f"SELECT w.t_start, w.t_end, w.word, s.text FROM speech_words w "
           f"JOIN speech s ON s.id = w.segment_id WHERE w.t_end >= {t - SPEECH_WINDOW} "
           f"AND w.t_start <= {t + SPEECH_WINDOW} ORDER BY w.t_start")
    rows = tables.rows(sql)
    if not rows:
        return Result(f"Nothing is said within {SPEECH_WINDOW} s of {t:.1f} s.", value="",
                      sql=sql, rows=[], times=[t])
    nearest = min(rows, key=lambda r: 0 if r["t_start"] <= t <= r["t_end"]
                  else min(abs(r["t_start"] - t), abs(r["t_end"] - t)))
    word = re.sub(r"[^\w'-]", "", nearest["word"])
    around = " ".join(r["word"].strip() for r in rows)
    return Result(f'At {t:.1f} s the word said is "{word}" ({nearest["t_start"]:.1f}-'
                  f'{nearest["t_end"]:.1f} s); words around it: "{around}". Sentence: '
                  f'"{nearest["text"].strip()}"', value=word, sql=sql, rows=rows,
                  times=[nearest["t_start"]], typed={"texts": [word]})


def _said_where(tables: VideoTables, words: str) -> Result:
    if len(words.split()) == 1:  # one word: its own time, not its sentence's start
        sql = (f"SELECT w.t_start, w.t_end, s.text FROM speech_words w JOIN speech s ON "
               f"s.id = w.segment_id WHERE w.word LIKE {quoted('%' + words + '%')} "
               f"ORDER BY w.t_start LIMIT 10")
    else:
        sql = (f"SELECT t_start, t_end, text FROM speech WHERE text LIKE "
               f"{quoted('%' + words + '%')} ORDER BY t_start LIMIT 10")
    rows = tables.rows(sql)
    if not rows:
        return Result(f'"{words}" is never said (no transcribed speech contains it).', value="never",
                      sql=sql, rows=[])
    listed = "; ".join(f'{r["t_start"]:.1f} s: "{r["text"].strip()}"' for r in rows)
    return Result(f'"{words}" is said at {listed}', value=f"{rows[0]['t_start']:.1f} s", sql=sql,
                  rows=rows, times=[r["t_start"] for r in rows])


def screen_text(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    if reason := tables.no_ocr():
        return Result(reason, support="unobserved")
    if span and span.is_moment:
        when = (f"t = (SELECT COALESCE((SELECT MAX(t) FROM ocr WHERE t <= {span.start + 0.5}), "
                f"(SELECT MIN(t) FROM ocr)))")
    elif span:
        when = f"t BETWEEN {span.start} AND {span.end}"
    else:
        when = "1 = 1"
    if words:
        when += f" AND text LIKE {quoted('%' + words + '%')}"
    sql = (f"SELECT text, MIN(t) AS t, MAX(t) AS until, COUNT(*) AS reads, AVG(x1) AS x1, "
           f"AVG(y1) AS y1, AVG(x2) AS x2, AVG(y2) AS y2 FROM ocr WHERE {when} "
           f"GROUP BY text ORDER BY reads DESC, t LIMIT 40")
    rows = tables.rows(sql)
    if not rows and words:
        # Words a model picked to stand for the text ("sign", "caption") rarely match the text
        # as written: show what was read instead of nothing.
        # Not said in the text: "No text contains 'date'" made the 1.5B answer "no date is
        # shown" over a screen full of dates.
        found = screen_text(tables, target, span, "")
        found.support, found.value = "read", ""
        return found
    if not rows:
        where = f" at {span}" if span else ""
        return Result(f"No on-screen text was read{where}.", value="none", sql=sql, rows=[])
    for r in rows:
        r["position"] = tables.position(r)
    regions = Counter()
    for r in rows:
        regions[r["position"]] += r["reads"]
    shown = "; ".join(f'"{r["text"]}" at the {r["position"]} ({r["t"]:.1f}'
                      + (f'-{r["until"]:.1f}' if r["until"] > r["t"] else "") + " s)"
                      for r in rows[:10])
    more = f" (10 most read of {len(rows)}{'+' if len(rows) == 40 else ''} texts)" if len(rows) > 10 else ""
    place = ", ".join(f"{region} ({n} reads)" for region, n in regions.most_common(3))
    top_region, top_reads = regions.most_common(1)[0]
    if len(rows) == 1:
        value = rows[0]["text"]
    elif top_reads >= 0.8 * sum(regions.values()):
        value = top_region
    else:
        value = ""
    typed = typed_values.described([(r["text"], r["t"]) for r in rows])
    return Result(f"On-screen text{more}: {shown}. Where on screen: {place}."
                  + (f" {typed}" if typed else ""), value=value, sql=sql,
                  rows=rows, times=sorted({r["t"] for r in rows})[:10],
                  support="computed" if value else "read",
                  typed={"texts": [r["text"] for r in rows], "places": dict(regions)})


def timeline(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    if span:
        margin = 1.0 if span.is_moment else 0.0
        bounds = f" WHERE t_end >= {span.start - margin} AND t_start <= {span.end + margin}"
    else:
        bounds = ""
    sql = f"SELECT t_start, t_end, description FROM timeline{bounds} ORDER BY t_start LIMIT 12"
    rows = tables.rows(sql)
    if not rows:
        return Result("No description covers that time.", sql=sql, rows=[], support="none")
    listed = "\n".join(f"[{r['t_start']:.1f}-{r['t_end']:.1f} s] {r['description']}" for r in rows)
    return Result(listed, sql=sql, rows=rows, times=[r["t_start"] for r in rows], support="read")
