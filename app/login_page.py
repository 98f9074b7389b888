"""The login page says nothing about the API.

Gradio renders its page with the API description in it (`window.gradio_api_info`: every named
endpoint with its parameters and types) whether or not the visitor has logged in, although
`/gradio_api/info`, which gives the same, asks for a login. This ASGI middleware blanks that
description in the login page, which Gradio tells apart by `"auth_required":true` in the page's
config; once logged in, the page carries it as before. The front end fetches the description
from `/gradio_api/info` when the page has none.
"""

from __future__ import annotations

import re

_LOGIN_CONFIG = re.compile(rb'window\.gradio_config\s*=\s*\{"auth_required"\s*:\s*true')
_API_INFO = re.compile(rb"(<script>\s*window\.gradio_api_info\s*=\s*).*?(;?\s*</script>)",
                       re.DOTALL)


class NoApiInfoBeforeLogin:
    """ASGI middleware: an HTML page that asks for a login carries no API description."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        held: list[dict] = []  # an HTML response, kept until its body is complete

        async def send_checked(message):
            if message["type"] == "http.response.start" and _is_html(message):
                held.append(message)
                return
            if not held:  # anything but HTML (event streams above all) goes on unbuffered
                await send(message)
                return
            held.append(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                for out in _without_api_info(held):
                    await send(out)

        await self.app(scope, receive, send_checked)


def _is_html(start: dict) -> bool:
    return any(name.lower() == b"content-type" and value.lower().startswith(b"text/html")
               for name, value in start.get("headers", []))


def _without_api_info(messages: list[dict]) -> list[dict]:
    start, parts = messages[0], messages[1:]
    body = b"".join(m.get("body", b"") for m in parts)
    if not _LOGIN_CONFIG.search(body):
        return messages
    body = _API_INFO.sub(rb"\g<1>null\g<2>", body)
    headers = [(name, value) for name, value in start.get("headers", [])
               if name.lower() != b"content-length"]
    headers.append((b"content-length", str(len(body)).encode()))
    return [{**start, "headers": headers}, {"type": "http.response.body", "body": body}]
