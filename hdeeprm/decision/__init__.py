"""The decision system: queue, policy pairs, start strategies and the heterogeneity layer.

:class:`~hdeeprm.decision.manager.WorkloadManager` turns an agent's action
(:mod:`~hdeeprm.decision.actions`: a job ordering from
:mod:`~hdeeprm.decision.orderings` and a core selection from
:mod:`~hdeeprm.decision.core_selection`, applied by a start strategy from
:mod:`~hdeeprm.decision.strategies`) into Batsim commands, while
:mod:`~hdeeprm.decision.contention` keeps memory, bandwidth and pstates (its small-job path compiled
in ``contention_kernel.pyx`` when the install built it).
Observations and rewards read a :class:`~hdeeprm.decision.view.StateView` (the observation's order
statistics and the action mask's queue heads compiled in ``queue_kernel.pyx`` when the install built it).

The other modules:

* :mod:`~hdeeprm.decision.backfilling`: Backfilling start strategies: EASY (Lifka 1995) and conservative
  (Mu'alem and Feitelson 2001).
* :mod:`~hdeeprm.decision.commit_head`: The ``commit_head`` start strategy: RLScheduler's commitment to the
  head of the sorted queue.
* :mod:`~hdeeprm.decision.conservative`: Conservative backfilling written once (Mu'alem and Feitelson 2001), over
  a reservation profile that each resource side supplies (the cores of :mod:`~hdeeprm.decision.backfilling`, the
  GPU replay's :mod:`~hdeeprm.decision.gpu_reservations`).
* :mod:`~hdeeprm.decision.contention_models`: Contention models: the pstates of a processor's busy and idle
  cores given its load.
* :mod:`~hdeeprm.decision.easy`: EASY backfilling written once (Lifka 1995), over a reservation view that each
  resource side supplies (the cores of :mod:`~hdeeprm.decision.backfilling`, the GPU replay's
  :mod:`~hdeeprm.decision.gpu_manager`).
* :mod:`~hdeeprm.decision.fragmentation`: GPU fragmentation (Weng et al., ATC'23): the model the placement
  policies score with and the runs report.
* :mod:`~hdeeprm.decision.free_spaces`: Free spaces: the "rectangle" bookkeeping of PyBatsim 3.2.1's
  ``easyBackfill`` scheduler.
* :mod:`~hdeeprm.decision.gpu_choices`: The walk over the fitting nodes: where a GPU pod, or each part of a job,
  goes, best first.
* :mod:`~hdeeprm.decision.gpu_binding`: Jobs that ask for cores and GPUs together: filter, score, bind (the
  GPU side of the workload manager).
* :mod:`~hdeeprm.decision.gpu_manager`: The GPU workload manager of a timed replay: queue, job orderings,
  placement, rejection.
* :mod:`~hdeeprm.decision.gpu_placement`: Node selection for GPU pods: the placement state and the fit rule.
* :mod:`~hdeeprm.decision.gpu_scoring`: Scoring plugins of GPU placements: the policies of
  :data:`~hdeeprm.decision.gpu_scoring.GPU_PLACEMENTS` and their weighted combinations.
* :mod:`~hdeeprm.decision.gpu_reservations`: The reservation profile of conservative backfilling on a GPU
  cluster: free resources over future time.
* :mod:`~hdeeprm.decision.observation`: Observations of the workload manager's state (HDeepRM's definitions;
  ``docs/model.rst``, "Observations").
* :mod:`~hdeeprm.decision.rlscheduler`: RLScheduler's job priority keys, as its code computes them.
* :mod:`~hdeeprm.decision.start_strategy`: The start strategy interface, and the strategies that reserve
  nothing (head of line, greedy).
"""
