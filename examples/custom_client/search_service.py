"""A tiny recipe-search service, standing in for the system under test.

Three versions of one ranker: ``v1`` (the baseline: title words only), ``v2``
(the candidate: title and body, light stemming, a few synonyms) and ``v3``
(a regression: v2 with a bug that drops the best match).  They are served
through a real ``HttpTarget`` whose ``httpx`` client talks to the service
in-process, so the example runs the real HTTP client code with no network.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import httpx

from evalkit.targets.http import HttpTarget

DOCS: dict[str, tuple[str, str]] = {
    "carbonara": ("Spaghetti carbonara", "pasta with egg yolk, pecorino, guanciale and pepper"),
    "cacio-e-pepe": ("Cacio e pepe", "pasta with pecorino cheese and black pepper"),
    "amatriciana": ("Bucatini all'amatriciana", "pasta in tomato sauce with guanciale"),
    "pesto": ("Trofie al pesto", "pasta with basil pesto, pine nuts and parmesan"),
    "lasagne": ("Lasagne bolognese", "baked pasta sheets with beef ragu and bechamel"),
    "risotto-funghi": ("Risotto ai funghi", "arborio rice cooked with mushrooms and parmesan"),
    "risotto-milanese": ("Risotto alla milanese", "saffron rice with butter and parmesan"),
    "minestrone": ("Minestrone", "vegetable soup with beans, pasta and tomato"),
    "ribollita": ("Ribollita", "tuscan bread soup with cannellini beans and kale"),
    "tiramisu": ("Tiramisu", "coffee soaked ladyfingers with mascarpone cream and cocoa"),
    "panna-cotta": ("Panna cotta", "set cream dessert with vanilla and berry sauce"),
    "focaccia": ("Focaccia genovese", "olive oil flatbread with sea salt and rosemary"),
    "pizza-margherita": ("Pizza margherita", "tomato, mozzarella and basil on a thin crust"),
    "bruschetta": ("Bruschetta", "toasted bread with tomato, garlic and basil"),
    "caprese": ("Insalata caprese", "tomato and mozzarella salad with basil and olive oil"),
    "ossobuco": ("Ossobuco", "braised veal shanks with gremolata, served with saffron rice"),
    "saltimbocca": ("Saltimbocca", "veal cutlets with sage and prosciutto in white wine"),
    "polenta": ("Polenta", "creamy cornmeal porridge with butter and parmesan"),
    "arancini": ("Arancini", "fried rice balls stuffed with ragu and mozzarella"),
    "gelato-pistachio": ("Pistachio gelato", "ice cream made with sicilian pistachios"),
    "cannoli": ("Cannoli", "fried pastry tubes filled with sweet ricotta"),
    "gnocchi": ("Potato gnocchi", "soft potato dumplings with butter and sage"),
    "vitello-tonnato": ("Vitello tonnato", "cold sliced veal with tuna caper sauce"),
    "frittata": ("Frittata", "baked egg omelette with vegetables and cheese"),
}

SYNONYMS = {
    "noodles": "pasta",
    "spaghetti": "pasta",
    "cheese": "parmesan",
    "dessert": "cream",
    "sweet": "cream",
    "soup": "soup",
    "bread": "bread",
    "veal": "veal",
    "mushroom": "mushrooms",
    "ice": "gelato",
}

Ranker = Callable[[str], list[str]]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("s") else word


def rank_v1(query: str) -> list[str]:
    """Baseline: how many query words appear in the title or the body."""
    q = _words(query)
    scored = [(len(q & _words(f"{t} {b}")), doc) for doc, (t, b) in DOCS.items()]
    return [doc for score, doc in sorted(scored, key=lambda s: (-s[0], s[1])) if score > 0][:10]


def rank_v2(query: str) -> list[str]:
    """Candidate: title and body, stemmed, with synonyms; title matches weigh double."""
    q = {_stem(SYNONYMS.get(w, w)) for w in _words(query)}
    scored = []
    for doc, (title, body) in DOCS.items():
        t = {_stem(w) for w in _words(title)}
        b = {_stem(w) for w in _words(body)}
        scored.append((2 * len(q & t) + len(q & b), doc))
    return [doc for score, doc in sorted(scored, key=lambda s: (-s[0], s[1])) if score > 0][:10]


def rank_v3(query: str) -> list[str]:
    """A regression: v2 with a bug that pushes the best match to the bottom."""
    ranked = rank_v2(query)
    return ranked[1:] + ranked[:1]


RANKERS: dict[str, Ranker] = {"v1": rank_v1, "v2": rank_v2, "v3": rank_v3}


def in_process_client(ranker: Ranker) -> httpx.Client:
    """An httpx client whose transport answers like the real service would."""

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        hits = [{"id": doc, "title": DOCS[doc][0]} for doc in ranker(body["q"])]
        return httpx.Response(200, json={"results": hits, "cost_usd": 0.0001})

    return httpx.Client(transport=httpx.MockTransport(handle), base_url="http://search.local")


def make_target(version: str = "v2") -> HttpTarget:
    """Factory named by evalkit.yaml's ``target.python``."""
    if version not in RANKERS:
        raise ValueError(f"unknown version {version!r}; choose one of {sorted(RANKERS)}")
    return HttpTarget(
        url="http://search.local/api/search",
        name=f"recipes-{version}",
        build_payload=lambda case: {"q": case.query, "k": 10},
        extract=lambda body: [hit["id"] for hit in body["results"]],
        client=in_process_client(RANKERS[version]),
        meta_keys=("cost_usd",),
    )
