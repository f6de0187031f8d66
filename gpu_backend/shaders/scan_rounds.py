"""WGSL: the scan kernels' rounds across a lane's threads, through workgroup memory or
through a subgroup's shuffles.

shaders/hmm_scan.py joins its threads' chunk matrices by a Hillis-Steele scan each way
and adds their sums in one tree (shaders/workgroup_sums.py). Through workgroup memory
every round is a store, a barrier, a load and a barrier, and each lane's workgroup holds
two arrays of LT matrices and one of LT sum sets besides its window: at K = 2 and T = 256,
3.3 KB of the 4.4 KB a lane's workgroup holds. On the H200 that memory bounded how many
lanes ran at once: a warm batch's time stepped in waves of about 11 lanes per
multiprocessor, and 4 KB more per lane slowed 3,960 lanes from 24 to 40 ms.

Where a lane's threads are exactly one subgroup (the adapter's subgroup size equals LT:
32 on NVIDIA), each round is a shuffle instead: thread j reads thread j - d's (or j + d's)
value in registers, no memory and no barrier. The arithmetic is the same, term for term
and in the same order: thread j combines the same two values in each round as through
workgroup memory, so the messages and the sums are the same numbers. Measured on the H200
(docs/benchmarks.md, twenty-sixth session): the waves are gone, the time where the GPU is
full is not (3,960 lanes 26.9 against 25.1 ms: residency was not what bounds it there),
the trial round's warm p50 is unchanged and its cold round 1.1-1.3 s against 1.3-1.7.
"""

from __future__ import annotations

WORKGROUP_ROUNDS = """
var<workgroup> mats: array<SM, LT>;
var<workgroup> mats_after: array<SM, LT>;

// The filtered message at the bar before thread j's chunk (uniform for the first chunk).
fn prefix_start(own: SM, j: u32) -> SV {
    mats[j] = own;
    workgroupBarrier();
    for (var d = 1u; d < LT; d <<= 1u) {
        var next = mats[j];
        if (j >= d) { next = scaled(mats[j - d] * next); }
        workgroupBarrier();
        mats[j] = next;
        workgroupBarrier();
    }
    let u = message_before(j);
    workgroupBarrier();
    return u;
}

fn message_before(j: u32) -> SV {
    var u = SV(1.0);
    if (j > 0u) { u = u * mats[j - 1u]; }
    return u / dot(u, SV(1.0));
}

// prefix_start's message and the backward message at the last bar of thread j's chunk (up
// to scale), the two scans in one: each round's barriers serve both, and the two products
// are independent work for the thread (the prefix's arithmetic is prefix_start's).
fn scan_starts(own: SM, j: u32) -> Starts {
    mats[j] = own;
    mats_after[j] = own;
    workgroupBarrier();
    for (var d = 1u; d < LT; d <<= 1u) {
        var next = mats[j];
        if (j >= d) { next = scaled(mats[j - d] * next); }
        var next_after = mats_after[j];
        if (j + d < LT) { next_after = scaled(next_after * mats_after[j + d]); }
        workgroupBarrier();
        mats[j] = next;
        mats_after[j] = next_after;
        workgroupBarrier();
    }
    var b = SV(1.0);
    if (j + 1u < LT) { b = mats_after[j + 1u] * b; }
    let starts = Starts(message_before(j), b / vmax(b));
    workgroupBarrier();
    return starts;
}
"""

SUBGROUP_ROUNDS = """
// Thread j - d's (j + d's) matrix, a column at a time; undefined past the subgroup's ends,
// where the rounds below do not use it. Every thread calls these (uniform control flow).
fn shuffle_up(m: SM, d: u32) -> SM { return SM({UP}); }
fn shuffle_down(m: SM, d: u32) -> SM { return SM({DOWN}); }

// M_0 ... M_j, rescaled: the workgroup rounds' mats[j] after the prefix scan.
fn prefix_of(own: SM, j: u32) -> SM {
    var m = own;
    for (var d = 1u; d < LT; d <<= 1u) {
        let other = shuffle_up(m, d);
        if (j >= d) { m = scaled(other * m); }
    }
    return m;
}

// The normalised row 1' M_0 ... M_j-1 from the threads' prefixes (uniform for thread 0).
fn before_of(prefix: SM, j: u32) -> SV {
    let previous = shuffle_up(prefix, 1u);
    var u = SV(1.0);
    if (j > 0u) { u = u * previous; }
    return u / dot(u, SV(1.0));
}

// The filtered message at the bar before thread j's chunk (uniform for the first chunk).
fn prefix_start(own: SM, j: u32) -> SV { return before_of(prefix_of(own, j), j); }

// prefix_start's message and the backward message at the last bar of thread j's chunk (up
// to scale), the two scans in the same rounds.
fn scan_starts(own: SM, j: u32) -> Starts {
    var m = own;
    var after = own;
    for (var d = 1u; d < LT; d <<= 1u) {
        let other = shuffle_up(m, d);
        let other_after = shuffle_down(after, d);
        if (j >= d) { m = scaled(other * m); }
        if (j + d < LT) { after = scaled(after * other_after); }
    }
    let next = shuffle_down(after, 1u);
    var b = SV(1.0);
    if (j + 1u < LT) { b = next * b; }
    return Starts(before_of(m, j), b / vmax(b));
}
"""


def scan_rounds(K: int, subgroups: bool) -> str:
    """The rounds for K states: through workgroup memory, or shuffles within a subgroup
    of exactly LT threads (the caller checks the adapter's subgroup size)."""
    if not subgroups:
        return WORKGROUP_ROUNDS
    columns = range(K)
    return SUBGROUP_ROUNDS.replace(
        "{UP}", ", ".join(f"subgroupShuffleUp(m[{i}], d)" for i in columns)
    ).replace("{DOWN}", ", ".join(f"subgroupShuffleDown(m[{i}], d)" for i in columns))
