"""The tuning constants of the max-flow solvers, in one place.

:data:`TUNING` steers :func:`~gpumatch.flow.maximum_flow` (and every solve
from scratch of :class:`~gpumatch.flow.MaxFlowSolver`); :data:`REPAIR`
steers the solver's repairs after a batch of capacity changes.  Next to
each key: what it trades and how it was measured (on an H100 unless said
otherwise).  The "rounds" named below are those of the tuning log that
``benchmarks/results/h100_dynamic.md`` kept; it is in the git history.
Benchmarks may change these dicts in place (the solvers read them at each
call); :mod:`gpumatch.flow._maxflow` and :mod:`gpumatch.flow.dynamic._repair`
re-export them under the same names.
"""

from __future__ import annotations

__all__ = ["TUNING", "REPAIR"]

#: Tuning knobs of the CUDA kernels (benchmarks may change them).
#: ``tile``: lanes per active vertex (None: by mean degree); ``cycles``:
#: push/relabel operations per vertex and launch; ``freq``: first global
#: relabel period in iterations (None: ``max(100, V**2 / (1000 E))``);
#: ``adaptive``: adapt the period to the measured relabel/discharge times.
#: ``max_iterations``: per-phase guard against a livelock (None: none).
#: ``max_freq``: upper bound of the adapted period (None: 2**20); 1000 measured
#: best overall on grid, genrmf and Delaunay networks (H100).
#: ``batch``: discharge launches (and BFS levels) queued between two
#: read-backs of the worklist length (the kernels read it on the device).
#: ``greedy``: start phase 1 by sending the source's flow straight on to the
#: sink along paths of one or two arcs (reverse CSR only).
#: ``direct_return``: after phase 1, return stranded excess at once along
#: the reverse of the source's arcs, before (often instead of) phase 2.
#: ``profile``: synchronise the device around each step so that
#: ``stats["time"]`` splits setup and phases exactly (slower; off by default).
#: ``relabel_time_ratio``: with ``adaptive``, a global relabel also runs as
#: soon as the discharges since the last one took this many times its
#: duration (checked at each read-back; None: only by period).
#: ``bfs_loop``: BFS frontiers of at most this many vertices run in one
#: persistent block, level after level without a launch (reverse CSR; 0: never).
#: ``hub_degree``: vertices with more arcs (out + in) than this are
#: discharged by a whole block, and a BFS level scans their arcs in segments
#: of several blocks (reverse CSR; None: never), so that the hubs of skewed
#: graphs and the terminals of unit networks do not serialise on one lane
#: group.
#: ``discharge_loop``: discharge iterations over worklists of at most this
#: many vertices run in one persistent block (reverse CSR; 0: never; the
#: dynamic solver's repairs set their own value).
#: ``bfs_coop``: a BFS (global relabel) runs all its levels in one
#: cooperative launch, a grid-wide barrier between levels (reverse CSR,
#: devices that launch cooperatively); off: a launch per level or the
#: one-block loop, with a read-back every ``batch`` levels.
#: ``discharge_coop``: discharge iterations over worklists of at most this
#: many vertices run in one cooperative launch, a grid-wide barrier between
#: iterations, before ``discharge_loop`` is considered (reverse CSR, devices
#: that launch cooperatively, networks whose only hubs are the terminals;
#: 0: never; the dynamic solver's repairs set their own value).  8192: on
#: an H100 the benchmark's solves from scratch (``bench_dynamic.py``
#: networks, medians of eight, interleaved) went from 628 to 505 ms on
#: GENRMF, 182 to 167 on RLG and 96 to 83 on the unit network, whose
#: last thousands of iterations run over short worklists.
#: ``pairs_share``, ``pairs_after``, ``pairs_freq``: with ``adaptive``, from
#: the ``pairs_after``-th global relabel on, a solve checks after each one
#: how much of the preflow runs round anti-parallel pairs of arcs (reverse
#: CSR; the pairs are searched once, at the first check); once that is at
#: least the share ``pairs_share`` of the preflow's mass, the rest of the
#: solve keeps a fixed period of ``pairs_freq`` iterations
#: (``stats["pairs_fixed"]``; None: never).  Excess that runs back and
#: forth along pairs is excess pushed on stale heights: on GENRMF (80 % of
#: the arcs paired) the share passes 0.5 by the 5th-10th of 25-82 relabels
#: and stays at 0.75, and the adaptive period, which grows to ``max_freq``
#: there, took 394-404 ms (32 x 256 frames) and 1 381-1 507 ms (64 x 64)
#: on an H100 against 318-331 and 860-966 with a fixed period of 200; the
#: dynamic solver's small GENRMF repairs after fixed-period solves took
#: less than half as long (383-402 ms in all against 831), and with this
#: rule its GENRMF inc 0.1 % and mixed 0.01 % rows passed 5x in four of
#: four budgeted runs (``benchmarks/probe_scratch_period.py``, round 34 of
#: ``benchmarks/results/h100_dynamic.md``).  The segmentation networks of
#: ``examples/min_cut_segmentation.py`` (71 % paired) stay at 0.27 and
#: need the adaptive period (1024 x 1024 pixels: 35 ms against 58 fixed at
#: 200); they finish within 4-5 relabels, before ``pairs_after``.
#: ``unit_matching``: solve a unit bipartite network (the source's arcs of
#: capacity 1 into ``L``, the sink's of capacity 1 from ``R``, every other
#: arc ``L -> R``) by G-PR matching on the same backend instead of
#: push-relabel (:mod:`gpumatch.flow._unit`; the Numba engine's switch is
#: ``TUNING["unit_matching"]`` of :mod:`gpumatch.flow._cpu`).  Push-relabel
#: moves the units of a long augmenting path one arc per discharge
#: iteration: the unit network of a shuffled 300k ladder took 0.98 s on an
#: H200, where the matching of the ladder itself took 0.24.
#: ``series``: contract chains of vertices with one arc in and one out
#: before push-relabel (:mod:`gpumatch.flow._series`; device backends), when
#: they are at least ``_series.MIN_SHARE`` of the vertices.
TUNING: dict = {"tile": None, "cycles": 8, "freq": None, "adaptive": True, "max_iterations": None,
                "batch": 64, "max_freq": 1000, "greedy": True, "direct_return": True, "profile": False,
                "hub_degree": 1024, "relabel_time_ratio": 5.0,
                "bfs_loop": 512, "discharge_loop": 0, "bfs_coop": True, "discharge_coop": 8192,
                "pairs_share": 0.5, "pairs_after": 6, "pairs_freq": 200, "unit_matching": True, "series": True,
                "host_finish": {"fixed_s": 0.005, "entry_s": 150e-9, "tiny": 1024, "level_s": 3e-6,
                                "backstop": 2.0, "backends": ("cupy",),
                                "numpy": {"level_s": 50e-6, "backstop": float("inf"), "tiny": 0}}}
