"""The Dask driver of :mod:`gpumatch.batch`: the problems go to the
workers in chunks, one task each, and the results come back in order.

Each chunk task runs :func:`gpumatch.batch._solve_chunk` on a worker, which
re-packs its problems by their true sizes there.  The client only plans the
chunks, submits them and gathers the results as chunks finish.
"""

from __future__ import annotations

import ipaddress

from . import batch as _batch

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
    chunks, moved = _group_unknown(chunks, sizes, workers, holder, weight, nthreads)
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
    futures = _submit(client, chunks, payloads, moved, (kind, backend, perm_type, options, pack_edges))
    try:
        if _batch._show_progress(progress, len(items)):
            distributed.progress(futures)
        position = {fut.key: k for k, fut in enumerate(futures)}
        done = [False] * len(items)
        first_open, worst = 0, None   # every problem before first_open is in
        # Results as the chunks finish, one gather per group of finished ones
        # (a Future.result() per chunk, in order, was a round trip each).
        for finished in distributed.as_completed(futures).batches():
            for fut, got in zip(finished, client.gather(finished, direct=direct)):
                k = position[fut.key]
                for i, r in zip(chunks[k], got):
                    results[i] = r
                    done[i] = True
                if errors == "raise":
                    worst = _batch._first_error(results, chunks[k], worst)
            while first_open < len(items) and done[first_open]:
                first_open += 1
            if errors == "raise" and worst is not None and first_open > worst:
                break   # every problem before the failing one is in
    finally:
        client.cancel([f for f in futures if not f.done()])
    if errors == "raise" and worst is not None:
        raise results[worst]


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


def _submit(client, chunks, payloads, moved, args):
    """One Future per chunk, in order: the chunks that follow their data by
    one ``client.map`` (one message to the scheduler: a ``client.submit``
    per chunk let the client's 10 ms batching start one worker that much
    after the other), the chunks `moved` (chunk index -> worker) by one map
    per worker they go to, restricted to it (loosely: another worker takes
    them if it leaves)."""
    kind, backend, perm_type, options, pack_edges = args

    def mapped(ks, **where):
        n = len(ks)
        return client.map(_batch._solve_chunk, [kind] * n, [chunks[k] for k in ks], [payloads[k] for k in ks],
                          [backend] * n, [perm_type] * n, [options] * n, [pack_edges] * n, pure=False, **where)

    futures = [None] * len(chunks)
    groups = {None: [k for k in range(len(chunks)) if k not in moved]}
    for k, target in moved.items():
        groups.setdefault(target, []).append(k)
    for target, ks in groups.items():
        if ks:
            where = {} if target is None else {"workers": [target], "allow_other_workers": True}
            for k, fut in zip(ks, mapped(ks, **where)):
                futures[k] = fut
    return futures


def _group_unknown(chunks, sizes, workers, holder=None, weight=None, nthreads=None):
    """Chunks for the problems of unknown size (Futures: data already on
    the cluster) that ``batch._plan`` left one per chunk; returns
    ``(chunks, moved)``, `moved` mapping a chunk's index to the worker it
    should run on (empty unless problems are moved to balance the load).

    With `weight` (problem index -> bytes of its data, :func:`_where`) for
    every such problem: see :func:`_group_weighted`.  Otherwise about
    :data:`UNKNOWN_CHUNKS_PER_WORKER` chunks per worker thread of at most
    :data:`UNKNOWN_CHUNK_MAX` problems each, in the order of their first
    problems; with `holder` (problem index -> the workers that hold its
    data, a tuple, None where unknown) a chunk only holds problems of one holder, so
    its task runs there without moving graphs between workers; otherwise
    (and within a holder) consecutive problems, a problem of known size
    ending the runs.  A Dask task costs about 1-3 ms besides its solve
    (scheduling, the result's trip back).  100 graphs of 0.1-0.4M edges on
    the workers of a 2-core machine (Numba, median of 7, interleaved): one
    worker 1.49 s a task each, 1.09 s grouped (0.90 s in one process); two
    workers 0.86 s and 0.64 s."""
    def lone(c):
        return len(c) == 1 and sizes[c[0]] is None

    count = sum(1 for c in chunks if lone(c))
    if count <= workers:
        return chunks, {}
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
    return out, {}


#: With sizes known for Futures (:func:`_group_weighted`): the smallest
#: chunk's share of a worker thread's work, and the most a worker takes
#: over from others, as a share of the work whose data it holds.
LAST_CHUNK_SHARE = 1 / 16
MOVE_SHARE = 1 / 4


