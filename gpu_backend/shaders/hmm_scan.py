"""WGSL of the HMM kernels with a workgroup per lane: the window split in time.

shaders/hmm.py runs one thread per lane, so a lane's T forward and T backward steps are
serial and the GPU waits on memory between them. Here a workgroup of LT threads serves
one lane: the lane's window sits in workgroup memory, thread j owns the chunk
[j C, (j + 1) C) of C = ceil(T / LT) bars, and the chunks are joined by an associative
scan, the parallel-in-time forward-backward:

- each thread multiplies its chunk's transfer matrices, M_j = A_t0 ... A_t1-1 with
  A_t = P diag(e_t) (A_0 = diag(e_0): the first message is the uniform start, not a
  transition), normalised by its largest entry after every product (only directions
  matter below);
- an inclusive prefix scan (Hillis-Steele, log2 LT rounds) gives the filtered message at
  the bar before each chunk, alpha ~ 1/K 1' M_0 ... M_j-1, and a suffix scan the backward
  message after it, beta ~ M_j+1 ... M_LT-1 1 (a gradient runs the two in the same rounds);
- each thread then runs hmm.py's forward and backward steps over its chunk from those
  messages (same self-normalising scaling; the log likelihood from a filtered start that
  sums to one, as in the serial pass), the sums reduced across the workgroup (`Acc`).

With LT = T every chunk is one bar: the pure associative scan (LT is a parameter, measured
in docs/benchmarks.md). A thread keeps its chunk's filtered messages for its backward pass
in its own array, not in hmm.py's device scratch. With `keep_emissions` it also keeps each
bar's emission from the chunk's product for both passes after it: the same values with a
third of the exponentials: lavapipe's warm runs, a third of whose time they were, 12-19 %
shorter; the H200's 5-10 % longer, where they cost little and the array goes to local
memory (docs/benchmarks.md, twenty-ninth session).
"""

from __future__ import annotations

from gpu_backend.shaders.hmm_vectors import COMPONENTS, vector_source
from gpu_backend.shaders.scan_rounds import scan_rounds
from gpu_backend.shaders.workgroup_sums import workgroup_sums

ENTRY_VALUE_GRAD_SCAN = "value_grad_scan"
ENTRY_PREDICTIVE_SCAN = "predictive_scan"
SCAN_ENTRIES = (ENTRY_VALUE_GRAD_SCAN, ENTRY_PREDICTIVE_SCAN)
TMAX = 1024  # the longest window the scan kernels hold in workgroup memory
MIN_CAPACITY = 32  # the shortest window a module is compiled for
_WORKGROUP_BYTES = 16_384  # WebGPU's guaranteed workgroup memory

