"""The knowledge graph as a plotly network: a video's, the library's, or the part an answer used.

Plain graph in, figure out, with the look of app/figures.py: nodes coloured by kind with one
legend entry per kind, the question's seeded nodes drawn larger, edges as lines whose relations
show on hover at their midpoints. The layout is seeded, so the same graph is drawn the same way
each time and a panel does not jump when it is rebuilt.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping

import networkx as nx
import plotly.graph_objects as go

from app.figures import ACCENT, MUTED, OTHER_KIND, base_layout, empty_figure, hover_text
from backend.graph.schema import NODE_KINDS

# Past this a spring layout is a hairball and slow to draw: the most connected nodes are shown.
MAX_NODES = 150
MAX_LABELLED = 40  # names beside the markers only while they stay readable
NODE_COLOURS = {"object": "#4363d8", "kind": "#911eb4", "speaker": "#3cb44b", "topic": "#469990",
                "text": "#e6194b", "shot": "#9a6324", "place": "#808000"}
EDGE_COLOUR = "#c7ccd4"
SEED_SIZE, NODE_SIZE = 22, 12
_LAYOUT_SEED = 7
_SEGMENTS_SHOWN = 12
_RELATIONS_SHOWN = 8
_DETAIL_FACTS = 4


def span(data: Mapping) -> str:
    """'3.0-6.4 s', the time a node or edge holds."""
    start, end = data.get("t_start"), data.get("t_end")
    if start is None or end is None:
        return "time unknown"
    return f"{start:.1f}-{end:.1f} s"


def kept_nodes(graph: nx.MultiDiGraph, seeds: Iterable[str], cap: int = MAX_NODES) -> list[str]:
    """The nodes drawn: every one up to `cap`, else the seeds and then the most connected."""
    seeded = [n for n in dict.fromkeys(seeds) if n in graph]
    rest = sorted((n for n in graph if n not in set(seeded)),
                  key=lambda n: (-graph.degree(n), str(n)))
    return (seeded + rest)[:cap]


def positions(graph: nx.MultiDiGraph) -> dict[str, tuple[float, float]]:
    # Sorted nodes and edges: the same graph read in another row order gets the same picture.
    simple = nx.Graph()
    simple.add_nodes_from(sorted(graph))
    simple.add_edges_from(sorted({tuple(sorted((u, v))) for u, v in graph.edges()}))
    return {n: (float(x), float(y))
            for n, (x, y) in nx.spring_layout(simple, seed=_LAYOUT_SEED).items()}


def _name(graph: nx.MultiDiGraph, node: str) -> str:
    return graph.nodes[node].get("name") or str(node)


def _detail(raw: str | None) -> list[str]:
    try:
        facts = json.loads(raw) if raw else {}
    except ValueError:
        return [hover_text(raw, 160)]
    if not isinstance(facts, dict):
        return [hover_text(facts, 160)]
    return [f"{hover_text(k, 40)}: {hover_text(v, 120)}"
            for k, v in list(facts.items())[:_DETAIL_FACTS]]


def node_hover(graph: nx.MultiDiGraph, node: str, seeded: bool,
               video_names: Mapping[str, str] | None = None) -> str:
    data = graph.nodes[node]
    segments = list(data.get("segments") or [])
    lines = [f"<b>{hover_text(_name(graph, node), 80)}</b> · {hover_text(data.get('kind') or '?')}",
             span(data)]
    if segments:
        more = len(segments) - _SEGMENTS_SHOWN
        lines.append("segments " + ", ".join(str(s) for s in segments[:_SEGMENTS_SHOWN])
                     + (f" (+{more} more)" if more > 0 else ""))
    if data.get("video_id"):
        video = data["video_id"]
        lines.append(f"video {hover_text((video_names or {}).get(video, video), 80)}")
    if seeded:
        lines.append("<b>seeded by the question</b>")
    return "<br>".join(lines + _detail(data.get("detail")))


def pair_hover(graph: nx.MultiDiGraph, edges: list[tuple[str, str, dict]]) -> str:
    """Every relation between two nodes, either way, in one hover."""
    edges = sorted(edges, key=lambda e: (e[2].get("relation") or "", e[2].get("t_start") or 0.0))
    lines = []
    for u, v, data in edges[:_RELATIONS_SHOWN]:
        confidence = data.get("confidence")
        lines.append(f"{hover_text(_name(graph, u), 40)} → {hover_text(_name(graph, v), 40)}: "
                     f"<b>{hover_text(data.get('relation') or '?')}</b> {span(data)}"
                     + (f" · confidence {confidence:.2f}" if confidence is not None else ""))
    if len(edges) > _RELATIONS_SHOWN:
        lines.append(f"+{len(edges) - _RELATIONS_SHOWN} more")
    return "<br>".join(lines)


def graph_figure(graph: nx.MultiDiGraph, seeds: Iterable[str] = (), *, title: str, empty: str,
                 video_names: Mapping[str, str] | None = None,
                 cap: int = MAX_NODES) -> go.Figure:
    """The graph as a network; `empty` says why when it has no nodes. Over `cap` nodes, the
    seeds and the most connected are drawn and the title says how many were left out."""
    if graph.number_of_nodes() == 0:
        return empty_figure(title, empty)
    seeds = [n for n in dict.fromkeys(seeds) if n in graph]
    kept = kept_nodes(graph, seeds, cap)
    shown = graph.subgraph(kept)
    left_out = graph.number_of_nodes() - len(kept)
    if left_out:
        title += f" ({len(kept)} of {graph.number_of_nodes()} nodes shown, {left_out} left out)"
    pos = positions(shown)
    fig = go.Figure()
    _add_edges(fig, shown, pos)
    _add_nodes(fig, shown, pos, set(seeds), video_names)
    if any(n in shown for n in seeds):
        fig.add_trace(go.Scatter(name="seeded by the question", x=[None], y=[None],
                                 mode="markers", hoverinfo="skip", marker=dict(
                                     size=14, color="white", line=dict(color=ACCENT, width=3))))
    subtitle = (f"{shown.number_of_nodes()} nodes · {shown.number_of_edges()} relations · "
                "hover a line's midpoint for its relations")
    fig.update_layout(**base_layout(title, 600, showlegend=True,
                                    margin=dict(l=16, r=16, t=84, b=40)),
                      title_subtitle=dict(text=subtitle, font=dict(size=12, color=MUTED)),
                      legend=dict(title=dict(text="kinds (click to hide or show)"),
                                  orientation="h", y=-0.02, yanchor="top", font=dict(size=12),
                                  itemsizing="constant"))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


def _add_edges(fig: go.Figure, graph: nx.MultiDiGraph, pos: Mapping) -> None:
    pairs: dict[tuple[str, str], list] = defaultdict(list)
    for u, v, data in graph.edges(data=True):
        pairs[tuple(sorted((u, v)))].append((u, v, data))
    if not pairs:
        return
    xs: list[float | None] = []
    ys: list[float | None] = []
    for a, b in pairs:
        xs += [pos[a][0], pos[b][0], None]
        ys += [pos[a][1], pos[b][1], None]
    fig.add_trace(go.Scatter(name="relations", x=xs, y=ys, mode="lines", hoverinfo="skip",
                             line=dict(color=EDGE_COLOUR, width=1), showlegend=False))
    # A line has no hover of its own in plotly: a small marker at each midpoint carries it.
    fig.add_trace(go.Scatter(
        name="relation", mode="markers", showlegend=False,
        x=[(pos[a][0] + pos[b][0]) / 2 for a, b in pairs],
        y=[(pos[a][1] + pos[b][1]) / 2 for a, b in pairs],
        marker=dict(size=6, color=EDGE_COLOUR, symbol="diamond"),
        hovertext=[pair_hover(graph, edges) for edges in pairs.values()],
        hovertemplate="%{hovertext}<extra></extra>"))


def _add_nodes(fig: go.Figure, graph: nx.MultiDiGraph, pos: Mapping, seeds: set[str],
               video_names: Mapping[str, str] | None) -> None:
    present = {graph.nodes[n].get("kind") or "other" for n in graph}
    kinds = [k for k in NODE_KINDS if k in present] + sorted(present - set(NODE_KINDS))
    labelled = graph.number_of_nodes() <= MAX_LABELLED
    for kind in kinds:
        group = sorted(n for n in graph if (graph.nodes[n].get("kind") or "other") == kind)
        seeded = [n in seeds for n in group]
        fig.add_trace(go.Scatter(
            name=kind, mode="markers+text" if labelled else "markers", meta={"kind": kind},
            x=[pos[n][0] for n in group], y=[pos[n][1] for n in group], customdata=group,
            text=[hover_text(_name(graph, n), 24) for n in group] if labelled else None,
            textposition="top center", textfont=dict(size=11),
            marker=dict(color=NODE_COLOURS.get(kind, OTHER_KIND),
                        size=[SEED_SIZE if s else NODE_SIZE for s in seeded],
                        line=dict(color=[ACCENT if s else "white" for s in seeded],
                                  width=[3 if s else 1 for s in seeded])),
            hovertext=[node_hover(graph, n, s, video_names) for n, s in zip(group, seeded)],
            hovertemplate="%{hovertext}<extra></extra>"))
