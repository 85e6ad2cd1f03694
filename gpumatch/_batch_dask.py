"""The Dask driver of :mod:`gpumatch.batch`: the problems go to the
workers in chunks, one task each, and the results come back in order.

Each chunk task runs :func:`gpumatch._batch_plan._solve_chunk` on a worker, which
re-packs its problems by their true sizes there.  The client plans the
chunks, hands them out as the workers free up (:class:`_Feed`) and gathers
the results as chunks finish.
"""

from __future__ import annotations

import heapq
import ipaddress

from . import _batch_plan as _batch

_DASK_HINT = "pip install 'gpumatch[dask]'"

#: With a Dask client: chunks per worker thread, and problems per chunk at
#: most, for problems of unknown size (Futures, :func:`_group_unknown`):
#: enough chunks that the workers finish close together, few enough that
#: Dask's cost per task stays small.
UNKNOWN_CHUNKS_PER_WORKER = 8
UNKNOWN_CHUNK_MAX = 16


def import_distributed():
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(f"client= needs dask.distributed: {_DASK_HINT}") from exc
    return distributed


def run(client, kind, items, sizes, backend, perm_type, options, errors, progress, pack_edges, results):
    """Solve `items` on the workers of `client`, filling `results` in place
    (the arguments as :func:`gpumatch.batch._run` has them; `sizes` is None
    where a problem's size is not known here: files and Futures)."""
    distributed = import_distributed()
    try:
        nthreads = client.nthreads()
        workers = max(1, sum(nthreads.values()))
    except Exception:  # pragma: no cover - a client without nthreads
        nthreads, workers = {}, 1
    direct = _gather_direct(client, nthreads)
    # Chunks: the packing rule, with a smaller budget when the batch would
    # otherwise give fewer than two chunks per worker thread; each chunk is
    # re-packed on its worker by the problems' true sizes.
    # The backend is resolved on the workers: chunk with the GPU budget (the
    # larger), the workers re-pack with their own when pack_edges is None.
    limit = _batch.PACK_EDGES["cupy"] if pack_edges is None else pack_edges
    known = sum(s for s in sizes if s is not None)
    budget = max(1, min(limit, -(-known // (2 * workers)))) if limit else 0
    chunks = _batch._plan(sizes, budget, limit // 4)
    holder, weight = _where(client, kind, items, sizes)
    holder = _settled(holder, weight)
    chunks = _group_unknown(chunks, sizes, workers, holder, weight, nthreads)
    payloads = [[items[i] for i in idx] for idx in chunks]
    # Matrices go to the workers by one scatter; paths travel in the task and
    # are read there; Futures (data already on the cluster) are resolved by
    # Dask where the task runs.
    in_memory = [k for k, p in enumerate(payloads)
                 if any(not _batch._is_path(_batch._item_obj(kind, it)) for it in p)
                 and not any(_batch._is_future(_batch._item_obj(kind, it)) for it in p)]
    if in_memory:
        scattered = client.scatter([_batch._Payload(payloads[k]) for k in in_memory], hash=False)
        for k, fut in zip(in_memory, scattered):
            payloads[k] = fut
    feed = _Feed([_place(holder, c) for c in chunks], [_chunk_weight(weight, c) for c in chunks], nthreads)
    ac = distributed.as_completed()
    futures, position = [], {}   # every task submitted; a task's key -> its chunk's position

    def submit(picks):
        _submit(client, picks, futures, position, ac, kind, chunks, payloads, backend, perm_type, options,
                pack_edges)

    bar = _batch._progress_bar(progress, len(items), kind)
    try:
        submit(feed.start())
        done = [False] * len(items)
        first_open, worst = 0, None   # every problem before first_open is in
        # Results as the chunks finish, one gather per group of finished ones
        # (a Future.result() per chunk, in order, was a round trip each);
        # each finished chunk lets its workers take the next one.
        for finished in ac.batches():
            # the next chunks go before these results come back
            submit([pick for fut in finished for pick in feed.finished(position[fut.key])])
            for fut, got in zip(finished, client.gather(finished, direct=direct)):
                k = position[fut.key]
                for i, r in zip(chunks[k], got):
                    results[i] = r
                    done[i] = True
                if errors == "raise":
                    worst = _batch._first_error(results, chunks[k], worst)
                if bar is not None:
                    bar.update(len(chunks[k]))
            while first_open < len(items) and done[first_open]:
                first_open += 1
            if errors == "raise" and worst is not None and first_open > worst:
                break   # every problem before the failing one is in
    finally:
        client.cancel([f for f in futures if not f.done()])
        if bar is not None:
            bar.close()
    if errors == "raise" and worst is not None:
        raise results[worst]


def _submit(client, picks, futures, position, ac, kind, chunks, payloads, backend, perm_type, options,
            pack_edges):
    """Submit the chunks `picks` (``(position, workers)``, workers None: where
    Dask puts it, by its data) as tasks, each appended to `futures`, its key
    mapped to its chunk's position in `position` and added to the
    ``as_completed`` `ac`: one ``client.map`` per set of workers (one
    message to the scheduler each: a submit per chunk let the client's
    10 ms batching start one worker that much after the other)."""
    groups = {}
    for k, where in picks:
        groups.setdefault(where, []).append(k)
    for where, ks in groups.items():
        n = len(ks)
        got = client.map(_batch._solve_chunk, [kind] * n, [chunks[k] for k in ks], [payloads[k] for k in ks],
                         [backend] * n, [perm_type] * n, [options] * n, [pack_edges] * n, pure=False,
                         workers=list(where) if where else None, allow_other_workers=bool(where))
        for k, fut in zip(ks, got):
            futures.append(fut)
            position[fut.key] = k
            ac.add(fut)


def _place(holder, chunk):
    """The workers holding every problem of `chunk` (a sorted tuple), or None."""
    if holder is None:
        return None
    where = holder[chunk[0]]
    return where if where and all(holder[i] == where for i in chunk) else None


def _bytes(weight, i):
    """Problem `i`'s bytes as :func:`_where` gives them, 1 where unknown."""
    return weight[i] if weight is not None and weight[i] else 1


def _chunk_weight(weight, chunk):
    return sum(_bytes(weight, i) for i in chunk)


def _threads(nthreads, where):
    """Worker threads of the workers `where` (at least one)."""
    return max(1, sum(int(nthreads.get(w, 1)) for w in where))


#: Chunks a place (the workers holding their data) has in flight, beyond
#: one per worker thread: the next waits on the worker while one runs, so
#: the trip of a finished chunk's news to the client and of the next task
#: back is hidden.
AHEAD = 1


class _Feed:
    """Which chunk goes where, and when: the policy of :func:`run`, apart
    from Dask so that it can be tested alone.

    `places[k]` is the tuple of workers holding chunk `k`'s data (None:
    Dask decides, the chunk goes at once), `weights[k]` its bytes,
    `nthreads` the workers' thread counts.  With at most one place every
    chunk goes at once.  Otherwise each place is given its own chunks in
    order, a worker thread's worth plus :data:`AHEAD` at a time, and a
    place whose own chunks are all given out takes the last (smallest)
    chunk of the place with the most bytes still waiting; Dask moves that
    chunk's data.  Two workers of one machine run at speeds that differ
    by a fifth or more from one call to the next (measured on two H100s:
    the same halves took 191 and 241 ms); chunks fixed to the worker
    holding their data left the faster one idle for that difference.
    """

    def __init__(self, places, weights, nthreads):
        self.places, self.weights = places, weights
        self.queues = {}
        for k, p in enumerate(places):
            if p is not None:
                self.queues.setdefault(p, []).append(k)
        if self.queues:   # a worker holding none of the data helps the others
            for w in sorted(nthreads or {}):
                if not any(w in p for p in self.queues):
                    self.queues[(w,)] = []
        self.fed = len(self.queues) > 1
        self.depth = {p: _threads(nthreads or {}, p) + AHEAD for p in self.queues}
        self.busy = dict.fromkeys(self.queues, 0)
        self.ran_at = {}

    def start(self):
        """The first chunks: ``(position, workers)`` pairs, in chunk order."""
        if not self.fed:
            for q in self.queues.values():
                q.clear()
            return [(k, None) for k in range(len(self.places))]
        picks = [(k, None) for k, p in enumerate(self.places) if p is None]
        for p, q in self.queues.items():   # own chunks first, in order
            while q and self.busy[p] < self.depth[p]:
                picks.append(self._give(p, q.pop(0), None))
        for p in self.queues:
            picks.extend(self._fill(p))
        return sorted(picks, key=lambda x: x[0])

    def finished(self, k):
        """Chunk `k` is back: the chunks its place takes next."""
        p = self.ran_at.pop(k, None)
        if p is None:
            return []
        self.busy[p] -= 1
        return self._fill(p)

    def _fill(self, p):
        picks = []
        while self.busy[p] < self.depth[p]:
            q = self.queues[p]
            if q:
                picks.append(self._give(p, q.pop(0), None))
                continue
            left = [(sum(self.weights[k] for k in qv), v) for v, qv in self.queues.items() if qv and v != p]
            if not left:
                break
            picks.append(self._give(p, self.queues[max(left)[1]].pop(), p))
        return picks

    def _give(self, p, k, where):
        self.busy[p] += 1
        self.ran_at[k] = p
        return k, where


def _gather_direct(client, workers) -> bool | None:
    """Whether to gather results straight from the workers (`workers`: their
    addresses) rather than through the scheduler, Dask's default: the
    client's own ``direct_to_workers`` when set, else yes for a cluster this
    client started (``client.cluster``, such as a ``LocalCUDACluster``)
    whose workers all listen on a loopback address: processes of this
    machine, which the client reaches as the scheduler does (a client
    connected by address keeps the default: a forwarded port can make a
    loopback address someone else's).  One hop instead of two: on a 2-core
    CPU, 121 MB of int32 results from two workers came back in 0.068-0.071 s
    instead of 0.095-0.105 s."""
    chosen = getattr(client, "direct_to_workers", None)
    if chosen is not None:
        return bool(chosen)
    if not workers or getattr(client, "cluster", None) is None:
        return None
    try:
        from distributed.comm import get_address_host

        hosts = {get_address_host(w) for w in workers}
    except Exception:  # an address of another kind: Dask's default
        return None
    for host in hosts:
        try:
            if not (host == "localhost" or ipaddress.ip_address(host).is_loopback):
                return None
        except ValueError:
            return None
    return True


def _group_unknown(chunks, sizes, workers, holder=None, weight=None, nthreads=None):
    """Chunks for the problems of unknown size (Futures: data already on
    the cluster) that ``batch._plan`` left one per chunk.

    A chunk only holds problems whose data the same workers hold
    (`holder`: problem index -> a sorted tuple of addresses, None where
    unknown), so that its task can run there without moving graphs
    between workers (:class:`_Feed` moves a chunk only to a worker that
    has run out of its own).  With `weight` (problem index -> bytes of its data,
    :func:`_where`) for every such problem, see :func:`_group_weighted`.
    Otherwise about :data:`UNKNOWN_CHUNKS_PER_WORKER` chunks per worker
    thread of at most :data:`UNKNOWN_CHUNK_MAX` consecutive problems, a
    problem of known size ending the runs, in the order of their first
    problems.  A Dask task costs about 1-3 ms besides its solve
    (scheduling, the result's trip back).  100 graphs of 0.1-0.4M edges on
    the workers of a 2-core machine (Numba, median of 7, interleaved): one
    worker 1.49 s a task each, 1.09 s grouped (0.90 s in one process); two
    workers 0.86 s and 0.64 s."""
    def lone(c):
        return len(c) == 1 and sizes[c[0]] is None

    count = sum(1 for c in chunks if lone(c))
    if count <= workers:
        return chunks
    if weight is not None and all(weight[c[0]] for c in chunks if lone(c)):
        return _group_weighted(chunks, [c[0] for c in chunks if lone(c)], holder, weight, workers,
                               nthreads or {})
    per = max(1, min(UNKNOWN_CHUNK_MAX, -(-count // (UNKNOWN_CHUNKS_PER_WORKER * workers))))
    out, runs = [], {}
    for c in chunks:
        if lone(c):
            run = runs.setdefault(holder[c[0]] if holder is not None else None, [])
            run.append(c[0])
            if len(run) == per:
                out.append(list(run))
                run.clear()
            continue
        out.extend(run for run in runs.values() if run)
        runs = {}
        out.append(c)
    out.extend(run for run in runs.values() if run)
    out.sort(key=lambda c: c[0])
    return out


#: With the bytes of every Future known (:func:`_group_weighted`): the
#: smallest chunk's share of a worker thread's problems.
LAST_CHUNK_SHARE = 1 / 16


def _group_weighted(chunks, lone, holder, weight, workers, nthreads):
    """Chunks of the Futures `lone` (problem indices) whose data's bytes
    `weight` gives: the other chunks first, then each holder's chunks,
    round by round.

    A holder's problems are dealt into chunks of half the problems left
    per worker thread, down to :data:`LAST_CHUNK_SHARE` (:func:`_dealt`),
    each drawn across the sizes: a solve costs a fixed time besides its
    size (on an H100, about 1.5 ms and 2 ns an edge for these graphs), and
    a chunk with its share of both the count and the bytes has its share
    of the time whatever that mix.  The results of the large chunks travel
    back while the worker goes on, and what finishes last is small.  Two
    H100s, 200 graphs of 0.1-2M edges, 15 runs interleaved: two workers
    0.454 s (median) against 0.476 s with chunks of 13 consecutive
    problems (faster in 10 of the 15), 5 chunks a worker instead of 8."""
    held = {}
    for i in lone:
        held.setdefault(holder[i] if holder is not None else None, []).append(i)

    def threads(where):
        return max(1, workers) if where is None else _threads(nthreads, where)

    # A holder with more than its threads' share of the bytes deals as if it
    # had the threads of that share: the others take its later chunks
    # (:class:`_Feed`), so its chunks are cut for all the threads.
    total = sum(weight[i] for i in lone)
    rounds = [_dealt(sorted(idx, key=lambda i: (-weight[i], i)),
                     max(threads(h), workers * sum(weight[i] for i in idx) / total))
              for h, idx in held.items()]
    alone = set(lone)
    out = [c for c in chunks if not (len(c) == 1 and c[0] in alone)]
    for r in range(max((len(x) for x in rounds), default=0)):
        out.extend(x[r] for x in rounds if r < len(x))
    return out


def _shares(threads):
    """Shares of a worker's problems, chunk by chunk: half of what is left
    per thread, down to :data:`LAST_CHUNK_SHARE` per thread."""
    out, left, floor = [], 1.0, LAST_CHUNK_SHARE / threads
    while left > 1e-9:
        share = min(left, max(left / (2 * threads), floor))
        out.append(share)
        left -= share
    return out


def _dealt(order, threads):
    """`order` (problem indices, largest first) dealt into chunks of
    :func:`_shares`: the next problem to the chunk whose next place is
    due first (its count, plus a half, over its share), so that each chunk
    has its share of the count and, its places spread across the sizes,
    about its share of the bytes."""
    shares = _shares(threads)[:len(order)]
    out = [[] for _ in shares]
    due = [(0.5 / share, k) for k, share in enumerate(shares)]
    heapq.heapify(due)
    for i in order:
        _, k = heapq.heappop(due)
        out[k].append(i)
        heapq.heappush(due, ((len(out[k]) + 0.5) / shares[k], k))
    return [c for c in out if c]


def _settled(holder, weight):
    """`holder` with the data held by several workers given to one of them:
    the one holding the fewest bytes so far (largest first; `weight` as
    :func:`_where` gives it).  A chunk handed out to another worker leaves
    a copy there, which Dask may drop a few seconds later; without this,
    such copies became a holder of their own whose handful of problems
    took a set of chunks each call, and came and went from call to call.
    A copy still makes that worker's taking the chunk later cost nothing."""
    if holder is None or all(h is None or len(h) == 1 for h in holder):
        return holder
    size = [_bytes(weight, i) for i in range(len(holder))]
    load = {}
    for i, h in enumerate(holder):
        if h is not None and len(h) == 1:
            load[h[0]] = load.get(h[0], 0) + size[i]
    out = list(holder)
    for i in sorted((i for i, h in enumerate(holder) if h is not None and len(h) > 1), key=lambda i: (-size[i], i)):
        w = min(holder[i], key=lambda a: (load.get(a, 0), a))
        load[w] = load.get(w, 0) + size[i]
        out[i] = (w,)
    return out


def _where(client, kind, items, sizes):
    """``(holder, weight)``: per problem, the addresses of the workers
    holding its data (a sorted tuple) and the bytes Dask counts for it
    (``client.nbytes``), for Futures; None for the others and where
    unknown; both None where no problem is a Future (two calls to the
    scheduler)."""
    futures = {i: _batch._item_obj(kind, it) for i, it in enumerate(items)
               if sizes[i] is None and _batch._is_future(_batch._item_obj(kind, it))}
    if not futures:
        return None, None
    try:
        who = client.who_has(list(futures.values()))
    except Exception:  # pragma: no cover - a client without who_has: no grouping by holder
        return None, None
    try:
        nbytes = client.nbytes([f.key for f in futures.values()], summary=False)
    except Exception:  # pragma: no cover - a client without nbytes: chunks by count
        nbytes = {}
    holder, weight = [None] * len(items), [None] * len(items)
    for i, f in futures.items():
        where = who.get(f.key) or ()
        holder[i] = tuple(sorted(where)) if where else None
        b = nbytes.get(f.key)
        weight[i] = int(b) if isinstance(b, (int, float)) and b > 0 else None
    return holder, weight
