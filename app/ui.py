"""The Gradio page: library and upload on the left, the selected video and its memory on the right."""

from __future__ import annotations

import logging
from pathlib import Path

import gradio as gr

from app import views
from backend import config
from backend.errors import MemoryReelError
from backend.ingest import STAGES, check_upload, ingest
from backend.library import VIDEO_EXTENSIONS, Library

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parents[1] / "static"
_EMPTY_TABLE = {"headers": [], "data": []}


def _summary_outputs(video_id: str | None, settings: config.Settings) -> tuple:
    if not video_id:
        return (None, "Pick a video from the library or upload one.", _EMPTY_TABLE, [],
                _EMPTY_TABLE, _EMPTY_TABLE)
    try:
        s = views.summary(Library(settings.home).get(video_id))
    except MemoryReelError as e:
        raise gr.Error(str(e)) from e
    return s["video"], s["facts"], s["instances"], s["gallery"], s["speech"], s["ocr"]


def build(settings: config.Settings | None = None) -> gr.Blocks:
    settings = settings or config.load()
    library = Library(settings.home)

    def do_ingest(file_path: str | None, progress=gr.Progress()):
        """Ingest an uploaded video; returns its video id. API name: `ingest`."""
        if not file_path:
            raise gr.Error("Choose a video file first.")
        try:
            check_upload(Path(file_path), settings.max_upload_mb * 2**20)

            def report(stage: str, done: int, total: int) -> None:
                step = list(STAGES).index(stage) + 1
                progress((done, total) if total else None,
                         desc=f"{step}/{len(STAGES)} {STAGES[stage]}", unit="steps")

            result = ingest(Path(file_path), settings, progress=report)
        except MemoryReelError as e:
            raise gr.Error(str(e)) from e
        except Exception as e:  # a model failure must read as a message, not a stack trace
            log.exception("ingest failed")
            raise gr.Error(f"Ingest failed: {e}") from e
        note = "was already in the library" if result.cached else f"ingested in {result.seconds['total']:.0f} s"
        return (result.video_id,
                gr.update(choices=views.library_choices(library), value=result.video_id),
                f"**{result.name}** {note}.")

    with gr.Blocks(title="MemoryReel") as demo:
        gr.HTML("<div class='mr-header'><h1>MemoryReel</h1>"
                "<p>Upload a video; MemoryReel builds a memory of what is seen, said and written in it.</p></div>")
        with gr.Row():
            with gr.Column(scale=1, min_width=300, elem_classes="mr-card"):
                gr.Markdown("### Library")
                chooser = gr.Dropdown(label="Videos", choices=views.library_choices(library),
                                      value=None, interactive=True)
                refresh = gr.Button("Refresh", size="sm")
                gr.Markdown("### Add a video")
                upload = gr.File(label="Video file", file_types=sorted(VIDEO_EXTENSIONS),
                                 type="filepath")
                ingest_button = gr.Button("Ingest", variant="primary")
                status = gr.Markdown(elem_id="ingest-status")
                video_id_box = gr.Textbox(visible=False)
            with gr.Column(scale=3, elem_classes="mr-card"):
                player = gr.Video(label="Video", interactive=False, height=360)
                facts = gr.Markdown("Pick a video from the library or upload one.", elem_id="facts")
                gallery = gr.Gallery(label="Tracked objects in key frames", columns=4, height=260,
                                     elem_id="keyframes")
                instances = gr.Dataframe(label="Tracked objects", interactive=False, wrap=True,
                                         elem_id="instances")
                with gr.Row():
                    speech = gr.Dataframe(label="Speech", interactive=False, wrap=True,
                                          elem_id="speech")
                    ocr = gr.Dataframe(label="On-screen text", interactive=False, wrap=True,
                                       elem_id="ocr")

        summary_outputs = [player, facts, instances, gallery, speech, ocr]
        show = lambda video_id: _summary_outputs(video_id, settings)  # noqa: E731
        ingest_button.click(do_ingest, inputs=upload, outputs=[video_id_box, chooser, status],
                            api_name="ingest", concurrency_limit=1)
        chooser.change(show, inputs=chooser, outputs=summary_outputs, api_visibility="private")
        refresh.click(lambda: gr.update(choices=views.library_choices(library)), outputs=chooser,
                      api_visibility="private")
    return demo


def css() -> str:
    return (STATIC / "style.css").read_text()
