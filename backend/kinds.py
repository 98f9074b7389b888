"""Everyday kinds of things a question or an option can name, and the words people use for them.

The 80 COCO classes (what a COCO detector reports) and a few animals and vehicles beyond them,
each with the words that name it (synonyms, plurals): 'lorry' is a truck, 'kittens' are cats,
'pedestrians' are persons. Code uses this to tell whether anything ingest observed could have
seen what an answer names, without asking a model.
"""

from __future__ import annotations

import re
from functools import lru_cache

from models.coco import CLASSES as COCO

# Animals, vehicles and appliances people ask about that no COCO class covers.
BEYOND_COCO = ("squirrel", "duck", "goose", "pigeon", "rabbit", "deer", "fox", "fish", "chicken",
               "goat", "pig", "monkey", "lion", "tiger", "tram", "tractor", "scooter",
               "helicopter", "dishwasher", "washing machine", "kettle")
# Words for what a COCO detector reports as one kind or another: a van is a car to it on one
# frame and a truck on the next.
EITHER = {"van": ("car", "truck")}

# What a question may ask for by a broader word ("which vehicle", "what animals").
GROUPS = {
    "vehicle": ("bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat",
                "tram", "tractor", "scooter", "helicopter"),
    "animal": ("bird", "cat", "dog", "horse", "sheep", "cow", "elephant", "bear", "zebra",
               "giraffe", "squirrel", "duck", "goose", "pigeon", "rabbit", "deer", "fox", "fish",
               "chicken", "goat", "pig", "monkey", "lion", "tiger"),
    "appliance": ("refrigerator", "oven", "microwave", "toaster", "sink", "dishwasher",
                  "washing machine", "kettle"),
}
GROUP_WORDS = {"vehicle": "vehicle", "vehicles": "vehicle", "traffic": "vehicle", "animal": "animal",
               "animals": "animal", "pet": "animal", "pets": "animal", "appliance": "appliance",
               "appliances": "appliance"}

# Other words for a kind (their plurals follow by rule).
SYNONYMS = {
    "person": ("people", "man", "men", "woman", "women", "child", "children", "kid", "boy",
               "girl", "pedestrian", "human", "walker", "runner", "player", "worker"),
    "bicycle": ("bike",), "motorcycle": ("motorbike",), "airplane": ("aeroplane", "plane", "jet"),
    "car": ("taxi", "automobile"), "truck": ("lorry",),
    "boat": ("sailboat", "yacht", "canoe", "kayak", "ship", "ferry"),
    "bird": ("seagull",), "cat": ("kitten",), "dog": ("puppy",), "cow": ("cattle",),
    "handbag": ("purse",), "sports ball": ("ball", "football", "soccer ball", "basketball"),
    "couch": ("sofa",), "potted plant": ("houseplant",), "dining table": ("table",),
    "tv": ("television", "monitor"), "cell phone": ("phone", "smartphone", "mobile phone"),
    "refrigerator": ("fridge", "freezer"), "oven": ("cooker", "stove"),
    "washing machine": ("washer",), "hair drier": ("hair dryer",), "donut": ("doughnut",),
}
# Words for a person with the thing they ride or use, which name neither (a person and a
# bicycle); "<kind> rider" or "<kind> driver" is read by rule (`named`).
WITH_PERSON = {"cyclist": "bicycle", "bicyclist": "bicycle", "biker": "bicycle",
               "motorcyclist": "motorcycle", "horseman": "horse", "jockey": "horse",
               "skateboarder": "skateboard", "skier": "skis", "surfer": "surfboard",
               "snowboarder": "snowboard"}
_RIDES = re.compile(r"\b(?:rider|riders|driver|drivers)\b")
# Kinds that move by themselves: a moving object tracked by background subtraction may be one.
MOVING = frozenset({"person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck",
                    "boat", "bird", "cat", "dog", "horse", "sheep", "cow", "elephant", "bear",
                    "zebra", "giraffe", *BEYOND_COCO, *EITHER})
_IRREGULAR = {"man": "men", "woman": "women", "child": "children", "person": "people",
              "mouse": "mice", "goose": "geese", "knife": "knives", "sheep": "sheep",
              "deer": "deer", "fish": "fish", "cattle": "cattle", "skis": "skis",
              "scissors": "scissors", "bus": "buses"}


def plural(word: str) -> str:
    """'bus' -> 'buses', 'person' -> 'people', 'wine glass' -> 'wine glasses'."""
    head, _, last = word.rpartition(" ")
    if last in _IRREGULAR:
        last = _IRREGULAR[last]
    elif last.endswith(("s", "x", "ch", "sh")):
        last += "es"
    elif last.endswith("y") and last[-2:-1] not in "aeiou":
        last = last[:-1] + "ies"
    else:
        last += "s"
    return f"{head} {last}".strip()


_WITH_PERSON_PLURAL = {plural(w): k for w, k in WITH_PERSON.items()}


@lru_cache(maxsize=1)
def words() -> dict[str, str]:
    """Every word or phrase that names a kind -> the kind."""
    named = {}
    for kind in (*COCO, *BEYOND_COCO, *EITHER):
        for word in (kind, *SYNONYMS.get(kind, ())):
            named[word] = named[plural(word)] = kind
    for word in WITH_PERSON:
        named[word] = named[plural(word)] = "person"
    return named


def detected_as(kind: str) -> tuple[str, ...]:
    """The detector's kinds a kind is reported as: itself, either of two (a van), or any of
    a group's ('the traffic' is every vehicle)."""
    return EITHER.get(kind) or GROUPS.get(kind) or (kind,)


def words_for(kind: str) -> list[str]:
    return [w for w, k in words().items() if k == kind]


def named(text: str) -> list[str]:
    """The kinds `text` names, in order, each once ('two dogs and a lorry' -> dog, truck)."""
    found: list[tuple[int, str]] = []
    lowered = f" {' '.join(re.findall(r'[a-z]+', text.lower()))} "
    # Longest phrases first, so 'teddy bear' is not also a bear.
    for word in sorted(words(), key=len, reverse=True):
        at = lowered.find(f" {word} ")
        if at >= 0:
            found.append((at, words()[word]))
            if (ridden := WITH_PERSON.get(word) or _WITH_PERSON_PLURAL.get(word)):
                found.append((at + 0.5, ridden))
            lowered = lowered.replace(f" {word} ", " " + "_" * len(word) + " ")
    if found and _RIDES.search(lowered):  # someone riding or driving the kind named
        found.append((found[0][0] - 0.5, "person"))
    return list(dict.fromkeys(kind for _, kind in sorted(found)))