def _group_weighted(chunks, lone, holder, weight, workers, nthreads):
    """Chunks of the Futures `lone` (problem indices), whose data's bytes
    `weight` gives: ``(chunks, moved)`` as :func:`_group_unknown`.

    Each holder's problems in chunks of half the work left per worker
    thread, down to :data:`LAST_CHUNK_SHARE` of it (:func:`_dealt`): the
    results of the large chunks travel back while the worker goes on, and
    what finishes last is small.  The other chunks come first, then the
    holders' chunks round by round.  Work is bytes plus a fixed cost per
    problem (on an H100, a G-PR solve of a 100k-edge graph took about
    1.4 ms, of a 2M-edge graph about 7 ms: the fixed cost is that of half
    a million edges, about the mean graph of the benchmark's batch).

    A holder with more work per thread than another hands its smallest
    problems over while that lowers the larger of the two loads, up to
    :data:`MOVE_SHARE` of the work the taker holds itself (Dask fetches
    the data while the taker solves its own; a worker that holds nothing
    takes nothing: fetching a graph can take longer than solving it).
    Data held by several workers (a copy an earlier move left) goes to the
    one of them with the least work.  Both kinds of chunk come last,
    restricted to their worker."""
    held, shared = {}, []
    for i in lone:
        where = holder[i] if holder is not None else None
        if where is not None and len(where) > 1:
            shared.append(i)
        else:
            held.setdefault(where[0] if where else None, []).append(i)
    # a solve costs a fixed time besides its size: counted as the bytes of
    # a problem of the batch's mean size
    mean = sum(weight[i] for i in lone) / max(1, len(lone))
    cost = {i: weight[i] + mean for i in lone}

    def threads(h):
        return max(1, int(nthreads.get(h, 1))) if h is not None else max(1, workers)

    def largest_first(idx):
        return sorted(idx, key=lambda i: (-cost[i], i))

    # data on several workers (a copy left by an earlier move, a replicate):
    # to the one of them with the least work so far, largest first; such a
    # chunk is restricted to that worker, or Dask might run it on another
    load = {h: sum(cost[i] for i in idx) for h, idx in held.items()}
    placed = {}
    for i in largest_first(shared):
        h = min(holder[i], key=lambda w: (load.get(w, 0) / threads(w), w))
        placed.setdefault(h, []).append(i)
        load[h] = load.get(h, 0) + cost[i]
    for h, idx in _balance(held, cost, nthreads, load).items():
        placed.setdefault(h, []).extend(idx)
    rounds = [_dealt(largest_first(idx), threads(h)) for h, idx in held.items() if idx]
    alone = set(lone)
    out = [c for c in chunks if not (len(c) == 1 and c[0] in alone)]
    for r in range(max((len(x) for x in rounds), default=0)):
        out.extend(x[r] for x in rounds if r < len(x))
    moved = {}
    for target, idx in placed.items():
        for c in _dealt(largest_first(idx), threads(target)):
            moved[len(out)] = target
            out.append(c)
    return out, moved


def _shares(threads):
    """Shares of a worker's work, chunk by chunk: half of what is left per
    thread, down to :data:`LAST_CHUNK_SHARE` per thread."""
    out, left, floor = [], 1.0, LAST_CHUNK_SHARE / threads
    while left > 1e-9:
        share = min(left, max(left / (2 * threads), floor))
        out.append(share)
        left -= share
    return out


def _dealt(order, threads):
    """`order` (problem indices, largest first) dealt into chunks of
    :func:`_shares`: each problem to the chunk furthest below its share of
    the problems dealt so far, so that each chunk has its share of the
    count and, drawn across the sizes, about its share of the work."""
    shares = _shares(threads)[:len(order)]
    total = sum(shares)
    out = [[] for _ in shares]
    for j, i in enumerate(order):
        k = max(range(len(shares)), key=lambda k: (shares[k] / total * (j + 1) - len(out[k]), -k))
        out[k].append(i)
    return [c for c in out if c]


def _balance(held, weight, nthreads, placed):
    """Problems handed from the holders with the most work per thread to
    those with the least (see :func:`_group_weighted`): ``{worker: [problem
    indices]}``, taken out of `held` (holder -> problem indices) in place;
    `placed`: each worker's work so far (shared data placed included)."""
    load = {w: placed.get(w, 0) for w in nthreads}
    own = dict(load)
    spare = {h: sorted(idx, key=lambda i: (weight[i], i)) for h, idx in held.items() if h in load}
    moves = {}
    taken = dict.fromkeys(load, 0)
    gave = set()

    def per(w):
        return load[w] / max(1, int(nthreads[w]))

    while len(load) > 1:
        h = max(load, key=per)
        takers = [w for w in load if own[w] > 0 and w != h and w not in gave]
        if not takers or not spare.get(h) or taken[h]:
            break   # a taker on top: the loads are as even as moves make them
        t = min(takers, key=per)
        i = spare[h][0]
        w_i = weight[i]
        after = max((load[h] - w_i) / max(1, int(nthreads[h])), (load[t] + w_i) / max(1, int(nthreads[t])))
        if after >= per(h) or taken[t] + w_i > own[t] * MOVE_SHARE:
            break
        spare[h].pop(0)
        held[h].remove(i)
        load[h] -= w_i
        load[t] += w_i
        taken[t] += w_i
        gave.add(h)
        moves.setdefault(t, []).append(i)
    return moves


def _where(client, kind, items, sizes):
    """``(holder, weight)``: per problem, the addresses of the workers
    holding its data (a sorted tuple) and the bytes Dask counts for it (``client.nbytes``), for
    Futures; None for the others, where unknown, or both None where no
    problem is a Future (two calls to the scheduler)."""
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
