"""The files behind the page's download buttons: the selected video's transcript, tracks and
graph, and the selected answer as a Markdown zip (with its key frames) or JSON.

A download button hands over a file that exists before it is clicked, so each is written when
its video or answer is shown, into a folder of the browser session's own under the system's temp
folder (never the library: HOME holds what ingest made, and Gradio serves files from the temp
folder). Gradio copies what a button offers into its cache, which it sweeps; the session's
folder goes when its tab closes (`forget`).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import gradio as gr

from backend.errors import ExportError
from backend.exports import VIDEO_FORMATS, read_only
from backend.exports import answer as answer_export
from backend.exports import video as video_export
from backend.library import VideoEntry

ROOT = Path(tempfile.gettempdir()) / "memoryreel-downloads"


def session_folder(request: gr.Request) -> Path:
    folder = _folder_of(request)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def forget(request: gr.Request) -> None:
    """The tab closed: its files go (Gradio keeps the copies it served until its sweep)."""
    shutil.rmtree(_folder_of(request), ignore_errors=True)


def _folder_of(request: gr.Request) -> Path:
    # The hash comes from the client: only its safe characters make the folder's name.
    return ROOT / re.sub(r"[^A-Za-z0-9_-]", "_", request.session_hash or "no-session")


def video_files(entry: VideoEntry, folder: Path) -> dict[str, Path | None]:
    """{format: file} for each of backend.exports.VIDEO_FORMATS; None where the video lacks
    what the format is made from (a graph, for a video ingested before graphs)."""
    target = folder / entry.video_id
    target.mkdir(exist_ok=True)
    files: dict[str, Path | None] = {}
    with read_only(entry) as db:
        for fmt in VIDEO_FORMATS:
            try:
                text = video_export.render(db, fmt)
            except ExportError:
                files[fmt] = None
                continue
            files[fmt] = target / f"{Path(entry.name).stem}.{fmt}"
            files[fmt].write_bytes(text.encode("utf-8"))
    return files


def answer_files(answer: dict, entry: VideoEntry, folder: Path, number: int) -> tuple[Path, Path]:
    """(a zip of the Markdown with its key frames, the JSON) of answer `number` of the chat."""
    parsed = answer_export.parse(answer, f"answer {number}")
    name = f"{Path(entry.name).stem}-answer-{number}"
    staging = folder / name
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    answer_export.write(parsed, entry, staging / "answer.md", "md")
    archive = Path(shutil.make_archive(str(folder / name), "zip", root_dir=staging))
    shutil.rmtree(staging)
    as_json = folder / f"{name}.json"
    as_json.write_text(answer_export.render(parsed, entry.name,
                                            answer_export.key_frames(parsed, entry), "json"),
                       encoding="utf-8")
    return archive, as_json
