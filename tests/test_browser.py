"""The web app in a real browser: Debian's Chromium, headless, driven by Playwright.

Upload a clip, wait for ingest, ask a question and a reworded follow-up, check the answers and
the four per-answer panels, pick the first answer again in the chat and see its panels come
back, click an evidence chip and see the player seek. A screenshot of the page is saved to
test-artifacts/app.png and docs/screenshot.png (the README's picture).
Then a question across the library, whose chip picks the video it names and seeks there.
Answers use the embedded Qwen2.5-Coder 0.5B (about twice as fast as the default 1.5B).
"""

from __future__ import annotations

import re
import shutil

import pytest
from playwright.sync_api import Page, expect

from backend.library import Library
from backend.sql_runner import run_query
from tests.conftest import REPO, browser_page, clip, closed_endpoint, running_app, settings_for

ARTIFACTS = REPO / "test-artifacts"
# The README shows this page; saving it here on every run keeps the picture from going stale.
SCREENSHOT = REPO / "docs" / "screenshot.png"
CLIP = "mot15_TUD-Campus.mp4"
HIGHWAY = "bgslib_video02_highway.avi"
INGEST_MS = 240_000
ANSWER_MS = 480_000  # generous: two cores shared with other work make answers slow


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    return settings_for(tmp_path_factory.mktemp("browser-library"), llm_size="0.5b")


@pytest.fixture(scope="module")
def page(settings):
    with running_app(settings) as (url, _), browser_page(url) as page:
        yield page


def _ask(page: Page, question: str, options: list[str], answers_before: int) -> str:
    page.locator("#question textarea").fill(question)
    page.locator("#options textarea").fill("\n".join(options))
    page.locator("#ask").click()
    bot = page.locator("#chat .message.bot, #chat [data-testid='bot']")
    # Live progress: the planner's steps appear before the answer does.
    expect(page.locator("#chat").get_by_text(re.compile(r"Working|Planner: \d+ steps")).first) \
        .to_be_visible(timeout=60_000)
    answer = page.locator("#chat").get_by_text(re.compile(r"LLM calls")).nth(answers_before)
    expect(answer).to_be_visible(timeout=ANSWER_MS)
    return bot.last.inner_text()


def test_asking_with_no_video_gives_one_message_and_no_error_badges(page: Page):
    expect(page.get_by_text("The library is empty")).to_be_visible(timeout=30_000)
    page.locator("#question textarea").fill("how many people are there")
    page.locator("#ask").click()
    expect(page.locator("#ask-note")).to_contain_text("Pick a video from the library",
                                                      timeout=30_000)
    page.wait_for_timeout(1_000)  # any badge or toast would be drawn by now
    assert page.get_by_text(re.compile("before asking")).count() == 1
    # An error would mark the chat and each panel with a red badge and pop a toast.
    assert page.locator(".error, .toast-body").count() == 0
    assert page.locator("#chat .message").count() == 0
    expect(page.locator("#question textarea")).to_have_value("how many people are there")
    page.locator("#question textarea").fill("")


