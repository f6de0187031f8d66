"""Which of the instruments the gate sent to the bar's sampler the probes had found at risk
(thirty-fourth session): `python docs/bench-results/diag_sends.py FILE`, FILE the JSON
lines that diag-sends34.patch makes the worker append to /tmp/diag34.jsonl (applied with
`patch -p1` to a `git archive` tree of the at-risk commit, then the trial round:
`bench round --accounts 5 --instruments 268 --chains 4 --window 256 --states 2 --bars 6
--pace-s 20 --lead-s 45 --backend auto`). Prints each send: its bar, symbol, the
weights' share, and, if its last sample was run on as at risk, that run's errors as
shares of the gate (P(turbulent), predictive sd) and its verdict."""

import json
import sys
from pathlib import Path

events = [json.loads(line) for line in Path(sys.argv[1]).read_text().splitlines()]
risky = {(e["seq"], s): (round(p, 2), round(v, 2), c)
         for e in events if e["k"] == "risky"
         for s, p, v, c in zip(e["risky"], e["p_mcse"], e["v_mcse"], e["conv"], strict=True)}
sent = [(e["seq"], s, e["share"][s]) for e in events if e["k"] == "sent" for s in e["gate"]]
print("flagged at risk, in all:", sum(1 for e in events if e["k"] == "risky" for _ in e["risky"]))
for seq, symbol, share in sent:
    print(seq, symbol, round(share, 2), risky.get((seq - 1, symbol), "-"))
print("sent:", len(sent), "of them flagged:", sum((q - 1, s) in risky for q, s, _ in sent))
