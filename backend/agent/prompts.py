"""Every prompt the agent sends, in one place.

Prompts start with a long constant part (instructions, schema, tools) and end with what varies,
so the LLM server's prompt cache can reuse the prefix across calls.
"""

from __future__ import annotations

import json

from backend.agent.queries import OPERATIONS
from backend.memory_records import MemoryEntry
from backend.schema import SCHEMA_DOC

# name -> (what the sub-task tool is for, few-shot (question, SQL) examples)
SUB_TASKS: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "When": ("temporal questions: when something happens, what happens before or after, at a time", [
        ("When does the first person appear?",
         "SELECT id, first_seen, appearance FROM instances ORDER BY first_seen LIMIT 1"),
        ("What happens just after 20 seconds?",
         "SELECT t_start, t_end, description FROM timeline WHERE t_start >= 20 ORDER BY t_start LIMIT 3"),
    ]),
    "Why": ("causal questions: why something happens, judged from what happens around it", [
        ("Why does the person stop at 12 seconds?",
         "SELECT t_start, t_end, description, speech FROM timeline WHERE t_end >= 8 AND t_start <= 16 "
         "ORDER BY t_start"),
    ]),
    "What": ("descriptive questions: what is seen, said or written, what something looks like", [
        ("What does the speaker say around 30 seconds?",
         "SELECT t_start, word FROM speech_words WHERE t_start BETWEEN 28 AND 32 ORDER BY t_start"),
        ("Which word is spoken at 12 seconds?",
         "SELECT t_start, t_end, word FROM speech_words WHERE t_end >= 11 AND t_start <= 13 "
         "ORDER BY t_start"),
        ("What text is shown on the screen?",
         "SELECT text, MIN(t) AS t, COUNT(*) AS reads FROM ocr GROUP BY text ORDER BY reads DESC LIMIT 10"),
        ("What is person 3 wearing?",
         "SELECT id, appearance FROM instances WHERE id = 3"),
    ]),
    "How": ("manner questions: how something moves or is done", [
        ("How do the people move?",
         "SELECT id, action, first_seen, last_seen FROM instances ORDER BY id"),
    ]),
    "Count": ("counting questions: how many objects, people, events", [
        ("How many people are visible at 10 seconds?",
         "SELECT COUNT(DISTINCT instance_id) AS people FROM detections WHERE frame = "
         "(SELECT MIN(frame) FROM detections WHERE t >= 10)"),
        ("How many different people appear in the whole video?",
         "SELECT COUNT(*) AS people FROM instances WHERE category = 'person'"),
        ("What is the largest number of people in view at once?",
         "SELECT MAX(n) AS most FROM (SELECT COUNT(*) AS n FROM detections GROUP BY frame)"),
    ]),
    "Other": ("any other question about the video's contents", [
        ("Where is the caption placed at 5 seconds?",
         "SELECT text, x1, y1, x2, y2 FROM ocr WHERE t BETWEEN 4 AND 6 LIMIT 5"),
    ]),
}

_SQL_SYSTEM = f"""You write one SQLite SELECT query that answers a question about a video.
The video's tables (times are seconds from the start; boxes are pixels, x1/y1 top left):
{SCHEMA_DOC}
Use only these tables and columns. Filter only on values the question gives: never guess a
word, name or text to match. Reply as JSON: {{"sql": "SELECT ..."}}."""

_ANSWER_SYSTEM = """You answer a question about a video from the rows a database query returned.
Reply as JSON {"answer": ...}: one short sentence that quotes the values in the rows (numbers,
words, text, times) exactly as written there, never reformatted. If the rows do not answer the
question, say what they do show."""

_PLANNER_SYSTEM = """You answer questions about a video by calling tools, one step at a time.
Each step is JSON: {{"thought": a few words, "action": a tool name or "Answer", "action_input": ...}}.
For a tool, action_input is a short question for it. For "Answer", action_input is the final
answer{mc_hint}, taken from the observations: never SQL, never the question itself. Answer as
soon as an observation answers the question. Never repeat a step.

Tools:
{tools}

Example:
{example}
"""

_EXAMPLE_QUESTION = "Question: how many cars are in view at 5 seconds?"
_EXAMPLE_FIRST_STEP = ('{"thought": "ask the Count tool the question", "action": "Count", '
                       '"action_input": "how many cars are in view at 5 seconds?"}\n'
                       'Observation: 2 cars are visible at 5 seconds.')
