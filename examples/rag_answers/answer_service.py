"""A tiny offline question-answering service over a few passages, standing in for a RAG system.

It retrieves the passage that shares the most words with the question and answers
from it.  Three versions:

* ``v1`` (the baseline) answers with the passage's whole first sentence;
* ``v2`` (the candidate) answers with the one fact asked for and cites the passage,
  ``1889 [eiffel]``;
* ``v3`` (a regression) is v2 with two bugs: it answers "when" questions from the
  second-best passage, and it writes the citation as ``(source: eiffel)``.

Everything is deterministic and in-process: no network, no model.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from evalkit import CallableTarget, GoldenCase

# passage id -> (text, the facts a question can ask for)
PASSAGES: dict[str, tuple[str, dict[str, str]]] = {
    "eiffel": (
        "The Eiffel Tower in Paris was designed by Gustave Eiffel's company and opened "
        "in 1889. It is 330 metres tall.",
        {"when": "1889", "who": "Gustave Eiffel", "where": "Paris", "height": "330 metres"},
    ),
    "colosseum": (
        "The Colosseum in Rome was completed in 80 AD under the emperor Titus. It could "
        "hold about 50,000 spectators.",
        {"when": "80 AD", "who": "Titus", "where": "Rome", "capacity": "50,000 spectators"},
    ),
    "big-ben": (
        "Big Ben is the great bell of the clock tower at the Palace of Westminster in "
        "London, completed in 1859.",
        {"when": "1859", "where": "London"},
    ),
    "sagrada": (
        "The Sagrada Familia basilica in Barcelona was designed by Antoni Gaudi; its "
        "construction began in 1882.",
        {"when": "1882", "who": "Antoni Gaudi", "where": "Barcelona"},
    ),
    "opera-house": (
        "The Sydney Opera House, designed by the architect Jorn Utzon, opened in 1973.",
        {"when": "1973", "who": "Jorn Utzon", "where": "Sydney"},
    ),
    "liberty": (
        "The Statue of Liberty in New York was designed by Frederic Bartholdi and "
        "dedicated in 1886. It is 93 metres tall.",
        {"when": "1886", "who": "Frederic Bartholdi", "where": "New York", "height": "93 metres"},
    ),
    "taj-mahal": (
        "The Taj Mahal mausoleum in Agra was commissioned by the emperor Shah Jahan and "
        "completed in 1653.",
        {"when": "1653", "who": "Shah Jahan", "where": "Agra"},
    ),
    "burj": (
        "The Burj Khalifa skyscraper in Dubai opened in 2010 and is 828 metres tall.",
        {"when": "2010", "where": "Dubai", "height": "828 metres"},
    ),
    "golden-gate": (
        "The Golden Gate Bridge in San Francisco opened in 1937; its chief engineer was "
        "Joseph Strauss.",
        {"when": "1937", "who": "Joseph Strauss", "where": "San Francisco"},
    ),
    "parthenon": (
        "The Parthenon temple in Athens was designed by the architects Ictinus and "
        "Callicrates, and completed in 438 BC.",
        {"when": "438 BC", "who": "Ictinus and Callicrates", "where": "Athens"},
    ),
    "pisa": (
        "The Leaning Tower of Pisa, the bell tower of Pisa cathedral, was completed in "
        "1372 and is 56 metres tall.",
        {"when": "1372", "where": "Pisa", "height": "56 metres"},
    ),
    "redeemer": (
        "The Christ the Redeemer statue in Rio de Janeiro was completed in 1931 and is "
        "30 metres tall.",
        {"when": "1931", "where": "Rio de Janeiro", "height": "30 metres"},
    ),
}

# Question words that say nothing about which passage is meant.
STOPWORDS = frozenset(
    {"a", "an", "and", "by", "city", "did", "does", "how", "in", "is", "it", "its", "many"}
    | {"of", "tall", "the", "to", "was", "what", "when", "where", "which", "who", "year"}
)

Answerer = Callable[[str], str]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower())) - STOPWORDS


def retrieve(question: str) -> list[str]:
    """Passage ids by how many question words they share, best first (ties by id)."""
    q = _words(question)
    scored = sorted(PASSAGES, key=lambda doc: (-len(q & _words(PASSAGES[doc][0])), doc))
    return scored


def slot(question: str) -> str:
    """Which fact the question asks for."""
    text = question.lower()
    if "how tall" in text or "height" in text:
        return "height"
    if "how many" in text:
        return "capacity"
    if text.startswith("who") or "designed" in text or "engineer" in text:
        return "who"
    if text.startswith("where") or "which city" in text:
        return "where"
    return "when"


def answer_v1(question: str) -> str:
    text, _ = PASSAGES[retrieve(question)[0]]
    return text.split(". ")[0].rstrip(".") + "."


def answer_v2(question: str) -> str:
    doc = retrieve(question)[0]
    fact = PASSAGES[doc][1].get(slot(question), "I don't know")
    return f"{fact} [{doc}]"


def answer_v3(question: str) -> str:
    ranked = retrieve(question)
    wanted = slot(question)
    doc = ranked[1] if wanted == "when" else ranked[0]
    fact = PASSAGES[doc][1].get(wanted, "I don't know")
    return f"{fact} (source: {doc})"


ANSWERERS: dict[str, Answerer] = {"v1": answer_v1, "v2": answer_v2, "v3": answer_v3}


def make_target(version: str = "v2") -> CallableTarget:
    """Factory named by evalkit.yaml's ``target.python``."""
    if version not in ANSWERERS:
        raise ValueError(f"unknown version {version!r}; choose one of {sorted(ANSWERERS)}")
    answer = ANSWERERS[version]

    def respond(case: GoldenCase) -> str:
        return answer(case.query)

    return CallableTarget(respond, name=f"landmarks-qa-{version}")