#: ``host_finish`` (None: never): on a path-like network (long augmenting
#: paths, a handful of active vertices) the device moves excess one arc per
#: discharge iteration, where the compiled CPU engine walks the same path
#: in a loop.  At each global relabel of a solve on one of ``backends``
#: after a window of at most ``tiny`` active vertices, the heights are
#: exact, so the excess furthest from its target needs at least that many
#: more iterations; at the last window's seconds per iteration, when that
#: projection passes the host's estimate from scratch (``fixed_s + entry_s
#: * (V + nnz)``, the copies included), the network goes to the host engine
#: (``backend="numba"``: unit bipartite networks to its matching engine,
#: others to highest-label push-relabel) and the answer comes back to the
#: device.  A global relabel is itself a BFS of one level per arc of the
#: longest shortest path (a launch or a grid barrier each): one that is
#: still going after ``fixed_s + entry_s * (V + nnz)`` over ``level_s``
#: levels hands the network over too.  H200 with its host (16 cores), a
#: shuffled path of 100k vertices: 17.3 s before, 0.07 s now.  And as a
#: backstop, at a global relabel after ``backstop`` times the estimate
#: since the solve began, whatever the active set (the unit network of a
#: shuffled 300k chain, where thousands of units queue along the chain:
#: 91-193 s before); the estimate is generous (random and mesh networks
#: run far inside it), so this bounds the loss to about that many times the
#: host's time.
#:
#: ``numpy`` (None: never): the same hand-over on the NumPy backend when
#: Numba imports, with these keys in place of the device's.  Its kernels stay
#: twins of the device's; the driver moves excess one arc per iteration
#: there too, at 50-100 us per iteration and per BFS level (Python's
#: overhead, 2-core CPU), so a shuffled path of 20k vertices took 38 s
#: (SciPy: 11 ms) and the unit network of a shuffled 20k ladder 32 s.  On
#: NumPy the hand-over comes only from the depth of a global relabel (a
#: count of levels: deterministic, as the twin is): the projection over
#: windows of few active vertices is off (``tiny`` 0; on small networks
#: every window is that small) and so is the backstop (a clock: a loaded
#: machine sent the dynamic solver's small unit networks to the host), so
#: NumPy solves of random, mesh and RLG networks keep their own schedule
#: (the dynamic solver's tests run it).