_SOURCE = """
const LT: u32 = {LT}u;
const TMAX: u32 = {TMAX}u;  // this module's window capacity (window_capacity)

var<workgroup> ys: array<f32, TMAX>;

// The thread's own chunk's filtered messages, for its backward pass: at most ceil(TMAX / LT)
// bars (registers or local memory, nearer than a device scratch buffer).
const CMAX: u32 = (TMAX + LT - 1u) / LT;
var<private> chunk_alpha: array<SV, CMAX>;
{EMIT_DECL}// The last gradient's filtered message at the window's last bar, on the thread that owns
// that bar: what filter_at would give at the same position, by the same arithmetic (the
// one-dispatch sampler keeps its accepted position's from here: shaders/lane_sampler.py).
var<private> last_filtered: SV;

fn scaled(r: SM) -> SM {
    let top = mmax(r);
    if (top > 0.0) { return r * (1.0 / top); }
    return r;
}

// M_j: the product of the chunk's A_t, from the identity (with keep_emissions its bars'
// emissions kept: forward_chunk and backward_chunk follow it in every gradient and filter).
fn chunk_matrix(v: VModel, t0: u32, t1: u32) -> SM {
    var r = identity();
    for (var t = t0; t < t1; t++) {
        let e = vemit(v, ys[t]);{EMIT_KEEP}
        var a = r;
        if (t > 0u) { a = r * v.P; }
        r = scaled(scale_columns(a, e.rel));
    }
    return r;
}

struct Starts { before: SV, after: SV };

{ROUNDS}
struct VForward { a: SV, ll: Acc };

// hmm.py's forward steps over [t0, t1) from the filtered message a0 of bar t0 - 1.
fn forward_chunk(v: VModel, a0: SV, t0: u32, t1: u32, store: bool) -> VForward {
    var f: VForward;
    f.ll = acc_zero();
    f.a = a0;
    for (var t = t0; t < t1; t++) {
        let e = {EMIT_AT};
        var pred = f.a;
        if (t > 0u) { pred = f.a * v.P; }
        let s = dot(pred, e.rel);
        f.a = pred * e.rel / s;
        if (store) { chunk_alpha[t - t0] = f.a; }
        f.ll = acc_add(acc_add(f.ll, log(s)), e.log_max);
    }
    return f;
}

// hmm.py's Sums as vectors; n_j is column j of the transition counts.
struct VSums { gz: AccV, gzz: AccV, {N_FIELDS} };

// hmm.py's backward steps over the chunk, from its last bar down; `before` is the
// filtered message of bar t0 - 1 (the chunk's prefix_start).
fn backward_chunk(v: VModel, b0: SV, before: SV,
                  t0: u32, t1: u32) -> VSums {
    var s = VSums({N_ZERO});
    var b = b0;
    var t = t1;
    while (t > t0) {
        t -= 1u;
        let e = {EMIT_AT};
        let g = chunk_alpha[t - t0] * b;
        let gk = g / dot(g, SV(1.0));
        s.gz = accv_add(s.gz, gk * e.z);
        s.gzz = accv_add(s.gzz, gk * (e.z * e.z - SV(1.0)));
        if (t == 0u) { break; }
        var prev = before;
        if (t > t0) { prev = chunk_alpha[t - 1u - t0]; }
        let w = e.rel * b / dot(prev * v.P, e.rel * b);
{N_ADD}
        b = v.P * w;
    }
    return s;
}

fn to_sums(v: VSums) -> Sums {
    var s: Sums;
    let columns = array<AccV, K>({N_LIST});
    for (var i = 0u; i < K; i++) {
        s.gz[i] = accv_at(v.gz, i);
        s.gzz[i] = accv_at(v.gzz, i);
        for (var j = 0u; j < K; j++) { s.n[i][j] = accv_at(columns[j], i); }
    }
    return s;
}

struct Chunk { t0: u32, t1: u32 };

// Loads the lane's window into workgroup memory; thread j's chunk of it.
fn load_window(lane: u32, j: u32) -> Chunk {
    let column = lane / params.per_row;
    for (var t = j; t < params.T; t += LT) { ys[t] = y[t * params.rows + column]; }
    workgroupBarrier();
    return chunk_of(j);
}

// Thread j's bars: the j-th of LT chunks of ceil(T / LT) bars (empty past the window).
fn chunk_of(j: u32) -> Chunk {
    let C = (params.T + LT - 1u) / LT;
    let t0 = min(j * C, params.T);
    return Chunk(t0, min(t0 + C, params.T));
}

// The lane's log density (less constants) and gradient at theta into out_value and out_vec,
// by the whole workgroup; the window is already in workgroup memory.
fn gradient_at(lane: u32, j: u32, c: Chunk) { gradient_of(load_model(lane), lane, j, c); }

// The same for the model m (every thread's own copy of the lane's model).
fn gradient_of(m: Model, lane: u32, j: u32, c: Chunk) {
    let v = vmodel(m);
    let starts = scan_starts(chunk_matrix(v, c.t0, c.t1), j);
    let f = forward_chunk(v, starts.before, c.t0, c.t1, true);
    if (owns_last_bar(c)) { last_filtered = f.a; }
    let mine = to_sums(backward_chunk(v, starts.after, starts.before, c.t0, c.t1));
    let total = reduce(pack(f.ll, mine), j);
    if (j == 0u) {
        out_value[vslot(lane)] = acc_split(write_gradient(m, unpack(total), lane, total[0]));
    }
}

// The filtered message at the last bar (returned by the thread that owns that bar) and the
// log likelihood (to thread 0).
struct Filtered { f: VForward, last: bool };

fn filter_at(lane: u32, j: u32, c: Chunk, m: Model) -> Filtered {
    let v = vmodel(m);
    let before = prefix_start(chunk_matrix(v, c.t0, c.t1), j);
    var out: Filtered;
    out.f = forward_chunk(v, before, c.t0, c.t1, false);
    out.last = owns_last_bar(c);
    return out;
}

fn owns_last_bar(c: Chunk) -> bool { return c.t0 < c.t1 && c.t1 == params.T; }

@compute @workgroup_size(LT)
fn value_grad_scan(@builtin(workgroup_id) wid: vec3<u32>,
                   @builtin(num_workgroups) groups: vec3<u32>,
                   @builtin(local_invocation_index) j: u32) {
    let lane = wid.y * groups.x + wid.x;
    if (lane >= params.lanes) { return; }
    gradient_at(lane, j, load_window(lane, j));
}

@compute @workgroup_size(LT)
fn predictive_scan(@builtin(workgroup_id) wid: vec3<u32>,
                   @builtin(num_workgroups) groups: vec3<u32>,
                   @builtin(local_invocation_index) j: u32) {
    let lane = wid.y * groups.x + wid.x;
    if (lane >= params.lanes) { return; }
    let m = load_model(lane);
    let out = filter_at(lane, j, load_window(lane, j), m);
    var mine: Totals;
    for (var i = 0u; i < NV; i++) { mine[i] = acc_zero(); }
    mine[0] = out.f.ll;
    let total = reduce(mine, j);
    if (j == 0u) { out_value[vslot(lane)] = acc_split(total[0]); }
    if (out.last) { write_predictive(m, to_array(out.f.a), lane); }
}
"""