_EXAMPLES = {
    "choice": (f"{_EXAMPLE_QUESTION}\nOptions:\n0. one\n1. two\n2. three\n{_EXAMPLE_FIRST_STEP}\n"
               '{"thought": "2 cars matches the option two", "action": "Answer", "action_input": "two"}'),
    "open": (f"{_EXAMPLE_QUESTION}\n{_EXAMPLE_FIRST_STEP}\n"
             '{"thought": "the tool counted 2", "action": "Answer", '
             '"action_input": "Two cars are in view at 5 seconds."}'),
}


_TYPED_SYSTEM = """You turn a question about a video into a query form that code answers from the
video's tables (tracked objects, speech, on-screen text, descriptions over time).
operation, one of:
{operations}
target: the object asked about as the question names it ('person', 'car', '#3' for object 3), or
'' for any object. time: the time as the question says it ('at 10 s', '1:10', 'the start', 'the
first frame', 'the end'), or '' if it gives none. until: the end of an interval, or ''. words:
words the question quotes to find in speech or on-screen text, or ''. Never invent a time or words
the question does not give.
Reply as JSON: {{"operation": ..., "target": ..., "time": ..., "until": ..., "words": ...}}.""".format(
    operations="\n".join(f"- {name}: {purpose}" for name, purpose in OPERATIONS.items()))

# (tool, question, operation, target, time, until, words): one shared list, so every sub-task
# tool sends the same prompt prefix and the server's prompt cache serves them all.
_TYPED_EXAMPLES = [
    ("Count", "How many people are visible at 10 seconds?", "in_view", "people", "10 seconds", "", ""),
    ("Count", "What is the largest number of cars in view at once?", "most_at_once", "cars", "", "", ""),
    ("Count", "How many different dogs are seen?", "count_distinct", "dogs", "", "", ""),
    ("Count", "Is anybody still there at the end?", "in_view", "", "the end", "", ""),
    ("When", "When does person 6 first appear?", "first_appearance", "#6", "", "", ""),
    ("When", "When is the word welcome said?", "speech", "", "", "", "welcome"),
    ("What", "Which word is spoken at 1:12?", "speech", "", "1:12", "", ""),
    ("What", "What text is shown on the screen at the start?", "screen_text", "", "the start", "", ""),
    ("What", "What is object 3 wearing?", "appearance", "#3", "", "", ""),
    ("How", "In which direction do the buses drive?", "movement", "buses", "", "", ""),
    ("Why", "Why does the person stop between 8 and 16 seconds?", "timeline", "person", "8 s", "16 s", ""),
    ("When", "At what moment does the footage switch to another shot?", "scene", "", "", "", ""),
    ("How", "Is the camera panning at 1:05?", "scene", "", "1:05", "", ""),
    ("What", "Which colours fill the frame between 5 and 15 seconds?", "scene", "", "5 s", "15 s", ""),
    ("Other", "What is the video's frame rate?", "sql", "", "", "", ""),
]


def typed_query_messages(tool: str, question: str) -> list[dict]:
    messages = [{"role": "system", "content": _TYPED_SYSTEM}]
    for example_tool, q, operation, target, time, until, words in _TYPED_EXAMPLES:
        messages += [{"role": "user", "content": f"{example_tool} question: {q}"},
                     {"role": "assistant", "content": json.dumps(
                         {"operation": operation, "target": target, "time": time, "until": until,
                          "words": words})}]
    return messages + [{"role": "user", "content": f"{tool} question: {question}"}]


def sql_messages(tool: str, purpose: str, examples: list[tuple[str, str]], question: str) -> list[dict]:
    """Few-shot as earlier chat turns: small code models follow demonstrated turns best."""
    messages = [{"role": "system", "content": _SQL_SYSTEM}]
    for q, sql in examples:
        messages += [{"role": "user", "content": f"Question ({tool}, {purpose}): {q}"},
                     {"role": "assistant", "content": json.dumps({"sql": sql})}]
    return messages + [{"role": "user", "content": f"Question ({tool}, {purpose}): {question}"}]


def sql_retry(error: str) -> str:
    return f"That query failed: {error} Write a corrected query."


def sql_guessed(literals: list[str]) -> str:
    quoted = ", ".join(f"'{v}'" for v in literals)
    return f"the query filters on {quoted}, which the question does not mention: remove that condition."


def sql_no_rows() -> str:
    return ("That query returned no rows. Loosen it: a range of a few seconds around a time the "
            "question gives instead of an exact time, LIKE instead of =, or fewer conditions.")


def sub_answer_messages(question: str, sql: str, table: str) -> list[dict]:
    return [{"role": "system", "content": _ANSWER_SYSTEM},
            {"role": "user", "content": _sub_answer_task(*_ANSWER_EXAMPLE[:3])},
            {"role": "assistant", "content": json.dumps({"answer": _ANSWER_EXAMPLE[3]})},
            {"role": "user", "content": _sub_answer_task(question, sql, table)}]


