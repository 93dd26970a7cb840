"""Samplers: the factory for a study's ``sampler`` key, parameter suggestion, and the default.

:func:`make_sampler` builds the Optuna sampler a study names; :func:`suggest`
samples a trial's searched parameters. The default sampler of a study that
names none comes from measured search quality:

`make bench` (benchmarks/search_quality.py, docs/benchmarks.md) ran every
sampler with 5 seeds on one enumerable space per model (640-770 grid
points) and compared the hypervolume reached after 1, 2 and 5 % of the grid
with the exact Pareto front. Measured on 2026-11-21 (2 cores), best at 5 %:
GP on emaxv, emaxvr, imax, rena and atomswitch; TPE on multicore.

So for studies of that size -- a finite grid of at most 50,000 points and a
budget of at most 5 % of it and at most 100 trials, where GP's ~0.5 s per
trial is affordable -- the default is the model's measured best (GP needs
PyTorch, the `gp` extra; without it TPE, the runner-up). Anything larger
keeps Optuna's own default, TPE.
"""

from __future__ import annotations

import copy
import operator
import os
import weakref
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

import numpy as np
import optuna
from optuna._hypervolume import hssp as _hssp
from optuna.search_space import IntersectionSearchSpace
from optuna.samplers._tpe import sampler as _tpe
from optuna.study._multi_objective import _fast_non_domination_rank
from optuna.study._study_direction import StudyDirection
from optuna.search_space.intersection import _calculate as _intersection_of
from optuna.trial import FrozenTrial, TrialState

from workloads.errors import UserError

if TYPE_CHECKING:
    from .config import Dim, Study

BEST_SMALL_BUDGET = {
    "emaxv": "gp", "emaxvr": "gp", "imax": "gp", "rena": "gp", "atomswitch": "gp", "multicore": "tpe",
}
MAX_GRID = 50_000
MAX_FRACTION = 0.05
MAX_TRIALS_GP = 100


def default_sampler(arch: str, grid_size: int | None, n_trials: int | None, batch_size: int = 1) -> tuple[str, str]:
    """(sampler, why) for a study without an explicit sampler."""
    small = (grid_size is not None and grid_size <= MAX_GRID and n_trials is not None
             and n_trials <= MAX_FRACTION * grid_size and n_trials <= MAX_TRIALS_GP)
    if not small:
        return "tpe", "Optuna's default (the study is larger than the measured small-budget regime)"
    best = BEST_SMALL_BUDGET.get(arch, "tpe")
    if best == "gp" and find_spec("torch") is None:
        return "tpe", "GP measured best for this size but PyTorch is not installed (pip install -e '.[gp]')"
    if best == "gp" and batch_size > 1:
        return "tpe", "GP measured best for this size but it takes no batches (batch_size > 1)"
    return best, f"measured best for {arch} at <= 5 % of a small grid (docs/benchmarks.md)"


def make_sampler(study: Study, worker: int = 0) -> optuna.samplers.BaseSampler:
    """The study's sampler; worker ``i`` gets seed + i so workers do not repeat each other."""
    seed = None if study.seed is None else study.seed + worker
    opts = dict(study.sampler_options)
    name = study.sampler
    try:
        if name == "tpe":
            return TPESampler(seed=seed, **opts)
        if name == "nsga2":
            return NSGAIISampler(seed=seed, **opts)
        if name == "nsga3":
            return NSGAIIISampler(seed=seed, **opts)
        if name in ("random", "grid"):
            return optuna.samplers.RandomSampler(seed=seed, **opts)
        if name == "gp":
            # one thread per process (workers run side by side): set before torch starts its pool, and again
            # on the pool in case torch was imported earlier
            os.environ.setdefault("OMP_NUM_THREADS", "1")
            try:
                import torch  # GPSampler needs it
            except ImportError:
                raise UserError(
                    f"{study.path}: sampler: 'gp' needs PyTorch; install it with "
                    "`.venv/bin/pip install -e '.[gp]'` (CPU wheel torch==2.13.0)"
                ) from None
            threads = os.environ["OMP_NUM_THREADS"]
            torch.set_num_threads(int(threads) if threads.isdigit() and int(threads) > 0 else 1)
            opts.setdefault("deterministic_objective", True)
            return optuna.samplers.GPSampler(seed=seed, **opts)
    except TypeError as exc:
        known = _option_names(name)
        unknown = [k for k in opts if known is not None and k not in known]
        if unknown:
            raise UserError(f"{study.path}: sampler.options: unknown option {', '.join(map(repr, unknown))} for "
                            f"{name}; allowed: {', '.join(known) or 'none'}") from None
        raise UserError(f"{study.path}: sampler.options: {exc}") from None
    raise UserError(f"{study.path}: sampler: unknown '{name}'")


