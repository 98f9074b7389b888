"""Every route asks for the login, not only those Gradio guards.

Gradio checks the login on its API and file routes but not on all of them: with a login
required, `/gradio_api/heartbeat/{session}` (an event stream that then stays open) and
`/gradio_api/startup-events` answered 200 to a client that never logged in, and so would any
route a later Gradio adds. This ASGI middleware answers 401 to every request without a
logged-in session, except what the login page itself needs: the page, its scripts, styles and
icons, and the login form's POST; and the one call Gradio's launch makes itself, without a
login, to run the startup events (`startup-events` before they have run).
"""

from __future__ import annotations

from starlette.requests import cookie_parser

# What the login page loads before anyone has logged in.
_OPEN_PATHS = {"/", "/login", "/login/", "/logout", "/favicon.ico", "/robots.txt",
               "/manifest.json", "/theme.css", "/gradio_api/theme.css",
               "/gradio_api/login_check", "/gradio_api/login_check/"}
_OPEN_PREFIXES = ("/assets/", "/static/", "/svelte/", "/pwa_icon")
_REFUSED = b'{"detail":"Not authenticated: log in first."}'


class LoginWall:
    """ASGI middleware: a request from a client that has not logged in reaches only the login
    page, where the server asks for a login at all."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket") or for_login_page(scope["path"]) \
                or _launch_call(scope) or _logged_in(scope):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # policy violation
        else:
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(_REFUSED)).encode())]})
            await send({"type": "http.response.body", "body": _REFUSED})


def for_login_page(path: str) -> bool:
    return path in _OPEN_PATHS or path.startswith(_OPEN_PREFIXES)


def _launch_call(scope) -> bool:
    started = getattr(scope.get("app"), "startup_events_triggered", True)
    return scope["path"] == "/gradio_api/startup-events" and not started


def _logged_in(scope) -> bool:
    """Whether the request carries a session Gradio gave at login (Gradio's own test), or the
    server asks for no login."""
    app = scope.get("app")  # the Gradio app, which Starlette names before any middleware runs
    if getattr(app, "auth", None) is None:
        return True
    cookies = cookie_parser(dict(scope.get("headers", [])).get(b"cookie", b"").decode("latin-1"))
    token = cookies.get(f"access-token-{app.cookie_id}") or \
        cookies.get(f"access-token-unsecure-{app.cookie_id}")
    return token is not None and token in app.tokens
