"""Ingest: a video file becomes symbolic tables (SQLite) and multi-scale episodic memory (LanceDB).

The stages, in the order they run (`pipeline.ingest`):
- `decode`: probe the file and sample its frames;
- `frame_pass`: one pass over the sampled frames (people, everyday objects, moving things, poses,
  on-screen text, captions, the look of each frame);
- `objects`: the objects' kinds settled, moving things named after the objects they are;
- `tracks`: fragments linked, noise dropped, short gaps filled;
- `scenes`: shots, camera motion and the picture of every step;
- `describe` and `tables`: instances, detections, speech, text and the timeline in SQLite;
- episodic memory (`backend/episodic.py`, shared with the agent): the timeline at several
  temporal scales, embedded for retrieval;
- `preview`: a thumbnail, and a copy the browser can play where the source is not one;
- `frames` (after ingest): frames with their boxes drawn, for the app.

The entry point is `backend.ingest.pipeline.ingest`.
"""
