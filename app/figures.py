"""Plotly figures for the per-answer panels: object timeline, memory replay counts, planner tree.

Plain data in, figures out: no Gradio and no database here, so each figure can be built and
checked from a recorded answer. Every figure has the same look (`base_layout`), and an input
with nothing to draw gives a figure that says so instead of an empty grid.

Colours mean the same thing everywhere: a tracked object keeps the colour of its boxes in the
key frames (`backend.ingest.frames.colours`: by kind where a video shows several kinds, else by
object), things the answer did not use are grey, and the
answer's own evidence (times, chosen planner path, replayed memories) is drawn in ACCENT.
"""

from __future__ import annotations

import html
import textwrap
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import plotly.graph_objects as go

from backend.actions import Action
from backend.ingest.frames import colours

ACCENT = "#f59e0b"
UNUSED = "#cbd5e1"
INK = "#1f2937"
# Actions lie on their object's bar as a darker, narrower strip, readable on any box colour.
ACTION = "rgba(31, 41, 55, 0.78)"
MUTED = "#6b7280"
FONT = "Inter, ui-sans-serif, system-ui, -apple-system, Segoe UI, sans-serif"

KIND_COLOURS = {"semantic": "#4363d8", "procedural": "#f58231", "pattern": "#911eb4",
                "episodic": "#3cb44b"}
OTHER_KIND = "#9ca3af"

# Failures are red, answers blue, untried or cancelled-out steps near white: a diverging scale
# that stays readable for red-green colour blindness.
REWARD_SCALE = [[0.0, "#b2182b"], [0.25, "#ef8a62"], [0.5, "#f7f7f7"], [0.75, "#67a9cf"],
                [1.0, "#2166ac"]]

_HOVER_FIELD_CHARS = 240
_HOVER_OBSERVATION_CHARS = 480
_HOVER_WIDTH = 72


def base_layout(title: str, height: int, **overrides) -> dict:
    layout = dict(
        title=dict(text=title, x=0.01, xanchor="left", font=dict(size=16, color=INK)),
        template="plotly_white", height=height, font=dict(family=FONT, size=13, color=INK),
        margin=dict(l=16, r=16, t=56, b=40),
        hoverlabel=dict(bgcolor="white", bordercolor="#d1d5db", align="left",
                        font=dict(family=FONT, size=12, color=INK)),
        showlegend=False,
    )
    return {**layout, **overrides}


def _escape(text: str) -> str:
    # Plotly's pseudo-HTML decodes &lt; &gt; &amp; but shows &quot; literally: leave quotes be.
    return html.escape(str(text), quote=False)


def empty_figure(title: str, message: str, height: int = 260) -> go.Figure:
    """A blank panel that states why there is nothing to draw."""
    fig = go.Figure()
    fig.update_layout(**base_layout(title, height))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.add_annotation(text=_escape(message), x=0.5, y=0.5, xref="paper", yref="paper",
                       showarrow=False, font=dict(size=14, color=MUTED))
    return fig


def is_empty_state(fig: go.Figure) -> bool:
    return not fig.data and bool(fig.layout.annotations)


def hover_text(value: object, limit: int = _HOVER_FIELD_CHARS) -> str:
    """`value` as safe hover HTML: cut to `limit` characters, escaped, wrapped, newlines kept."""
    text = str(value).strip()
    if len(text) > limit:
        text = text[:limit - 1].rstrip() + "…"
    lines = []
    for line in text.splitlines() or [""]:
        lines.extend(textwrap.wrap(line, _HOVER_WIDTH, break_long_words=True,
                                   break_on_hyphens=False) or [""])
    return "<br>".join(_escape(line) for line in lines)


def _seconds(t: float) -> str:
    return f"{t:.1f} s"


# -- timeline of tracked objects ------------------------------------------------------------

# More tracks of one kind than this share one row (a walking camera's kitchen gave 87 moving
# objects, a crowd gives hundreds of people); a button shows every track again.
GROUP_AT = 12