def _option_names(name: str) -> list[str] | None:
    """The keyword arguments of the Optuna sampler behind ``name`` (``seed`` has its own key)."""
    import inspect

    cls = {"tpe": optuna.samplers.TPESampler, "nsga2": optuna.samplers.NSGAIISampler,
           "nsga3": optuna.samplers.NSGAIIISampler, "random": optuna.samplers.RandomSampler,
           "grid": optuna.samplers.RandomSampler, "gp": optuna.samplers.GPSampler}.get(name)
    if cls is None:
        return None
    params = inspect.signature(cls.__init__).parameters.values()
    return [p.name for p in params if p.name not in ("self", "seed") and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]


class _Generations:
    """Optuna's GA samplers (NSGA-II, NSGA-III) with the same generations and parents, found without a walk
    over every trial at every ask.

    Optuna's ``get_trial_generation`` tallies the generation of every COMPLETE trial at each ask, and
    ``get_parent_population`` filters every trial of the study for the stored parents' ids: O(trials) per ask,
    ~25 ms at 9,000 trials (a converged study on a grid repeats designs, and each repeat is a trial). The
    tally depends only on the set of COMPLETE trials (a trial's generation is stored at its ask, before it
    completes; a COMPLETE trial never changes or leaves that state), so it is updated with the trials that
    completed since the last ask; a generation's parents, once stored in the study, are fixed, so their
    trials are looked up once. Same arguments, same results, same stored attributes as Optuna's
    (tests/test_samplers.py compares whole studies)."""

    _PARENTS_KEPT = 4  # generations whose parent trials are remembered

    def get_trial_generation(self, study: optuna.Study, trial: FrozenTrial) -> int:
        generation = trial.system_attrs.get(self._get_generation_key(), None)
        if generation is not None:
            return generation
        # the storage's COMPLETE trials (a journal's replay has them filed: dse.replay.IndexedReplay), not the
        # trial's cache of every trial filtered in Python (Optuna's use_cache: the same trials within an ask)
        complete = study._get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        tallies = _per_study(self, "_tallies", study)
        seen, top, count = tallies.get(study._study_id, (set(), 0, 0))
        new = len(complete) - len(seen)
        if new < 0:  # not the trials tallied: start again
            (seen, top, count), new = (set(), 0, 0), len(complete)
        key = self._get_generation_key()
        for t in reversed(complete):  # the newly completed trials are the latest as a rule: stop at the last one
            if new <= 0:
                break
            if t._trial_id in seen:
                continue
            seen.add(t._trial_id)
            new -= 1
            g = t.system_attrs.get(key, -1)
            if g > top:
                top, count = g, 1
            elif g == top:
                count += 1
        tallies[study._study_id] = (seen, top, count)
        assert self._population_size is not None, "Population size must be set."
        generation = top if count < self._population_size else top + 1
        study._storage.set_trial_system_attr(trial._trial_id, key, generation)
        return generation

    def get_parent_population(self, study: optuna.Study, generation: int) -> list[FrozenTrial]:
        if generation == 0:
            return []
        attrs = study._storage.get_study_system_attrs(study._study_id)
        ids = attrs.get(self._get_parent_cache_key_prefix() + str(generation), None)
        if ids is None:  # not selected yet: Optuna selects and stores them
            return super().get_parent_population(study, generation)  # type: ignore[misc]
        parents = _per_study(self, "_parents", study)
        key = (study._study_id, generation, tuple(ids))
        if key not in parents:
            wanted = set(ids)
            parents[key] = [t for t in study._get_trials(deepcopy=False) if t._trial_id in wanted]
            for old in list(parents)[:-self._PARENTS_KEPT]:
                del parents[old]
        return list(parents[key])


