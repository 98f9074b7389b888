"""`python -m app`: start the web app on MEMORYREEL_HOST:MEMORYREEL_PORT (127.0.0.1:7860)."""

import logging

from app.ui import launch
from backend import config

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
launch(config.load())
