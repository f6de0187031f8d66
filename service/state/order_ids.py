"""Client order ids that never repeat for an account, even across database resets.

Every database gets a random epoch when it is created; it is part of every id it makes:
`rt-<epoch>-<account part>-<seq>-<symbol>`. An epoch always starts with a digit and an
account name with a letter, so an id of this form can never be mistaken for one of the
previous release's `rt-<account>-<seq>-<symbol>`. Those stay ours only in the database
that made them (`legacy`): a database moved aside takes its epoch with it, and its orders
become foreign to the one that replaces it.

Budget (48 characters): 'rt-' + epoch (6) + '-' + account part (<= 9) + '-' + seq
(<= 10 digits) + '-' + symbol (<= 17, see service.strategy.client_order_id).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import string
from dataclasses import dataclass

EPOCH_RE = re.compile(r"^[0-9][0-9a-z]{5}$")
ACCOUNT_PART_MAX = 9
_DIGEST_CHARS = 6  # a long account keeps its first 2 characters, then '_' and a digest


def new_epoch() -> str:
    """6 base-36 characters, the first a digit (about 6e8 values)."""
    alphabet = string.digits + string.ascii_lowercase
    return secrets.choice(string.digits) + "".join(secrets.choice(alphabet) for _ in range(5))


def account_part(account: str) -> str:
    """The account as it appears in an id: itself when short, else a stable digest form."""
    if len(account) <= ACCOUNT_PART_MAX:
        return account
    digest = hashlib.blake2b(account.encode(), digest_size=8).hexdigest()[:_DIGEST_CHARS]
    return f"{account[:2]}_{digest}"


@dataclass(frozen=True)
class OrderIds:
    account: str
    epoch: str
    legacy: bool = False  # the database predates epochs: `rt-<account>-...` ids are ours

    @property
    def tag(self) -> str:
        """What follows 'rt-' in every id this database makes (service.strategy adds it)."""
        return f"{self.epoch}-{account_part(self.account)}"

    def update_of(self, cid: str) -> int:
        """The update (seq) a client_order_id of this database was made in; 0 if it is not
        one of ours (another account, another epoch, placed by hand)."""
        for prefix in self._prefixes():
            if cid.startswith(prefix):
                seq = cid[len(prefix):].split("-", 1)[0]
                return int(seq) if seq.isdigit() else 0
        return 0

    def owns(self, cid: str) -> bool:
        return self.update_of(cid) > 0

    def _prefixes(self) -> tuple[str, ...]:
        current = f"rt-{self.tag}-"
        return (current, f"rt-{self.account}-") if self.legacy else (current,)