def _per_study(sampler: object, name: str, study: optuna.Study) -> dict:
    """The sampler's memo ``name`` for the study's storage (dropped with the storage)."""
    memo = sampler.__dict__.setdefault(name, weakref.WeakKeyDictionary())
    return memo.setdefault(study._storage, {})


#: the trial states Optuna's intersection search space reads (without, with pruned trials); it skips the others
_READ_STATES = {False: (TrialState.COMPLETE, TrialState.WAITING, TrialState.RUNNING),
                True: (TrialState.COMPLETE, TrialState.WAITING, TrialState.RUNNING, TrialState.PRUNED)}


class _Intersection(IntersectionSearchSpace):
    """Optuna's intersection search space, fed only the trials of the states it reads.

    Optuna's ``calculate`` lists every trial of the study at each ask (a list of every trial object: ~0.5-1.4 ms
    at 10,000 trials), then walks back from the newest trial only to its cached trial number, skipping the states
    it ignores (FAIL; PRUNED unless ``include_pruned``), and deep-copies the space. The storage's trials of the
    states it reads, in the same order, give its ``_calculate`` the same walk (a journal answers them from its
    filed trials, :class:`dse.replay.IndexedReplay`); the space is deep-copied when it changes, not at each ask.
    Same answers as Optuna's (tests/test_intersection.py); a 4,000-design NSGA-II study took 0.84x the CPU
    (docs/profile/study_loop.md, third round)."""

    def calculate(self, study: optuna.Study, use_cache: bool = False) -> dict:
        if use_cache:  # (the trial's cached list of every trial: Optuna's path)
            return super().calculate(study, use_cache)
        if self._study_id is None:
            self._study_id = study._study_id
        elif self._study_id != study._study_id:
            raise ValueError("`IntersectionSearchSpace` cannot handle multiple studies.")
        trials = study._storage.get_all_trials(study._study_id, deepcopy=False,
                                               states=_READ_STATES[self._include_pruned])
        self._search_space, self._cached_trial_number = _intersection_of(
            trials, self._include_pruned, self._search_space, self._cached_trial_number)
        # once set, the space only loses names (each kept name keeps its distribution object): its names say
        # when the copy handed out must change
        names = sorted(self._search_space or {})
        copied = self.__dict__.get("_copied")
        if copied is None or copied[0] != names:
            copied = self._copied = (names, copy.deepcopy({k: self._search_space[k] for k in names}))
        return dict(copied[1])


class _Intersected:
    """A GA sampler whose intersection search space is :class:`_Intersection` (set after Optuna's ``__init__``)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._search_space = _Intersection()


class NSGAIISampler(_Generations, _Intersected, optuna.samplers.NSGAIISampler):
    """Optuna's NSGA-II without its per-ask walks over every trial (:class:`_Generations`, :class:`_Intersection`)."""


class NSGAIIISampler(_Generations, _Intersected, optuna.samplers.NSGAIIISampler):
    """Optuna's NSGA-III without its per-ask walks over every trial (:class:`_Generations`, :class:`_Intersection`)."""