def timeline_figure(instances: Sequence[Mapping], highlight: Iterable[int] | None,
                    times: Sequence[float], duration: float,
                    spans: Mapping[int, Sequence[tuple[float, float]]] | None = None,
                    actions: Mapping[int, Sequence[Action]] | None = None) -> go.Figure:
    """A Gantt-like row per tracked object over the video, with the answer's evidence times.

    `highlight` lists the objects the answer used: they keep their box colour and the others turn
    grey; None means there is no answer yet and every object keeps its colour. `spans` gives an
    object's presence intervals where it leaves and comes back; without it the bar runs from
    first_seen to last_seen. `actions` gives what an object does when (by instance id): each
    is a labelled strip on its row, with its time span and evidence in the hover text.
    """
    title = "When each tracked object is in view"
    if not instances:
        return empty_figure(title, "No objects were tracked in this video.")
    used = None if highlight is None else set(highlight)
    rows = sorted(instances, key=lambda i: i["id"])
    per_kind = Counter(i.get("category") or "object" for i in rows)
    # The answer's own objects always keep a row of their own.
    grouped = {i["id"]: kind for i in rows
               if per_kind[kind := i.get("category") or "object"] > GROUP_AT
               and not (used and i["id"] in used)}
    labels = [f"#{i['id']} {i.get('category') or 'object'}" for i in rows]
    colour_of = colours([{"id": i["id"], "category": i.get("category") or "object"} for i in rows])
    # Several kinds: one legend entry per kind (on its first row), which hides or shows all its
    # rows when clicked.
    first_of_kind = {}
    for inst in rows:
        first_of_kind.setdefault(inst.get("category") or "object", inst["id"])
    by_kind = len(first_of_kind) > 1
    fig = go.Figure()
    for inst, label in zip(rows, labels):
        iid = inst["id"]
        intervals = _intervals(inst, spans)
        is_used = used is None or iid in used
        lines = [f"<b>{_escape(label)}</b>",
                 f"in view {_seconds(inst['first_seen'])} – {_seconds(inst['last_seen'])}"]
        if len(intervals) > 1:
            lines.append(f"{len(intervals)} separate appearances")
        for key in ("appearance", "colours", "action"):
            if inst.get(key):
                lines.append(f"{key}: {hover_text(inst[key], 120)}")
        if used is not None:
            lines.append("<b>used by this answer</b>" if is_used else "not used by this answer")
        fig.add_trace(go.Bar(
            name=(inst.get("category") or "object") if by_kind else label, orientation="h",
            y=[label] * len(intervals),
            base=[start for start, _ in intervals],
            x=_lengths(intervals, duration),
            legendgroup=inst.get("category") or "object",
            showlegend=by_kind and first_of_kind[inst.get("category") or "object"] == iid,
            marker=dict(color=colour_of[iid] if is_used else UNUSED,
                        line=dict(color=INK if used and is_used else "rgba(0,0,0,0)", width=1.5)),
            opacity=1.0 if is_used else 0.7, width=0.6,
            hovertext=["<br>".join(lines)] * len(intervals),
            hovertemplate="%{hovertext}<extra></extra>",
            customdata=[iid] * len(intervals), meta={"instance_id": iid, "used": is_used},
            visible=iid not in grouped,
        ))
        if (actions or {}).get(iid):
            fig.add_trace(_action_strips(label, inst.get("category") or "object", iid,
                                         actions[iid], duration, iid not in grouped))
    # A kind whose legend entry's row is grouped gets it on the grouped row instead: a hidden
    # trace shows no legend entry.
    legend_on_group = {kind for kind, iid in first_of_kind.items() if by_kind and iid in grouped}
    group_labels = _group_rows(fig, rows, grouped, spans, duration, colour_of, used,
                               legend_on_group)
    evidence = sorted({round(float(t), 2) for t in times})
    for t in evidence:
        fig.add_vline(x=t, line=dict(color=ACCENT, width=2, dash="dash"), layer="above")
    if evidence:
        # On a hidden second axis the markers stay above the top row however many rows there are.
        fig.add_trace(go.Scatter(
            name="evidence times", x=evidence, y=[1.0] * len(evidence), yaxis="y2",
            mode="markers", cliponaxis=False,
            marker=dict(symbol="triangle-down", size=13, color=ACCENT, line=dict(color=INK, width=1)),
            hovertemplate="evidence at %{x:.1f} s<extra></extra>",
        ))
    shown = [label for inst, label in zip(rows, labels) if inst["id"] not in grouped]
    # A legend of kinds below the axis needs room of its own under a few rows.
    layout = base_layout(title, min(900, max(320 if by_kind else 0,
                                             160 + 30 * (len(shown) + len(group_labels)))))
    key = [] if used is None else ["coloured: used by this answer, grey: not used"]
    if evidence:
        key.append("▼ dashed lines: evidence times")
    if key:
        layout["title"]["subtitle"] = dict(text=" · ".join(key), font=dict(size=12, color=MUTED))
        layout["margin"]["t"] = 84
    if evidence:
        layout["yaxis2"] = dict(overlaying="y", range=[0, 1], visible=False, fixedrange=True)
    if actions:
        # A label that does not fit its strip is left to the hover text, not shrunk to a speck.
        layout["uniformtext"] = dict(minsize=9, mode="hide")
    if by_kind:
        layout.update(showlegend=True, legend=dict(
            title=dict(text="kinds (click to hide or show)"), orientation="h",
            # Under the axis title at any height: placed in the figure, not the plot area.
            yref="container", y=0.0, yanchor="bottom", font=dict(size=12)))
        layout["margin"] = {**layout["margin"], "b": 90}
    fig.update_layout(**layout, barmode="overlay", bargap=0.35)
    pad = max(duration, 0.1) * 0.01  # keeps a marker at 0 s or at the end off the frame
    fig.update_xaxes(title_text="time in the video (s)", range=[-pad, max(duration, 0.1) + pad],
                     showgrid=True, gridcolor="#eef0f3", zeroline=False, ticksuffix=" s")
    fig.layout.yaxis.update(categoryorder="array", categoryarray=shown + group_labels,
                            autorange="reversed", showgrid=False)
    if grouped:
        _expand_button(fig, grouped, shown + group_labels, labels, layout["height"])
    return fig