def quote_messages(question: str, sql: str, table: str) -> list[dict]:
    system = ("You pick, from the rows a database query returned, the one value that answers a "
              'question about a video, copied exactly. Reply as JSON {"value": ...}.')
    return [{"role": "system", "content": system},
            {"role": "user", "content": _sub_answer_task(question, sql, table)}]


def rows_give(question: str, value: str) -> str:
    return f'For "{question}" the rows give: {value}'


def _sub_answer_task(question: str, sql: str, table: str) -> str:
    return f"Question: {question}\nQuery: {sql}\nRows:\n{table}"


_ANSWER_EXAMPLE = ("What is written on the sign?",
                   "SELECT text, MIN(t) AS t FROM ocr GROUP BY text",
                   "text | t\nOPEN 24 HOURS | 3.00\nEXIT | 12.00",
                   'The sign reads "OPEN 24 HOURS" (from 3 s); "EXIT" appears at 12 s.')


def planner_messages(tools: dict[str, str], question: str, options: list[str] | None,
                     history: list[dict], avoid: list[str], context: str = "") -> list[dict]:
    """history: earlier steps on this path (thought, action, action_input, observation)."""
    mc_hint = " (the text of the chosen option, copied exactly)" if options else " in plain words"
    system = _PLANNER_SYSTEM.format(
        mc_hint=mc_hint, example=_EXAMPLES["choice" if options else "open"],
        tools="\n".join(f"- {name}: {description}" for name, description in tools.items()))
    task = f"Question: {question}"
    if options:
        task += "\nOptions:\n" + "\n".join(f"{i}. {o}" for i, o in enumerate(options))
    if context:
        task = f"{context}\n\n{task}"
    for step in history:
        shown = {k: step[k] for k in ("thought", "action", "action_input")}
        task += f"\n{json.dumps(shown)}\nObservation: {step['observation']}"
    if avoid:
        task += ("\nAlready tried as the next step: " + "; ".join(avoid) +
                 ". Choose a different action or a different input.")
    return [{"role": "system", "content": system}, {"role": "user", "content": task}]


def merge_messages(question: str, answers: list[str]) -> list[dict]:
    listed = "\n".join(f"- {a}" for a in answers)
    return [{"role": "system", "content": "You merge candidate answers to a question about a video "
                                          "into one short, accurate answer. Prefer what most "
                                          "candidates agree on; do not add facts."},
            {"role": "user", "content": f"Question: {question}\nCandidate answers:\n{listed}"}]


def digest_messages(question: str, digest: list[str]) -> list[dict]:
    """One call: the code-built digest of a video (`digest.build`) told as an answer."""
    lines = "\n".join(digest)
    return [{"role": "system", "content": "You answer a question about a video from a list of "
                                          "what was measured in it, with times. Write two to "
                                          "four plain sentences in time order. Use only what the "
                                          "list says; do not repeat the question; do not invent."},
            {"role": "user", "content": f"Measured in the video:\n{lines}\n\nQuestion: {question}"}]


# --- memory: assessment, validation, decision patterns, follow-up questions -----------------

_ASSESS_SYSTEM = """You rate questions about a video before they are answered.
complexity: 0.0 for a single look-up (one fact, one time, one count), 0.5 for two or three steps,
1.0 for multi-step reasoning over causes, order of events or many objects.
task_type: "causal" (why or how something happens), "temporal" (when, before, after, order) or
"descriptive" (what, who, where, how many, what it looks like).
Reply as JSON: {"task_type": ..., "complexity": ...}."""

_ASSESS_EXAMPLES = [
    ("how many people are in view at 10 seconds?", "descriptive", 0.1),
    ("why does the man stop walking after the woman waves?", "causal", 0.8),
    ("what happens right after the car turns left?", "temporal", 0.5),
]


def assess_messages(question: str) -> list[dict]:
    messages = [{"role": "system", "content": _ASSESS_SYSTEM}]
    for q, task_type, complexity in _ASSESS_EXAMPLES:
        messages += [{"role": "user", "content": f"Question: {q}"},
                     {"role": "assistant",
                      "content": json.dumps({"task_type": task_type, "complexity": complexity})}]
    return messages + [{"role": "user", "content": f"Question: {question}"}]