class TPESampler(optuna.samplers.TPESampler):
    """Optuna's TPE, with the split of the trials into "below" and "above" remembered across its parameters.

    On a multi-objective study TPE samples each parameter on its own (Optuna 5's default there), and for each one
    Optuna's ``_sample`` lists the study's trials and splits them by values and constraints (``_split_trials``: a
    Python walk over every trial, its constraints read from its attributes, a non-domination sort): a trial's six
    parameters meant six splits of the same trials. The split depends on the finished trials only (RUNNING ones,
    the constant liar's, all go "above"), so it is remembered with the finished trials it was made from (the very
    objects: a storage replaces a trial's object when the trial changes) and reused while they are the same; the
    RUNNING trials are added as Optuna adds them. ``_sample`` is Optuna 5.0's but for that split, and
    ``_get_internal_repr`` reads each trial's parameters as Optuna's does without asking, per trial, whether the
    sampler is multivariate. Same proposals as Optuna's (tests/test_samplers.py compares whole studies);
    docs/profile/study_loop.md, fourth round.

    For long studies (docs/profile/study_loop.md, fifth round): the multi-objective tie-break keeps its greedy
    steps across asks (:class:`_GreedyHSSP`), finished trials' internal values come from per-study columns
    (:class:`_Numbered`, :class:`_ReprColumn`) and their kinds are remembered (:func:`_split_trials`), and the
    trial lists are made once per ask (:meth:`_listed`, :meth:`sample_independent`); tests/test_tpe_hssp.py."""

    def _sample(self, study: optuna.Study, trial: FrozenTrial, search_space: dict) -> dict[str, Any]:
        finished, running = self._listed(study, trial)
        if self._gamma is None:
            self._gamma = _tpe.default_gamma if len(study.directions) <= 1 else _tpe.default_gamma_multiobjective
        below_trials, above_trials = self._split(study, finished, running, self._gamma(len(finished)))
        mpe_below = self._build_parzen_estimator(study, search_space, below_trials, handle_below=True)
        mpe_above = self._build_parzen_estimator(study, search_space, above_trials, handle_below=False)
        samples_below = mpe_below.sample(self._rng.rng, self._n_ei_candidates)
        acq_func_vals = self._compute_acquisition_func(samples_below, mpe_below, mpe_above)
        ret = optuna.samplers.TPESampler._compare(samples_below, acq_func_vals)
        for param_name, dist in search_space.items():
            ret[param_name] = dist.to_external_repr(ret[param_name])
        return ret

    def _listed(self, study: optuna.Study, trial: FrozenTrial) -> tuple[list[FrozenTrial], list[FrozenTrial]]:
        """The trials Optuna's ``_sample`` reads (COMPLETE and PRUNED; with the constant liar also the RUNNING ones
        but ``trial``), in trial-number order, as (finished, RUNNING); remembered while the storage hands the same
        trial objects for the same ``trial`` (its parameters are asked one after the other; a storage replaces a
        trial's object when the trial changes), instead of three walks over every trial per parameter."""
        if self._constant_liar:
            trials = study._get_trials(deepcopy=False, states=_LIAR_STATES, use_cache=False)
        else:
            trials = study._get_trials(deepcopy=False, states=_FINISHED_STATES, use_cache=True)
        memo = _per_study(self, "_lists", study)
        last = memo.get(study._study_id)
        if last is not None and last[0] == trial.number and _same_but(last[1], trials, trial.number):
            return last[2]
        running = [t for t in trials if t.state == TrialState.RUNNING]
        if running:
            finished = [t for t in trials if t.state != TrialState.RUNNING]
            running = [t for t in running if t.number != trial.number]
        else:
            finished = trials
        memo[study._study_id] = (trial.number, trials, (finished, running))
        return finished, running

    def sample_independent(self, study: optuna.Study, trial: FrozenTrial, param_name: str,
                           param_distribution: optuna.distributions.BaseDistribution) -> Any:
        """Optuna's, its count of finished trials (random sampling below ``n_startup_trials``) made once per list
        of trials Optuna caches for an ask, not once per parameter."""
        if self._warn_independent_sampling and self._is_multivariate(study):
            return super().sample_independent(study, trial, param_name, param_distribution)
        if self._n_finished(study) < self._n_startup_trials:
            return self._random_sampler.sample_independent(study, trial, param_name, param_distribution)
        return self._sample(study, trial, {param_name: param_distribution})[param_name]

    def _n_finished(self, study: optuna.Study) -> int:
        """``len(study._get_trials(deepcopy=False, states=(COMPLETE, PRUNED), use_cache=True))``, by the identity
        of the cached list of every trial it filters (the list is kept with the count, so its id stays its own)."""
        every = study._get_trials(deepcopy=False, use_cache=True)
        counted = self.__dict__.get("_counted")
        if counted is None or counted[0] is not every:
            counted = self._counted = (every, sum(t.state in _FINISHED_STATES for t in every))
        return counted[1]

    def _split(self, study: optuna.Study, finished: list[FrozenTrial], running: list[FrozenTrial],
               n_below: int) -> tuple[list[FrozenTrial], list[FrozenTrial]]:
        """Optuna's ``_split_trials(study, finished + running, n_below)``: the finished trials' split, remembered; the
        RUNNING trials added "above" in trial-number order as Optuna's sort puts them. Both lists are
        :class:`_Numbered` (their trials' numbers, for :meth:`_get_internal_repr`)."""
        splits = _per_study(self, "_splits", study)  # study id -> (n_below, finished trials, their split)
        last = splits.get(study._study_id)
        if last is not None and last[0] == n_below and (last[1] is finished or (  # (_listed's list again)
                len(last[1]) == len(finished) and all(map(operator.is_, last[1], finished)))):
            below, above = last[2]
        else:
            below, above = (_Numbered.of(part) for part in
                            _split_trials(study, finished, n_below, _per_study(self, "_split_memo", study)))
            splits[study._study_id] = (n_below, finished, (below, above))
        return below.copy(), above.merged(running) if running else above.copy()

    def _get_internal_repr(self, trials: list[FrozenTrial], search_space: dict, study: optuna.Study) -> dict:
        """Optuna's: each parameter's internal values over ``trials`` that have every parameter of the space, in
        order. For a :class:`_Numbered` list the finished trials' values are gathered from per-study columns (a
        finished trial's parameters never change), each trial's value computed once by Optuna's
        ``to_internal_repr``; only RUNNING trials are read one by one. Anything unusual (a value Optuna's
        conversion rejects) takes Optuna's own path, which raises as Optuna does."""
        if isinstance(trials, _Numbered) and search_space:
            columns = _per_study(self, "_reprs", study).setdefault(study._study_id, {})
            got = trials.gather(columns, search_space, lambda t: self._get_params(t, study))
            if got is not None:
                return got
        multivariate = self._is_multivariate(study)
        values: dict[str, list[float]] = {param_name: [] for param_name in search_space}
        items, names = list(search_space.items()), search_space.keys()
        for trial in trials:
            params = trial.params if not multivariate or trial.state.is_finished() else self._get_params(trial, study)
            if names <= params.keys():
                for param_name, distribution in items:
                    values[param_name].append(distribution.to_internal_repr(params[param_name]))
        return {k: np.asarray(v) for k, v in values.items()}


