"""The model readied before the first question.

A model of this machine reads a prompt at 50-90 tokens a second on two cores, and a server
that caches prompts reads only what follows the longest opening it has seen. The planner's
prompt opens with the same ~420 tokens every time and the query form with the same ~1,340 (its
examples), so the first question of a process read them all: 24.7 s for a first question that
needs a query form, 5.6 s for the same question once they were read (docs/EVALUATION.md, "The
model readied"). So when the app starts, and before an eval's first question, the openings
(`prompts.openings`) are read into the model's cache, one call of one token each. In the app
this runs in the background and gives way to any question, as learning does. A remote
endpoint is never sent these calls: its cache, if any, is its own, and its tokens are paid for.
"""

from __future__ import annotations

import logging
import threading

from backend.agent import prompts
from backend.agent.graph_tool import GraphTool
from backend.agent.tools import RecallTool, sub_task_tools
from backend.config import Settings
from backend.factory import llm_for
from backend.giving_way import GivingWay
from models.llm import LLMBadReply, LLMError, Usage

log = logging.getLogger(__name__)

_done: set[str] = set()  # the endpoints (base URLs) whose cache holds the openings
_lock = threading.Lock()


def warm_up(settings: Settings) -> Usage:
    """Start the configured model and read the openings into its cache, once per endpoint and
    process; returns what it cost (nothing where it did not run). Never raises: a model that
    cannot start says so to the first question as before."""
    usage = Usage()
    if not settings.llm_warm_up:
        return usage
    try:
        llm = llm_for(settings)
    except LLMError as e:
        log.warning("the model was not readied: %s", e)
        return usage
    with _lock:
        if not getattr(llm, "local", False) or llm.base_url in _done:
            return usage
        _done.add(llm.base_url)
    model = GivingWay(llm)
    for messages in prompts.openings(planner_tools()):
        try:
            usage.add(model.complete(messages, max_tokens=1).usage)
        except LLMBadReply:
            pass  # a blank token: the opening was read all the same, which is all that counts
        except LLMError as e:
            log.warning("the model was readied in part: %s", e)
            break
    log.info("the model read %d prompt tokens of openings in %.1f s", usage.prompt_tokens,
             usage.seconds)
    return usage


def begin(settings: Settings) -> threading.Thread | None:
    """`warm_up` in a background thread (the app, at start); None where it is off."""
    if not settings.llm_warm_up:
        return None
    thread = threading.Thread(target=warm_up, args=(settings,), name="memoryreel-warm-up",
                              daemon=True)
    thread.start()
    return thread


def planner_tools() -> dict[str, str]:
    """The planner's tools as `ask` lists them (an attached document's, when any, comes last)."""
    return {tool.name: tool.description for tool in (*sub_task_tools(), RecallTool, GraphTool)}