def _action_strips(label: str, kind: str, iid: int, actions: Sequence[Action], duration: float,
                   visible: bool) -> go.Bar:
    """One object's actions as narrow labelled bars over its row; in its kind's legend group,
    so that hiding the kind hides them with its rows."""
    hover = []
    for a in actions:
        lines = [f"<b>{_escape(label)}: {_escape(a.action)}</b>", a.span()]
        facts = ([f"with #{a.other_id}"] if a.other_id is not None else []) + \
            ([f"score {a.score:.2f}"] if a.score is not None else [])
        if facts:
            lines.append(" · ".join(facts))
        if a.evidence:
            lines.append(hover_text(a.evidence, 160))
        hover.append("<br>".join(lines))
    return go.Bar(
        name=f"{label} actions", orientation="h", y=[label] * len(actions),
        base=[a.t_start for a in actions],
        x=_lengths([(a.t_start, a.t_end) for a in actions], duration),
        text=[_escape(a.action) for a in actions], textposition="inside",
        insidetextanchor="middle", legendgroup=kind,
        textfont=dict(color="white", size=11), marker=dict(color=ACTION), width=0.3,
        showlegend=False, hovertext=hover, hovertemplate="%{hovertext}<extra></extra>",
        meta={"actions_of": iid}, visible=visible)


def _intervals(inst: Mapping, spans: Mapping[int, Sequence[tuple[float, float]]] | None
               ) -> list[tuple[float, float]]:
    """An object's presence intervals: its spans, or first to last sighting without them."""
    return list((spans or {}).get(inst["id"]) or [(inst["first_seen"], inst["last_seen"])])


def _lengths(intervals: list[tuple[float, float]], duration: float) -> list[float]:
    # A one-sample appearance still needs a visible bar.
    return [max(end - start, duration / 400 if duration > 0 else 0.05) for start, end in intervals]


def _group_rows(fig: go.Figure, rows: list[Mapping], grouped: Mapping[int, str],
                spans: Mapping[int, Sequence[tuple[float, float]]] | None, duration: float,
                colour_of: Mapping[int, str], used: set[int] | None,
                legend_on: set[str]) -> list[str]:
    """One row per grouped kind holding its tracks' bars; returns the rows' labels."""
    labels = []
    for kind in dict.fromkeys(grouped.values()):
        members = [i for i in rows if grouped.get(i["id"]) == kind]
        label = f"{len(members)} × {kind}"
        intervals = [span for i in members for span in _intervals(i, spans)]
        hover = (f"<b>{len(members)} tracks of {_escape(kind)}</b>, each a row of its own with "
                 f"“every track” above<br>ids #{members[0]['id']} – #{members[-1]['id']}, in "
                 f"view {_seconds(min(a for a, _ in intervals))} – "
                 f"{_seconds(max(b for _, b in intervals))}")
        fig.add_trace(go.Bar(
            name=kind, orientation="h", y=[label] * len(intervals),
            base=[start for start, _ in intervals],
            x=_lengths(intervals, duration), legendgroup=kind, showlegend=kind in legend_on,
            marker=dict(color=UNUSED if used else colour_of[members[0]["id"]]),
            opacity=0.6, width=0.6, hovertext=[hover] * len(intervals),
            hovertemplate="%{hovertext}<extra></extra>",
            meta={"instance_id": None, "group": kind, "instance_ids": [i["id"] for i in members]}))
        labels.append(label)
    return labels