def _same_but(before: list[FrozenTrial], now: list[FrozenTrial], number: int) -> bool:
    """Whether ``now`` holds the objects of ``before`` in order, but for the trial numbered ``number`` (the trial
    being asked: its object is replaced as each of its parameters is stored, and the lists leave it out)."""
    if len(before) != len(now):
        return False
    same = list(map(operator.is_, before, now))
    if all(same):
        return True
    i = same.index(False)
    return now[i].number == number and before[i].number == number and all(same[i + 1:])


#: the trial states TPE's ``_sample`` reads, with and without the constant liar
_LIAR_STATES = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING)
_FINISHED_STATES = (TrialState.COMPLETE, TrialState.PRUNED)


class _Numbered(list):
    """A list of trials in trial-number order with their numbers (``nums``) and which are RUNNING (``running``)."""

    nums: np.ndarray
    running: np.ndarray

    @classmethod
    def of(cls, trials: list[FrozenTrial]) -> _Numbered:
        """Finished trials (in number order)."""
        out = cls(trials)
        out.nums = np.fromiter((t.number for t in trials), np.int64, len(trials))
        out.running = np.zeros(len(trials), bool)
        return out

    def copy(self) -> _Numbered:
        out = _Numbered(self)
        out.nums, out.running = self.nums, self.running
        return out

    def merged(self, running: list[FrozenTrial]) -> _Numbered:
        """These finished trials and ``running`` (in number order), in number order."""
        both = list(self) + running
        nums = np.concatenate([self.nums, np.fromiter((t.number for t in running), np.int64, len(running))])
        order = np.argsort(nums, kind="stable")
        out = _Numbered(map(both.__getitem__, order.tolist()))
        out.nums, out.running = nums[order], order >= len(self)
        return out

    def gather(self, columns: dict, search_space: dict, params_of) -> dict[str, np.ndarray] | None:
        """:meth:`TPESampler._get_internal_repr` of these trials from ``columns`` ((name, distribution) -> a
        :class:`_ReprColumn`), the RUNNING trials' parameters from ``params_of``; None where Optuna's own path
        must answer."""
        fin = ~self.running
        nums = self.nums[fin]
        cols = []
        for name, dist in search_space.items():
            col = columns.get((name, dist))
            if col is None:
                col = columns[(name, dist)] = _ReprColumn(name, dist)
            col.fill(self, nums, fin)
            cols.append(col)
        keep = np.ones(len(nums), bool)
        for col in cols:
            keep &= col.has[nums]
        if any(col.bad[nums[keep]].any() for col in cols):
            return None
        run_at = np.flatnonzero(self.running)
        run_vals: dict[str, list] = {name: [] for name in search_space}
        run_keep = []
        names = search_space.keys()
        for i in run_at.tolist():
            params = params_of(self[i])
            ok = names <= params.keys()
            run_keep.append(ok)
            if ok:
                for (name, dist) in search_space.items():
                    run_vals[name].append(dist.to_internal_repr(params[name]))
        out = {}
        for col in cols:
            vals = col.vals[nums[keep]]
            if len(run_at):
                pos = np.concatenate([np.flatnonzero(fin)[keep], run_at[np.array(run_keep, bool)]])
                vals = np.concatenate([vals, np.asarray(run_vals[col.name], dtype=float)])[np.argsort(pos)]
            if len(vals) and isinstance(col.dist, optuna.distributions.CategoricalDistribution):
                vals = vals.astype(np.int64)  # (Optuna's list of indices as an array)
            out[col.name] = vals
        return out