def window_capacity(T: int) -> int:
    """The window a module for windows of T bars is compiled for: T rounded up to a power
    of two (at least MIN_CAPACITY, at most TMAX). Workgroup memory and each thread's
    private messages are sized by it: sized for TMAX, a 256-bar window's workgroups hold
    four times the memory they use, and on the H200 a warm update of 800 lanes then took
    51-54 ms where sized for 256 it takes 30 (docs/benchmarks.md, fourteenth session)."""
    if not 1 <= T <= TMAX:
        raise ValueError(f"the scan kernels hold windows of 1 to {TMAX} bars, got {T}")
    return max(MIN_CAPACITY, 1 << (T - 1).bit_length())


def lane_threads_for(
    K: int, requested: int, capacity: int = TMAX, subgroups: bool = False
) -> int:
    """Threads per lane for K states: the request, as far as workgroup memory holds."""
    if requested < 1 or requested & (requested - 1):
        raise ValueError(f"lane threads must be a power of two, got {requested}")
    lt = requested
    while lt > 1 and workgroup_bytes(K, lt, capacity, subgroups) > _WORKGROUP_BYTES:
        lt //= 2
    return lt


def workgroup_bytes(
    K: int, lane_threads: int, capacity: int = TMAX, subgroups: bool = False
) -> int:
    """The window, the two scans' K x K matrices (columns padded to vec4 for K = 3, as
    WGSL lays them out) and the reduction's sums (8-byte accumulators); with `subgroups`
    the window alone (the rounds are shuffles: shaders/scan_rounds.py)."""
    if subgroups:
        return 4 * capacity
    sums = 1 + 2 * K + K * K
    matrix = K * 4 * (4 if K == 3 else K)
    return 4 * capacity + lane_threads * (2 * matrix + 8 * sums)


def scan_source(
    K: int,
    lane_threads: int,
    capacity: int = TMAX,
    subgroups: bool = False,
    keep_emissions: bool = False,
) -> str:
    """The scan entry points for windows of up to `capacity` bars; appended to
    shaders/hmm.py's module for the same K. `subgroups`: a lane's threads are exactly one
    subgroup, and its rounds are shuffles (shaders/scan_rounds.py); `keep_emissions`: each
    bar's emission computed once per gradient, not in each pass (a CPU adapter's choice)."""
    lt = lane_threads_for(K, lane_threads, capacity, subgroups)
    source = _SOURCE.replace("{LT}", str(lt)).replace("{TMAX}", str(capacity))
    for hole, text in (_KEPT if keep_emissions else _COMPUTED).items():
        source = source.replace(hole, text)
    source = source.replace("{ROUNDS}", scan_rounds(K, subgroups))
    for hole, text in _column_sums(K).items():
        source = source.replace(hole, text)
    return vector_source(K) + source + workgroup_sums(subgroups, K, lt)


# Each pass over a chunk computes its bars' emissions (`_COMPUTED`), or the chunk's product,
# which every pass follows, keeps them for the two after it (`_KEPT`): the same values.
_COMPUTED = {"{EMIT_DECL}": "", "{EMIT_KEEP}": "", "{EMIT_AT}": "vemit(v, ys[t])"}
_KEPT = {
    "{EMIT_DECL}": "var<private> chunk_emit: array<VEmit, CMAX>;  // the chunk's emissions\n",
    "{EMIT_KEEP}": "\n        chunk_emit[t - t0] = e;",
    "{EMIT_AT}": "chunk_emit[t - t0]",
}


def _column_sums(K: int) -> dict[str, str]:
    """The source's holes for VSums' transition-count columns n_j: K fields, one
    accumulator each, not an array, so that they stay in registers."""
    return {
        "{N_FIELDS}": ", ".join(f"n{j}: AccV" for j in range(K)),
        "{N_ZERO}": ", ".join(["accv_zero()"] * (K + 2)),
        "{N_ADD}": "\n".join(
            f"        s.n{j} = accv_add(s.n{j}, prev * (v.P[{j}] * w.{COMPONENTS[j]}));"
            for j in range(K)
        ),
        "{N_LIST}": ", ".join(f"v.n{j}" for j in range(K)),
    }
