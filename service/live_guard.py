"""Refuse every URL that could reach Alpaca's LIVE trading API: this service trades paper.

Comparing strings let `https://api.alpaca.markets./` through. Parsers also disagree about
where a host starts and ends (`https://api.alpaca.markets\\@paper-api.alpaca.markets` is
the paper host to urllib and the live one to requests), so no single parser is trusted:
every stretch of the URL between delimiters is taken as a candidate host, after undoing
percent-encoding and applying IDNA's mapping (case, full-width letters, ideographic dots,
invisible characters), and trailing dots are dropped. Any candidate under alpaca.markets
that is not a paper or market-data host is refused. An IP address cannot be checked
without DNS, which configuration parsing does not do.
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
from collections.abc import Iterator
from urllib.parse import unquote

import idna

ALPACA_DOMAIN = "alpaca.markets"
NOT_LIVE = frozenset({"paper-api.alpaca.markets", "data.alpaca.markets",
                      "data.sandbox.alpaca.markets"})
_DELIMITERS = re.compile(r"[\s/\\@?#:\[\];,]+")  # what may end a host, to any URL parser
_DOTS = re.compile(r"[.\u3002\uff0e\uff61]+")  # IDNA's four full stops, runs collapsed
_UNQUOTE_ROUNDS = 5  # %252E is %2E is '.': undo nested encodings, boundedly


def refuse_live(url: str | None) -> str | None:
    """`url`, or ValueError when it names a host of Alpaca's live trading API."""
    if url is None:
        return None
    host = live_host_in(url)
    if host is not None:
        raise ValueError(
            f"url_override {url!r} is Alpaca's LIVE trading endpoint (host {host!r}); this "
            "service trades paper accounts only: remove url_override to use the paper "
            "endpoint (paper-api.alpaca.markets)")
    return url


def live_host_in(url: str) -> str | None:
    """The first live Alpaca host the URL could reach, normalised; None if there is none."""
    for candidate in _candidates(url):
        host = normalise_host(candidate)
        if is_live(host):
            return host
    return None


def is_live(host: str) -> bool:
    under_alpaca = host == ALPACA_DOMAIN or host.endswith("." + ALPACA_DOMAIN)
    return under_alpaca and host not in NOT_LIVE


def normalise_host(text: str) -> str:
    """Lower case, IDNA-mapped, punycode decoded, no empty labels or trailing dot."""
    text = unicodedata.normalize("NFKC", text)
    # a character IDNA disallows cannot be in a host requests would reach: keep the text
    with contextlib.suppress(idna.IDNAError):
        text = idna.uts46_remap(text, std3_rules=False, transitional=False)
    labels = [_decode_label(label) for label in _DOTS.split(text.casefold()) if label]
    return ".".join(labels)


def _decode_label(label: str) -> str:
    if not label.startswith("xn--"):
        return label
    try:
        return label[4:].encode("ascii").decode("punycode").casefold()
    except (UnicodeError, ValueError):
        return label  # not valid punycode: compared as written


def _candidates(url: str) -> Iterator[str]:
    text = url
    for _ in range(_UNQUOTE_ROUNDS):
        text, previous = unquote(text), text
        if text == previous:
            break
    yield from _DELIMITERS.split(text)