_VALIDATE_SYSTEM = """You check an answer to a question about a video against the evidence that
was found in the video's memory (tool results and memory segments).
reason: one short sentence comparing the answer with the evidence.
valid: true only if the evidence clearly supports the answer; false if it contradicts the answer,
says something else, or does not mention it.
summary: if valid, one short standalone sentence stating the fact itself, what is true in the
video, with the values and times the answer gives (e.g. 'At 12 s the presenter says "welcome".'),
never a remark about the answer; otherwise "".
Reply as JSON: {"reason": ..., "valid": ..., "summary": ...}."""


def validate_messages(question: str, answer: str, evidence: list[str]) -> list[dict]:
    shown = "\n".join(f"- {e}" for e in evidence) or "- (no evidence was recorded)"
    return [{"role": "system", "content": _VALIDATE_SYSTEM},
            {"role": "user", "content": f"Question: {question}\nAnswer: {answer}\nEvidence:\n{shown}"}]


def pattern_messages(task_type: str, workflows: list[str]) -> list[dict]:
    listed = "\n".join(f"- {w}" for w in workflows)
    return [{"role": "system", "content": "You distil how an agent answers questions about videos "
                                          "with its tools into a reusable decision pattern."},
            {"role": "user", "content":
                f"These tool workflows answered {task_type} questions correctly:\n{listed}\n"
                f"Write the general decision pattern for {task_type} questions: which tools to "
                "call, in which order, with what kind of input. At most three short sentences; "
                'name no particular video. Reply as JSON: {"pattern": ...}.'}]


def openings(tools: dict[str, str]) -> list[list[dict]]:
    """The fixed opening of each long prompt that a question or learning from it sends, closed by
    an empty question: read once by a server that caches prompts (backend/warm_up.py), every
    later prompt of the family reads only what follows its opening. tools: the planner's, name
    -> description, in the planner's order. About 2,700 tokens in all."""
    return [planner_messages(tools, "", ["", ""], [], []),  # a multiple-choice question
            planner_messages(tools, "", None, [], []),      # an open one
            typed_query_messages("", ""),                   # its examples: 1,300 tokens
            assess_messages(""),
            validate_messages("", "", []),
            standalone_messages([], "")]                    # a chat's follow-up question


_STANDALONE_SYSTEM = """You rewrite the user's last question about a video so that it can be
understood without the conversation: replace words like "that", "it", "he", "after that", "the
same" with what they refer to. The result must still be the same question, with the same
question word; never answer it and never turn it into a statement. Keep it short. If it already
stands alone, return it unchanged. Reply as JSON: {"question": ...}."""


def standalone_messages(turns: list[tuple[str, str]], question: str) -> list[dict]:
    return [{"role": "system", "content": _STANDALONE_SYSTEM},
            {"role": "user", "content": f"{chat_context(turns)}\nLast question: {question}"}]


def chat_context(turns: list[tuple[str, str]]) -> str:
    lines = ["Conversation so far:"]
    for q, a in turns:
        lines += [f"User: {q}", f"Assistant: {a}"]
    return "\n".join(lines)


def memory_context(facts: list[MemoryEntry], plans: list[MemoryEntry]) -> str:
    """Replayed memory as text for the planner: facts first, then suggested tool plans."""
    parts = []
    if facts:
        parts.append("Known facts from earlier checked answers about this video (if one answers "
                     "the question, answer directly):\n" +
                     "\n".join(f"- {f.text}" for f in facts))
    if plans:
        parts.append("Tool plans that answered similar questions before:\n" +
                     "\n".join(f"- for \"{p.question}\": {p.text}" for p in plans))
    return "\n\n".join(parts)


def pattern_context(pattern: MemoryEntry | None) -> str:
    """A replayed decision pattern as text for a planner step that may call a tool."""
    return f"Decision pattern for {pattern.task_type} questions: {pattern.text}" if pattern else ""


_RECALL_SYSTEM = """You gather memories to answer a question about a video. You see what was found
so far. If it is enough to answer, reply {"enough": true, "memory": "episodic", "scale": "",
"query": ""}. Otherwise choose where to look next: "episodic" (descriptions of time segments; scale
is one of the video's scales, finest first: fine detail or whole-video overview), "facts" (facts
from earlier checked answers), "tables" (exact counts, times and text from the video's
database) or "graph" (where named things, words and places meet: who is with or near whom, who
came next), and a short query that differs from earlier ones.
Reply as JSON: {"enough": ..., "memory": ..., "scale": ..., "query": ...}."""


def recall_messages(query: str, scales: list[str], found: list[str]) -> list[dict]:
    shown = "\n".join(found) or "(nothing yet)"
    return [{"role": "system", "content": _RECALL_SYSTEM},
            {"role": "user", "content": f"Looking for: {query}\nScales: {', '.join(scales)}\n"
                                        f"Found so far:\n{shown}"}]
