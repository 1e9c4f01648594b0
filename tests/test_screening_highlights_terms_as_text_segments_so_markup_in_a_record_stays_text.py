"""The screen page highlights a session's include and exclude terms in a record's title and
abstract from [text, kind] segments the page builds as text nodes: markup in a record is never
parsed, and a term matches whole words, case-insensitively, the longest first."""

from __future__ import annotations

from screening.highlight import highlight_segments, terms_clean


def test_segments_cover_the_text_and_mark_whole_terms() -> None:
    text = "Heart failure & <b>heart</b> tumours: a case report (Case-Report)"
    segments = highlight_segments(text=text, include=["heart failure", "heart"],
                                  exclude=["case report", "tumour"])
    assert "".join(s for s, _ in segments) == text
    assert [s for s in segments if s[1]] == [
        ["Heart failure", "include"], ["heart", "include"], ["case report", "exclude"]]
    # "tumour" is not a word of "tumours"; markup stays characters in a plain segment.
    assert ["</b> tumours: a ", ""] in segments


def test_terms_that_are_markup_or_regex_match_as_plain_text() -> None:
    text = 'x <img src=x onerror="alert(1)"> (a+b) a.b'
    segments = highlight_segments(text=text, include=["<img", "(a+b)"], exclude=["a.b"])
    assert [s for s in segments if s[1]] == [["<img", "include"], ["(a+b)", "include"],
                                             ["a.b", "exclude"]]
    assert "".join(s for s, _ in segments) == text
    assert highlight_segments(text="", include=["x"], exclude=[]) == []
    assert highlight_segments(text="plain", include=[], exclude=[]) == [["plain", ""]]


def test_term_lists_are_cleaned() -> None:
    assert terms_clean("Tumour, cohort\n tumour \n\n;  heart   failure") == [
        "Tumour", "cohort", "heart failure"]
    assert terms_clean(["a", "A", " "]) == ["a"]
