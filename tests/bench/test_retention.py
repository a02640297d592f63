import math

import pytest

from omlab.bench.scoring.retention import answer_retained, content_tokens, evidence_retained

CONTEXT = (
    "Date: May 7, 2023\n* (09:12) User's usual coffee order is a Flat White.\n"
    "* (09:15) User adopted kitten Ziggy; they painted mugs at a pottery class."
)


def test_phrase_containment_after_normalisation():
    assert answer_retained("flat white", CONTEXT)
    assert answer_retained("The Flat-White!", "usual order: the flatwhite")  # punctuation dropped
    assert not answer_retained("cat", "concatenate the strings")  # whole words only


def test_token_overlap_threshold():
    # tokens {7, may, 2023} all present though in another order
    assert answer_retained("7 May 2023", CONTEXT)
    # {blue, ceram, mug}: only "mug" is there -> 1/3
    assert not answer_retained("blue ceramic mug", CONTEXT)
    # {mug, paint}: stems match "painted mugs" -> 2/2
    assert answer_retained("mug painting", CONTEXT)
    # {pottery->potteri, class, ziggi}: 3/3; {ziggi, cello}: 1/2 -> only with threshold 0.5
    assert answer_retained("Ziggy's pottery class", CONTEXT)
    assert not answer_retained("Ziggy cello", CONTEXT)
    assert answer_retained("Ziggy cello", CONTEXT, threshold=0.5)


def test_empty_answer_is_never_retained():
    assert not answer_retained("", CONTEXT)
    assert not answer_retained("the", CONTEXT)


def test_content_tokens_drop_stopwords_unless_nothing_is_left():
    assert content_tokens("I adopted a kitten named Ziggy") == {"adopt", "kitten", "name", "ziggi"}
    assert content_tokens("what is it") == {"what", "is", "it"}


def test_evidence_retained_hand_computed():
    context = "User adopted kitten Ziggy"
    texts = [
        "I adopted a kitten named Ziggy",  # {adopt, kitten, name, ziggi}: 3/4 present
        "My sister lives in Graz",
    ]  # {sister, live, graz}: 0/3
    assert evidence_retained(texts, context) == pytest.approx((0.75 + 0.0) / 2)
    assert evidence_retained(texts, context, threshold=0.5) == pytest.approx(0.5)
    assert evidence_retained(texts, context, threshold=0.8) == 0.0
    assert evidence_retained(texts[:1], context) == pytest.approx(0.75)


def test_evidence_retained_nothing_to_measure_is_nan():
    assert math.isnan(evidence_retained([], CONTEXT))
    assert math.isnan(evidence_retained(["", "!!"], CONTEXT))


@pytest.mark.parametrize("threshold", [0.0, 1.5, -1])
def test_threshold_is_validated(threshold):
    with pytest.raises(ValueError, match="threshold"):
        answer_retained("x", "x", threshold=threshold)
    with pytest.raises(ValueError, match="threshold"):
        evidence_retained(["x"], "x", threshold=threshold)
