"""Every prompt the agent sends, in one place.

Prompts start with a long constant part (instructions, schema, tools) and end with what varies,
so the LLM server's prompt cache can reuse the prefix across calls.
"""

from __future__ import annotations

import json

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
        ("Where on the screen is the text shown?",
         "SELECT text, x1, y1, x2, y2 FROM ocr LIMIT 5"),
    ]),
}

_SQL_SYSTEM = f"""You write one SQLite SELECT query that answers a question about a video.
The video's tables (times are seconds from the start; boxes are pixels, x1/y1 top left):
{SCHEMA_DOC}
Use only these tables and columns. Filter only on values the question gives: never guess a
word, name or text to match. Reply as JSON: {{"sql": "SELECT ..."}}."""

_ANSWER_SYSTEM = """You answer a question about a video from the rows a database query returned.
Reply as JSON {"answer": ...}: one short sentence that quotes the values in the rows (numbers,
words, text, times). If the rows do not answer the question, say what they do show."""

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
    return ("That query returned no rows. Loosen it: a time range instead of an exact time "
            "(e.g. t_start BETWEEN 38 AND 42), LIKE instead of =, or fewer conditions.")


def sub_answer_messages(question: str, sql: str, table: str) -> list[dict]:
    return [{"role": "system", "content": _ANSWER_SYSTEM},
            {"role": "user", "content": _sub_answer_task(*_ANSWER_EXAMPLE[:3])},
            {"role": "assistant", "content": json.dumps({"answer": _ANSWER_EXAMPLE[3]})},
            {"role": "user", "content": _sub_answer_task(question, sql, table)}]


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
