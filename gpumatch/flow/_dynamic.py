"""Dynamic maximum flow: re-solve after a batch of capacity changes.

:class:`MaxFlowSolver` keeps the residual network of one graph (reverse-CSR
layout, one flow value per arc) on its backend between solves, together
with the source side ``S`` of a minimum cut of the last maximum flow.  The
cut is what makes small batches cheap.  For a maximum flow every arc from
``S`` to ``T`` (the rest) is saturated and every arc from ``T`` to ``S``
carries nothing, and :meth:`MaxFlowSolver.update_capacities` keeps it so:

* a capacity that drops below the flow on its arc cuts the flow to the new
  capacity (excess at the tail, deficit at the head); an arc of ``S -> T``
  stays saturated that way;
* an increase on an arc of ``S -> T`` pushes the new residual along it at
  once (excess at the head, deficit at the tail), so that arc stays
  saturated too; any other change of capacity leaves the flow alone (an arc
  of ``T -> S`` carries nothing, whatever its capacity).
* Except that such a push is first bounded by what can use it a few arcs
  away (``REPAIR["push_bound"]``): what the tail can still take in from
  ``S`` and the head pass on into ``T``.  The rest stays residual across
  the cut, where pushing it would only have sent it back.

So after every batch the flow still saturates the cut ``S`` (but for the
rest of bounded pushes), whose new capacity the solver keeps up to date.
If no vertex is left with an excess or a deficit, the flow is valid, and
if its value equals the capacity of ``S`` it is maximum and ``S`` still a
minimum cut: :meth:`MaxFlowSolver.solve` has nothing to do but build its
output (after a bounded push, the BFS from the sink below decides).
Otherwise it repairs the pseudo-flow with the push-relabel kernels of
:mod:`gpumatch.flow` in two phases:

X. every excess goes to the sink or to a deficit on the sink side ``T``
   (height 0), else to the source or to a deficit on the source side
   (height ``V - 1``), so excess that can stay in ``T`` never crosses the
   cut;
D. every deficit is filled from the source (height 0), else by cancelling
   flow towards the sink (height ``V - 1``): push-relabel on the transposed
   network, where a deficit is an excess.

Before phase X, the excess of each arc whose capacity fell below its flow
may first go round that arc to the arc's own deficit, along augmenting
paths that pair the two (``REPAIR["pair"]``: small batches); where the
flow's value does not change this leaves the phases little to do.
Excess on the source side and deficits on the sink side first go straight
to their terminal along paths of one or two arcs where they can (no BFS).
Then each phase routes what it can along augmenting paths
(:mod:`gpumatch.flow._paths`: disjoint BFS trees from every imbalance,
inside one side of the cut, then across it only for what that side cannot
place), and push-relabel finishes the rest; a relabel runs the BFS from
the far targets only when some excess needs them.  Both phases always
succeed (an excess can flow back to where it came from, a deficit can
cancel the flow that left it).

If the new flow value equals the capacity of ``S``, ``S`` is still a
minimum cut and the flow maximum; only otherwise a BFS from the sink
computes the new cut, and if the source still reaches the sink, phase F
first augments along paths from the source itself (a pass that finds none
proves the flow maximum and gives the cut); where those passes stop at
their limits, it saturates the source arcs whose head reaches the sink,
routes that excess along augmenting paths to the sink and back, and runs
the two phases of a full solve from there for anything left.

Two guards keep a dynamic solve from costing much more than a solve from
scratch: past ``rebuild_fraction`` changed arcs the solver starts from
scratch, and a repair that runs longer than ``time_budget`` times the
fastest from-scratch solve seen is abandoned for one (and larger batches
then start from scratch at once for a while).
"""

from __future__ import annotations

import itertools
import time
from typing import Literal

import numpy as np

from .. import _backend, csr
from .._typing import Backend, GraphLike, IndexLike, SparseMatrix
from .._validation import as_index_array, index_dtype_for
from . import _maxflow as _mf
from . import _detour, _labels, _paths

__all__ = ["MaxFlowSolver"]

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
#: ``benchmarks/results/h100_dynamic.md``): the block loop served lists of
#: 256-512 vertices in 27-57 us per iteration against 14 us for a launch
#: over the whole GPU, and the cooperative kernel took forced repairs of
#: RLG 0.1 % decreases from 134 ms to 88 (median of six), mixed batches
#: from 97 to 70 and GENRMF 0.01 % decreases from 118 to 87.
#: ``early_stop``: the BFS of a relabel in phases X and D stops once every
#: vertex with excess has a height.
#: ``paths``: phases X and D first route what they can along augmenting
#: paths inside each side of the cut (:mod:`gpumatch.flow._paths`), so
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
#: ``benchmarks/results/h100_dynamic.md``; measured again in round 22 on
#: RLG alone, whose flow does not circulate: 1.2-6x slower in every row
#: of 0.01 % and 0.1 %).  On since round 25: the detour pass now leaves
#: the source side little but the excess of arcs cut across the kept cut,
#: which has to go back to the source (on RLG ~960 arcs away, where
#: push-relabel spent 740-960 iterations and two relabels on it); a solver
#: whose walk runs out of rounds takes its flow for one that circulates
#: and unwinds no more (``_unwind``), so GENRMF pays for one walk.  Forced
#: repairs on an H100 (round 25 of ``benchmarks/results/h100_dynamic.md``,
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
#: ``benchmarks/results/h100_dynamic.md``).  In round 26, with the
#: detour pass's changes: no relabel left in those repairs (20 ms), and
#: GENRMF mixed 0.1 % 34.8 -> 23.0 ms in a single A/B round.
#: ``pushed_relabels``: a batch above ``small_batch`` whose increases pushed
#: flow across the kept cut (``stats["cut_pushes"]``) takes the relabel
#: schedule of ``small`` (its keys in ``_RELABEL_KEYS``: frequent,
#: early-stopping, split relabels), where the long periods were set for
#: decreases, whose excess the detour pass now places.  Off: in round 26
#: (``benchmarks/results/h100_dynamic.md``) forced GENRMF inc 0.1 %
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
#: ``benchmarks/results/h100_dynamic.md``): the batch that decides GENRMF
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
#: ``benchmarks/results/h100_dynamic.md``) GENRMF mixed 0.1 % went 0.82x
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
#: left off (``benchmarks/results/h100_dynamic.md``, round 12).
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
#: ``benchmarks/results/h100_dynamic.md``).
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
#: ``benchmarks/results/h100_dynamic.md``, two runs of two rounds, six
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
#: of ``benchmarks/results/h100_dynamic.md``, medians of the batches of
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
#: ``benchmarks/results/h100_dynamic.md``, two runs, six batches a row)
#: took GENRMF mixed 0.01 % from 188 ms to 79-130, but GENRMF dec 0.01 %
#: from 112 to 140-199 and RLG dec 0.01 % from 19 to 23-26: a decrease's
#: excess is thousands of units behind arcs of a few hundred, so a walk
#: leaves most of it on the way, and each costs about a millisecond (one
#: carrier's path of a few hundred arcs) without saving relabels.
#: ``pair``, ``pair_min``: phase X first re-routes the excess of every arc
#: whose capacity fell at least ``pair_min`` units below its flow to that
#: arc's own deficit (the tail's excess to the head, around the arc), in up
#: to ``pair`` passes of :func:`gpumatch.flow._paths.route` over those
#: pairs (0: never); a pair whose tree finds no path drops out, and what is
#: left goes to the phases as before.  Where the flow's value does not
#: change, nearly every cut arc has a detour close by; the phases, sending
#: each excess to the nearest deficit or terminal, spread it instead: on
#: the benchmark's GENRMF network an excess filled another arc's deficit
#: upstream, whose own excess then went further, and the repair ran 40-80
#: relabels of 100-450 levels each.  Forced repairs on an H100 (round 22 of
#: ``benchmarks/results/h100_dynamic.md``, two runs, six batches a row):
#: GENRMF decreases of 0.01 % from a median of 153 ms to 20 (16 passes),
#: RLG ones 18 -> 15 ms, RLG mixed 10 -> 14 ms; the unit network's cuts
#: are of one unit (a unit of excess takes one path either way: no pass).
#: On batches of 0.1 % (8 / 16 passes) GENRMF mixed batches went from 192
#: to 127 / 107 ms, but RLG decreases from 91 to 101 / 134 (there the
#: flow's value falls, and most excess must go back to the source anyway)
#: and GENRMF decreases stayed at 560-630; so only small batches pair.
#: ``detour``: the same re-routing by the detour pass of
#: :mod:`gpumatch.flow._detour` instead, in up to this many rounds (0: the
#: pair passes above, where ``pair`` is set): every pair searches on its
#: own, so pairs no longer cut each other off, and wide paths go first.
#: Forced repairs on an H100 (round 24 of
#: ``benchmarks/results/h100_dynamic.md``, two runs, six batches a row):
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
#: (round 29 of ``benchmarks/results/h100_dynamic.md``) the tails of 6 of
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

_WARMED = set()


def _host_copy(a):
    """A NumPy copy of `a` (a NumPy array is copied, a CuPy one fetched)."""
    return a.copy() if isinstance(a, np.ndarray) else _backend.to_numpy(a)


def _scatter_add(xp, a, idx, vals):
    """``a[idx] += vals`` with repeated indices accumulated (both backends)."""
    xp.add.at(a, idx, vals)  # cupy.add.at is what the deprecated cupyx.scatter_add calls


def _warm_up(backend):
    """Solve a six-vertex network, then repair a small one, once per device and process.

    On CuPy the first solve of a process compiles (or loads from CuPy's
    cache) the element-wise kernels a from-scratch solve and a repair use;
    doing it here keeps that one-time cost out of the from-scratch time
    that sets the repair's time budget, and out of the first repair (which
    would run out of that budget while compiling).
    """
    if backend != "cupy":
        return
    cp = _backend.cp
    dev = int(cp.cuda.Device().id)
    if dev in _WARMED:
        return
    _WARMED.add(dev)   # before the solver below, whose constructor calls this
    # 0 -> 1 -> 2 -> 3 -> 4 -> 5 (sink) with a bottleneck at 4 -> 5 and a
    # side arc 1 -> 5: the greedy start, phase 1, the direct return and
    # phase 2 (excess stranded three arcs from the source) all run
    indptr = cp.asarray([0, 1, 3, 4, 5, 6, 6], dtype=np.int32)
    indices = cp.asarray([1, 2, 5, 3, 4, 5], dtype=np.int32)
    cap = cp.asarray([9, 9, 1, 9, 9, 1], dtype=np.int64)
    _mf._solve(indptr, indices, cap, 0, 5, "cupy", "reverse_csr")
    # repairs of a small grid network reach the path passes, both
    # push-relabel phases and the cut's BFS
    C = _warm_network()
    solver = MaxFlowSolver(C, 16, 17, backend="cupy", rebuild_fraction=1.0, time_budget=None)
    solver.solve()
    # (C follows the solver's capacities).  The detour pass goes off for
    # these runs, which would leave the later steps little to do, and runs
    # alone last, where either settings use it (its kernels and
    # element-wise steps compile on first use); so do the bounds on the
    # pushes across the cut, whose excess reaches both phases here
    saved = dict(REPAIR)
    detour = int((REPAIR.get("small") or {}).get("detour") or REPAIR.get("detour") or 0)
    try:
        REPAIR.update(detour=0, push_bound=False, small=dict(saved.get("small") or {}, detour=0))
        _warm_batches(solver, C, cp.asarray)
        if saved.get("small_batch") and saved.get("small"):
            # and with the settings of small batches (the early-stopping
            # relabels' reductions took 4-5 s each to compile on a fresh CuPy
            # cache), without the path passes, which would leave the phases
            # little to do; once without the passes over pairs, which would
            # leave the phases' first steps nothing to do (a kernel of them then
            # compiled during the first real repair: 3.5-4.5 s on a fresh cache),
            # and once with them (their element-wise steps compile on first use)
            for pair in (0, max(1, int(saved["small"].get("pair") or 0))):
                REPAIR.update(small_batch=1.0, paths=False, pair_min=1,
                              small=dict(saved["small"], pair=pair, detour=0))
                _warm_batches(solver, C, cp.asarray)
        if detour or saved.get("push_bound"):
            REPAIR.update(small_batch=1.0, paths=False, pair_min=1, push_bound=saved.get("push_bound"),
                          small=dict(saved.get("small") or {}, detour=detour))
            _warm_batches(solver, C, cp.asarray)
    finally:
        REPAIR.clear()
        REPAIR.update(saved)
    # the fallback F's passes from the source (one, which finds the flow
    # maximum) and the comparison that gives their cut: compiled inside the
    # first repair with a phase F, ~0.35 s on an H100 with a fresh cache
    if REPAIR.get("paths") and REPAIR.get("f_root"):
        solver._root_pass(solver._cap_cut - 1, 1)
        _ = solver._pbufs.owner == solver.source
    # the fallback F's saturation of the source arcs, which the batches
    # above need not reach: its element-wise kernels compiled mid-repair
    # took 0.2-0.3 s on an H100 (the solver is thrown away after this)
    solver._height.fill(0)
    solver._saturate_source()
    # two more element-wise steps the batches above need not reach, each
    # ~0.1 s to compile on a fresh CuPy cache: the lazy far targets'
    # heights of a complete relabel (``h[far] = hlimit`` in
    # _Phase._relabel_full, on a list of the relabel steps of two vertices
    # or more: the scalar broadcast over a list of one is another kernel;
    # compiled inside the first RLG repair with a phase, whose budget is
    # ~35 ms), and the value's subtraction of a sink's out-arcs' flow (the
    # warm network's sink has none)
    far = solver._label_steps().lists[1][:2]
    far[...] = cp.arange(2, dtype=far.dtype)
    solver._height[far] = solver._hlimit2
    int(cp.zeros((), dtype=np.int64) - solver._L["flow"][:1].sum())


