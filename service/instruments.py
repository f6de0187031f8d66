"""The instruments file: per account, the rotation of symbols it trades.

[accounts.alpha]
symbols = ["SPY", "QQQ"]
"""

from __future__ import annotations

import re
from collections import Counter

from pydantic import Field, field_validator

from service.config_values import Frozen
from service.types import Symbol

# Exchange tickers, share classes (BRK.B) and crypto pairs (BTC/USD). Used with fullmatch:
# `$` would also match before a final newline ("IWM\n").
SYMBOL_RE = re.compile(r"[A-Z][A-Z0-9]{0,9}([./][A-Z0-9]{1,5})?")
MAX_SYMBOLS_PER_ACCOUNT = 2000


class AccountInstruments(Frozen):
    # strict=False: a TOML array arrives as a list.
    symbols: tuple[Symbol, ...] = Field(
        min_length=1, max_length=MAX_SYMBOLS_PER_ACCOUNT, strict=False
    )

    @field_validator("symbols")
    @classmethod
    def _well_formed_and_unique(cls, symbols: tuple[Symbol, ...]) -> tuple[Symbol, ...]:
        bad = [s for s in symbols if not SYMBOL_RE.fullmatch(s)]
        if bad:
            raise ValueError(
                f"malformed symbol(s) {', '.join(map(repr, bad))}: use upper-case tickers "
                "such as SPY, BRK.B or BTC/USD"
            )
        repeated = sorted(s for s, n in Counter(symbols).items() if n > 1)
        if repeated:
            raise ValueError(f"symbol(s) listed twice: {', '.join(repeated)}")
        return symbols


class InstrumentsFile(Frozen):
    accounts: dict[str, AccountInstruments] = Field(min_length=1, max_length=1000)

    def symbols(self, account: str) -> tuple[Symbol, ...]:
        return self.accounts[account].symbols
