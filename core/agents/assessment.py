"""The agent's self-assessment, read strictly: a stated value, an unambiguous synonym, or "missing".

The deadlock taxonomy splits unrecovered deadlocks into Aware ("stuck") and Unaware ("progressing"),
so a guess here would move numbers toward one class. A reply that gives no self-assessment, or one
that cannot be read with confidence ("progressing but maybe stuck", "probably", a number), is
"missing" and is left for a human label.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

PROGRESSING, STUCK, UNSURE, MISSING = "progressing", "stuck", "unsure", "missing"
STATED_ASSESSMENTS = (PROGRESSING, STUCK, UNSURE)   # what the prompt asks the model to say
SELF_ASSESSMENTS = (*STATED_ASSESSMENTS, MISSING)   # what a Decision may carry

# Physical terms, as the prompt defines the assessment: am I actually moving, or blocked?
_SYNONYMS = {
    PROGRESSING: ["progressing", "progress", "making progress", "progressed", "moving", "moving freely",
                  "advancing", "not stuck", "not blocked", "unblocked"],
    STUCK: ["stuck", "blocked", "not moving", "not progressing", "no progress", "making no progress",
            "deadlocked", "deadlock", "obstructed", "trapped", "stalled", "immobile", "cannot move", "can't move"],
    UNSURE: ["unsure", "uncertain", "not sure", "unclear", "unknown", "don't know", "dont know", "not certain"],
}
_EXACT = {value: value for value in STATED_ASSESSMENTS}
_PHRASES = {phrase: value for value, phrases in _SYNONYMS.items() for phrase in phrases}
_LEADING = re.compile(r"^(?:i am|i'm|im|we are|i|currently|still)\s+")
# A known phrase, then nothing or an explanation after a clear break: "stuck - a fence is in the way".
_ANY_PHRASE = "|".join(sorted((re.escape(p) for p in _PHRASES), key=len, reverse=True))
_PHRASE_THEN_BREAK = re.compile(r"(" + _ANY_PHRASE + r")\s*(?:$|\(|[-–—:;,.]\s)")
_PHRASE_IN_TEXT = re.compile(r"\b(" + _ANY_PHRASE + r")\b")
_HEDGE = re.compile(r"\b(?:maybe|might|possibly|perhaps|probably|likely|or not)\b")
_KEYS = {"selfassessment", "selfassesment", "assessment", "progressassessment", "selfevaluation",
         "selfassessmentstatus"}


def read_assessment(value: Any) -> str:
    """One of SELF_ASSESSMENTS for a stated value; MISSING when it is absent or not clearly one of them."""
    if not isinstance(value, str):
        return MISSING
    if value in _EXACT:
        return _EXACT[value]
    text = re.sub(r"[*_`\"]+", "", value).strip().strip("'\u2018\u2019").replace("\u2019", "'").strip().lower()
    text = _LEADING.sub("", re.sub(r"\s+", " ", text), count=1).rstrip(".! ")
    if text in _PHRASES:
        return _PHRASES[text]
    match = _PHRASE_THEN_BREAK.match(text + " ")
    if match is None:
        return MISSING
    stated, explanation = _PHRASES[match.group(1)], text[match.end():]
    # "stuck - or maybe just slow", "progressing (not stuck? unsure)": a hedge is not a statement.
    if _HEDGE.search(explanation) or any(_PHRASES[m.group(1)] != stated
                                         for m in _PHRASE_IN_TEXT.finditer(explanation)):
        return MISSING
    return stated


@functools.lru_cache(maxsize=1024)
def _key(key: str) -> str:
    return re.sub(r"[\s_\-]+", "", key.lower())


def assessment_field(fields: Mapping[str, Any]) -> tuple[bool, Any]:
    """(whether the object has a self-assessment field, its value)."""
    for key, value in fields.items():
        if _key(str(key)) in _KEYS:
            return True, value
    return False, None