def test_upload_ask_and_inspect_the_answer(page: Page):
    expect(page.get_by_text("The library is empty")).to_be_visible(timeout=30_000)

    page.locator("#upload input[type=file]").set_input_files(str(clip(CLIP)))
    expect(page.locator("#ingest-status")).to_contain_text("ingested in", timeout=INGEST_MS)
    expect(page.locator("#library")).to_contain_text(CLIP)
    expect(page.locator("#player video")).to_have_count(1, timeout=30_000)

    page.get_by_text("Multiple choice (optional)").click()
    first = ["2", "3", "4", "5", "6"]
    text = _ask(page, "how many people are in the first frame", first, 0)
    assert re.search(r"[A-E]\. [2-6]\b", text), text

    header = page.locator("#answer-header")
    expect(header).to_contain_text("Answer 1 of 1")
    expect(header).to_contain_text("how many people are in the first frame")

    # Tracked objects: key frames with boxes, and a timeline with one bar per object.
    expect(page.locator("#evidence-frames img").first).to_be_visible(timeout=30_000)
    expect(page.locator("#timeline .js-plotly-plot")).to_be_visible()
    assert page.locator("#timeline .barlayer .point").count() >= 3

    # Retrieved memories: complexity and replay sizes of this answer.
    page.get_by_role("tab", name="Retrieved memories").click()
    expect(page.locator("#memory-note")).to_contain_text("C(q)")
    expect(page.locator("#memory-note")).to_contain_text("k_s")

    # Replay counts: a chart, or the sentence saying nothing has been replayed yet.
    page.get_by_role("tab", name="Replay counts").click()
    expect(page.locator("#replay-plot .js-plotly-plot")).to_be_visible()
    expect(page.locator("#replay-plot")).to_contain_text(re.compile("replayed"))

    # Planner tree: the question node and at least one step, with hover text.
    page.get_by_role("tab", name="Planner tree").click()
    expect(page.locator("#tree-plot .js-plotly-plot")).to_be_visible()
    assert page.locator("#tree-plot .scatterlayer .point").count() >= 2
    expect(page.locator("#tree-plot")).to_contain_text("question")

    # The same question reworded: the chat history goes with it, memory learned from the first
    # answer may be replayed, and the panels follow the newest answer.
    text = _ask(page, "count the people in the first frame", first, 1)
    assert re.search(r"[A-E]\. [2-6]\b", text), text
    expect(header).to_contain_text("Answer 2 of 2")
    expect(header).to_contain_text("count the people")
    page.get_by_role("tab", name="Retrieved memories").click()
    if page.locator("#memory-table tbody tr").count():
        page.get_by_role("tab", name="Replay counts").click()
        assert page.locator("#replay-plot .barlayer .point").count() >= 1

    # Selecting the first answer in the chat brings back its panels.
    page.locator("#chat").get_by_text(re.compile(r"[A-E]\. [2-6]\b")).first.click()
    expect(header).to_contain_text("Answer 1 of 2", timeout=30_000)
    expect(header).to_contain_text("how many people")
    page.get_by_role("tab", name="Planner tree").click()
    expect(page.locator("#tree-plot .js-plotly-plot")).to_be_visible()

    # An evidence chip seeks the player (which then plays on from there).
    chips = page.locator("#answer-header .mr-chip")
    if chips.count():
        target = float(chips.last.get_attribute("data-t"))
        chips.last.click()
        page.wait_for_function(
            "t => { const v = document.querySelector('#player video');"
            " return v.currentTime >= t - 0.1 && v.currentTime <= t + 1.5; }",
            arg=target, timeout=15_000)

    page.get_by_role("tab", name="Tracked objects").click()
    expect(page.locator("#timeline .js-plotly-plot")).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "app.png"), full_page=True)
    assert (ARTIFACTS / "app.png").stat().st_size > 50_000
    shutil.copyfile(ARTIFACTS / "app.png", SCREENSHOT)


def test_memory_inspector_and_sql(page: Page):
    page.get_by_role("tab", name="Memory inspector").click()
    page.get_by_label("Episodic").check()
    expect(page.locator("#memory-browser")).to_contain_text("episodic:", timeout=30_000)
    page.locator("#sql-run").click()
    expect(page.locator("#sql-result")).to_contain_text("person", timeout=30_000)
    page.locator("#sql textarea, #sql .cm-content").first.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("DELETE FROM instances")
    page.locator("#sql-run").click()
    expect(page.get_by_text("Only SELECT queries are allowed")).to_be_visible(timeout=30_000)


def test_settings_report_an_unreachable_llm(page: Page):
    page.get_by_role("tab", name="Settings").click()
    url_field = page.locator("#llm-url textarea, #llm-url input").first
    expect(url_field).to_be_editable(timeout=30_000)
    down = closed_endpoint()
    # A tab's fields can be drawn again just after it opens, dropping what was typed: the test
    # would then check the default (reachable) LLM. So type again until the field keeps the URL.
    for _ in range(5):
        url_field.fill(down)
        page.wait_for_timeout(500)
        if url_field.input_value() == down:
            break
    expect(url_field).to_have_value(down)
    page.locator("#settings-test").click()
    expect(page.locator("#connection")).to_contain_text("Cannot use this LLM", timeout=60_000)
    expect(page.locator("#connection")).to_contain_text("cannot reach")


