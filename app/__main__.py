"""`python -m app`: start the web app on MEMORYREEL_HOST:MEMORYREEL_PORT (127.0.0.1:7860)."""

import logging

from app.ui import build, css
from backend import config

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
settings = config.load()
user, _, password = settings.auth.partition(":")
build(settings).queue(default_concurrency_limit=2).launch(
    server_name=settings.host,
    server_port=settings.port,
    share=settings.share,
    auth=(user, password) if settings.auth else None,
    max_file_size=f"{settings.max_upload_mb}mb",
    css=css(),
    footer_links=["api"],
)