#: Tuning of the repair phases (benchmarks may change it).
#: ``group``: discharge launches queued before the first read-back of a
#: phase (and after each global relabel); the group doubles after every
#: read-back up to ``TUNING["batch"]`` of :mod:`gpumatch.flow._maxflow`, so
#: a worklist that empties after two launches does not pay for 64.
#: ``relabel_ratio``: a global relabel runs as soon as the discharges since
#: the last one took this many times as long as it did (None: never before
#: the worklist is empty), so that stuck excess is lifted by a BFS instead
#: of climbing one height step per launch.
#: ``max_period``: a global relabel runs at the latest after this many
#: discharge iterations (None: no bound).
#: ``lazy_far``: a relabel skips the BFS from the far targets (height
#: ``V - 1``) when the BFS from the near ones labelled every vertex with
#: excess, once the unlabelled ones sent what they could straight to the
#: far terminal along paths of one or two arcs.
#: ``discharge_coop``: discharge iterations over worklists of at most this
#: many vertices run in one cooperative launch over the whole GPU, a
#: grid-wide barrier between iterations (0: never; see ``discharge_coop``
#: of ``_maxflow.TUNING``); a repair moves a few units of excess along long
#: paths, where one launch per hop would cost far more than the hop.
#: ``discharge_loop``: where that kernel cannot run (a device without
#: cooperative launches, a hub that can hold excess), iterations over
#: worklists of at most this many vertices run in one persistent block
#: instead (0: never).  Measured on an H100 (round 21 of
#: the dynamic-flow tuning log (``benchmarks/results/h100_dynamic.md`` in the git history)): the block loop served lists of
#: 256-512 vertices in 27-57 us per iteration against 14 us for a launch
#: over the whole GPU, and the cooperative kernel took forced repairs of
#: RLG 0.1 % decreases from 134 ms to 88 (median of six), mixed batches
#: from 97 to 70 and GENRMF 0.01 % decreases from 118 to 87.
#: ``early_stop``: the BFS of a relabel in phases X and D stops once every
#: vertex with excess has a height.
#: ``paths``: phases X and D first route what they can along augmenting
#: paths inside each side of the cut (:mod:`gpumatch.flow.dynamic._paths`), so
#: push-relabel only finishes the rest.
#: ``unwind``: rounds at most of the flow cancelling that sends excess
#: left on the source side back to the source, and deficits left on the
#: sink side to the sink, along the arcs that brought the flow (one launch,
#: a round per arc of the path walked; 0: off, push-relabel does it); it
#: also serves the excess a relabel finds cut off from the near targets.
#: Off by default: a flow from scratch on GENRMF circulates (on
#: ``genrmf(32, 64)`` its arcs carried 4500 times the flow's value in all,
#: and more than half of those with flow lay on 2-cycles), so the walks
#: ran into the round limit there, and in an H100 A/B of RLG and GENRMF
#: decreases and mixed batches it did not pay (round 11 of
#: the dynamic-flow tuning log (``benchmarks/results/h100_dynamic.md`` in the git history); measured again in round 22 on
#: RLG alone, whose flow does not circulate: 1.2-6x slower in every row
#: of 0.01 % and 0.1 %).  On since round 25: the detour pass now leaves
#: the source side little but the excess of arcs cut across the kept cut,
#: which has to go back to the source (on RLG ~960 arcs away, where
#: push-relabel spent 740-960 iterations and two relabels on it); a solver
#: whose walk runs out of rounds takes its flow for one that circulates
#: and unwinds no more (``_unwind``), so GENRMF pays for one walk.  Forced
#: repairs on an H100 (round 25 of the dynamic-flow tuning log (``benchmarks/results/h100_dynamic.md`` in the git history),
#: medians of six batches, with the detour pass's changes of the round):
#: RLG dec 0.1 % 55 -> 44 ms, no push-relabel iteration left.
#: ``far_direct`` (with ``unwind``): where a phase's path pass over the
#: near side ran every tree to its end (phase X: the sink side's excess
#: reaches neither the sink nor a deficit there; phase D: no residual path
#: from the source reaches the source side's deficits) and the kept cut is
#: still sealed, what is left can only go to the far terminal, and the
#: walks take it there at once: phase X's excess back to the source (when
#: the source side has no deficit to take it), phase D's deficits towards
#: the sink.  Without it a crossing path pass of up to ``all_levels``
#: levels and a global relabel proved the same first; on RLG 0.1 %
#: decreases, whose few pairs that the detour pass drops lose flow for
#: good, that relabel was 7.4 of a 42 ms repair (round 25 of
#: the dynamic-flow tuning log (``benchmarks/results/h100_dynamic.md`` in the git history)).  In round 26, with the
#: detour pass's changes: no relabel left in those repairs (20 ms), and
#: GENRMF mixed 0.1 % 34.8 -> 23.0 ms in a single A/B round.
#: ``pushed_relabels``: a batch above ``small_batch`` whose increases pushed
#: flow across the kept cut (``stats["cut_pushes"]``) takes the relabel
#: schedule of ``small`` (its keys in ``_RELABEL_KEYS``: frequent,
#: early-stopping, split relabels), where the long periods were set for
#: decreases, whose excess the detour pass now places.  Off: in round 26
#: (the dynamic-flow tuning log (``benchmarks/results/h100_dynamic.md`` in the git history)) forced GENRMF inc 0.1 %
#: repairs went 80 -> 73 ms and the slowest GENRMF mixed 0.1 % ones 93-156
#: -> 53-54 ms, but RLG mixed 0.1 % 67 -> 76; in two benchmark runs GENRMF
#: inc 0.1 % gave 7.2x / 6.3x (4.2-6.4x without), GENRMF mixed 0.1 % was
#: still abandoned (0.86-0.92x), and unit mixed 0.1 % gave 1.06x / 0.94x
#: (4.4-4.95x in three of four runs without).
#: ``early_near``: a relabel of phase X or D stops early as with
#: ``early_stop`` (split at a sealed cut, as with ``split_relabel``) once
#: every full relabel of that phase found all of its excess able to reach
#: a near target (the phase's first relabel is always full).  Round 30
#: measured early stops for every batch above ``small_batch``: GENRMF
#: 1.4-1.8x faster, but RLG mixed 0.1 % 1.8x slower, its excess wandering
#: under labels that were only lower bounds while part of it needed the
#: far terminal.  The condition keeps the gain where the excess only has
#: to reach the near targets.  On an H100 (round 32 of
#: the dynamic-flow tuning log (``benchmarks/results/h100_dynamic.md`` in the git history)): the batch that decides GENRMF
#: inc 0.1 % took 60-85 ms in two budgeted runs with it and 89-92 without
#: (later, three runs of the final tree: 68-72 ms, 5.6-6.0x); forced, the
#: row went 75.7 -> 65.4 ms (medians of six) in one A/B and stayed at
#: 64-66 in another, where GENRMF mixed 0.1 % went 28.4 -> 21.6; RLG's and
#: the unit network's rows, where it seldom applies, within their noise.
#: ``scratch_adaptive``: False runs the solver's own solves from scratch
#: (its first solve, and those past ``rebuild_fraction`` or the time
#: budget) on the fixed relabel period of ``TUNING["freq"]`` (or its
#: formula) instead of the adaptive one; ``maximum_flow`` is not changed.
#: Their flows make GENRMF's later repairs several times cheaper: in two
#: budgeted runs on an H100 (round 33 of
#: the dynamic-flow tuning log (``benchmarks/results/h100_dynamic.md`` in the git history)) GENRMF mixed 0.1 % went 0.82x
#: -> 7.4x / 7.6x, mixed 0.01 % 5.4x -> 9.7-10.9x, inc 0.1 % 4.8-5.0x ->
#: 8.0-10.6x.  But on RLG and on the unit network's mixed batches those
#: solves took 40-80 % longer than with the adaptive period, and GENRMF's
#: of 10 % mixed batches 1.2-1.9x as long (RLG mixed 0.1 % fell to 0.49x,
#: past the 1.5x bound): off until the solver can choose per network.
#: ``cancel_2cycles``: after a solve from scratch, the flow that runs round
#: anti-parallel pairs of arcs is cancelled (same net flow, value and cut;
#: one pass over the pairs).  On ``genrmf(32, 64)`` that took the arcs'
#: total flow from 22.5e9 to 7.4e9 (value 5.0e6), still too much for the
#: walks above; off, as it did not pay in the same A/B.
#: ``split_relabel``: with ``early_stop``, a relabel of phase X or D
#: whose kept cut is sealed (no residual arc from the source side into the
#: sink side) runs two bounded BFS, from the near targets until the
#: excess of their side has a height and from the far targets over the
#: other side until its excess has one (``_Phase._relabel_split``).
#: Defaults measured on an H100 (``benchmarks/profile_dynamic.py``): a
#: ratio of 1 spent half of the long GENRMF and RLG repairs in relabels;
#: the early stop did not pay (the excess sits at all depths) and is off.
#: Round 12: ``max_period`` 32 with the early stop and the split relabel
#: cut the forced GENRMF and RLG repairs of 0.01 % decreases 2.5-4x (the
#: excess stops bouncing between narrow arcs), but made those of 0.1 %
#: batches 2-4x slower (more relabels of ~100 levels each), and in the
#: benchmark with the time budget the 0.01 % repairs still ran past it;
#: left off (the dynamic-flow tuning log (``benchmarks/results/h100_dynamic.md`` in the git history), round 12).
#: ``small_batch``, ``small``: the repair of a batch of at most
#: ``small_batch`` times the network's arcs (all changed since the last
#: solve) uses the keys of ``small`` instead (None or 0: never).  Round 13,
#: with each relabel's BFS in one cooperative launch, forced repairs on an
#: H100: the early-stopping, split relabel every 32 discharges made GENRMF
#: decreases and mixed batches 1.8-5.7x faster than the defaults at 0.01 %,
#: 0.03 % and 0.1 % of the arcs, RLG's 1.4-2.3x faster at 0.01 % but
#: 1.2-2.1x slower at 0.03 % and 0.1 %; hence the bound between the two.
#: ``cross_fill``: when phase X sent excess back across the kept cut (its
#: arcs are no longer all saturated, so the source may reach a deficit
#: through the sink side), phase D's path passes try to fill the deficits
#: the source side could not from the source over the whole network
#: before cancelling them towards the sink.  Without it such a repair
#: could end with an augmenting path, which the fallback F then finds
#: at about three times the cost.  Round 14, H100, in the benchmark's
#: sequence of unit batches (three runs of three): mixed batches of 0.1 %
#: took a median 23-36 ms with it and 31-35 ms without (the fallback ran
#: in 4 of 9 repairs with it, in all 9 without), those of 0.01 % 16-20
#: ms with it and 13-14 ms without (no fallback either way); so it is
#: off for small batches.
#: ``cross_proof``: with ``cross_fill``, phase D's first pass (from the
#: source over its side) and the cross fill run the pass after one that
#: placed little, which proves the rest stuck (:data:`._paths.LIMITS`
#: ``few``).  False: they skip it; the cross fill's trees cover the first
#: pass's side, and the deficits it leaves are cancelled towards the sink,
#: where the sink's BFS at the end and phase F would still catch a path to
#: a deficit that a skipped pass would have found.
#: ``f_root``: phase F (an augmenting path is left after the phases)
#: starts with up to this many augmenting-path passes from the source
#: itself, one path each (0: none); when the last finds no path the flow is
#: maximum, and that pass's tree (what the source reaches) is the source
#: side of a minimum cut, so no other BFS runs.  Else, or when the passes
#: stop at their level limits, F goes on as before: it saturates the source
#: arcs whose head reaches the sink, routes that excess along augmenting
#: paths to the sink and back, and runs push-relabel for what is left.  On
#: the H100 benchmark's unit network a mixed batch of 0.1 % that ends in F
#: leaves one path or two of 60-100 arcs; F then pushed ~95 000 units into
#: the network to get one of them through (see round 30 of
#: the dynamic-flow tuning log (``benchmarks/results/h100_dynamic.md`` in the git history)).
#: ``period_depth``, ``period_depth_closer``: after a relabel whose
#: deepest BFS ran ``d`` levels, the next one waits for at most
#: ``max(max_period, period_depth * d)`` discharge iterations instead of
#: ``max_period`` (0: never); with ``period_depth_closer`` only when that
#: depth is below the previous relabel's, i.e. while the excess gets
#: closer to its targets.  The excess needs at least ``d`` iterations to
#: arrive, and in a NumPy probe of the benchmark's GENRMF decreases the
#: small batches' relabels ran BFS of 170-335 levels every 32 iterations.
#: Off for every batch until round 23 (small batches now use it, see
#: ``period_depth_pushed``): forced repairs on an H100 (round 19 of
#: the dynamic-flow tuning log (``benchmarks/results/h100_dynamic.md`` in the git history), two runs of two rounds, six
#: batches a row) took GENRMF mixed 0.01 % from 180 / 138 ms to 56 / 94
#: (factor 1) and 74 (factor 1, closer), RLG mixed 0.01 % from 11 / 17 to
#: 8 / 9 ms (6.5 closer), but GENRMF dec 0.01 % from 127 / 90 to 257 / 279
#: (183 closer): the decreases' excess wandered for 4-5 times as many
#: iterations between the longer-spaced relabels.
#: ``period_depth_pushed``: ``period_depth`` applies only to batches that
#: raised the capacity of an arc of the kept cut, whose new flow has to
#: cross the network from the source to the sink (stats ``cut_pushes``);
#: a batch of decreases keeps ``max_period``.  Since round 22 small
#: decreases first re-route each cut arc's excess round that arc (``pair``
#: below), so the two kinds of small batch no longer need the same period.
#: Forced repairs of the benchmark's 0.01 % batches on an H100 (round 23
#: of the dynamic-flow tuning log (``benchmarks/results/h100_dynamic.md`` in the git history), medians of the batches of
#: interleaved runs): ``period_depth`` 1 for every small batch took GENRMF
#: mixed batches from 170 to 64 ms (closer) / 68 (not closer), RLG mixed
#: 10.0 -> 9.2 / 8.3, but GENRMF decreases 9.6 -> 15.6 (one of 272 ms) /
#: 18.9; so small batches use it, not closer, only where the batch pushed
#: flow across the cut: GENRMF mixed 160 -> 50 ms (nine batches), RLG
#: mixed 8.8 -> 12.1 (its slow first batch 115-214 -> 55-63), the
#: decreases as before (their differences are run-to-run noise).
#: ``walk``, ``walk_stall``: after each relabel of a phase, up to ``walk``
#: walks (``gpumatch_pr_walk_rcsr`` and its NumPy twin; 0: never) carry
#: the excess of every listed vertex down one path of admissible arcs to
#: the targets in one launch, where discharges move it one arc per step;
#: the walks stop once one leaves more than ``walk_stall`` of the listed
#: excess where it was.  Off: forced repairs on an H100 (round 20 of
#: the dynamic-flow tuning log (``benchmarks/results/h100_dynamic.md`` in the git history), two runs, six batches a row)
#: took GENRMF mixed 0.01 % from 188 ms to 79-130, but GENRMF dec 0.01 %
#: from 112 to 140-199 and RLG dec 0.01 % from 19 to 23-26: a decrease's
#: excess is thousands of units behind arcs of a few hundred, so a walk
#: leaves most of it on the way, and each costs about a millisecond (one
#: carrier's path of a few hundred arcs) without saving relabels.
#: ``pair``, ``pair_min``: phase X first re-routes the excess of every arc
#: whose capacity fell at least ``pair_min`` units below its flow to that
#: arc's own deficit (the tail's excess to the head, around the arc), in up
#: to ``pair`` passes of :func:`gpumatch.flow.dynamic._paths.route` over those
#: pairs (0: never); a pair whose tree finds no path drops out, and what is
#: left goes to the phases as before.  Where the flow's value does not
#: change, nearly every cut arc has a detour close by; the phases, sending
#: each excess to the nearest deficit or terminal, spread it instead: on
#: the benchmark's GENRMF network an excess filled another arc's deficit
#: upstream, whose own excess then went further, and the repair ran 40-80
#: relabels of 100-450 levels each.  Forced repairs on an H100 (round 22 of
#: the dynamic-flow tuning log (``benchmarks/results/h100_dynamic.md`` in the git history), two runs, six batches a row):
#: GENRMF decreases of 0.01 % from a median of 153 ms to 20 (16 passes),
#: RLG ones 18 -> 15 ms, RLG mixed 10 -> 14 ms; the unit network's cuts
#: are of one unit (a unit of excess takes one path either way: no pass).
#: On batches of 0.1 % (8 / 16 passes) GENRMF mixed batches went from 192
#: to 127 / 107 ms, but RLG decreases from 91 to 101 / 134 (there the
#: flow's value falls, and most excess must go back to the source anyway)
#: and GENRMF decreases stayed at 560-630; so only small batches pair.
#: ``detour``: the same re-routing by the detour pass of
#: :mod:`gpumatch.flow.dynamic._detour` instead, in up to this many rounds (0: the
#: pair passes above, where ``pair`` is set): every pair searches on its
#: own, so pairs no longer cut each other off, and wide paths go first.
#: Forced repairs on an H100 (round 24 of
#: the dynamic-flow tuning log (``benchmarks/results/h100_dynamic.md`` in the git history), two runs, six batches a row):
#: GENRMF dec 0.1 % 594 -> 28 ms, GENRMF mixed 0.1 % 206 -> 50, GENRMF dec
#: 0.01 % 20.6 -> 6.4, RLG dec 0.1 % 84 -> 53, RLG dec 0.01 % 12.6 -> 6.8;
#: increases do not cut arcs and are unchanged.  So every batch uses it.
#: ``pair_share``: the pair or detour pass runs only when the cut arcs of
#: at least ``pair_min`` units between two vertices other than the
#: terminals carry at least this share of all the flow the batches cut
#: (0: always).  On RLG and GENRMF they carry nearly all of it; on the
#: unit network, where an arc cut by two units is rare, a mixed batch of
#: 0.1 % had 5-8 such arcs for ~1 000 units cut, and the detour pass spent
#: about 1 ms on them before the path passes that place the rest anyway.
#: ``push_bound``, ``push_bound_hops``: an increase of at least
#: ``push_bound`` units on a saturated arc ``u -> v`` of the kept cut
#: pushes only what ``u`` can still take in from the source side (residual
#: of its arcs from there, the source's included, flow it sends back there,
#: its excess) and ``v`` can still pass on into the sink side (the same the
#: other way, its deficit); with ``push_bound_hops`` 2 each arc's term is
#: capped by what its other end can take in (pass on) one arc further
#: (``gpumatch_dyn_push_bound``; ``push_bound`` 0: every push goes
#: whole).  What is left stays residual across the cut; the repair then
#: ends with the sink's BFS, and with phase F in the rare case where the
#: repair opened a path through it.  Without the bound the pushed excess that the ends cannot
#: use went into the network first and came back across the cut, and it
#: was most of the benchmark's RLG mixed batches' work: on the H100
#: (round 29 of the dynamic-flow tuning log (``benchmarks/results/h100_dynamic.md`` in the git history)) the tails of 6 of
#: the 10 arcs that the three 0.1 % batches pushed took in nothing, one
#: repair of three pushes whose value fell went from 44 ms to 16, and the
#: row's median of six forced repairs from 55 to 43 ms (one arc away).
#: Two arcs away also stopped a push of 7 044 units whose tail's
#: neighbours took in nothing (phase X 1 163 -> ~860 iterations), with no
#: change of the repairs' times beyond their noise.  Pushes of one unit
#: go whole (``push_bound`` 2): on the unit network, where every push is
#: one unit, bounding them sent one more of six forced repairs through
#: phase F (5-8 ms more).
REPAIR = {"group": 4, "relabel_ratio": 3.0, "max_period": 2048, "lazy_far": True, "discharge_loop": 128,
          "discharge_coop": 8192,
          "early_stop": False, "paths": True, "unwind": 2048, "cancel_2cycles": False,
          "split_relabel": False, "cross_fill": True, "cross_proof": False, "f_root": 4,
          "small_batch": 1.5e-4, "period_depth": 0,
          "period_depth_closer": True, "walk": 0, "walk_stall": 0.9,
          "pair": 0, "pair_min": 2, "pair_share": 0.25,
          "period_depth_pushed": False, "detour": 32, "far_direct": True, "pushed_relabels": False,
          "push_bound": 2, "push_bound_hops": 2, "early_near": True, "scratch_adaptive": True,
          "small": {"max_period": 32, "early_stop": True, "split_relabel": True, "cross_fill": False, "pair": 16,
                    "period_depth": 1, "period_depth_closer": False, "period_depth_pushed": True, "detour": 32}}

#: The keys of ``REPAIR["small"]`` that ``pushed_relabels`` takes: the relabel schedule.
_RELABEL_KEYS = ("max_period", "early_stop", "split_relabel", "period_depth", "period_depth_closer",
                 "period_depth_pushed")