class _ReprColumn:
    """One parameter's internal values (by ``dist``) of a study's finished trials, indexed by trial number:
    ``has`` (the trial has the parameter), ``vals``, ``bad`` (Optuna's conversion raised), ``filled``."""

    def __init__(self, name: str, dist: optuna.distributions.BaseDistribution) -> None:
        self.name, self.dist = name, dist
        self.filled, self.has, self.bad = (np.zeros(0, bool) for _ in range(3))
        self.vals = np.zeros(0)

    def fill(self, trials: _Numbered, nums: np.ndarray, fin: np.ndarray) -> None:
        """Convert the finished ``trials`` (at ``fin``, numbered ``nums``) not converted before."""
        if len(nums) == 0:
            return
        top = int(nums.max()) + 1
        if top > len(self.filled):
            size = max(top, 2 * len(self.filled))
            self.filled, self.has, self.bad = (np.concatenate([a, np.zeros(size - len(a), bool)])
                                                for a in (self.filled, self.has, self.bad))
            self.vals = np.concatenate([self.vals, np.zeros(size - len(self.vals))])
        new = ~self.filled[nums]
        if not new.any():
            return
        at = np.flatnonzero(fin)[new]
        for i, num in zip(at.tolist(), nums[new].tolist()):
            params = trials[i].params
            self.filled[num] = True
            if self.name in params:
                self.has[num] = True
                try:
                    self.vals[num] = self.dist.to_internal_repr(params[self.name])
                except ValueError:
                    self.bad[num] = True


# the attribute names Optuna's own classes store (a subclass gets its own name's; stored studies keep theirs)
for _ours, _theirs in ((NSGAIISampler, optuna.samplers.NSGAIISampler), (NSGAIIISampler, optuna.samplers.NSGAIIISampler)):
    _ours._GENERATION_KEY = _theirs._GENERATION_KEY
    _ours._PARENT_CACHE_KEY_PREFIX = _theirs._PARENT_CACHE_KEY_PREFIX


