"""WGSL: one lane's sums over time, added across its workgroup in one tree.

Each thread of a scan kernel (shaders/hmm_scan.py) holds its chunk's log likelihood and
gradient sums (hmm.py's `Sums`) in the accumulator `Acc`; they are packed into one array,
so the whole set takes log2(LT) rounds of barriers rather than that many per sum. Where a
lane's threads are one subgroup the rounds are shuffles (shaders/scan_rounds.py says why),
written out with constant indices: the same tree, thread j adding thread j + d's partial
sums in the same order.
"""

from __future__ import annotations

_TOTALS = """
const NV: u32 = 1u + 2u * K + K * K;  // ll, gz [K], gzz [K], n [K, K]
alias Totals = array<Acc, NV>;
"""

_WORKGROUP_REDUCE = """
var<workgroup> red: array<Totals, LT>;

// Every thread's sums added over the workgroup in one tree (thread 0 gets the totals).
fn reduce(mine: Totals, j: u32) -> Totals {
    red[j] = mine;
    workgroupBarrier();
    for (var d = LT / 2u; d > 0u; d >>= 1u) {
        if (j < d) {
            for (var i = 0u; i < NV; i++) { red[j][i] = acc_sum(red[j][i], red[j + d][i]); }
        }
        workgroupBarrier();
    }
    let total = red[0];
    workgroupBarrier();
    return total;
}
"""

_SUBGROUP_REDUCE = """
// Every thread's sums added over the subgroup in one tree: thread 0's are the totals
// (the others hold partial sums; every caller reads thread 0's). Written out round by
// round and sum by sum, constant indices: on the H200 a warm batch of 1,072 lanes took
// 8.7 ms written out against 9.6 as two loops (docs/benchmarks.md, twenty-sixth session).
fn reduce(mine: Totals, j: u32) -> Totals {
    var t = mine;
{ROUNDS}
    return t;
}
"""


def _subgroup_reduce(K: int, lane_threads: int) -> str:
    """The tree's rounds d = LT/2 .. 1, each over the 1 + 2K + K^2 sums."""
    sums = 1 + 2 * K + K * K
    rounds, d = [], lane_threads // 2
    while d:
        rounds += [f"    t[{i}] = acc_sum(t[{i}], subgroupShuffleDown(t[{i}], {d}u));"
                   for i in range(sums)]  # fmt: skip
        d //= 2
    return _SUBGROUP_REDUCE.replace("{ROUNDS}", "\n".join(rounds))


_PACKING = """
fn pack(ll: Acc, s: Sums) -> Totals {
    var v: Totals;
    v[0] = ll;
    for (var k = 0u; k < K; k++) {
        v[1u + k] = s.gz[k];
        v[1u + K + k] = s.gzz[k];
        for (var i = 0u; i < K; i++) { v[1u + 2u * K + k * K + i] = s.n[k][i]; }
    }
    return v;
}

fn unpack(v: Totals) -> Sums {
    var s: Sums;
    for (var k = 0u; k < K; k++) {
        s.gz[k] = v[1u + k];
        s.gzz[k] = v[1u + K + k];
        for (var i = 0u; i < K; i++) { s.n[k][i] = v[1u + 2u * K + k * K + i]; }
    }
    return s;
}
"""


def workgroup_sums(subgroups: bool, K: int, lane_threads: int) -> str:
    """`reduce`, `pack` and `unpack` for the scan kernels' sums; the subgroup tree is
    written for K states and lanes of `lane_threads` threads."""
    reduce = _subgroup_reduce(K, lane_threads) if subgroups else _WORKGROUP_REDUCE
    return _TOTALS + reduce + _PACKING
