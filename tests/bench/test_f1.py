import pytest
from hypothesis import given
from hypothesis import strategies as st

from omlab.bench.scoring.f1 import (
    answer_tokens,
    locomo_f1,
    mentions_no_information,
    multi_answer_f1,
    normalize_answer,
    token_f1,
)
from omlab.bench.scoring.porter import porter_stem

NLTK_HOWTO = {  # nltk.org/howto/stem.html, PorterStemmer() default mode
    "caresses": "caress",
    "flies": "fli",
    "dies": "die",
    "mules": "mule",
    "denied": "deni",
    "died": "die",
    "agreed": "agre",
    "owned": "own",
    "humbled": "humbl",
    "sized": "size",
    "meeting": "meet",
    "stating": "state",
    "siezing": "siez",
    "itemization": "item",
    "sensational": "sensat",
    "traditional": "tradit",
    "reference": "refer",
    "colonizer": "colon",
    "plotted": "plot",
}
PORTER_PAPER = {  # examples from Porter (1980), plus NLTK's documented departures
    "ponies": "poni",
    "ties": "tie",
    "cats": "cat",
    "feed": "feed",
    "plastered": "plaster",
    "bled": "bled",
    "motoring": "motor",
    "sing": "sing",
    "conflated": "conflat",
    "troubled": "troubl",
    "hopping": "hop",
    "falling": "fall",
    "hissing": "hiss",
    "fizzed": "fizz",
    "failing": "fail",
    "filing": "file",
    "happy": "happi",
    "sky": "sky",
    "enjoy": "enjoy",
    "generously": "gener",
    "relational": "relat",
    "conditional": "condit",
    "oscillators": "oscil",
    "electrical": "electr",
    "hopefulness": "hope",
    "feudalism": "feudal",
    "dying": "die",
    "is": "is",
    "was": "wa",
    "running": "run",
    "Running": "run",
    "geology": "geolog",
}


@pytest.mark.parametrize("word, stem", sorted({**NLTK_HOWTO, **PORTER_PAPER}.items()))
def test_porter_stem_matches_nltk(word, stem):
    assert porter_stem(word) == stem


@pytest.mark.parametrize(
    "text, normalised",
    [
        ("The cat, and a dog!", "cat dog"),
        ("An apple-pie; the END.", "applepie end"),
        ("Anderson and Band", "anderson band"),  # only whole words are dropped
        ("  7 May,   2023 ", "7 may 2023"),
        ("", ""),
    ],
)
def test_normalize_answer(text, normalised):
    assert normalize_answer(text) == normalised


def test_token_f1_hand_computed():
    # pred: she went to pari in may (6) / gold: pari may 2023 (3) / overlap 2
    assert token_f1("She went to Paris in May", "Paris, May 2023") == pytest.approx(4 / 9)
    # stemming: running -> run, marathons -> marathon; "ran" stays: overlap 1 of 2 and 2
    assert token_f1("running marathons", "ran a marathon") == pytest.approx(0.5)
    # multiset overlap: "ye" twice predicted, once expected -> P 1/3, R 1
    assert token_f1("yes yes no", "yes") == pytest.approx(0.5)
    assert token_f1("Paris", "paris!") == 1.0
    assert answer_tokens("The Running, and Jumping") == ["run", "jump"]


def test_token_f1_empty_is_zero():
    assert token_f1("", "Paris") == 0.0
    assert token_f1("the a an", "Paris") == 0.0
    assert token_f1("", "") == 0.0


def test_multi_hop_splits_on_commas():
    # gold parts: "ceramics" (best 0) and "running" (pred [run, potteri] vs [run]: P 1/2, R 1 -> 2/3)
    assert multi_answer_f1("running and pottery", "ceramics, running") == pytest.approx(1 / 3)
    assert multi_answer_f1("pottery, running", "ceramics, running") == pytest.approx(0.5)
    assert locomo_f1("pottery, running", "ceramics, running", 1) == pytest.approx(0.5)
    assert locomo_f1("running, ceramics", "ceramics, running", 1) == 1.0


def test_category_3_keeps_the_gold_before_the_semicolon():
    gold = "Likely yes; she does ceramics"
    assert locomo_f1("likely yes", gold, 3) == 1.0
    # without the cut: pred [like, ye] vs gold [like, ye, she, doe, ceram]: P 1, R 2/5
    assert token_f1("likely yes", gold) == pytest.approx(4 / 7)


def test_categories_2_and_4_are_plain_token_f1():
    assert locomo_f1("She went to Paris in May", "Paris, May 2023", 2) == pytest.approx(4 / 9)
    assert locomo_f1("She went to Paris in May", "Paris, May 2023", 4) == pytest.approx(4 / 9)


@pytest.mark.parametrize(
    "prediction, score",
    [
        ("Not mentioned in the conversation", 1.0),
        ("(a) No information available.", 1.0),
        ("That is NOT MENTIONED anywhere", 1.0),
        ("It was never mentioned.", 0.0),
        ("Pico", 0.0),
        ("", 0.0),
    ],
)
def test_category_5_phrase_check_ignores_the_gold(prediction, score):
    assert locomo_f1(prediction, "Pico", 5) == score
    assert mentions_no_information(prediction) == bool(score)


def test_unknown_category():
    with pytest.raises(ValueError, match="1-5"):
        locomo_f1("a", "a", 6)


words = st.lists(
    st.sampled_from(["cat", "dogs", "ran", "running", "the", "and", "Paris", "May", "2023", "blue", "mugs", ","]),
    max_size=8,
).map(" ".join)


@given(words, words)
def test_f1_is_bounded_and_symmetric(prediction, gold):
    score = token_f1(prediction, gold)
    assert 0.0 <= score <= 1.0
    assert score == pytest.approx(token_f1(gold, prediction))


@given(words)
def test_f1_of_an_answer_with_itself_is_one(text):
    assert token_f1(text, text) == (1.0 if answer_tokens(text) else 0.0)