def test_deleting_a_video_asks_first(page: Page):
    page.get_by_role("tab", name="Chat").click()
    page.locator("#delete-video").click()
    expect(page.get_by_text(f"Delete {CLIP}")).to_be_visible(timeout=30_000)
    page.get_by_role("button", name="Keep it").click()
    expect(page.locator("#library")).to_contain_text(CLIP)
    page.locator("#delete-video").click()
    page.locator("#confirm-delete").click()
    expect(page.get_by_text("The library is empty")).to_be_visible(timeout=30_000)
    expect(page.locator("#ingest-status")).to_contain_text(f"Deleted {CLIP}")


def test_a_question_across_the_library_picks_the_video_it_names(page: Page, settings, ingested,
                                                                  library_settings):
    """Two clips already ingested elsewhere, none selected: the bus is in the highway clip."""
    ids = {}
    for name in (HIGHWAY, CLIP):
        ids[name] = ingested(name).video_id
        shutil.copytree(library_settings.home / "videos" / ids[name],
                        settings.home / "videos" / ids[name], dirs_exist_ok=True)
    spans = run_query(Library(settings.home).get(ids[HIGHWAY]).db_path,
                      "SELECT first_seen, last_seen FROM instances WHERE category = 'bus'",
                      timeout_s=5, max_rows=100).rows
    assert spans, "the highway clip's tables hold no bus"
    page.reload()
    expect(page.locator("#library")).to_contain_text(HIGHWAY, timeout=30_000)
    page.locator("#chat-scope").get_by_label("All videos").check()
    page.locator("#question textarea").fill("In which clip is there a bus?")
    page.locator("#ask").click()
    # The chat keeps only a chip's class and text: the video is named in the class.
    chips = page.locator("#chat .mr-chip[class*=mr-video-]")
    expect(chips.first).to_contain_text(re.compile(rf"{re.escape(HIGHWAY)} @ \d+\.\d s"),
                                        timeout=120_000)
    assert {re.search(r"mr-video-(\w+)", chips.nth(i).get_attribute("class"))[1]
            for i in range(chips.count())} == {ids[HIGHWAY]}
    target = float(re.search(r"@ ([\d.]+) s", chips.first.inner_text())[1])
    assert any(start - 0.2 <= target <= end + 0.2 for start, end in spans), (target, spans)

    chips.first.click()  # selects the highway clip, as the library does, and seeks there
    expect(page.locator("#facts")).to_contain_text(ids[HIGHWAY], timeout=30_000)
    page.wait_for_function(
        "t => { const v = document.querySelector('#player video');"
        " return v && v.currentTime >= t - 0.1 && v.currentTime <= t + 1.5; }",
        arg=target, timeout=30_000)
    expect(chips.first).to_be_visible()  # the chat across the library goes on


def test_an_open_question_is_told_from_the_digest_never_echoed(page: Page):
    """The highway clip, selected by the chip above: an open question is answered from the
    digest code writes of its tables (one LLM call at most), never with the question itself."""
    page.locator("#chat-scope").get_by_label("This video").check()
    options = page.locator("#options textarea")
    if not options.is_visible():  # the multiple-choice box is folded away in library scope
        page.get_by_text("Multiple choice (optional)").click()
    options.fill("")
    before = page.locator("#chat").get_by_text(re.compile(r"LLM calls")).count()
    question = "what happens in this video?"
    page.locator("#question textarea").fill(question)
    page.locator("#ask").click()
    expect(page.locator("#chat").get_by_text(re.compile(r"LLM calls")).nth(before)) \
        .to_be_visible(timeout=ANSWER_MS)
    text = page.locator("#chat .message.bot, #chat [data-testid='bot']").last.inner_text()
    # The highway clip's digest holds cars, a bus and a truck; the account names one of them.
    assert question not in text.lower() and re.search(r"\b(cars?|bus|truck|vehicles?)\b",
                                                        text.lower()), text
    assert re.search(r"\b[01] LLM calls?\b", text), text
