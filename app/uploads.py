"""Uploads: what Gradio leaves behind for each one, and what the app does about it."""

from __future__ import annotations

import gradio as gr
from gradio.utils import NamedString
from gradio_client import utils as client_utils


def path_only(upload: gr.File) -> gr.File:
    """`upload` (a gr.File of type "filepath"), handing its handler the uploaded file's path and
    leaving nothing behind.

    Gradio's own (6.x) also opens an empty temporary file in its cache for every file it passes
    on, and neither closes nor removes it: one 0-byte file per upload. The method is replaced on
    the instance, as a subclass of a Gradio component writes a `.pyi` stub beside its module.
    """
    def process_single_file(f):
        if upload.file_types and not client_utils.is_valid_file(f.path, upload.file_types):
            raise gr.Error("Invalid file type. Please upload a file that is one of these "
                           f"formats: {upload.file_types}")
        return NamedString(f.path)

    if upload.type != "filepath":
        raise ValueError("path_only is for uploads handed on as paths (type='filepath')")
    upload._process_single_file = process_single_file
    return upload
