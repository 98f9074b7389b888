"""Many videos at once (`python -m backend ingest FOLDER --workers N [--ray ADDRESS]`).

Each video's ingest is independent and atomic (backend/ingest/pipeline.py, backend/library.py),
so a batch only fans files out and gathers what became of each:
- `files`: folders, globs and paths into the list of video files;
- `plan`: the one process that owns the run hashes every file first, so what the library holds
  already and the second copy of a file never reach a worker; its records (`FileOutcome`,
  `BatchSummary`);
- `worker`: one file's ingest in a worker process, the function both engines call;
- `pool`: worker processes on this machine; `cluster`: tasks on a Ray cluster;
- `runner`: the run itself, from arguments to summary.

A run that is killed leaves whole videos and staging folders; the next run removes the
staging folders, reports what was done as cached and ingests the rest.
"""
