"""The auction driver: one host-side loop for both kernel sets.

The GPU engine of the linear assignment problem is Bertsekas' forward
auction with epsilon scaling [1]_, Jacobi-parallel [2]_: in a *round* every
unassigned row reads the prices of the round's start, finds its best and
second-best column (least and second-least ``h_ij = c'_ij - v_j``) and bids
for the best one, lowering its price ``v_j`` by ``min(w2 - w1, big) + eps``;
each column bid on goes to the largest bid (a 64-bit ``atomicMax`` on the
packed key ``(bid, row)``), and the row it held becomes unassigned.  Every
assigned row stays within ``eps`` of its best column (eps-complementary
slackness).  A *phase* runs rounds until every row is assigned; the next
phase divides ``eps`` by :data:`THETA`, keeps the prices and the rows that
still satisfy the smaller ``eps`` (``refresh``), and the others bid again.

Integer costs are scaled: ``c' = (c - cmin) * s`` with ``s = m + 1``
(smaller only where int64 would overflow), and the last phase has
``eps = 1``: a full assignment within ``1 / (m + 1)`` per row of
complementary slackness in the caller's units is optimal, since integer
costs cannot differ by less than 1 [1]_.  Float costs run unscaled down to
``eps = max(2**-40 * max(range, max|c|), 2**-44 * max|v|)`` (the second
term keeps each bid above the prices' rounding); the assignment is then
within ``m * eps`` of the optimum.

Rows whose only allowed entry is contested bid ``big`` (a finite stand-in
for "no second column"); a price that passes ``floor`` means the input has
no full assignment after all (the callers check feasibility first) or a
precision failure, and aborts the auction.  The driver reads the number of
unassigned rows every :attr:`Schedule.check` rounds; once at most
:attr:`Schedule.loop_max` rows bid, one block runs the rounds in a loop on
the device (``rounds``), where a launch would cost more than a round.

**Global price updates.**  Left alone, the last unassigned rows of a phase
walk long chains of displacements in search of the few free columns (on
random sparse inputs of 20 000 rows, 40 000 rounds in all, most of them
with one row bidding).  Every :attr:`Schedule.update_every` rounds (or
more: :attr:`Schedule.balance`) a *global price update* (Goldberg and
Kennedy's for cost scaling [3]_, in auction form) makes every column dearer
by its distance to a free column: with ``l_ij = floor((h_ij - h_{i,x_i} +
eps) / eps)`` (>= 0 by eps-complementary slackness) on the entries of each
assigned row, the distances ``d`` (0 on free columns, capped at
:attr:`Schedule.levels`) are the least solution of ``d_{x_i} <= d_j +
l_ij``, and ``v_j -= d_j * eps`` keeps every assigned row within ``eps`` of
its best column.  The rows then bid along shortest paths to free columns
instead of wandering: 1 800 rounds and 50 updates on the same inputs.  On
sparse input the distances come from Dial's buckets over the transpose of
the entries (``update``; on the GPU one cooperative launch,
``gpumatch_lap_update_dial``): level by level from the free columns, each
entry read once.  Dense input, and a device without cooperative launches,
take Jacobi sweeps of Bellman-Ford (``update_sweep``), which read every
entry once per sweep: on random sparse 1M x 1M (11M entries) the sweeps
were 80 % of a 6.5 s solve, about 200 of them per update; the buckets made
that solve 1.2 s.  Phases are never cut short: a phase that
leaves rows unassigned hands its debt, in ever smaller ``eps``, to the
next, and the last phase then does not finish at all.

Where the auction stops:

* **sparse input** (:func:`solve_sparse`): every phase to its end on the
  device (a last phase past :attr:`Schedule.cap` rounds stops with rows
  left).  The host (:func:`gpumatch.lap._cpu.finish`) turns the prices into
  the caller's units (``floor(v / s)``), lowers them by label-correcting
  until every assigned row is exactly at its best column (with ``s = m + 1``
  each price drops at most once, by 1: the last phase left every path of the
  column graph less than 1 short), unassigns the rows it could not settle,
  and matches the free rows by Jonker-Volgenant shortest augmenting paths.
  The result and its potentials are exact.  (Handing the last rows of the
  last phase to those host searches instead costs more: with near-optimal
  prices each search crosses most of the graph, 10 ms a row at 100 000
  rows);
* **dense input** (:func:`auction_dense`, :func:`solve_dense`): the same,
  the rows read from the matrix by a warp each; ``linear_sum_assignment``
  returns the device's answer (integers: optimal; floats: within ``m *
  eps``), ``assignment`` gets its potentials from the host finish.  Where
  the auction cannot finish (the floor, the cap, integer costs too large to
  scale by ``m + 1``) the caller solves on the host;
* **a batch of dense problems** (:func:`solve_dense_batch`): one block per
  problem runs the whole auction (``batch_dense``), with the schedule
  :data:`BATCH_SCHEDULE` (no price updates); problems it could not finish
  are solved on the host.

References
----------
.. [1] D. P. Bertsekas, "The auction algorithm: a distributed relaxation
       method for the assignment problem", Annals of Operations Research 14,
       105-123, 1988. :doi:`10.1007/BF02186476`
.. [2] D. P. Bertsekas and D. A. Castañon, "Parallel synchronous and
       asynchronous implementations of the auction algorithm", Parallel
       Computing 17(6-7), 707-732, 1991. :doi:`10.1016/S0167-8191(05)80062-6`
.. [3] A. V. Goldberg and R. Kennedy, "An efficient cost scaling algorithm
       for the assignment problem", Mathematical Programming 71, 153-177,
       1995. :doi:`10.1007/BF01585996`
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _backend

__all__ = ["AuctionState", "Schedule", "SPARSE_SCHEDULE", "DENSE_SCHEDULE", "BATCH_SCHEDULE", "kernels_for",
           "make_state", "run_phases", "solve_sparse", "auction_dense", "finish_on_host", "solve_dense", "solve_dense_batch",
           "DONE", "TAIL", "ABORT"]

#: ``eps`` is divided by this after each phase.
THETA = 6
#: The first phase's ``eps``: the scaled cost range divided by this.
EPS0_DIV = 8
#: Integer prices stay within this bound (int64 room for a bid on top).
INT_LIMIT = 2 ** 60
#: Float ``eps`` floor relative to the cost scale, and to the largest price.
FLOAT_EPS_REL = 2.0 ** -40
FLOAT_EPS_PRICE = 2.0 ** -44

#: Outcomes of :func:`run_phases`.
DONE, TAIL, ABORT = 0, 1, 2


@dataclass(frozen=True)
class Schedule:
    """When the driver reads counts, loops on the device, ends phases and hands over.

    early : float
        A phase before the last ends once at most ``early * m`` rows are
        unassigned (the next phase's ``refresh`` lists them again).
    tail : float
        The last phase hands over to the host once at most ``tail * m``
        rows are unassigned (0: never).
    tail_min : int
        ... or at most this many.
    cap : int
        Rounds of one phase at most (then: the next phase, or a hand-over).
    check : int
        Rounds launched between two reads of the counts (multi-block).
    loop_max : int
        At most this many unassigned rows: one block loops on the device.
    loop_rounds : int
        Rounds of one looping launch at most.
    update_every : int
        Rounds of a phase between two global price updates (0: none).
    levels : int
        Distances of a global update are capped at this many units of eps.
    sweeps : int
        Bellman-Ford sweeps of a global update at most (not converged: the
        update is dropped).
    sweeps_per_read : int
        Sweeps launched between two reads of the change flag (a sweep after
        convergence changes nothing).
    balance : int
        After an update of ``s`` sweeps (``sweeps`` when it did not
        converge), or of ``s`` steps of Dial's buckets, the next one comes
        after at least ``balance * s`` rounds (and ``update_every``): a
        sweep, or a step, costs about as much as a round of the looping
        block, so the updates take a bounded share of the time, however
        deep the alternating paths are.
    """

    early: float = 0.0
    tail: float = 0.0
    tail_min: int = 0
    cap: int = 1 << 30
    check: int = 1
    loop_max: int = 0
    loop_rounds: int = 1 << 30
    update_every: int = 0
    levels: int = 16
    sweeps: int = 256
    sweeps_per_read: int = 4
    balance: int = 0


#: Sparse input: every phase to its end, a global price update every 128
#: rounds or twice the steps of the last one, one looping block once at
#: most 2048 rows bid.  (Random sparse 100k x 100k, degree 3 and 10,
#: integer and fractional weights, H200, with Jacobi sweeps: an update every
#: 32 rounds made the updates 80-90 % of the time; every 512 rounds, 4-5x
#: faster in all.  With Dial's buckets, 1M x 1M of degree 11, balance 6 /
#: 2 / 1: 1.53 / 1.22 / 1.24 s, 223k / 123k / 91k rounds; 100k: 0.18 /
#: 0.14-0.16 / 0.16 s.)
SPARSE_SCHEDULE = Schedule(early=0.0, tail=0.0, cap=200000, check=8, loop_max=2048, loop_rounds=4096,
                           update_every=128, balance=2)
#: Dense input: the same, one looping block once at most 64 rows bid (a
#: warp per row).
DENSE_SCHEDULE = Schedule(early=0.0, tail=0.0, cap=200000, check=8, loop_max=64, loop_rounds=8192,
                          update_every=32)
#: A batch: every phase to the end, the counts looked at every round (the
#: block reads them between barriers), a cap per phase, no price updates.
#: (Updates inside the block, measured on 16 random 300 x 300 integer
#: problems: the slowest problem's rounds fell from 1 672 to 575, but its 63
#: sweeps of every row made the batch 1.7x slower on the H200.)
BATCH_SCHEDULE = Schedule(early=0.0, tail=0.0, cap=20000, check=1, loop_max=0)


def kernels_for(backend: str):
    """The kernel set (module) of a resolved backend name."""
    if backend == "cupy":
        from . import _kernels_cuda as k
    else:
        from . import _kernels_numpy as k
    return k


@dataclass
class AuctionState:
    """Arrays and constants of one auction (all on one backend); ``auction.cu`` names them."""

    backend: str
    xp: Any
    m: int
    n: int
    dense: bool
    kind: str                  # "i": int64 costs (scaled), "f": float64
    indptr: Any = None         # CSR (int64 indptr)
    indices: Any = None
    cost: Any = None
    C: Any = None              # dense m x n (forbidden: +inf)
    scale: int = 1
    cmin: Any = 0
    base: float = 1.0          # float costs: max(range, max|c|)
    eps0: Any = 1
    big: Any = 0
    floor: Any = 0
    inf: Any = 0
    x: Any = None              # m: column of each row, -1 unassigned (int32)
    owner: Any = None          # n: row of each column, -1 (int32)
    v: Any = None              # n: prices (scaled units for integers)
    bid_delta: Any = None      # m: the bid of each row this round
    cx: Any = None             # m: the cost of the entry each row last bid for (its column's, when assigned)
    keys: Any = None           # n: uint64 best key this round, 0 when none
    lists: Any = None          # (2, m) int32: the rows to bid, by round parity
    bidcols: Any = None        # n int32: the columns bid on this round
    counts: Any = None         # int64[8], see _kernels_numpy
    dist: Any = None           # (2, n) int64: distances of a global price update (Jacobi buffers)
    group: int = 1             # lanes per row (CSR): 1, 2, ..., 32
    stats: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)

    @property
    def exact(self) -> bool:
        """An integer auction whose last phase (eps = 1) proves optimality."""
        return self.kind == "i" and self.scale >= self.m + 1

    def eps_floor(self):
        """The least ``eps`` of a phase that starts now."""
        if self.kind == "i":
            return 1
        p = float(self.xp.abs(self.v).max()) if self.n else 0.0
        return max(self.base * FLOAT_EPS_REL, p * FLOAT_EPS_PRICE)

    def host_prices(self):
        """The prices in the caller's units (host, cost dtype): ``floor(v / s)``."""
        v = _backend.to_numpy(self.v)
        return v // self.scale if self.kind == "i" else v.copy()


def _constants(kind, m, cmin, cmax, cabs):
    """``scale, eps0, big, floor, base, inf`` of a problem with ``m`` rows and
    allowed costs in ``[cmin, cmax]`` (``cabs = max|c|``); None when integer
    costs cannot be scaled at all."""
    rows = 4 * m + 8
    if kind == "i":
        R = max(int(cmax) - int(cmin), 0)
        s = min(m + 1, INT_LIMIT // (rows * 3 * max(R, 1)))
        if s < 1:
            return None
        Rs = R * s
        eps0 = max(1, Rs // EPS0_DIV)
        big = Rs + eps0
        return s, np.int64(eps0), np.int64(big), np.int64(-rows * (Rs + big + 1)), 1.0, np.int64(np.iinfo(np.int64).max)
    R = float(cmax) - float(cmin)
    base = max(R, float(cabs))
    if not base > 0:
        base = 1.0
    eps0 = base / EPS0_DIV
    big = max(R, base * FLOAT_EPS_REL) + eps0
    return 1, eps0, big, -rows * (base + big) * 2.0, base, np.inf


def _alloc(st):
    xp, m, n = st.xp, st.m, st.n
    dt = np.int64 if st.kind == "i" else np.float64
    st.x = xp.full(m, -1, dtype=np.int32)
    st.owner = xp.full(n, -1, dtype=np.int32)
    st.v = xp.zeros(n, dtype=dt)
    st.bid_delta = xp.zeros(max(m, 1), dtype=dt)
    st.cx = xp.zeros(max(m, 1), dtype=dt)
    st.keys = xp.zeros(n, dtype=np.uint64)
    st.lists = xp.zeros((2, max(m, 1)), dtype=np.int32)
    st.bidcols = xp.zeros(max(n, 1), dtype=np.int32)
    st.counts = xp.zeros(8, dtype=np.int64)
    st.dist = xp.zeros((2, max(n, 1)), dtype=np.int64)


def make_state(backend, *, m, n, kind, cmin, cmax, cabs, indptr=None, indices=None, cost=None, C=None):
    """The state of one auction over a CSR ``(indptr, indices, cost)`` or a
    dense ``m x n`` matrix `C` (``m <= n``) on `backend` (arrays already
    there); None when integer costs are too large to scale."""
    const = _constants(kind, m, cmin, cmax, cabs)
    if const is None:
        return None
    scale, eps0, big, floor, base, inf = const
    xp = _backend.get_xp(backend)
    st = AuctionState(backend, xp, m, n, C is not None, kind, indptr, indices, cost, C, scale,
                      np.int64(cmin) if kind == "i" else 0.0, base, eps0, big, floor, inf)
    if C is None:
        nnz = int(indices.shape[0])
        avg = nnz / max(m, 1)
        g = 1
        while g < 32 and 4 * g <= avg:
            g *= 2
        st.group = g
    else:
        st.group = 32
    _alloc(st)
    return st


def _counts(st):
    return _backend.to_numpy(st.counts).tolist()


def global_update(st, k, eps, sched: Schedule) -> int:
    """A global price update: distances (in units of `eps`, at most
    :attr:`Schedule.levels`) from every column to a free column along
    alternating paths, then each column's price lowered by its distance
    times `eps` (Goldberg and Kennedy's global update of cost scaling, in
    auction form).  Sparse input: Dial's buckets in one launch (``update``,
    the GPU's cooperative kernel or its twin), which always converge;
    returns their steps.  Dense input, or a device without cooperative
    launches: Jacobi sweeps of Bellman-Ford, applied only when they converge
    within :attr:`Schedule.sweeps` (else nothing changes); returns the
    sweeps when applied (a multiple of :attr:`Schedule.sweeps_per_read`),
    else 0.  Both find the same distances."""
    lmax = sched.levels
    applied = k.update(st, eps, lmax, sched.sweeps)
    if applied is not None:       # one launch: Dial's buckets over the transpose
        return applied
    k.update_start(st, lmax)      # dense input, or no cooperative launches: a launch per sweep
    par = 0
    per_read = max(1, sched.sweeps_per_read)
    for t in range(sched.sweeps):
        last = (t + 1) % per_read == 0 or t + 1 == sched.sweeps
        if last:
            st.counts[7] = 0          # the flag of the sweep before a read
        k.update_sweep(st, eps, lmax, par)
        par ^= 1
        if last and not _counts(st)[7]:
            k.update_apply(st, eps, par)
            return t + 1
    return 0


def run_phases(st, k, sched: Schedule) -> int:
    """The epsilon-scaling auction of `st` with kernel set `k`: DONE (every
    row assigned in the last phase), TAIL (the last phase stopped with rows
    left: tail size or cap) or ABORT (a price passed the floor).

    A global price update (:func:`global_update`) runs every
    :attr:`Schedule.update_every` rounds of a phase (at least
    :attr:`Schedule.balance` rounds per sweep of the last update) while rows
    are left."""
    m = st.m
    eps = st.eps0
    r = 0
    phases = rounds_total = loops = updates = 0
    early_rows = int(sched.early * m)
    tail_rows = max(int(sched.tail * m), sched.tail_min) if sched.tail > 0 else 0
    every = sched.update_every
    sweeps_total = 0

    def done(status, **more):
        st.stats.update(phases=phases, rounds=rounds_total, loops=loops, updates=updates,
                        update_sweeps=sweeps_total, **more)
        return status

    while True:
        lo = st.eps_floor()
        if eps < lo:
            eps = lo
        final = eps <= lo
        st.counts[r & 1] = 0
        k.refresh(st, eps, r)
        phases += 1
        start = r
        since = 0
        from_loop = False
        while True:
            c = _counts(st)
            if from_loop:
                since += int(c[6]) - r
                r = int(c[6])
                from_loop = False
            left = m - int(c[4])
            st.extra["left"] = left
            if c[5]:
                rounds_total += r - start
                return done(ABORT)
            if left == 0:
                break
            if final and (left <= tail_rows or r - start >= sched.cap):
                rounds_total += r - start
                return done(TAIL, left=left)
            if not final and (left <= early_rows or r - start >= sched.cap):
                break
            if every and since >= every:
                took = global_update(st, k, eps, sched)
                updates += took > 0
                sweeps_total += took or sched.sweeps
                # the next update after at least `balance` rounds per sweep of this one: a
                # sweep costs about a round, so updates take at most a share of the time
                every = max(sched.update_every, sched.balance * (took or sched.sweeps))
                since = 0
                continue
            budget = sched.cap - (r - start)
            if every:
                budget = min(budget, every - since)
            if left <= sched.loop_max:
                stop = tail_rows if final else early_rows
                k.rounds(st, eps, r, min(sched.loop_rounds, budget), stop)
                loops += 1
                from_loop = True
            else:
                for _ in range(min(sched.check, budget)):
                    k.bid(st, eps, r)
                    k.resolve(st, r)
                    r += 1
                    since += 1
        rounds_total += r - start
        if final:
            return done(DONE)
        eps = max(1, eps // THETA) if st.kind == "i" else eps / THETA


# ---------------------------------------------------------------------------
# entry points
# ---------------------------------------------------------------------------


def finish_on_host(st, indptr, indices, c, m, n):
    """Exact assignment and prices (host, caller's units) from the auction's
    state: :func:`gpumatch.lap._cpu.finish`.  Returns ``(x, v, cx)``, `cx`
    the cost of each row's matched entry."""
    from . import _cpu

    x = _backend.to_numpy(st.x).astype(np.int64)
    y = np.full(n, -1, dtype=np.int64)
    held = np.flatnonzero(x >= 0)
    y[x[held]] = held
    v = st.host_prices()
    if indices.dtype not in (np.int32, np.int64):
        indices = indices.astype(np.int64)
    tptr = np.zeros(1, dtype=np.int64)
    tind = np.zeros(1, dtype=np.int64)
    if m < n:
        import scipy.sparse as sp

        T = sp.csr_matrix((np.ones(indices.shape[0], dtype=np.int8), indices, indptr), shape=(m, n)).T.tocsr()
        tptr, tind = T.indptr.astype(np.int64), T.indices.astype(np.int64)
    tol = 0.0
    if c.dtype.kind == "f":
        scale = max(float(np.abs(c).max()) if c.size else 0.0, float(np.abs(v).max()) if v.size else 0.0, 1e-300)
        tol = scale * 2.0 ** -42
    budget = 4 * indices.shape[0] + 16 * m + 1024
    cx = _backend.to_numpy(st.cx)[:m].astype(c.dtype, copy=False)     # the cost of each row's entry
    from .._cpu_match import parallel_threads

    seeds = np.zeros(0, dtype=np.uint8)
    nt = parallel_threads(indices.shape[0])     # the CPU engines' threads for this many entries (0: serial)
    if nt > 1:
        # the rows the repair starts from, found on threads (the check reads every entry once)
        from .. import _cpu_threads

        if m < n:
            v[y < 0] = 0
        seeds = np.empty(m, dtype=np.uint8)
        _cpu_threads.run_slices(nt, _cpu.repair_seeds, indptr, indices, c, x, v, cx, c.dtype.type(tol), seeds)
    status, info, cx = _cpu.finish(indptr, indices, c, m, n, x, y, v, tptr, tind, c.dtype.type(tol), budget, cx,
                                   seeds)
    if status < 0:   # pragma: no cover - callers checked that a full matching exists
        raise AssertionError("internal error: the host finish found no augmenting path where one exists")
    st.stats.update(host_repair_work=int(info[0]), host_unassigned=int(info[1]), host_searches=int(info[2]))
    return x, v, cx


def solve_sparse(indptr, indices, c, m, n, backend, device=None):
    """Minimum-cost matching of every row (``m <= n``, a full matching exists)
    of a host CSR (int64 or float64 costs, canonical, finite): the auction on
    `backend` ("numpy" or "cupy"), then the host finish.  `device`: the same
    CSR ``(indptr, indices, cost)`` already on the backend.  Returns the
    exact ``(x, v, cx, stats)`` on the host, `v` in the caller's units, `cx`
    the cost of each row's matched entry."""
    stats = {"engine": "auction (Jacobi, epsilon scaling) + host finish"}
    if m == 0:
        return np.full(0, -1, dtype=np.int64), np.zeros(n, dtype=c.dtype), np.zeros(0, dtype=c.dtype), stats
    from . import _cpu

    kind = c.dtype.kind
    cmin = c.min() if c.size else 0
    cmax = c.max() if c.size else 0
    cabs = max(abs(cmin), abs(cmax))
    xp = _backend.get_xp(backend)
    dptr, dind, dc = device if device is not None else (xp.asarray(indptr), xp.asarray(indices), xp.asarray(c))
    if dind.dtype not in (np.int32, np.int64):
        dind = dind.astype(np.int64)
    st = make_state(backend, m=m, n=n, kind="i" if kind == "i" else "f", cmin=cmin, cmax=cmax, cabs=cabs,
                    indptr=dptr.astype(np.int64, copy=False), indices=dind, cost=dc)
    if st is None:   # integer costs too large to scale: the host engine alone
        x = np.full(m, -1, dtype=np.int64)
        y = np.full(n, -1, dtype=np.int64)
        v = np.zeros(n, dtype=c.dtype)
        _cpu.solve(indptr, indices if indices.dtype in (np.int32, np.int64) else indices.astype(np.int64), c, m, n,
                   False, 2, x, y, v, np.empty(m, dtype=np.int64))
        stats["engine"] = "shortest augmenting paths (integer costs too large for the auction's scaling)"
        return x, v, _cpu.matched_costs(indptr, indices, c, x), stats
    status = run_phases(st, kernels_for(backend), SPARSE_SCHEDULE)
    st.stats["auction"] = ("done", "tail", "abort")[status]
    x, v, cx = finish_on_host(st, indptr, indices, c, m, n)
    stats.update(st.stats)
    return x, v, cx, stats


def auction_dense(C, backend):
    """The auction of a dense ``m x n`` cost matrix `C` (``m <= n``, int64 or
    float64, ``+inf`` forbidden, minimisation form) already on `backend`,
    to its end on the device.  Returns ``(st, status, stats)``: the
    :class:`AuctionState` (None, with ABORT, when integer costs cannot be
    scaled or every entry is forbidden) and DONE, TAIL or ABORT."""
    xp = _backend.get_xp(backend)
    m, n = C.shape
    stats = {"engine": "auction (Jacobi, epsilon scaling, dense)"}
    kind = "i" if C.dtype.kind == "i" else "f"
    if kind == "i":
        cmin, cmax = (int(C.min()), int(C.max())) if C.size else (0, 0)
        cabs = max(abs(cmin), abs(cmax))
    else:
        finite = xp.isfinite(C)
        if not bool(finite.any()):
            return None, ABORT, stats
        cmin = float(xp.where(finite, C, np.inf).min())
        cmax = float(xp.where(finite, C, -np.inf).max())
        cabs = max(abs(cmin), abs(cmax))
    st = make_state(backend, m=m, n=n, kind=kind, cmin=cmin, cmax=cmax, cabs=cabs, C=C)
    if st is None:
        return None, ABORT, stats
    status = run_phases(st, kernels_for(backend), DENSE_SCHEDULE)
    st.stats["auction"] = ("done", "tail", "abort")[status]
    stats.update(st.stats)
    return st, status, stats


def solve_dense(C, backend):
    """The column of each row (int64, on the device) of a dense problem as
    :func:`auction_dense` takes it, or None where the auction cannot give
    the answer by itself: it did not finish, or integer costs could not be
    scaled by ``m + 1`` (then the caller solves on the host).  Integer
    costs: optimal; floats: within ``m * eps`` of the optimum."""
    st, status, stats = auction_dense(C, backend)
    if st is None or status != DONE or (st.kind == "i" and not st.exact):
        return None, stats
    return st.x.astype(np.int64), stats


@dataclass
class BatchState:
    """Arrays of a batch of ``k`` dense square ``n x n`` problems (``auction.cu``'s
    ``gpumatch_lap_batch_dense``): per-problem constants and outputs."""

    backend: str
    xp: Any
    k: int
    n: int
    kind: str
    C: Any                     # (k, n, n)
    scale: Any                 # per problem (int64)
    cmin: Any
    base: Any
    eps0: Any
    big: Any
    floor: Any
    x: Any = None              # (k, n) int32
    status: Any = None         # (k,) int32: 0 solved, 1 left to the host
    work: Any = None           # scratch of the kernel
    schedule: Schedule = BATCH_SCHEDULE   # the kernel takes its cap
    theta: int = THETA

    def solve_one(self, st, kernels) -> bool:
        """The twin's solve of one problem: :func:`run_phases` with
        :attr:`schedule`; True when it finished."""
        return run_phases(st, kernels, self.schedule) == DONE

    def problem_state(self, b):
        """The :class:`AuctionState` of problem `b` (NumPy twin)."""
        st = AuctionState(self.backend, self.xp, self.n, self.n, True, self.kind, C=self.C[b],
                          scale=int(self.scale[b]), cmin=self.cmin[b], base=float(self.base[b]),
                          eps0=self.eps0[b], big=self.big[b], floor=self.floor[b],
                          inf=np.int64(np.iinfo(np.int64).max) if self.kind == "i" else np.inf, group=32)
        _alloc(st)
        return st


def solve_dense_batch(costs, maximize=False, *, statuses=False):
    """Solve ``k`` dense assignment problems at once: ``costs`` a ``(k, m, n)``
    CuPy array (one launch family: one block per problem) or NumPy array
    (the NumPy twin of the same kernel).

    Parameters
    ----------
    costs : array, shape (k, m, n)
        Integer, boolean or floating-point costs; ``inf`` (``-inf`` with
        `maximize`) forbids a pair, NaN is invalid, as for
        :func:`gpumatch.linear_sum_assignment`.  Never written into.
    maximize : bool, optional
        Maximise each problem's total instead.
    statuses : bool, optional
        Return a third array (NumPy, int32, length k): 1 for a problem
        with invalid entries (NaN, the wrong infinity) or without a full
        assignment, whose rows of `row_ind` and `col_ind` are then -1,
        instead of raising for it (:func:`gpumatch.batch.linear_sum_assignment`
        words those errors itself).

    Returns
    -------
    row_ind, col_ind : arrays of int64, shape (k, min(m, n))
        For each problem, the rows (sorted) and the matched columns, as
        :func:`scipy.optimize.linear_sum_assignment` returns them; on the
        input's device.

    Raises
    ------
    ValueError
        Not 3-D, invalid entries (NaN, ``-inf``; ``+inf`` with `maximize`),
        or a problem without a full assignment ("cost matrix is
        infeasible", naming the problem).
    TypeError
        Entries that are not real numbers.
    OverflowError
        Integer costs too large to solve exactly in int64.

    Notes
    -----
    Integer costs are solved exactly; float costs to within ``n * eps`` of
    the optimum, ``eps`` about ``2**-40`` times the problem's largest cost
    or cost range (see :mod:`gpumatch.lap._driver`).  Problems of
    ``m != n`` are made square with rows of zeros (or transposed, for
    ``m > n``).  A problem the device cannot finish (no full assignment, or
    integer costs too large to scale exactly) is solved by the compiled CPU
    engine, which also reports infeasibility.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.lap._driver import solve_dense_batch
    >>> costs = np.array([[[4, 1, 3], [2, 0, 5], [3, 2, 2]], [[1, 2, 3], [2, 4, 6], [3, 6, 9]]])
    >>> rows, cols = solve_dense_batch(costs)
    >>> cols.tolist()
    [[1, 0, 2], [2, 1, 0]]
    """
    from . import _checks

    cupy_in = _backend.is_cupy_array(costs)
    backend = "cupy" if cupy_in else "numpy"
    xp = _backend.get_xp(backend)
    a = costs if cupy_in else np.asarray(costs)
    if a.ndim != 3:
        raise ValueError(f"expected a stack of matrices (3-D array), got a {a.ndim} array")
    maximize = bool(maximize)
    k, m, n = (int(t) for t in a.shape)
    C = _checks.device_numeric(a, xp, "costs")
    invalid = np.zeros(k, dtype=bool)
    if C.dtype.kind == "f":
        if statuses:
            bad = xp.isnan(C) | (C == (np.inf if maximize else -np.inf))
            invalid = _backend.to_numpy(bad.reshape(k, -1).any(axis=1)) if C.size else invalid
        else:
            _checks.device_check_invalid(C, xp, maximize, "matrix")
    else:
        _checks.check_int_range(C, min(m, n), "costs")
    if maximize:
        C = -C
    transposed = m > n
    if transposed:
        C = C.transpose(0, 2, 1)
        m, n = n, m
    if m < n:   # rows of zeros make it square: they take the columns nobody needs
        C = xp.concatenate([C, xp.zeros((k, n - m, n), dtype=C.dtype)], axis=1)
    C = xp.ascontiguousarray(C)          # the kernels only read it: the caller's array is never written
    rows_out = xp.broadcast_to(xp.arange(m, dtype=np.int64), (k, m))
    status = invalid.astype(np.int32)
    if k == 0 or m == 0:
        e = xp.zeros((k, 0), dtype=np.int64)
        return (e, e.copy(), status) if statuses else (e, e.copy())
    bt = _batch_state(backend, xp, C, invalid)
    kernels_for(backend).batch_dense(bt)
    x = bt.x[:, :m].astype(np.int64)
    left = np.flatnonzero(_backend.to_numpy(bt.status))
    for b in left.tolist():   # the host engine: exact, and it reports infeasibility
        cb = None if invalid[b] else _host_dense(_backend.to_numpy(C[b, :m]))
        if cb is None:
            if not statuses:
                raise ValueError(f"cost matrix is infeasible (problem {b} of the batch)")
            status[b] = 1
            x[b] = -1
        else:
            x[b] = xp.asarray(cb)
    if transposed:   # x: the row of each column; rows sorted, with their columns
        rows, cols = xp.sort(x, axis=1), xp.argsort(x, axis=1).astype(np.int64)
    else:
        rows, cols = xp.ascontiguousarray(rows_out), x
    if statuses:
        if status.any():
            rows[xp.asarray(status.astype(bool))] = -1
            cols[xp.asarray(status.astype(bool))] = -1
        return rows, cols, status
    return rows, cols


def _host_dense(C):
    """The column of each row of a dense ``m x n`` (``m <= n``) minimisation
    problem by the compiled CPU engine (:func:`gpumatch.lap._cpu.solve_dense`),
    or None when no assignment of finite cost exists."""
    from . import _cpu

    m, n = C.shape
    fin = np.isfinite(C) if C.dtype.kind == "f" else np.ones(C.shape, dtype=bool)
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(fin.sum(axis=1), out=indptr[1:])
    indices = np.nonzero(fin)[1].astype(np.int64)
    x = np.full(m, -1, dtype=np.int64)
    y = np.full(n, -1, dtype=np.int64)
    v = np.zeros(n, dtype=C.dtype)
    if _cpu.solve_dense(indptr, indices, np.ascontiguousarray(C[fin]), np.ascontiguousarray(C), m, n, 2,
                        x, y, v) < 0:
        return None
    return x


def _batch_state(backend, xp, C, skip):
    """The :class:`BatchState` of the square stack `C`; problems flagged in
    `skip` (and those whose integer costs cannot be scaled exactly) start
    with status 1, left to the host."""
    k, n, _ = C.shape
    kind = "i" if C.dtype.kind == "i" else "f"
    if kind == "i":
        lo = _backend.to_numpy(C.min(axis=(1, 2)))
        hi = _backend.to_numpy(C.max(axis=(1, 2)))
    else:
        fin = xp.isfinite(C)
        lo = _backend.to_numpy(xp.where(fin, C, np.inf).min(axis=(1, 2)))
        hi = _backend.to_numpy(xp.where(fin, C, -np.inf).max(axis=(1, 2)))
    status = np.asarray(skip, dtype=bool).copy()
    rows = 4 * n + 8
    if kind == "i":
        # _constants per problem, vectorised (a loop over a thousand problems
        # would cost milliseconds); an exact solve needs the scale n + 1
        R = np.maximum(hi - lo, 0)
        s = np.floor(INT_LIMIT / (rows * 3.0 * np.maximum(R, 1)) * (1 - 1e-9))
        status |= s < n + 1
        scale = np.full(k, n + 1, dtype=np.int64)
        R = np.where(status, 0, R)
        Rs = R * (n + 1)
        eps0 = np.maximum(1, Rs // EPS0_DIV)
        big = Rs + eps0
        floor = -rows * (Rs + big + 1)
        cmin = np.where(status, 0, lo).astype(np.int64)
        base = np.ones(k)
    else:
        status |= ~np.isfinite(lo)                        # every entry forbidden
        lo = np.where(status, 0.0, lo)
        hi = np.where(status, 0.0, hi)
        R = hi - lo
        base = np.maximum(R, np.maximum(np.abs(lo), np.abs(hi)))
        base = np.where(base > 0, base, 1.0)
        eps0 = base / EPS0_DIV
        big = np.maximum(R, base * FLOAT_EPS_REL) + eps0
        floor = -rows * (base + big) * 2.0
        scale = np.ones(k, dtype=np.int64)
        cmin = np.zeros(k)
    dt = np.int64 if kind == "i" else np.float64
    arr = {"scale": scale, "cmin": cmin.astype(dt), "base": base.astype(np.float64), "eps0": eps0.astype(dt),
           "big": big.astype(dt), "floor": floor.astype(dt)}
    status = status.astype(np.int32)
    bt = BatchState(backend, xp, k, n, kind, C, *(xp.asarray(arr[name]) if backend == "cupy" else arr[name]
                                                 for name in ("scale", "cmin", "base", "eps0", "big", "floor")))
    bt.x = xp.full((k, n), -1, dtype=np.int32)
    bt.status = xp.asarray(status)
    bt.schedule = BATCH_SCHEDULE
    bt.theta = THETA
    return bt
