"""Which instruments the bar still sent to its sampler, and why (thirty-fifth session):
`python docs/bench-results/diag_sends35.py FILE`, FILE the JSON lines that
diag-sends35.patch makes the worker append to /tmp/diag35.jsonl (applied with `patch -p1`
to a `git archive` tree of 27cad4b, then one trial round there: `bench round --accounts 5
--instruments 268 --chains 4 --window 256 --states 2 --bars 6 --pace-s 20 --lead-s 45
--backend auto`). Prints each send: its bar, symbol, reason, the weights' share, its
reweighted errors as shares of the gate (P(turbulent), predictive sd), its sample's own,
the bar's return in predictive sds from the sample's mean (z), the sample's chains, and,
if that sample was run on as at risk, its margin, errors and chains, and `still` where the
probes found it at risk after the run on."""

import json
import sys
from pathlib import Path

events = [json.loads(line) for line in Path(sys.argv[1]).read_text().splitlines()]
risky, still = {}, set()
for e in events:
    if e["k"] == "risky":
        for s, m, p, v, c in zip(e["risky"], e["margin"], e["p"], e["v"], e["chains"],
                                 strict=True):  # fmt: skip
            risky[(e["seq"], s)] = (m, round(p, 2), round(v, 2), c)
        still |= {(e["seq"], s) for s in e["still"] if (e["seq"], s) in risky}
sent = [(e["seq"], r) for e in events if e["k"] == "sent" for r in e["sent"]]
for seq, r in sent:
    key = (r.get("kept_seq"), r["symbol"])
    print(seq, r["symbol"], "gate" if r["gate"] else "weights", "share", round(r["share"], 2),
          "bar p,v", round(r["p"], 2), round(r["v"], 2), "own", round(r.get("own_p", -1), 2),
          round(r.get("own_v", -1), 2), "z", round(r.get("z", 0), 2), "chains",
          r.get("chains"), "risk", risky.get(key, "-"), "still" if key in still else "")
print("sent", len(sent), "at risk in all", len(risky), "still at risk after the run on",
      len(still))
