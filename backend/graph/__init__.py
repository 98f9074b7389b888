"""The knowledge graph of a video (WorldMM's and MemVerse's graph memory, built from the tables).

- `schema`: the `graph_nodes` and `graph_edges` tables in each video's SQLite file.
- `build`: nodes and edges from the tables at ingest, by code, no LLM.
- `network`: the tables as a networkx graph, one video's or the library's.
- `ppr`: retrieval by personalised PageRank seeded from a question's words.
"""