def suggest(trial: optuna.Trial, dims: tuple[Dim, ...]) -> dict[str, Any]:
    """Sample the searched parameters of one trial."""
    out: dict[str, Any] = {}
    for d in dims:
        if d.kind == "int":
            out[d.name] = trial.suggest_int(d.name, int(d.low), int(d.high), step=int(d.step or 1), log=d.log)
        elif d.kind == "float":
            out[d.name] = trial.suggest_float(d.name, d.low, d.high, step=d.step, log=d.log)
        elif d.kind == "choice":
            out[d.name] = trial.suggest_categorical(d.name, list(d.choices))
    return out


def _split_trials(study: optuna.Study, trials: list[FrozenTrial], n_below: int,
                  memo: dict) -> tuple[list[FrozenTrial], list[FrozenTrial]]:
    """Optuna 5.0's ``_tpe._split_trials`` (no RUNNING trial among ``trials``), its multi-objective tie-break by
    :class:`_GreedyHSSP` instead of ``_solve_hssp``: the same split. ``memo``: the sampler's per-study memo (by
    study id: the tie-break's runs; each finished trial's kind -- infeasible, complete, pruned -- by its number: a
    finished trial never changes, and Optuna reads every trial's constraints at every split)."""
    sid = study._study_id
    kinds = memo.setdefault((sid, "kinds"), {})
    complete, pruned, infeasible = [], [], []
    lists = (infeasible, complete, pruned)
    for trial in trials:
        kind = kinds.get(trial.number)
        if kind is None:
            if _tpe._get_infeasible_trial_score(trial) > 0:
                kind = 0
            elif trial.state == TrialState.COMPLETE:
                kind = 1
            elif trial.state == TrialState.PRUNED:
                kind = 2
            else:
                raise AssertionError(trial.state)
            kinds[trial.number] = kind
        lists[kind].append(trial)
    n = min(n_below, len(complete))
    if len(study.directions) <= 1:
        below_complete, above_complete = _tpe._split_complete_trials_single_objective(complete, study, n)
    else:
        solver = memo.get((sid, "hssp"))
        if solver is None:
            solver = memo[(sid, "hssp")] = _GreedyHSSP()
        below_complete, above_complete = _split_complete_multi(complete, study, n, solver)
    n_below = max(0, n_below - len(below_complete))
    below_pruned, above_pruned = _tpe._split_pruned_trials(pruned, study, n_below)
    n_below = max(0, n_below - len(below_pruned))
    below_infeasible, above_infeasible = _tpe._split_infeasible_trials(infeasible, n_below)
    below = below_complete + below_pruned + below_infeasible
    above = above_complete + above_pruned + above_infeasible
    below.sort(key=lambda t: t.number)
    above.sort(key=lambda t: t.number)
    return below, above


def _split_complete_multi(trials: list[FrozenTrial], study: optuna.Study, n_below: int,
                          solver: _GreedyHSSP) -> tuple[list[FrozenTrial], list[FrozenTrial]]:
    """Optuna 5.0's ``_split_complete_trials_multi_objective`` with the tie-break solved by ``solver``."""
    if n_below == 0:
        return [], list(trials)
    if n_below == len(trials):
        return list(trials), []
    lvals = np.array([trial.values for trial in trials])
    lvals *= [-1.0 if d == StudyDirection.MAXIMIZE else 1.0 for d in study.directions]
    ranks_of = _fast_non_domination_rank(lvals, n_below=n_below)
    ranks, rank_counts = np.unique(ranks_of, return_counts=True)
    last_rank = int(np.max(ranks[np.cumsum(rank_counts) <= n_below], initial=-1))
    indices = np.arange(len(trials))
    indices_below = indices[ranks_of <= last_rank]
    if indices_below.size < n_below:  # tie-break: hypervolume subset selection in the next rank
        tie = ranks_of == last_rank + 1
        tie_lvals = lvals[tie]
        chosen = solver(tie_lvals, indices[tie], n_below - indices_below.size, _tpe._get_reference_point(tie_lvals))
        indices_below = np.append(indices_below, chosen)
    below_set = set(indices_below.tolist())
    return ([trials[i] for i in range(len(trials)) if i in below_set],
            [trials[i] for i in range(len(trials)) if i not in below_set])