def _warm_network():
    """A 4 x 4 grid (right, down and up arcs; source 16 -> left column,
    right column -> sink 17), capacities 1..9."""
    import scipy.sparse as sp

    r, c = [], []
    for i in range(16):
        if i % 4 < 3:
            r.append(i), c.append(i + 1)
        if i < 12:
            r += [i, i + 4]
            c += [i + 4, i]
    r += [16, 16, 16, 16, 3, 7, 11, 15]
    c += [0, 4, 8, 12, 17, 17, 17, 17]
    rng = np.random.default_rng(0)
    C = sp.csr_matrix((rng.integers(1, 10, size=len(r)), (r, c)), shape=(18, 18)).astype(np.int64)
    C.sort_indices()
    return C


def _warm_batches(solver, C, asarray, steps=6):
    """Batches of a third of the arcs of `C` (increases, decreases, mixed,
    in turn), each solved; returns the results."""
    rng = np.random.default_rng(1)
    rows = np.repeat(np.arange(C.shape[0]), np.diff(C.indptr))
    out = []
    for step in range(steps):
        k = rng.choice(C.nnz, size=C.nnz // 3, replace=False)
        old = C.data[k]
        new = (old + rng.integers(1, 10, size=k.shape[0]) if step % 3 == 0 else
               np.maximum(old - rng.integers(1, 10, size=k.shape[0]), 0) if step % 3 == 1 else
               rng.integers(0, 19, size=k.shape[0]))
        C.data[k] = new
        solver.update_capacities(asarray(rows[k]), asarray(C.indices[k].astype(np.int64)), asarray(new))
        out.append(solver.solve())
    return out


def _pairing():
    """Whether a repair may re-route cut arcs' excess to their own deficits
    (``REPAIR["pair"]`` or ``REPAIR["detour"]``, for small batches or all),
    so that updates keep their arcs and cuts."""
    small = REPAIR.get("small") or {}
    return bool(REPAIR.get("pair") or small.get("pair") or REPAIR.get("detour") or small.get("detour"))


def _pair_min(rep=None):
    """The smallest cut (units) that the pair and detour passes re-route
    (``pair_min`` of `rep`, None: :data:`REPAIR`; at least 1)."""
    return max(1, int((REPAIR if rep is None else rep).get("pair_min") or 1))


def _side_room(net, x, frm, depth, into, want, term):
    """What vertex `x` can still take in from its own side of the kept cut
    (`into`: the residual of its in-arcs from that side, the flow of its
    out-arcs into it, its excess) or pass on into it (the reverse, its
    deficit), at most `want`, `depth` arcs away: with depth 2 each arc's
    term is capped by its other end's room one arc further (arcs back to
    `frm` not counted).  `term` is the side's terminal (unbounded room).
    `net`: host arrays ``indptr``, ``in_indptr``, ``in_to_out`` (reverse
    CSR), ``tail``, ``head``, ``cap``, ``flow`` (per arc), ``side``,
    ``excess`` (per vertex).  The NumPy twin of ``dyn_side_room`` of
    ``flow/dynamic.cu`` (its arcs in the kernel's order; the sum stops at
    `want`, lazily, as the kernel's does on a hub).
    """
    if x == term:
        return want
    side, cap, flow = net["side"], net["cap"], net["flow"]
    mine = bool(side[x])
    e = int(net["excess"][x])
    total = max(e, 0) if into else max(-e, 0)
    ins = net["in_to_out"][net["in_indptr"][x]:net["in_indptr"][x + 1]]
    arcs_ends = itertools.chain(
        ((int(net["tail"][b]), cap[b] - flow[b] if into else flow[b]) for b in ins),
        ((int(net["head"][b]), flow[b] if into else cap[b] - flow[b])
         for b in range(int(net["indptr"][x]), int(net["indptr"][x + 1]))))
    for y, r in arcs_ends:
        if total >= want:
            break
        if y == frm or bool(side[y]) != mine:
            continue
        r = int(r)
        if r > 0 and depth > 1:
            r = _side_room(net, y, x, depth - 1, into, r, term)
        total += r
    return min(total, want)


class _OverBudget(Exception):
    """The dynamic repair ran past its time budget (the solver then starts from scratch)."""


class _Phase:
    """One push-relabel run towards two tiers of height-0 vertices (targets).

    Parameters
    ----------
    solver : MaxFlowSolver
    ctx, st : kernel context and state (``height``, ``excess``) of the network used
    near, far : callables returning index arrays; `far` may be None
        The BFS of a global relabel starts from the `near` targets at level
        0 and, for the vertices it did not reach, from the `far` targets at
        level ``solver._far_level``.  With `targets` both are derived from
        it (leave them None).
    terminals : (target, other)
        Passed to the discharge kernel (neither is ever discharged).
    hlimit : int
        Heights at or above it are inactive.
    blocked : int or None
        A vertex held at `hlimit` (never reached by the BFS).
    must_clear : bool
        The phase must leave no excess: when the worklist empties with
        excess left at `hlimit`, one more full relabel decides.
    far_return : callable or None
        ``far_return(xs)`` sends what it can of the excess of the vertices
        `xs` straight to the far terminal (paths of one or two arcs).
    early : bool
        A relabel may stop its BFS once every vertex with excess has a
        height (``REPAIR["early_stop"]``, or ``REPAIR["early_near"]`` after
        full relabels that found all the excess able to reach a near
        target); the phase's last, confirming relabel never does.
    sealed : callable or None
        ``sealed(split)`` returns the side of the kept cut that holds the
        near targets (a bool mask) when `split` (the relabel may split) and
        no residual arc leads from the other side into it, else None.  Then
        an early-stopping relabel runs two
        bounded BFS: from the near targets until the excess of their side is
        labelled, and from the far targets over the other side until its
        excess is (the near BFS cannot enter that side).
    targets : (near terminal, far terminal, deficits, side) or None
        The targets as the steps of :mod:`._labels` find them: the two
        terminals and, with `deficits`, the other vertices with a deficit,
        near ones on the side of the kept cut that ``side()`` returns (a
        bool mask; a sealed cut's side must be that one) and far ones off
        it.
    """

    def __init__(self, solver, ctx, st, near=None, far=None, *, terminals, hlimit, blocked=None, must_clear=True,
                 far_return=None, early=False, sealed=None, targets=None, name=""):
        self.s = solver
        self.targets = targets
        if targets is not None:
            near, far = (lambda: self._tier(True)), (lambda: self._tier(False))
        self.work = None
        self.early = early
        self.sealed = sealed
        self.ctx, self.st = ctx, st
        self.near, self.far = near, far
        self.far_return = far_return
        self.terminals = terminals
        self.hlimit = int(hlimit)
        self.blocked = blocked
        self.must_clear = must_clear
        self.name = name
        self.full = True       # did the last relabel run the BFS from the far targets (or is there none)?
        # (``REPAIR["early_near"]``) every full relabel so far found all the
        # excess able to reach a near target; None before the first one
        self.near_only = None

    def relabel(self, force_full=False):
        """Exact two-tier heights (BFS over reverse residual arcs); returns the seconds it took.

        A phase with `targets` and far targets runs the steps of
        :mod:`._labels` when no early stop applies (:meth:`_relabel_full`)
        or its kept cut is sealed (:meth:`_relabel_split`); those leave the
        next worklist in ``self.work`` (else None: :meth:`active` finds it).
        """
        s, xp = self.s, self.s._xp
        t0 = time.perf_counter()
        self.work = None
        s._bfs_depth = 0
        early = self.early and not force_full and s._rep.get("early_stop", True)
        split = bool(s._rep.get("split_relabel"))
        if self.early and not force_full and not early and s._rep.get("early_near") and self.near_only:
            # every full relabel of this phase so far found all its excess
            # able to reach a near target: stop this one early too (split
            # at a sealed cut)
            early = split = True
            s._stats["early_near_relabels"] = s._stats.get("early_near_relabels", 0) + 1
        if self.targets is not None and self.far is not None:
            if not early:
                return self._relabel_full(force_full, t0)
            side = self.sealed(split) if self.sealed is not None else None
            if side is not None:
                return self._relabel_split(side, t0)
        h = self.st["height"]
        h.fill(-1)
        if self.blocked is not None:
            h[self.blocked] = self.hlimit
        near = self.near()
        h[near] = 0
        watch = held = None
        if early:
            # only the vertices with excess need a height: stop the BFS once
            # they all have one (the rest get the next level, a valid label)
            watch = xp.nonzero(s._inner(self.st["excess"] > 0))[0]
            if self.far is not None:
                # the far targets wait for a full relabel: excess that climbs
                # past the partial labels must not drain into them meanwhile.
                # They are held at `hlimit` from the start, so that the BFS
                # does not label anything through them either: a vertex whose
                # only path to a near target ran through the far terminal got
                # a height it could never push down from (its excess cannot
                # pass a terminal), and with every relabel early, it stayed
                # there for good
                held = self.far()
                held = held[h[held] < 0]
                h[held] = self.hlimit
        level, stopped = s._bfs(self.ctx, self.st, near, 0, watch if watch is not None and watch.shape[0] else None)
        if stopped:
            h[h < 0] = level + 1
            self.full = False
            s._stats["global_relabels"] += 1
            return time.perf_counter() - t0
        if held is not None:
            h[held] = -1       # (the far BFS below starts from them)
        self.full = True
        if self.far is not None:
            lazy = s._rep.get("lazy_far", True) and not force_full
            if lazy and self.far_return is not None:
                xs = s._unlabeled_excess(self.st, nodes=True)
                if xs.shape[0]:
                    self.far_return(xs.astype(s._idt))
            if lazy and not s._unlabeled_excess(self.st):
                self.full = False
            else:
                far = self.far()
                far = far[h[far] < 0]
                if far.shape[0]:
                    h[far] = s._far_level
                    s._bfs(self.ctx, self.st, far, s._far_level)
        h[h < 0] = self.hlimit
        s._stats["global_relabels"] += 1
        return time.perf_counter() - t0

    def _relabel_full(self, force_full, t0):
        """The relabel of a phase with `targets` when no early stop applies:
        a complete BFS from the near targets, then one from the far
        targets over what it missed (skipped while lazy and no excess was
        missed: the far targets then wait at `hlimit` for a full relabel)."""
        s = self.s
        K, st = s._label_steps(), self.st
        ex, h, (u, v) = st["excess"], st["height"], (s.source, s.sink)
        near_t, far_t, deficits, side_of = self.targets
        side = side_of()
        near, far, _ = K.start(ex, h, side, near_t, far_t, u, v, deficits)
        s._bfs(self.ctx, st, near, 0)
        lazy = s._rep.get("lazy_far", True) and not force_full
        xs = K.middle(ex, h, side, -1, u, v)      # the excess cut off from the near targets
        self.near_only = (self.near_only is not False) and xs.shape[0] == 0
        if lazy and xs.shape[0] and self.far_return is not None:
            self.far_return(xs)
        far, watch = K.far(ex, h, far, s._far_level, u, v)
        self.full = True
        if lazy and watch.shape[0] == 0:
            h[far] = self.hlimit
            self.full = False
        elif far.shape[0]:
            s._bfs(self.ctx, st, far, s._far_level)
        self.work = K.finish(ex, h, self.hlimit, self.hlimit, u, v)
        s._stats["global_relabels"] += 1
        return time.perf_counter() - t0

    def _relabel_split(self, side, t0):
        """The relabel of a sealed cut: two BFS, each stopped once the
        excess of its side has a height.

        Nothing on the far side reaches the near targets, so the near BFS
        stays on `side`; its unlabelled vertices there get the next level
        (a valid lower bound), and the far BFS labels the far side from
        ``solver._far_level``.  If the near BFS ran to its end, the vertices
        it missed on `side` join the far BFS instead, as in a full relabel.
        The steps around the two BFS are those of :mod:`._labels`.
        """
        s = self.s
        K, st = s._label_steps(), self.st
        ex, h, (u, v) = st["excess"], st["height"], (s.source, s.sink)
        near_t, far_t, deficits, _ = self.targets
        near, far, watch = K.start(ex, h, side, near_t, far_t, u, v, deficits)
        level, stopped = s._bfs(self.ctx, st, near, 0, watch) if watch.shape[0] else (0, True)
        xs = K.middle(ex, h, side, level + 1 if stopped else -1, u, v)
        if xs.shape[0] and s._rep.get("lazy_far", True) and self.far_return is not None:
            # as after a full relabel: the excess cut off from the near
            # targets first goes straight to the far terminal where it can
            self.far_return(xs)
        far, watch = K.far(ex, h, far, s._far_level, u, v)
        if far.shape[0] and watch.shape[0]:
            level, stopped = s._bfs(self.ctx, st, far, s._far_level, watch)
        else:
            level, stopped = s._far_level, bool(watch.shape[0] == 0)
        # after a complete far BFS the vertices it missed reach no target
        self.work = K.finish(ex, h, level + 1 if stopped else self.hlimit, self.hlimit, u, v)
        self.full = not stopped
        s._stats["global_relabels"] += 1
        s._stats["split_relabels"] = s._stats.get("split_relabels", 0) + 1
        return time.perf_counter() - t0

    def _tier(self, near):
        """The near (or far) targets of `targets` as an index array: the
        terminal, then with `deficits` the vertices with a deficit on (off)
        the side ``side()`` (for the relabels that do not run the steps)."""
        s, xp = self.s, self.s._xp
        near_t, far_t, deficits, side_of = self.targets
        head = xp.asarray([near_t if near else far_t], dtype=s._idt)
        if not deficits:
            return head
        side = side_of()
        m = s._inner(self.st["excess"] < 0) & (side if near else ~side)
        return xp.concatenate([head, xp.nonzero(m)[0].astype(s._idt)])

    def _listed(self):
        """The worklist after a relabel: the one its steps listed, else :meth:`active`."""
        return self.active() if self.work is None else self.work

    def _walk(self, work):
        """After a relabel, carry the excess of `work` to the targets along
        paths of admissible arcs: up to ``REPAIR["walk"]`` walks, each
        followed by a scan for the vertices that still hold excess, until
        one leaves more than ``REPAIR["walk_stall"]`` of the listed excess
        where it was; returns the worklist."""
        s = self.s
        rounds = int(s._rep.get("walk") or 0)
        stall = float(s._rep.get("walk_stall", 0.9))
        target, other = self.terminals
        ex = self.st["excess"]
        held = float(ex[work].sum()) if rounds and work.shape[0] else 0.0
        for _ in range(rounds):
            if work.shape[0] == 0:
                break
            s._K.walk(self.ctx, self.st, work, target, other, self.hlimit)
            s._stats["walks"] = s._stats.get("walks", 0) + 1
            work = self.active()
            left = float(ex[work].sum()) if work.shape[0] else 0.0
            if left > stall * held:
                break
            held = left
        return work

    def active(self):
        s, xp = self.s, self.s._xp
        mask = (self.st["excess"] > 0) & (self.st["height"] < self.hlimit)
        mask[s.source] = False
        mask[s.sink] = False
        return xp.nonzero(mask)[0].astype(s._idt)

    def run(self, before=None):
        """Relabel, call `before` (may add excess), discharge until no vertex is active.

        Discharge launches go in groups that start at ``REPAIR["group"]`` and
        double after each read-back; a global relabel runs whenever the
        discharges since the last one took ``REPAIR["relabel_ratio"]`` times
        its duration.  Heights are exact after a relabel and valid lower
        bounds on the distance to the targets in between, so a vertex at
        `hlimit` cannot reach any target.
        """
        s = self.s
        stats = s._stats
        guard = _mf.TUNING.get("max_iterations")
        ratio = s._rep.get("relabel_ratio")
        period = s._rep.get("max_period")
        depth = float(s._rep.get("period_depth") or 0)
        if s._rep.get("period_depth_pushed") and not s._pushed:
            depth = 0.0      # no new flow to carry across the network
        closer = s._rep.get("period_depth_closer", True)
        prev = [None]

        def limit():
            # the discharge iterations allowed before the next relabel
            # (``max_period``, or with ``period_depth`` that many times
            # the depth of the relabel's deepest BFS)
            d, p = s._bfs_depth, prev[0]
            prev[0] = d
            if period is None:
                return None
            lim = period
            if depth and (not closer or (p is not None and d < p)):
                lim = max(period, int(depth * d))
            stats["longest_period"] = max(stats.get("longest_period", 0), lim)
            return lim
        g0 = max(1, int(s._rep.get("group", 1)))
        gr0, it0 = stats["global_relabels"], stats["iterations"]
        t_run = time.perf_counter()
        t_gr = t_rel = self.relabel()
        lim = limit()
        calls = 0
        if before is not None:
            before()
            self.work = None     # (excess added since the relabel)
        work = self._walk(self._listed())
        group, since = g0, 0
        t_win = time.perf_counter()
        target, other = self.terminals
        while True:
            if work.shape[0] == 0:
                # a scan of the excesses catches any vertex the worklist lost
                work = self.active()
                if work.shape[0] == 0:
                    if not self.must_clear or not s._excess_left(self.st):
                        break
                    if since == 0 and self.full:
                        break  # no target can take the excess left: the caller reports it
                    # excess at hlimit: a full relabel decides (far targets, stale heights)
                    t_gr = self.relabel(force_full=True)
                    t_rel += t_gr
                    lim = limit()
                    work = self._walk(self._listed())
                    group, since = g0, 0
                    t_win = time.perf_counter()
                    continue
            if since and ((ratio is not None and time.perf_counter() - t_win > ratio * t_gr)
                          or (lim is not None and since >= lim)):
                t_gr = self.relabel()
                t_rel += t_gr
                lim = limit()
                work = self._walk(self._listed())
                group, since = g0, 0
                t_win = time.perf_counter()
                continue
            if guard is not None and stats["iterations"] - it0 > guard:
                raise RuntimeError(f"push-relabel did not finish within {guard} iterations")
            t_call = time.perf_counter()
            if s._deadline is not None and t_call > s._deadline:
                raise _OverBudget()
            work, ran = s._K.discharge(self.ctx, self.st, work, s._stamp, target, other, self.hlimit, group)
            calls += 1
            s._stamp += group
            stats["iterations"] += ran
            since += ran
            group = min(2 * group, s._batch)
            if s._deadline is not None and ran:
                # no group planned past the deadline: at the last call's pace
                # (its read-back synced), a group of 64 launches over a long
                # worklist ran ~100 ms past a 20 ms budget
                now = time.perf_counter()
                pace = max((now - t_call) / ran, 1e-9)
                group = max(1, min(group, int((s._deadline - now) / pace)))
        its = stats["iterations"] - it0
        # (name, discharge iterations, global relabels, seconds, seconds in relabels, discharge calls)
        stats.setdefault("phases", []).append(
            (self.name, its, stats["global_relabels"] - gr0, round(time.perf_counter() - t_run, 4), round(t_rel, 4),
             calls))
        return its


class MaxFlowSolver:
    """Maximum flow that is re-solved after batches of capacity changes.

    The solver keeps the graph, its capacities, the current flow and the
    source side of a minimum cut on the backend (the GPU for ``"cupy"``).
    :meth:`update_capacities` changes the capacities of existing arcs; the
    next :meth:`solve` starts from the previous maximum flow instead of from
    zero, which is much faster than :func:`~gpumatch.flow.maximum_flow` when
    the batch is small.

    Parameters
    ----------
    csgraph : sparse matrix or array
        Square matrix of non-negative integer capacities, as for
        :func:`~gpumatch.flow.maximum_flow`.  Its stored entries (explicit
        zeros included) are the arcs whose capacities can change later; the
        pattern itself is fixed.
    source, sink : int
        Distinct vertex indices.
    backend : {"auto", "numpy", "cupy", "numba"}, optional
        Where the state lives and push-relabel runs; output follows the
        input's kind, as in :func:`~gpumatch.flow.maximum_flow`.  With
        ``"numba"`` a dynamic solve re-maximises the previous flow as the
        batches left it (deficits first, then highest-label push-relabel
        from that preflow; ``gpumatch/flow/_cpu.py``); `time_budget` does
        not apply there.
    layout : {"reverse_csr"}, optional
        Residual layout; only ``"reverse_csr"`` (one flow value per arc,
        kept between solves) is supported by the dynamic solver.
    rebuild_fraction : float, optional
        When the arcs changed since the last solve exceed this fraction of
        all arcs, :meth:`solve` starts from scratch.  Default 0.002: on an
        H100 repairs of 0.01 % and 0.1 % of the arcs won where the batch
        stays local, repairs of 1 % never did (see the notes).
    time_budget : float or None, optional
        A repair still running after ``time_budget`` times the duration of
        the fastest from-scratch solve seen so far (with the assembly of
        the flow matrix's pattern, which :func:`maximum_flow` does on every
        call and this solver once, in its first solve) is abandoned and the
        solve restarts from scratch (``stats["mode"] ==
        "dynamic->scratch"``), so that a dynamic solve costs at most about
        ``1 + time_budget`` from-scratch solves.  After that, batches
        larger than the abandoned one start from scratch at once
        (``stats["scratch_reason"] == "abandoned before"``; the bound
        doubles at each use, so that such repairs are tried again later,
        and goes away once a batch at least as large is repaired in time).
        Default 0.25: an abandoned repair then cost at most about 1.5
        solves from scratch as ``maximum_flow`` times them on an H100
        (whose times vary by up to a quarter from run to run); None
        disables the guard.

    Attributes
    ----------
    source, sink : int
    shape : tuple of int
    backend : str
        The resolved backend.

    Notes
    -----
    Following Kannappan, Kumar and Nasre [1]_, the previous maximum flow is
    kept and repaired instead of recomputed, here guided by the last
    minimum cut ``S`` (see :mod:`gpumatch.flow._dynamic`).  A decrease below
    the flow on an arc cuts that flow to the new capacity (excess at the
    tail, deficit at the head); an increase of an arc from ``S`` to its
    complement pushes the new residual along it (excess at the head, deficit
    at the tail), as much of it as the arc's ends can use a few arcs away
    (the rest stays residual across the cut); other changes leave the flow
    as it is, and the cut stays saturated (but for those rests).
    :meth:`solve` then moves every excess to the sink or a deficit,
    preferring those on the sink side of the cut, else back towards the
    source, and fills every deficit from the source, else by
    cancelling flow towards the sink: first along augmenting paths that
    stay on one side of the cut (:mod:`gpumatch.flow._paths`: disjoint BFS
    trees from every imbalance, a few passes), then by push-relabel for
    whatever those left (on the transposed network for the deficits).
    When the resulting value equals the updated capacity of ``S``, the
    flow is maximum and ``S`` still a minimum cut, with no BFS;
    a batch that leaves no excess nor deficit (for example increases of arcs
    off the cut, or decreases to at least the flow) needs no push-relabel at
    all (``stats["repair"] == "none"``).  Otherwise a BFS from the sink
    finds the new cut, and if an augmenting path is left, augmenting paths
    from the source come first (``REPAIR["f_root"]``), then, if they stop at
    their limits, the source arcs that lead to the sink are saturated and
    the two phases of a full solve finish the job.  The result is always a
    valid maximum flow; ``source_side`` is the source side of a minimum cut
    (after a repair that kept the cut, the previous one; after phase F's
    passes from the source, what the source reaches).

    Speed: each path pass and each push-relabel phase costs a BFS over the
    part of the residual network that the imbalances reach, so a dynamic
    solve costs a few BFS plus work proportional to that part.  Where
    many changes cross the cut or augmenting paths are long, that work can
    exceed a solve from scratch; `rebuild_fraction` and `time_budget`
    bound the loss.  On an H100 (``benchmarks/bench_dynamic.py``: the unit
    network of ``random_bipartite(10**6, 10**6, 5)``,
    ``washington_rlg(512, 1024, 10000)``, ``genrmf(32, 256, 100, 10000)``;
    75-95, 220-340 and 400-640 ms from scratch), update + solve of 0.01 %
    of the arcs took 7-21 ms on the unit network, 28-63 ms for RLG
    decreases and mixed batches, 75-85 ms for GENRMF mixed batches, and
    under 1 ms where the batch missed the cut (RLG and GENRMF increases);
    of 0.1 %, 16-23 ms for unit increases.  Repairs of 0.1 % unit
    decreases and mixed batches (30-45 ms), of GENRMF decreases, of 1 % of
    the arcs, and of networks changed by earlier large batches ran out of
    time.

    References
    ----------
    .. [1] S. Kannappan, A. Kumar and R. Nasre, "Scalable Maxflow Processing
       for Dynamic Graphs" (batched increments and decrements of capacities
       by push-relabel on GPUs; preprint also titled "Efficient Dynamic
       MaxFlow Computation on GPUs").

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from gpumatch.flow import MaxFlowSolver
    >>> C = sp.csr_array(np.array([[0, 3, 2], [0, 0, 2], [0, 0, 0]]))
    >>> solver = MaxFlowSolver(C, 0, 2, backend="numpy")
    >>> int(solver.solve().flow_value)
    4
    >>> solver.update_capacities([1], [2], [5])     # arc 1 -> 2: 2 to 5
    >>> int(solver.solve().flow_value)
    5
    >>> solver.update_capacities([0, 0], [1, 2], [1, 0])
    >>> res = solver.solve()
    >>> int(res.flow_value), res.flow.toarray().tolist()
    (1, [[0, 1, 0], [-1, 0, 1], [0, -1, 0]])
    """

    def __init__(self, csgraph: GraphLike, source: int, sink: int, *, backend: Backend = "auto",
                 layout: Literal["reverse_csr"] = "reverse_csr", rebuild_fraction: float = 0.002,
                 time_budget: float | None = 0.25) -> None:
        _mf._check_method("push_relabel", layout)
        if layout != "reverse_csr":
            raise ValueError(f"MaxFlowSolver supports layout='reverse_csr' only, got {layout!r}")
        if isinstance(rebuild_fraction, bool) or not isinstance(rebuild_fraction, (int, float, np.integer,
                                                                                     np.floating)) \
                or not rebuild_fraction >= 0:
            raise ValueError(f"rebuild_fraction must be a non-negative number, got {rebuild_fraction!r}")
        self.rebuild_fraction = float(rebuild_fraction)
        if time_budget is not None and (isinstance(time_budget, bool) or not isinstance(
                time_budget, (int, float, np.integer, np.floating)) or not time_budget >= 0):
            raise ValueError(f"time_budget must be None or a non-negative number, got {time_budget!r}")
        self.time_budget = None if time_budget is None else float(time_budget)
        self._t_scratch = None
        self._t_plan = 0.0       # seconds the first solve spent on the output's plan (_flow_matrix)
        self._deadline = None
        backend_r = _backend.resolve_backend(backend)
        g = _mf._capacity_graph(csgraph, backend_r)
        self.source, self.sink = _mf._check_terminals(source, sink, g.n)
        # the solver's own pattern: a canonical input's arrays come through
        # validation as they are, and the caller may change them later
        g.indptr, g.indices = g.indptr.copy(), g.indices.copy()
        self._g = g
        self.backend = g.backend
        self.shape = g.shape
        xp = self._xp = _backend.get_xp(g.backend)
        V = self._V = g.n
        if V >= (1 << 30):
            raise ValueError("graphs with 2**30 or more vertices are not supported")
        # two tiers of targets in the repair phases: near ones at height 0,
        # far ones at V - 1; a vertex at 2 V - 1 cannot reach either (no
        # simple path has V arcs), and every height stays below 2**31 - 1
        self._far_level = V - 1
        self._hlimit2 = 2 * V - 1
        nnz = self._nnz = g.nnz
        self._data = g.data.astype(np.int64, copy=True)       # capacities of all stored entries
        rows = csr.segment_owner(g.indptr.astype(np.int64), nnz)
        cols = g.indices.astype(np.int64)
        self._keys = rows * np.int64(max(V, 1)) + cols         # sorted (canonical CSR)
        keep = cols != rows                                     # self-loops carry no flow
        kept = self._kept = xp.nonzero(keep)[0]
        E = self._E = int(kept.shape[0])
        self._arc_of = xp.full(nnz, -1, dtype=np.int64)        # stored entry -> arc id
        self._arc_of[kept] = xp.arange(E, dtype=np.int64)
        idt = self._idt = index_dtype_for(V + 1, 2 * E + 1)
        counts = xp.bincount(rows[kept], minlength=V) if E else xp.zeros(V, dtype=np.int64)
        indptr = xp.zeros(V + 1, dtype=np.int64)
        xp.cumsum(counts, out=indptr[1:])
        indptr = indptr.astype(idt)
        indices = g.indices[kept].astype(idt)
        # per-arc arrays carry one dummy slot at index E: an update of a
        # self-loop writes there, so a batch needs no compaction (no sync)
        self._cap_p = xp.zeros(E + 1, dtype=np.int64)
        self._cap_p[:E] = self._data[kept]
        self._flow_p = xp.zeros(E + 1, dtype=np.int64)      # flow_p[E] stays 0
        cap = self._cap_p[:E]
        s, t = self.source, self.sink
        self._s_out = (int(indptr[s]), int(indptr[s + 1]))
        self._src_total = _mf._exact_sum(xp, cap[self._s_out[0]:self._s_out[1]])
        if self._src_total > _mf._I64_MAX:
            raise OverflowError("the total capacity out of the source does not fit int64")
        L = self._L = _mf._build_rcsr(xp, indptr, indices, cap, V)
        L["flow"] = self._flow_p[:E]
        self._tail_p = xp.zeros(E + 1, dtype=np.int64)
        self._tail_p[:E] = rows[kept]
        self._head_p = xp.zeros(E + 1, dtype=np.int64)
        self._head_p[:E] = cols[kept]
        self._s_in = (int(L["in_indptr"][s]), int(L["in_indptr"][s + 1]))
        self._t_out = (int(indptr[t]), int(indptr[t + 1]))
        a, b = int(L["in_indptr"][t]), int(L["in_indptr"][t + 1])
        self._t_in_arcs = L["in_to_out"][a:b].astype(np.int64)
        # transposed network (phase D): arc j of the transposed CSR is the
        # reverse of forward arc in_to_out[j]; its capacities follow every
        # update, its flows are copied in and out around phase D
        in_to_out = L["in_to_out"].astype(np.int64)
        out_to_in = xp.empty_like(in_to_out)
        out_to_in[in_to_out] = xp.arange(E, dtype=np.int64)
        self._t_of = in_to_out
        self._oti_p = xp.full(E + 1, E, dtype=np.int64)       # arc -> transposed position (E: dummy)
        self._oti_p[:E] = out_to_in
        self._capT_p = xp.zeros(E + 1, dtype=np.int64)
        self._capT_p[:E] = cap[in_to_out]
        self._LT = {"indptr": L["in_indptr"], "indices": L["in_indices"], "cap": self._capT_p[:E],
                    "flow": xp.zeros(E, dtype=np.int64), "in_indptr": L["indptr"], "in_indices": L["indices"],
                    "in_to_out": out_to_in.astype(L["in_to_out"].dtype)}
        self._K = _mf._kernels(self.backend)
        self._ctx = None
        self._ctxT = None
        self._batch = max(1, int(_mf.TUNING.get("batch", 1)))
        self._stamp = 0
        self._bfs_depth = 0                      # levels of the deepest BFS of the last relabel
        self._excess = xp.zeros(V, dtype=np.int64)
        self._height = xp.zeros(V, dtype=np.int32)
        self._side = xp.zeros(V, dtype=bool)    # source side of the last minimum cut
        self._cap_cut = 0                        # its capacity under the current capacities
        self._moved = False                      # an update moved flow since the last solve
        self._pending = 0                        # arcs changed since the last solve
        self._pushed = 0                         # of those, arcs of the kept cut that pushed new flow across it
        self._reroute = []                       # (arc slots, cuts) of the batches since then (_pairing)
        self._cut_flow = 0                       # the flow those batches cut, in all
        self._paired_flow = 0                    # and on arcs the pair passes take (_pairs_worth)
        self._rep = REPAIR                       # the REPAIR settings of the repair under way
        self._solved = False
        self._result = None
        self._plan = None
        self._abandon_at = None                  # smallest batch whose repair ran out of time
        self._claim = None                       # duplicate stamps of the CUDA batch check
        self._pbufs = None                       # work arrays of the augmenting-path pass
        self._pairs = None                       # anti-parallel pairs of arcs (_cancel_2cycles)
        self._dbufs = None                       # work arrays of the detour pass (_detour_pass)
        self._circulates = False                 # an unwind ran out of rounds: the flow circulates (_unwind)
        self._cut_arcs = None                    # (side, arcs S -> T, arcs T -> S) of _sealed
        self._lsteps = None                      # steps of the phases' relabels (_labels)
        self._flags = None                       # read-back of _signs (GPU)
        self._batch_id = 0
        self._stats = {}
        if self.backend == "cupy":
            # compile here, not inside the first (timed) solve
            self._contexts()
            if REPAIR.get("paths"):
                self._pbufs = _paths.buffers(self.backend, V, idt)
            _warm_up(self.backend)

    # ------------------------------------------------------------------
    # helpers
    # ------------------------------------------------------------------

    def _prepare(self, L):
        return _mf._prepare_kernels(self.backend, L, "rcsr", self._V, self._E, (self.source, self.sink),
                                    discharge_loop=int(REPAIR.get("discharge_loop") or 0),
                                    discharge_coop=int(REPAIR.get("discharge_coop") or 0))

    def _contexts(self):
        """Kernel contexts of the network and of its transposed (compiled on first use)."""
        xp, V, L, idt = self._xp, self._V, self._L, self._idt
        if self._ctx is None:
            self._ctx = self._prepare(L)
            # out-position of the arc source -> u (-1 if none), for the direct return
            self._src_arc = xp.full(V, -1, dtype=idt)
            a, b = self._s_out
            self._src_arc[L["indices"][a:b]] = xp.arange(a, b, dtype=idt)
        if self._ctxT is None:
            self._ctxT = self._prepare(self._LT)
            # the same for the sink in the transposed network (its arcs t -> u are the arcs u -> t)
            self._sink_arcT = xp.full(V, -1, dtype=idt)
            a, b = int(L["in_indptr"][self.sink]), int(L["in_indptr"][self.sink + 1])
            self._sink_arcT[L["in_indices"][a:b]] = xp.arange(a, b, dtype=idt)

    def _as_index(self, a, what, length=None):
        arr = as_index_array(a, what, self.backend)
        if length is not None and arr.shape[0] != length:
            raise ValueError(f"rows, cols and new_capacities must have the same length, got {length} and "
                             f"{arr.shape[0]} ({what})")
        return arr.astype(np.int64, copy=False)

    # ------------------------------------------------------------------
    # public
    # ------------------------------------------------------------------

    @property
    def num_arcs(self) -> int:
        """Number of stored entries (arcs, self-loops included)."""
        return self._nnz

    def capacities(self) -> SparseMatrix:
        """The current capacity matrix (CSR of the input's kind, int64 values).

        A copy: changing it changes nothing in the solver (use
        :meth:`update_capacities`).
        """
        g = self._g
        data = self._data
        if g.cupy_out:
            import cupyx.scipy.sparse as cpx

            cp = _backend.cp
            return cpx.csr_matrix((cp.asarray(data).astype(cp.float64), cp.array(g.indices, copy=True),
                                   cp.array(g.indptr, copy=True)), shape=g.shape)
        import scipy.sparse as sp

        cls = sp.csr_array if g.sparray else sp.csr_matrix
        return cls((_host_copy(data), _host_copy(g.indices), _host_copy(g.indptr)), shape=g.shape)

    def update_capacities(self, rows: IndexLike, cols: IndexLike, new_capacities: IndexLike) -> None:
        """Set the capacities of a batch of existing arcs ``rows[i] -> cols[i]``.

        Parameters
        ----------
        rows, cols : array_like of int
            Tails and heads of stored arcs (NumPy or CuPy arrays, or lists),
            each arc at most once per batch.
        new_capacities : array_like of int
            Their new non-negative integer capacities (increase or decrease).

        Raises
        ------
        ValueError
            Different lengths, non-integer or negative capacities, a vertex
            out of range, an arc that is not a stored entry, or one arc twice.
            The whole batch is checked first: on error nothing changes.
        OverflowError
            When the capacity out of the source would not fit int64.

        Notes
        -----
        Where a capacity drops below the current flow on its arc, the flow is
        cut to the new capacity at once (excess at the tail, deficit at the
        head); where an arc from the source side of the last minimum cut to
        the sink side gains capacity, the new residual is pushed along it
        (excess at the head, deficit at the tail), as much of it as its ends
        can use a few arcs away (``REPAIR["push_bound"]``).  The next
        :meth:`solve` repairs and re-maximises the flow.  All checks of a batch share one
        read-back from the device.
        """
        rows = self._as_index(rows, "rows")
        cols = self._as_index(cols, "cols", rows.shape[0])
        caps = self._as_index(new_capacities, "new_capacities", rows.shape[0])
        n = int(rows.shape[0])
        if n == 0:
            return
        V = self._V
        classify = self._classify_cuda if self.backend == "cupy" else self._classify_xp
        h, apply = classify(rows, cols, caps)
        if h["min_cap"] < 0:
            raise ValueError(f"new_capacities must be non-negative, got {h['min_cap']}")
        for what, lo_v, hi_v in (("rows", h["min_row"], h["max_row"]), ("cols", h["min_col"], h["max_col"])):
            if lo_v < 0 or hi_v >= V:
                raise ValueError(f"{what}: vertex {lo_v if lo_v < 0 else hi_v} is out of range [0, {V})")
        if h["dup"] is not None:
            raise ValueError(f"arc ({h['dup'][0]}, {h['dup'][1]}) appears more than once in the batch")
        if h["miss"] is not None:
            raise ValueError(f"({h['miss'][0]}, {h['miss'][1]}) is not an arc of the graph "
                             "(only the capacities of stored entries can change)")
        src_total = self._src_total + (h["src_hi"] << 32) + h["src_lo"]
        if src_total > _mf._I64_MAX:
            raise OverflowError("the total capacity out of the source would not fit int64")
        # --- all checks passed: apply ---
        pushed = apply(h["moved"] > 0, h["pushed"])
        self._moved = self._moved or h["moved"] > 0
        self._src_total = src_total
        self._cap_cut += (h["cut_hi"] << 32) + h["cut_lo"]
        self._pending += n
        self._pushed += pushed
        self._cut_flow += h["cut_flow"]
        self._paired_flow += h["paired_flow"]
        self._result = None

    def _classify_xp(self, rows, cols, caps):
        """Check and classify a batch (vectorised; the NumPy twin of ``gpumatch_dyn_classify``).

        Returns the host summary (the checks' values, the exact capacity
        changes of the source's arcs and of the cut's arcs as sums of 32-bit
        halves, the number of arcs whose flow moves and how many of those
        push new flow across the cut) and the function that applies the
        batch.
        """
        xp, V, nnz, E = self._xp, self._V, self._nnz, self._E
        n = int(rows.shape[0])
        Vl = np.int64(max(V, 1))
        keys = rows * Vl + cols
        if nnz:
            at = xp.minimum(xp.searchsorted(self._keys, keys), nnz - 1)
            found = self._keys[at] == keys
            arc = self._arc_of[at]
        else:
            at = xp.zeros(n, dtype=np.int64)
            found = xp.zeros(n, dtype=bool)
            arc = xp.full(n, -1, dtype=np.int64)
        miss = xp.argmax(~found)           # the first arc that is not stored (0 if every one is)
        if n > 1:
            sk = xp.sort(keys)
            dup = sk[1:] == sk[:-1]
            first = xp.argmax(dup)
            dup_any, dup_key = dup[first], sk[first + 1]
        else:
            dup_any, dup_key = xp.zeros((), dtype=bool), keys[0]
        a = xp.where(arc >= 0, arc, E)     # self-loops (and misses, rejected) -> the dummy slot
        old = self._cap_p[a]
        f = self._flow_p[a]
        u, v = self._tail_p[a], self._head_p[a]
        cross = self._side[u] & ~self._side[v]       # arcs of the cut S -> T (never the dummy)
        # a cut below the flow moves the flow down to the new capacity; an
        # increase on a saturated arc of the cut pushes the new residual at
        # once: the tail gains `d` and the head loses it (d < 0: the reverse)
        d = xp.where(f > caps, f - caps, xp.where(cross & (caps > old) & (f == old), old - caps, 0))
        lo = np.int64(0xFFFFFFFF)

        def halves(mask):
            return (xp.where(mask, (caps >> 32) - (old >> 32), 0).sum(),
                    xp.where(mask, (caps & lo) - (old & lo), 0).sum())

        def cut_halves(mask):
            return xp.where(mask, d >> 32, 0).sum(), xp.where(mask, d & lo, 0).sum()

        ps, pe = self._s_out
        s, t = self.source, self.sink
        paired = (d >= _pair_min()) & (u != s) & (u != t) & (v != s) & (v != t)
        vals = (caps.min(), rows.min(), rows.max(), cols.min(), cols.max(), dup_any, dup_key, ~found[miss],
                rows[miss], cols[miss], *halves((a >= ps) & (a < pe)), *halves(cross), (d != 0).sum(), (d < 0).sum(),
                *cut_halves(d > 0), *cut_halves((d > 0) & paired))
        r = _backend.to_numpy(xp.stack([xp.asarray(x, dtype=np.int64) for x in vals])).tolist()
        h = dict(zip(("min_cap", "min_row", "max_row", "min_col", "max_col"), r[:5]))
        h["dup"] = (r[6] // int(Vl), r[6] % int(Vl)) if r[5] else None
        h["miss"] = (r[8], r[9]) if r[7] else None
        h.update(zip(("src_hi", "src_lo", "cut_hi", "cut_lo", "moved", "pushed"), r[10:16]))
        h["cut_flow"], h["paired_flow"] = (r[16] << 32) + r[17], (r[18] << 32) + r[19]

        def apply(moved, pushed):
            self._data[at] = caps
            self._cap_p[a] = caps
            self._capT_p[self._oti_p[a]] = caps
            if not moved:
                return 0
            bound = pushed and REPAIR.get("push_bound")
            dd = xp.where(d > 0, d, 0) if bound else d
            self._flow_p[a] = f - dd          # the dummy slot gets 0 - 0
            _scatter_add(xp, self._excess, u, dd)
            _scatter_add(xp, self._excess, v, -dd)
            if bound:
                # the pushes, each bounded by what its ends can use (after the cuts)
                dd = self._push_bound_xp(a, xp.where(d < 0, d, 0), int(bound))
                self._flow_p[a] -= dd
                _scatter_add(xp, self._excess, u, dd)
                _scatter_add(xp, self._excess, v, -dd)
                dd = xp.where(d > 0, d, dd)
                pushed = int((dd < 0).sum())
            if _pairing():
                self._reroute.append((a, dd))
            return pushed

        return h, apply

    def _push_bound_xp(self, arcs, d, least):
        """The NumPy twin of ``gpumatch_dyn_push_bound``: each push ``d[i] < 0``
        of at least `least` units on arc ``arcs[i]`` (tail on the source side
        of the kept cut, head on the sink side) bounded by what its tail can
        still take in from its side and its head can still pass on into its
        side, ``REPAIR["push_bound_hops"]`` arcs away (``REPAIR["push_bound"]``,
        :func:`_side_room`); returns the new ``d``."""
        L = self._L
        net = {"indptr": L["indptr"], "in_indptr": L["in_indptr"], "in_to_out": L["in_to_out"],
               "tail": self._tail_p, "head": self._head_p, "cap": self._cap_p, "flow": self._flow_p,
               "side": self._side, "excess": self._excess}
        depth = int(REPAIR.get("push_bound_hops") or 1)
        out = d.copy()
        for i in np.flatnonzero(d <= -least):
            a = int(arcs[i])
            p = _side_room(net, int(net["tail"][a]), -1, depth, True, -int(d[i]), self.source)
            if p > 0:
                p = _side_room(net, int(net["head"][a]), -1, depth, False, p, self.sink)
            out[i] = -p
        return out

    def _classify_cuda(self, rows, cols, caps):
        """As :meth:`_classify_xp` with the kernels of ``flow/dynamic.cu`` (one read-back)."""
        from .. import _cuda

        cp = _backend.cp
        n, nnz, E = int(rows.shape[0]), self._nnz, self._E
        rows, cols, caps = (cp.ascontiguousarray(x) for x in (rows, cols, caps))
        if self._claim is None or self._batch_id >= (1 << 31) - 2:
            self._claim = cp.zeros(max(nnz, 1), dtype=np.int32)
            self._batch_id = 0
        self._batch_id += 1
        big, small = _mf._I64_MAX, -_mf._I64_MAX - 1
        acc = cp.asarray(np.array([big, big, small, big, small, big, big] + [0] * 10, dtype=np.int64))
        at = cp.empty(n, dtype=np.int64)
        slot = cp.empty(n, dtype=np.int64)
        d = cp.empty(n, dtype=np.int64)
        grid = (max(1, min((n + 255) // 256, 4096)),)
        k = _cuda.get_kernel("flow/dynamic.cu", "gpumatch_dyn_classify")
        ps, pe = self._s_out
        k(grid, (256,), (rows, cols, caps, np.int64(n), self._keys, np.int64(nnz), self._arc_of, np.int64(self._V),
                         np.int64(E), self._cap_p, self._flow_p, self._tail_p, self._head_p, self._side,
                         np.int64(ps), np.int64(pe), self._claim, np.int32(self._batch_id), np.int64(_pair_min()),
                         np.int64(self.source), np.int64(self.sink), at, slot, d, acc))
        r = [int(x) for x in acc.get()]
        h = dict(zip(("min_cap", "min_row", "max_row", "min_col", "max_col"), r[:5]))
        h["dup"] = (int(rows[r[5]]), int(cols[r[5]])) if r[5] != big else None
        h["miss"] = (int(rows[r[6]]), int(cols[r[6]])) if r[6] != big else None
        h.update(zip(("src_hi", "src_lo", "cut_hi", "cut_lo", "moved", "pushed"), r[7:13]))
        h["cut_flow"], h["paired_flow"] = (r[13] << 32) + r[14], (r[15] << 32) + r[16]

        def apply(moved, pushed):
            k2 = _cuda.get_kernel("flow/dynamic.cu", "gpumatch_dyn_apply")
            bound = moved and pushed and REPAIR.get("push_bound")
            args = (caps, np.int64(n), at, slot, d, self._data, self._cap_p, self._flow_p, self._capT_p,
                    self._oti_p, self._tail_p, self._head_p, self._excess, np.int64(E))
            k2(grid, (256,), args + (np.int32(1 if bound else 0),))
            if bound:
                # the pushes, each bounded by what its ends can use (after the cuts)
                L, count = self._L, cp.zeros(1, dtype=np.int64)
                kb = _cuda.get_kernel("flow/dynamic.cu", "gpumatch_dyn_push_bound", _cuda.index_defines(self._idt))
                kb(grid, (256,), (np.int64(n), slot, d, self._cap_p, self._flow_p, self._tail_p, self._head_p,
                                  self._side, self._excess, L["indptr"], L["in_indptr"], L["in_to_out"],
                                  np.int64(self.source), np.int64(self.sink), np.int64(bound),
                                  np.int32(REPAIR.get("push_bound_hops") or 1), count))
                k2(grid, (256,), args + (np.int32(2),))
                pushed = int(count.get()[0])
            if moved and _pairing():
                self._reroute.append((slot, d))
            return pushed if moved else 0

        return h, apply

    def solve(self) -> _mf.MaximumFlowResult:
        """Maximum flow for the current capacities, from the previous flow when there is one.

        Returns
        -------
        MaximumFlowResult
            As :func:`~gpumatch.flow.maximum_flow` returns it: ``flow_value``,
            ``flow`` (skew-symmetric CSR), ``source_side`` (a minimum cut) and
            ``stats``, with ``stats["mode"]`` ``"scratch"``, ``"dynamic"``,
            ``"dynamic->scratch"`` (a repair abandoned at its time budget) or
            ``"cached"`` (nothing changed since the last solve).  A dynamic
            solve also reports ``stats["repair"]``: ``"none"`` when the batch
            left no excess nor deficit (the previous flow was still maximum),
            else ``"phases"``; and ``stats["cut"]``: ``"kept"`` when the
            previous minimum cut still is one, ``"bfs"`` when a BFS found the
            new one; and ``stats["repair_settings"]``: ``"small"`` when the
            batch was small enough for ``REPAIR["small"]`` (at most
            ``REPAIR["small_batch"]`` times the arcs), ``"pushed"`` when a
            larger batch pushed flow across the kept cut and
            ``REPAIR["pushed_relabels"]`` gave it the relabel schedule of
            ``REPAIR["small"]``, else ``"default"``;
            and, where a push-relabel phase ran, ``stats["longest_period"]``:
            the most discharge iterations it allowed between two global
            relabels (``REPAIR["max_period"]``, or more with
            ``REPAIR["period_depth"]``); with ``REPAIR["walk"]``,
            ``stats["walks"]``: the walks run after relabels; and where
            augmenting-path passes ran, ``stats["path_passes"]``: per call
            ``(phase, passes, levels, paths, amount, seconds)``, phase
            ``"P"`` for the passes over pairs (``REPAIR["pair"]``), which
            re-route each cut arc's excess to its own deficit; where the
            detour pass ran instead (``REPAIR["detour"]``),
            ``stats["detours"]``: per call ``(pairs, rounds, searches,
            paths, amount, dropped, seconds)``.
            ``stats["batch"]`` counts the arcs changed since the last solve,
            and ``stats["cut_pushes"]`` those among them whose increase
            pushed new flow across the kept minimum cut (see
            ``REPAIR["period_depth_pushed"]``).
            A solve from scratch reports why in
            ``stats["scratch_reason"]``: ``"first solve"``,
            ``"rebuild_fraction"``, ``"time_budget"`` or ``"abandoned
            before"``.
        """
        if self._result is not None:
            # nothing changed since: the same answer in new arrays (a caller
            # may have written into the last result's)
            res = self._result
            stats = dict(res.stats)
            stats["mode"] = "cached"
            return _mf.MaximumFlowResult(res.flow_value, self._flow_matrix(),
                                         _backend.output_like(self._side.copy(), self._g.cupy_out), stats)
        if self.backend == "numba":   # the compiled CPU engine: push-relabel from the previous flow
            from . import _cpu

            return _cpu.solver_solve(self)
        t_start = time.perf_counter()
        self._stats = stats = {"iterations": 0, "phase2_iterations": 0, "global_relabels": 0,
                               "backend": self.backend, "layout": "reverse_csr", "method": "push_relabel",
                               "batch": self._pending, "cut_pushes": self._pushed}
        times = {}
        pending = self._pending
        if not self._solved:
            scratch, reason = True, "first solve"
        elif pending > self.rebuild_fraction * max(self._nnz, 1):
            scratch, reason = True, "rebuild_fraction"
        elif self._abandon_at is not None and pending > self._abandon_at:
            # a smaller batch already ran out of time: do not pay for a
            # repair and a solve from scratch again; the bound doubles at
            # each use, so that repairs of such batches are tried again later
            scratch, reason = True, "abandoned before"
            self._abandon_at *= 2
        else:
            scratch, reason = False, None
        if not scratch:
            stats["mode"] = "dynamic"
            small = pending <= float(REPAIR.get("small_batch") or 0) * max(self._nnz, 1)
            self._rep = dict(REPAIR, **(REPAIR.get("small") or {})) if small else REPAIR
            stats["repair_settings"] = "small" if small else "default"
            if not small and self._pushed and REPAIR.get("pushed_relabels"):
                # flow pushed across the kept cut: the relabel schedule of small batches
                small_keys = REPAIR.get("small") or {}
                self._rep = dict(REPAIR, **{k: small_keys[k] for k in _RELABEL_KEYS if k in small_keys})
                stats["repair_settings"] = "pushed"
            self._deadline = None
            if self._ctx is None:
                # the NumPy solver's one-off set-up (the GPU's runs in the
                # constructor): not part of the repair the budget is for
                self._contexts()
            if self.time_budget is not None and self._t_scratch is not None:
                self._deadline = t_start + self.time_budget * self._t_reference()
            try:
                value, side = self._repair(times)
            except _OverBudget:
                stats["mode"] = "dynamic->scratch"
                stats["time_abandoned"] = time.perf_counter() - t_start
                scratch, reason = True, "time_budget"
                self._abandon_at = pending if self._abandon_at is None else min(self._abandon_at, pending)
            else:
                if self._abandon_at is not None and pending >= self._abandon_at:
                    # a batch as large as the abandoned one was repaired in
                    # time: that one was an outlier, not the batch size
                    self._abandon_at = None
            finally:
                self._deadline = None
                self._rep = REPAIR
        if scratch:
            stats.setdefault("mode", "scratch")
            stats["scratch_reason"] = reason
            t_s = time.perf_counter()
            L = self._L
            _, f, side, sst = _mf._solve(L["indptr"], L["indices"], L["cap"], self.source, self.sink,
                                         self.backend, "reverse_csr",
                                         adaptive=None if REPAIR.get("scratch_adaptive", True) else False)
            L["flow"][...] = f
            if REPAIR.get("cancel_2cycles"):
                self._cancel_2cycles()
            self._excess.fill(0)
            for key in ("iterations", "phase2_iterations", "global_relabels"):
                stats[key] = sst.get(key, 0)
            times.update(sst.get("time", {}))
            stats["relabel_period"] = sst.get("relabel_period")
            stats["pairs_fixed"] = sst.get("pairs_fixed", False)
            _backend.synchronize(self.backend)
            t_scr = time.perf_counter() - t_s
            # the fastest one: a first solve may include one-time costs
            self._t_scratch = t_scr if self._t_scratch is None else min(self._t_scratch, t_scr)
            value = self._value()
        t0 = time.perf_counter()
        self._side = side
        self._cap_cut = value
        self._moved = False
        flow = self._flow_matrix()
        side_out = _backend.output_like(side.copy(), self._g.cupy_out)
        times["output"] = time.perf_counter() - t0
        times["total"] = time.perf_counter() - t_start
        stats["time"] = times
        self._pending = 0
        self._pushed = 0
        self._reroute = []
        self._cut_flow = self._paired_flow = 0
        self._solved = True
        self._result = _mf.MaximumFlowResult(np.int64(value), None, None, dict(stats))   # (for a cached solve)
        return _mf.MaximumFlowResult(np.int64(value), flow, side_out, stats)

    def _flow_matrix(self):
        """Skew-symmetric flow CSR (as :func:`maximum_flow`), from a plan of the fixed pattern.

        The plan (built once) sorts the pattern plus its transpose; each
        output entry then reads the flow of its arc (negated for a
        transposed one), and the few entries that hold both ``u -> v`` and
        the reverse of ``v -> u`` add the second arc's flow.
        """
        g, xp = self._g, self._xp
        if self._plan is None:
            t0 = time.perf_counter()
            self._plan = self._output_plan()
            _backend.synchronize(self.backend)
            self._t_plan = time.perf_counter() - t0
        e_arc, e_neg, p_arc, p_neg, p_at, indptr, ucol = self._plan
        fp = self._flow_p
        x = fp[e_arc]
        data = xp.where(e_neg, -x, x)
        if p_at.shape[0]:
            y = fp[p_arc]
            data[p_at] += xp.where(p_neg, -y, y)
        shape = (self._V, self._V)
        if g.cupy_out:
            import cupyx.scipy.sparse as cpx

            cp = _backend.cp
            # copies of the plan's pattern: the result is the caller's to change
            return cpx.csr_matrix((cp.asarray(data).astype(cp.float64), cp.array(ucol, copy=True),
                                   cp.array(indptr, copy=True)), shape=shape)
        import scipy.sparse as sp

        data, ucol, indptr = (_backend.to_numpy(a) for a in (data, ucol, indptr))
        cls = sp.csr_array if g.sparray else sp.csr_matrix
        out = cls((data, ucol.copy(), indptr.copy()), shape=shape)
        out.has_sorted_indices = True
        return out

    def _output_plan(self):
        g, xp, V, nnz, E = self._g, self._xp, max(self._V, 1), self._nnz, self._E
        rows = csr.segment_owner(g.indptr.astype(np.int64), nnz)
        cols = g.indices.astype(np.int64)
        key = xp.concatenate([rows * V + cols, cols * V + rows])
        order = xp.argsort(key, kind="stable") if xp is np else xp.argsort(key)
        key = key[order]
        n2 = key.shape[0]
        last = xp.ones(n2, dtype=bool)
        if n2:
            last[:-1] = key[1:] != key[:-1]
        ends = xp.nonzero(last)[0]
        ukey = key[ends]
        urow = ukey // V
        counts = xp.bincount(urow, minlength=self._V) if n2 else xp.zeros(self._V, dtype=np.int64)
        indptr = xp.zeros(self._V + 1, dtype=np.int64)
        xp.cumsum(counts, out=indptr[1:])
        idt = index_dtype_for(self._V + 1, int(ukey.shape[0]) + 1)
        # sorted position -> the arc whose flow it shows (E: a self-loop, flow 0) and its sign;
        # a key occurs at most twice (u -> v and the reverse of v -> u), as a run of two
        adt = index_dtype_for(E + 2)
        ent = order % max(nnz, 1)
        neg = order >= nnz
        arc = self._arc_of[ent] if nnz else ent
        arc = xp.where(arc < 0, E, arc).astype(adt)
        pair = xp.nonzero(~last)[0]              # first of a run of two; its key ends at pair + 1
        p_at = (xp.cumsum(last) - 1)[pair + 1] if pair.shape[0] else pair
        return (arc[ends], neg[ends], arc[pair], neg[pair], p_at, indptr.astype(idt),
                (ukey - urow * V).astype(idt))

    # ------------------------------------------------------------------
    # the repair
    # ------------------------------------------------------------------

    def _value(self) -> int:
        """Net flow into the sink (one read-back)."""
        xp, flow = self._xp, self._L["flow"]
        a, b = self._t_out
        total = xp.zeros((), dtype=np.int64)
        if self._t_in_arcs.shape[0]:
            total = total + flow[self._t_in_arcs].sum()
        if b > a:
            total = total - flow[a:b].sum()
        return int(total)

    def _t_reference(self):
        """Seconds of a solve from scratch as :func:`maximum_flow` runs it,
        for the time budget: the fastest one seen here, plus the assembly
        of the output's pattern, which ``maximum_flow`` does on every call
        and this solver once (its first solve; ``_output_plan``: on an
        H100 12 ms for the benchmark's unit network, where ``maximum_flow``
        spent 12 ms on its output and the solver 52-56 ms on the rest).
        That one is timed once, so it counts for no more than a solve, in
        case a one-time cost slowed it."""
        return self._t_scratch + min(self._t_plan, self._t_scratch)

    def _check_budget(self):
        """Raise :class:`_OverBudget` once the repair's deadline has passed."""
        if self._deadline is not None and time.perf_counter() > self._deadline:
            raise _OverBudget()

    def _bfs(self, ctx, st, frontier, level, watch=None):
        """BFS levels from `frontier` (height `level`) until none is left (the deadline checked first).

        With `watch` (vertex ids), the BFS stops as soon as all of them are
        labelled.  Returns ``(height of the last frontier, stopped early)``;
        after an early stop every unlabelled vertex is at least one level
        further, so that height plus one is a valid label for all of them.
        """
        self._check_budget()
        _, ran, stopped = self._K.bfs_run(ctx, st, frontier, level, watch, self._batch)
        self._bfs_depth = max(self._bfs_depth, int(ran))
        return level + ran, stopped

    def _inner(self, mask):
        mask[self.source] = False
        mask[self.sink] = False
        return mask

    def _label_steps(self):
        """The steps of the phases' relabels (:mod:`._labels`), made on first use."""
        if self._lsteps is None:
            self._lsteps = _labels.steps(self.backend, self._V, self._idt)
        return self._lsteps

    def _unlabeled_excess(self, st, nodes=False):
        m = self._inner((st["excess"] > 0) & (st["height"] < 0))
        return self._xp.nonzero(m)[0] if nodes else bool(m.any())

    def _excess_left(self, st):
        return self._signs(st["excess"], clear=False)[0]

    def _imbalance(self):
        """(any excess, any deficit) at a vertex other than the terminals,
        whose excesses are set to 0 (they mean nothing here)."""
        return self._signs(self._excess, clear=True)

    def _signs(self, ex, clear):
        """(any excess, any deficit) in `ex` at a vertex other than the
        terminals (with `clear`, theirs are set to 0 first); one pass and
        one read-back (``gpumatch_dyn_signs`` on the GPU)."""
        s, t = self.source, self.sink
        if self.backend == "cupy":
            from .. import _cuda

            if self._flags is None:
                self._flags = _backend.cp.zeros(2, dtype=np.int32)
            f = self._flags
            f.fill(0)
            _cuda.get_kernel("flow/dynamic.cu", "gpumatch_dyn_signs")(
                (max(1, min((self._V + 255) // 256, 4096)),), (256,),
                (np.int64(self._V), ex, np.int64(s), np.int64(t), np.int32(bool(clear)), f))
            pos, neg = (bool(x) for x in f.get())
            return pos, neg
        if clear:
            ex[s] = 0
            ex[t] = 0
        return bool(self._inner(ex > 0).any()), bool(self._inner(ex < 0).any())

    def _repair(self, times):
        """Turn the pseudo-flow into a maximum flow; returns ``(value, source side of a minimum cut)``."""
        xp, V = self._xp, self._V
        s, t = self.source, self.sink
        stats = self._stats
        if self._ctx is None:
            self._contexts()
        t0 = time.perf_counter()
        # the previous flow was maximum and left no imbalance: only an
        # update that moved flow can have created one
        pos, neg = self._imbalance() if self._moved else (False, False)
        stats["repair"] = "phases" if pos or neg else "none"
        crossed = False   # did phase X send excess back across the kept cut?
        if pos:
            crossed = self._excess_phase()
            pos, neg = self._imbalance()
            if pos:  # pragma: no cover - would be a bug
                raise RuntimeError("dynamic max flow could not place an excess; please report this")
        t1 = time.perf_counter()
        times["excess"] = t1 - t0
        if neg:
            self._deficit_phase(crossed)
            pos, neg = self._imbalance()
            if pos or neg:  # pragma: no cover - would be a bug
                raise RuntimeError("dynamic max flow could not fill a deficit; please report this")
        t2 = time.perf_counter()
        times["deficit"] = t2 - t1
        # The flow is valid now.  Every arc of the old cut S -> T stayed
        # saturated through the update and `_cap_cut` follows its capacity,
        # so value <= _cap_cut; equality proves the flow maximum and S still
        # a minimum cut (the repair then never moved flow across the cut).
        # That is always so when no phase ran: no excess and no deficit
        # means no flow moved across the cut, whose forward arcs stayed
        # saturated and whose backward arcs still carry nothing.
        value = self._value()
        side = self._side
        stats["cut"] = "kept"
        stats["fallback"] = False
        if value != self._cap_cut:
            stats["cut"] = "bfs"
            side = self._sink_bfs()
            if not bool(side[s]):
                # F: an augmenting path is left; saturate the source arcs
                # whose head reaches the sink, then the two phases of a full solve
                stats["fallback"] = True
                st = {"height": self._height, "excess": self._excess}
                one = lambda v: (lambda: xp.asarray([v], dtype=self._idt))  # noqa: E731
                paths = bool(self._rep.get("paths"))
                placed = False
                nroot = int(self._rep.get("f_root") or 0) if paths else 0
                if nroot:
                    ps = self._root_pass(value, nroot)
                    if ps["amount"] and self._value() == self._cap_cut:
                        # the paths carried all that the kept cut allows:
                        # it is a minimum cut again
                        times["cut"] = time.perf_counter() - t2
                        return self._cap_cut, self._side
                    if ps["exhausted"]:
                        # the source's last pass found no path: the flow is
                        # maximum, and that pass's tree (what the source
                        # reaches) is the source side of a minimum cut
                        times["cut"] = time.perf_counter() - t2
                        return self._value(), self._pbufs.owner == s
                    if ps["amount"]:
                        # stopped by their limits after moving flow: the
                        # heights that pick the source arcs below are the
                        # sink's BFS's, which has to run again
                        side = self._sink_bfs()
                        if bool(side[s]):
                            times["cut"] = time.perf_counter() - t2
                            return self._value(), side
                if paths:
                    # the heights of the sink's BFS pick the source arcs;
                    # augmenting paths to the sink come first, and if they
                    # place all that can reach it, push-relabel's F1 is spared
                    self._saturate_source()
                    placed = self._path_pass("F", self._L, self._excess, None, t, s)
                if not placed:
                    _Phase(self, self._ctx, st, one(t), terminals=(t, s), hlimit=V, blocked=s, must_clear=False,
                           name="F1").run(before=None if paths else self._saturate_source)
                if self._excess_left(st):
                    # what cannot reach the sink goes back to the source
                    if paths:
                        self._path_pass("F", self._L, self._excess, None, s, t)
                    if self._excess_left(st):
                        stats["phase2_iterations"] += _Phase(self, self._ctx, st, one(s), terminals=(s, t),
                                                             hlimit=V, blocked=t, name="F2").run()
                side = self._sink_bfs()
                if not bool(side[s]) or self._excess_left(st):  # pragma: no cover - would be a bug
                    raise RuntimeError("dynamic max flow left an augmenting path; please report this")
                value = self._value()
        times["cut"] = time.perf_counter() - t2
        return value, side

    def _sink_bfs(self):
        """Vertices that cannot reach the sink in the residual network (a BFS from the sink)."""
        h = self._height
        h.fill(-1)
        h[self.sink] = 0
        self._bfs(self._ctx, {"height": h, "excess": self._excess},
                  self._xp.asarray([self.sink], dtype=self._idt), 0)
        h[h < 0] = self._V
        self._stats["global_relabels"] += 1
        return h >= self._V

    def _excess_phase(self):
        """Phase X: excess to the sink or deficits of the sink side, else to the source or the others.

        Excess on the source side of the cut cannot reach the sink side (the
        cut is saturated); what it can send straight back to the source along
        paths of one or two arcs goes first, without a BFS.  Returns whether
        excess may have gone back across the kept cut (whose arcs are then
        no longer all saturated).
        """
        xp, idt, s, t = self._xp, self._idt, self.source, self.sink
        st = {"height": self._height, "excess": self._excess}
        back = lambda xs: self._K.return_excess(self._ctx, st, xs, self._src_arc, s)  # noqa: E731
        npair = int(self._rep.get("pair") or 0)
        ndetour = int(self._rep.get("detour") or 0)
        if (npair or ndetour) and self._reroute:
            # each cut arc's excess re-routed to its own deficit first (cuts
            # of at least ``pair_min`` units; an arc not cut has 0 or less)
            arcs, amounts = (xp.concatenate([p[i] for p in self._reroute]) for i in range(2))
            # (boolean indexing, not ``any()``: a reduction of a few hundred
            # flags took CuPy's CUB path and compiled for 6 s in the first
            # real repair, past the warm-up's small arrays)
            arcs = arcs[amounts >= _pair_min(self._rep)]
            if arcs.shape[0] and self._pairs_worth():
                # (the solver's tail and head arrays are int64, as the pair kernels take them)
                if ndetour:
                    self._detour_pass(self._tail_p[arcs], self._head_p[arcs], ndetour)
                else:
                    self._path_pass("P", self._L, self._excess, None, t, s,
                                    pairs=(self._tail_p[arcs], self._head_p[arcs]), limits={"phases": npair})
                if not self._imbalance()[0]:
                    return False
        xs = xp.nonzero(self._inner((self._excess > 0) & self._side))[0]
        if xs.shape[0]:
            back(xs.astype(idt))
            if not self._imbalance()[0]:
                return False
        if self._rep.get("paths"):
            # augmenting paths inside each side first: to the sink or the
            # sink side's deficits, and to the source side's deficits or back
            done = self._path_pass("X", self._L, self._excess, ~self._side, t, s)
            unwinds = self._unwinds()
            near_deficit = unwinds and self._signs(xp.where(self._side, self._excess, 0), clear=False)[1]
            if not (unwinds and self._rep.get("detour") and not near_deficit):
                self._path_pass("X", self._L, self._excess, self._side, s, t)
            # (after the detour pass, with no deficit on the source side, what
            # excess is left there has to go back to the source, and the
            # walks below take it there along the arcs that brought it, where
            # the path pass would first grow trees as deep as those arcs are
            # long: on RLG a tree of ~960 levels, past the pass's limits)
            # the source side's excess left goes back the way it came
            self._unwind(self._ctx, st, self._side, s, t)
            crossed = False
            if done and unwinds and self._rep.get("far_direct") and not near_deficit:
                # the pass's trees ran to their end: what excess the sink
                # side still holds reaches neither the sink nor a deficit
                # there, and with no deficit on the source side it can only
                # go back to the source, across the cut: the walks take it
                # there at once, where a relabel would first prove the same
                crossed = self._unwind(self._ctx, st, ~self._side, s, t)
                if not self._imbalance()[0]:
                    return crossed
            if done:   # what the sink side cannot place goes back across the cut
                crossed = self._path_pass("X", self._L, self._excess, None, s, t, moved=True) or crossed
            if not self._imbalance()[0]:
                return crossed
        _Phase(self, self._ctx, st, terminals=(t, s), hlimit=self._hlimit2,
               far_return=lambda xs: self._far_return(back, self._ctx, st, xs, s, t), early=True,
               sealed=lambda split: self._sealed(False, split), targets=(t, s, True, lambda: ~self._side),
               name="X").run()
        return True

    def _pairs_worth(self):
        """Whether the cuts that the pair passes take (at least
        ``REPAIR["pair_min"]`` units, neither end a terminal) carry at least
        ``REPAIR["pair_share"]`` of all the flow the batches since the last
        solve cut, so that re-routing them pair by pair is worth its pass
        (the sums come with each update's one read-back)."""
        share = float(self._rep.get("pair_share") or 0)
        return share <= 0 or self._paired_flow >= share * self._cut_flow

    def _deficit_phase(self, crossed=False):
        """Phase D: deficits filled from the source, else by cancelling flow towards the sink.

        `crossed`: phase X may have sent excess back across the kept cut
        (see ``REPAIR["cross_fill"]``).

        Push-relabel on the transposed network, where a deficit is an
        excess and pushing it from ``v`` to ``u`` adds flow on ``u -> v`` or
        cancels flow on ``v -> u``.
        """
        xp, idt, s, t = self._xp, self._idt, self.source, self.sink
        L, LT = self._L, self._LT
        LT["flow"][...] = L["flow"][self._t_of]
        stT = {"height": self._height, "excess": -self._excess}
        # deficits on the sink side cannot be filled from the source (the cut
        # is saturated): cancelling the flow of paths of one or two arcs to
        # the sink goes first, without a BFS
        back = lambda xs: self._K.return_excess(self._ctxT, stT, xs, self._sink_arcT, t)  # noqa: E731
        xs = xp.nonzero(self._inner((stT["excess"] > 0) & ~self._side))[0]
        if xs.shape[0]:
            back(xs.astype(idt))
        if self._rep.get("paths") and self._excess_left(stT):
            # augmenting paths inside each side first: from the source to the
            # source side's deficits; the sink side's deficits cancel the
            # flow that left them, back along it to the sink
            cross = crossed and self._rep.get("cross_fill")
            # (``cross_proof`` False: no pass only to prove the rest stuck
            # once most roots found none, as the cross fill searches a
            # superset of the first pass's side, and what it leaves is
            # cancelled towards the sink)
            quick = {"few": 0} if cross and not self._rep.get("cross_proof", True) else None
            ps = self._path_pass("D", self._LT, stT["excess"], self._side, s, t, limits=quick, full=True)
            done = ps["exhausted"]
            self._unwind(self._ctxT, stT, ~self._side, t, s)
            self._path_pass("D", self._LT, stT["excess"], ~self._side, t, s)
            if done or (quick and ps["stuck"]):
                if cross:
                    # phase X sent excess back across the cut, which then
                    # has residual arcs out of the source side: the source
                    # may reach a deficit through the sink side now
                    self._path_pass("Dx", self._LT, stT["excess"], None, s, t, limits=quick)
                elif not crossed and self._rep.get("far_direct") and self._unwinds():
                    # the pass's trees ran to their end inside the source
                    # side, and with the cut still sealed (nothing crossed
                    # it back) no residual path from the source leaves that
                    # side: nothing can fill the deficits left there, and
                    # the walks cancel them towards the sink at once, where
                    # a relabel would first prove the same
                    self._unwind(self._ctxT, stT, self._side, t, s)
                # what the source cannot fill is cancelled towards the sink across the cut
                if self._excess_left(stT):
                    self._path_pass("D", self._LT, stT["excess"], None, t, s)
        if self._excess_left(stT):
            it = _Phase(self, self._ctxT, stT, terminals=(s, t), hlimit=self._hlimit2,
                        far_return=lambda xs: self._far_return(back, self._ctxT, stT, xs, t, s), early=True,
                        sealed=lambda split: self._sealed(True, split), targets=(s, t, False, lambda: self._side),
                        name="D").run()
            self._stats["phase3_iterations"] = self._stats.get("phase3_iterations", 0) + it
        L["flow"][self._t_of] = LT["flow"]
        self._excess[...] = -stT["excess"]

    def _sealed(self, transposed, split=None):
        """The side of the kept cut that holds the near targets of phase X
        (``transposed`` False: the sink side) or D (True: the source side),
        if no residual arc crosses the cut from the source side to the sink
        side, else None; None too unless `split` (default
        ``REPAIR["split_relabel"]``): the caller's relabel may split.

        Then nothing on the source side reaches the sink side (phase X's
        near targets), and on the transposed network nothing on the sink
        side reaches the source side (phase D's): every arc of the cut
        from S to T is saturated and every arc from T to S is empty.  The
        arcs across the cut are listed once per cut; the test reads one flag.
        """
        if not (self._rep.get("split_relabel") if split is None else split):
            return None
        xp, E, side = self._xp, self._E, self._side
        if self._cut_arcs is None or self._cut_arcs[0] is not side:
            tail, head = self._tail_p[:E], self._head_p[:E]
            st = xp.nonzero(side[tail] & ~side[head])[0]
            ts = xp.nonzero(~side[tail] & side[head])[0]
            self._cut_arcs = (side, st, ts)
        _, st, ts = self._cut_arcs
        f = self._LT["flow"] if transposed else self._L["flow"]
        if self.backend == "cupy":
            # a kernel of ours: CuPy's reductions compile a kernel per size
            # class of their input (seconds each on a fresh cache, mid-repair)
            from .. import _cuda

            n = int(st.shape[0] + ts.shape[0])
            flag = xp.zeros(1, dtype=np.int32)
            if n:
                _cuda.get_kernel("flow/dynamic.cu", "gpumatch_dyn_cut_open")(
                    (max(1, min((n + 255) // 256, 1024)),), (256,),
                    (f, self._cap_p, self._oti_p, np.int32(transposed), st, np.int64(st.shape[0]), ts,
                     np.int64(ts.shape[0]), flag))
            cut_open = bool(int(flag.get()[0]))
        else:
            pos = (lambda a: self._oti_p[a]) if transposed else (lambda a: a)  # noqa: E731
            cut_open = bool((f[pos(st)] < self._cap_p[st]).any() or (f[pos(ts)] > 0).any())
        if cut_open:
            return None
        return ~side if not transposed else side

    def _cancel_2cycles(self):
        """Cancel the flow that runs round anti-parallel pairs of arcs.

        Where ``u -> v`` and ``v -> u`` both carry flow, both lose the
        smaller of the two: the net flows (the output), the value and every
        residual connection stay, but a repair sees less flow to cut and to
        unwind.  The pairs are found once (a search of the reversed keys).
        """
        xp, L = self._xp, self._L
        if self._pairs is None:
            self._pairs = csr.antiparallel_pairs(L["indptr"], L["indices"], self._V)
        k, p = self._pairs
        if k.shape[0]:
            f = L["flow"]
            m = xp.minimum(f[k], f[p])
            f[k] -= m
            f[p] -= m

    def _unwind(self, ctx, st, mask, target, other, xs=None):
        """Flow cancelling (``unwind`` of the kernels): the excess of `xs`
        (default: every vertex of `mask` but the terminals) goes back to
        `target` along the arcs that brought it, ``REPAIR["unwind"]`` rounds
        at most; returns whether it ran."""
        if not self._unwinds():
            return False
        rounds = int(self._rep.get("unwind") or 0)
        if xs is None:
            xs = self._xp.nonzero(self._inner((st["excess"] > 0) & mask))[0].astype(self._idt)
        if xs.shape[0] == 0:
            return False
        t0 = time.perf_counter()
        ran, left = self._K.unwind(ctx, st, xs, target, other, rounds)
        self._stats.setdefault("unwinds", []).append((int(xs.shape[0]), ran, left, time.perf_counter() - t0))
        if ran >= rounds and left:
            # walks still under way after that many rounds go round cycles
            # of the flow (GENRMF's): this solver unwinds no more
            self._circulates = True
        return True

    def _unwinds(self):
        """Whether the repairs cancel flow back along walks (``REPAIR["unwind"]``
        set, and no walk of this solver has run out of rounds)."""
        return int(self._rep.get("unwind") or 0) > 0 and not self._circulates

    def _far_return(self, back, ctx, st, xs, target, other):
        """What a relabel found cut off from the near targets goes to the far
        terminal: along paths of one or two arcs, then back the way it came."""
        back(xs)
        if self._rep.get("unwind"):
            xs = xs[st["excess"][xs] > 0]
            self._unwind(ctx, st, None, target, other, xs=xs)

    def _path_pass(self, name, L, excess, mask, target, other, moved=False, pairs=None, limits=None,
                   source_root=False, full=False):
        """The augmenting-path pass of :mod:`gpumatch.flow._paths` on one side
        (`mask` None: everywhere), with its statistics; returns whether it
        placed all it could (``exhausted``), or with `moved` whether it moved
        any flow, or with `full` the statistics of :func:`~gpumatch.flow._paths.route`."""
        if self._pbufs is None:
            self._pbufs = _paths.buffers(self.backend, self._V, self._idt)
        if mask is None:
            mask = self._xp.ones(self._V, dtype=bool)
        t0 = time.perf_counter()

        ps = _paths.route(self._pbufs, L, excess, mask, target, other, check=self._check_budget, limits=limits,
                          pairs=pairs, source_root=source_root)
        if ps["phases"]:
            self._stats.setdefault("path_passes", []).append(
                (name, ps["phases"], ps["levels"], ps["paths"], ps["amount"], time.perf_counter() - t0))
        if full:
            return ps
        return ps["amount"] > 0 if moved else ps["exhausted"]

    def _root_pass(self, value, phases):
        """Phase F's first try: augmenting paths from the source itself, one
        a pass, at most `phases` passes (``REPAIR["f_root"]``); the source's
        excess for them is what the kept cut still allows above `value`.
        Returns the statistics of :func:`gpumatch.flow._paths.route`:
        ``exhausted`` when the last pass found no path (the flow is then
        maximum), ``amount`` the flow moved."""
        s = self.source
        self._excess[s] = self._cap_cut - value
        try:
            # (no stop for little progress: the source's excess is only a bound)
            return self._path_pass("F0", self._L, self._excess, None, self.sink, s,
                                   limits={"phases": phases, "progress": 0.0}, source_root=True, full=True)
        finally:
            self._excess[s] = 0

    def _detour_pass(self, tails, heads, rounds):
        """The detour pass of :mod:`gpumatch.flow._detour` over the pairs
        ``tails[i] -> heads[i]``, at most `rounds` rounds, with its
        statistics (``stats["detours"]``)."""
        if self._dbufs is None:
            self._dbufs = _detour.buffers(self.backend, self._V, self._idt)
        t0 = time.perf_counter()

        ds = _detour.reroute(self._dbufs, self._L, self._excess, self._side, tails, heads, self.source, self.sink,
                             check=self._check_budget, limits={"rounds": rounds})
        self._stats.setdefault("detours", []).append(
            (ds["pairs"], ds["rounds"], ds["searches"], ds["paths"], ds["amount"], ds["dropped"],
             time.perf_counter() - t0))

    def _saturate_source(self):
        """Saturate the residual arcs out of the source whose head has a height below V."""
        xp, V, L = self._xp, self._V, self._L
        h = self._height
        a, b = self._s_out
        if b > a:
            head = L["indices"][a:b].astype(np.int64)
            r = L["cap"][a:b] - L["flow"][a:b]
            on = (r > 0) & (h[head] < V)
            L["flow"][a:b] += xp.where(on, r, 0)
            _scatter_add(xp, self._excess, head, xp.where(on, r, 0))
        a, b = self._s_in
        if b > a:
            k = L["in_to_out"][a:b].astype(np.int64)
            tail = L["in_indices"][a:b].astype(np.int64)
            r = L["flow"][k]
            on = (r > 0) & (h[tail] < V)
            L["flow"][k] -= xp.where(on, r, 0)
            _scatter_add(xp, self._excess, tail, xp.where(on, r, 0))