def _expand_button(fig: go.Figure, grouped: Mapping[int, str], grouped_rows: list[str],
                   every_row: list[str], height: int) -> None:
    """Buttons that switch between grouped rows and a row for every track, in the browser."""
    def visible(expanded: bool) -> list[bool]:
        out = []
        for trace in fig.data:
            meta = trace.meta if isinstance(trace.meta, dict) else {}
            if meta.get("group"):
                out.append(not expanded)
            elif meta.get("instance_id") in grouped or meta.get("actions_of") in grouped:
                out.append(expanded)
            else:
                out.append(True)
        return out
    tall = min(4000, 160 + 30 * len(every_row))
    fig.update_layout(updatemenus=[dict(
        type="buttons", direction="right", x=1.0, xanchor="right", y=1.12, yanchor="bottom",
        showactive=True, buttons=[
            dict(label="grouped", method="update",
                 args=[{"visible": visible(False)},
                       {"yaxis.categoryarray": grouped_rows, "height": height}]),
            dict(label="every track", method="update",
                 args=[{"visible": visible(True)},
                       {"yaxis.categoryarray": every_row, "height": tall}])])])


# -- memory replay counts -------------------------------------------------------------------

def _short(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def replay_figure(counts: Sequence[Mapping], highlight: Iterable[str], top: int = 15) -> go.Figure:
    """Replay counts of the `top` most replayed memory entries, coloured by kind, most first.

    `counts` are MemoryStore.replay_counts() rows (id, kind, text, video_id, replays); the entries
    in `highlight` (this answer's replayed ids) are outlined and named in bold.
    """
    title = "How often each memory has been replayed"
    rows = [c for c in counts if c.get("replays", 0) > 0]
    if not rows:
        return empty_figure(title, "No memory has been replayed yet: memories are stored after "
                                   "answers and replayed by later, similar questions.")
    chosen = {str(h) for h in highlight}
    ranked = sorted(rows, key=lambda c: (-c["replays"], str(c["id"])))
    # This answer's entries are shown even when they are not among the most replayed.
    rows = [c for i, c in enumerate(ranked) if i < top or str(c["id"]) in chosen]
    ids = [str(c["id"]) for c in rows]
    ticks = [f"<b>{_escape(_short(c['text'], 42))}</b>" if str(c["id"]) in chosen
             else _escape(_short(c["text"], 42)) for c in rows]
    fig = go.Figure()
    present = {c["kind"] for c in rows}
    kinds = [k for k in KIND_COLOURS if k in present] + sorted(present - KIND_COLOURS.keys())
    for kind in kinds:
        group = [c for c in rows if c["kind"] == kind]
        used = [str(c["id"]) in chosen for c in group]
        fig.add_trace(go.Bar(
            name=kind, orientation="h", y=[str(c["id"]) for c in group],
            x=[c["replays"] for c in group], customdata=[str(c["id"]) for c in group],
            marker=dict(color=KIND_COLOURS.get(kind, OTHER_KIND),
                        opacity=[1.0 if u else 0.5 for u in used]),
            hovertext=[
                f"<b>{_escape(kind)}</b> · replayed {c['replays']}×"
                + (" · <b>used by this answer</b>" if u else "")
                + f"<br>{hover_text(c['text'], 200)}"
                + (f"<br>video {_escape(c['video_id'])}" if c.get("video_id") else "")
                for c, u in zip(group, used)],
            hovertemplate="%{hovertext}<extra></extra>",
        ))
    used_rows = [c for c in rows if str(c["id"]) in chosen]
    if used_rows:
        # An outline drawn over the answer's own bars.
        fig.add_trace(go.Bar(
            name="used by this answer", orientation="h", y=[str(c["id"]) for c in used_rows],
            x=[c["replays"] for c in used_rows], customdata=[str(c["id"]) for c in used_rows],
            marker=dict(color="rgba(0,0,0,0)", line=dict(color=ACCENT, width=3)),
            hoverinfo="skip", showlegend=False,
        ))
    fig.update_layout(**base_layout(title, min(720, 170 + 28 * len(rows)), showlegend=True,
                                     margin=dict(l=16, r=16, t=84, b=48)),
                      barmode="overlay", bargap=0.3,
                      legend=dict(orientation="h", x=1, xanchor="right", y=1.0, yanchor="bottom",
                                  font=dict(size=12)))
    if used_rows:
        fig.update_layout(title_subtitle=dict(
            text=f"outlined and bold: the {len(used_rows)} replayed for this answer",
            font=dict(size=12, color=MUTED)))
    fig.update_xaxes(title_text="times replayed", rangemode="tozero", showgrid=True,
                     gridcolor="#eef0f3", tickformat="d")
    fig.update_yaxes(categoryorder="array", categoryarray=ids, tickvals=ids, ticktext=ticks,
                     autorange="reversed", showgrid=False)
    return fig


# -- planner tree ---------------------------------------------------------------------------

def tree_layout(tree: Sequence[Mapping]) -> dict[int, tuple[float, float]]:
    """(depth, row) per node id: leaves on consecutive rows, a parent centred on its children."""
    by_id = {n["id"]: n for n in tree}
    positions: dict[int, tuple[float, float]] = {}
    next_row = 0.0

    def place(node_id: int, depth: int) -> float:
        nonlocal next_row
        children = [c for c in by_id[node_id].get("children") or [] if c in by_id
                    and c not in positions]
        positions[node_id] = (depth, 0.0)  # reserved, so a malformed cycle cannot recurse
        if children:
            rows = [place(c, depth + 1) for c in children]
            row = (rows[0] + rows[-1]) / 2
        else:
            row, next_row = next_row, next_row + 1
        positions[node_id] = (depth, row)
        return row

    for node in tree:
        if node.get("parent") is None or node["parent"] not in by_id:
            place(node["id"], int(node.get("depth") or 0))
    for node in tree:  # anything unreachable from a root still gets a place
        if node["id"] not in positions:
            place(node["id"], int(node.get("depth") or 0))
    return positions


def chosen_path(tree: Sequence[Mapping], chosen_leaves: Iterable[int]) -> set[int]:
    """Ids of every node on a root-to-leaf path of the chosen leaves."""
    by_id = {n["id"]: n for n in tree}
    on_path: set[int] = set()
    for leaf in chosen_leaves:
        node_id = leaf
        while node_id is not None and node_id in by_id and node_id not in on_path:
            on_path.add(node_id)
            node_id = by_id[node_id].get("parent")
    return on_path


def _node_kind(node: Mapping) -> str:
    if node.get("parent") is None:
        return "question"
    if node.get("failure"):
        return "failure"
    if node.get("answer") is not None:
        return "answer"
    return "step"


def _node_label(node: Mapping) -> str:
    kind = _node_kind(node)
    if kind == "question":
        return "question"
    if kind == "failure":
        return f"✗ {node.get('action') or 'failed'}"
    if kind == "answer":
        return f"Answer: {_short(node['answer'], 18)}"
    return node.get("action") or "step"


def _node_hover(node: Mapping, chosen: bool) -> str:
    kind = _node_kind(node)
    head = {"question": "Question", "failure": "Failed step", "answer": "Answer",
            "step": "Step"}[kind]
    lines = [f"<b>{head}</b> · node {node['id']}" + (" · <b>chosen path</b>" if chosen else "")]
    if kind == "question":
        lines.append(hover_text(node.get("thought", "")))
    else:
        for label, key, limit in (("thought", "thought", _HOVER_FIELD_CHARS),
                                  ("action", "action", 60),
                                  ("input", "action_input", _HOVER_FIELD_CHARS),
                                  ("observation", "observation", _HOVER_OBSERVATION_CHARS)):
            if node.get(key):
                lines.append(f"<b>{label}:</b> {hover_text(node[key], limit)}")
    if node.get("answer") is not None:
        lines.append(f"<b>answer:</b> {hover_text(node['answer'])}")
    if node.get("failure"):
        lines.append(f"<b>failure:</b> {hover_text(node['failure'])}")
    lines.append(f"reward {float(node.get('reward') or 0):+.2f} · visits {node.get('visits', 0)}")
    return "<br>".join(lines)


_SYMBOLS = {"question": "square", "step": "circle", "answer": "diamond", "failure": "x"}


def tree_figure(tree: Sequence[Mapping], chosen_leaves: Iterable[int]) -> go.Figure:
    """The planner's search tree: one marker per node, coloured by reward, chosen path in ACCENT.

    Steps run left to right; branches the planner tried are spread vertically. Hover shows the
    node's thought, action, input, observation, reward, visits and answer or failure.
    """
    title = "How the planner searched"
    if not tree:
        return empty_figure(title, "The planner took no steps for this answer.")
    pos = tree_layout(tree)
    on_path = chosen_path(tree, chosen_leaves)
    rewards = [float(n.get("reward") or 0.0) for n in tree]
    bound = max(1.0, max(abs(r) for r in rewards))

    fig = go.Figure()
    for name, edges, style in (
            ("edges", [n for n in tree if n["id"] not in on_path], dict(color="#c7ccd4", width=1.5)),
            ("chosen path", [n for n in tree if n["id"] in on_path], dict(color=ACCENT, width=4))):
        xs: list[float | None] = []
        ys: list[float | None] = []
        for node in edges:
            parent = node.get("parent")
            if parent is None or parent not in pos:
                continue
            xs += [pos[parent][0], pos[node["id"]][0], None]
            ys += [pos[parent][1], pos[node["id"]][1], None]
        if xs:
            fig.add_trace(go.Scatter(name=name, x=xs, y=ys, mode="lines", line=style,
                                     hoverinfo="skip", showlegend=False))

    for kind in ("question", "step", "answer", "failure"):
        group = [n for n in tree if _node_kind(n) == kind]
        if not group:
            continue
        chosen = [n["id"] in on_path for n in group]
        fig.add_trace(go.Scatter(
            name=kind, mode="markers+text",
            x=[pos[n["id"]][0] for n in group], y=[pos[n["id"]][1] for n in group],
            customdata=[n["id"] for n in group],
            text=[_escape(_node_label(n)) for n in group], textposition="top center",
            textfont=dict(size=11, color=INK),
            marker=dict(symbol=_SYMBOLS[kind], size=[22 if c else 18 for c in chosen], opacity=1,
                        color=[float(n.get("reward") or 0.0) for n in group],
                        coloraxis="coloraxis",
                        line=dict(color=[ACCENT if c else "#9ca3af" for c in chosen],
                                  width=[4 if c else 1 for c in chosen])),
            hovertext=[_node_hover(n, c) for n, c in zip(group, chosen)],
            hovertemplate="%{hovertext}<extra></extra>", showlegend=False,
        ))
    # Legend-only keys for what shape and outline mean; the colour bar explains colour.
    kinds = [_node_kind(n) for n in tree]
    for name, symbol in (("answer", "diamond"), ("failure", "x")):
        if name not in kinds:
            continue
        fig.add_trace(go.Scatter(name=f"{name} leaf", x=[None], y=[None], mode="markers",
                                 marker=dict(symbol=symbol, size=12, color="#9ca3af"),
                                 showlegend=True, hoverinfo="skip"))
    fig.add_trace(go.Scatter(name="chosen path", x=[None], y=[None], mode="lines",
                             line=dict(color=ACCENT, width=4), showlegend=True, hoverinfo="skip"))

    rows = max(p[1] for p in pos.values()) + 1
    depth = max(p[0] for p in pos.values())
    answers, failures = kinds.count("answer"), kinds.count("failure")
    subtitle = (f"{len(tree)} nodes · {answers} answer{'s' * (answers != 1)} · "
                f"{failures} failure{'s' * (failures != 1)}")
    fig.update_layout(
        **base_layout(title, min(720, max(300, 140 + 70 * rows)), showlegend=True,
                       margin=dict(l=16, r=16, t=96, b=48)),
        legend=dict(orientation="h", x=0, y=-0.02, yanchor="top", font=dict(size=12)),
        coloraxis=dict(colorscale=REWARD_SCALE, cmin=-bound, cmax=bound,  # 0 in the middle
                       colorbar=dict(title=dict(text="reward", side="right"), thickness=12,
                                     len=0.8, outlinewidth=0)),
    )
    fig.update_layout(title_subtitle=dict(text=subtitle, font=dict(size=12, color=MUTED)))
    fig.update_xaxes(range=[-0.4, depth + 0.4], tickvals=list(range(int(depth) + 1)),
                     ticktext=["question"] + [f"step {d}" for d in range(1, int(depth) + 1)],
                     side="top", showgrid=True, gridcolor="#eef0f3", zeroline=False)
    fig.update_yaxes(visible=False, range=[rows - 0.4, -0.6])
    return fig