class _GreedyHSSP:
    """Optuna 5.0's greedy hypervolume subset selection (``optuna._hypervolume.hssp._solve_hssp``), its steps kept.

    Multi-objective TPE splits the trials at every ask, with a tie-break that picks, one point after the other, the
    points adding most hypervolume among the next rank's (``subset_size`` of them: 10 % of the trials less the
    better ranks'). Nothing in the greedy choice depends on ``subset_size`` but where it stops, so the choice for
    ``s`` points is the first ``s`` of the choice for more. A study's next ask very often meets the same distinct
    points and reference point with another ``subset_size``: a repeated design (docs/studies.md) adds a duplicate,
    ten more trials add one to ``subset_size``. The state of the last few greedy runs is kept, keyed by the exact
    bits of the distinct points and the reference point, and a call takes the first ``s`` choices, running more
    steps only when it needs them -- the same operations on the same arrays as Optuna's (its own
    ``_lazy_contribs_update`` and hypervolume), one step after the other. Two objectives and the other early
    answers are Optuna's own."""

    KEEP = 4  # greedy runs kept (distinct point sets)

    def __init__(self) -> None:
        self.runs: dict[tuple, _Greedy] = {}

    def __call__(self, lvals: np.ndarray, indices: np.ndarray, subset_size: int,
                 reference_point: np.ndarray) -> np.ndarray:
        if subset_size == indices.size:
            return indices
        uniq, first = np.unique(lvals, return_index=True, axis=0)
        if first.size < subset_size:  # (Optuna's: the distinct points, then duplicates in order)
            chosen = np.zeros(indices.size, dtype=bool)
            chosen[first] = True
            chosen[np.arange(indices.size)[~chosen][: subset_size - first.size]] = True
            return indices[chosen]
        if not np.isfinite(reference_point).all():
            return indices[first[:subset_size]]
        if first.size == subset_size:
            return indices[first]
        if uniq.shape[-1] == 2:
            return indices[_hssp._solve_hssp_2d(uniq, first, subset_size, reference_point)]
        key = (uniq.shape, uniq.tobytes(), reference_point.tobytes())
        run = self.runs.pop(key, None)
        if run is None:
            run = _Greedy(uniq, reference_point)
            if len(self.runs) >= self.KEEP:
                del self.runs[next(iter(self.runs))]
        self.runs[key] = run  # (most recent last)
        return indices[first[run.first(subset_size)]]


class _Greedy:
    """One greedy run of ``_solve_hssp_on_unique_loss_vals`` on distinct points ``uniq`` (3 or more objectives),
    stepped as far as asked; the lazy contribution update after a choice is made when the next choice needs it
    (Optuna's loop skips it after the last one)."""

    def __init__(self, uniq: np.ndarray, reference_point: np.ndarray) -> None:
        n, m = uniq.shape
        self.ref, self.lvals = reference_point, uniq
        self.contribs = np.prod(reference_point - uniq, axis=-1)
        self.indices = np.arange(n)
        self.selected: list[int] = []
        self.vecs = np.empty((n + 1, m))  # the chosen points, then the update's scratch row
        self.hv: Any = 0

    def first(self, s: int) -> np.ndarray:
        """The positions in ``uniq`` of the first ``s`` points chosen (``s`` < the number of points)."""
        while len(self.selected) < s:
            k = len(self.selected)
            if k:
                self.contribs = _hssp._lazy_contribs_update(self.contribs, self.lvals, self.vecs[: k + 1], self.ref,
                                                            self.hv)
            at = int(np.argmax(self.contribs))
            self.hv += self.contribs[at]
            self.selected.append(int(self.indices[at]))
            self.vecs[k] = self.lvals[at].copy()
            keep = np.ones(self.contribs.size, dtype=bool)
            keep[at] = False
            self.contribs, self.indices, self.lvals = self.contribs[keep], self.indices[keep], self.lvals[keep]
        return np.array(self.selected[:s], dtype=int)
