"""Markdown for the peer comparison (:mod:`benchmarks.peers`) in docs/benchmarks.md."""

from __future__ import annotations

from benchmarks.peer_venv import PeerEnv
from benchmarks.peers import (ACCELERATOR, LPF_LIMIT, MAESTRO_CITE, MAESTRO_DESIGNS_PER_S, MAPPING, PROBE, VENV,
                              ZIGZAG_REQUIREMENTS, AccelRow, Comparison, ZigZagRun)
from benchmarks.throughput import Throughput

NA = "—"
HEADER = ["tool", "model (accelerator)", "workload", "layers costed", "one network, one design point",
          "scalar evals/s", "batch points", "batched evals/s", "scalar / ZigZag", "batched / ZigZag",
          f"feasible ({PROBE} random points)", "default design point"]


def _rate(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _ratio(x: float) -> str:
    """3 significant digits: 2.34x, 1,560x, 1,620,000x."""
    return f"{x:.3g}x" if x < 100 else f"{round(x, 3 - len(str(int(x)))):,.0f}x"


def _seconds(s: float) -> str:
    return f"{s:.3g} s" if s >= 1 else f"{s * 1e3:.3g} ms"


def _row(*cells: object) -> str:
    return "| " + " | ".join(map(str, cells)) + " |"


def _default(row: AccelRow) -> str:
    d = row.default
    if not d["feasible"]:
        return f"infeasible ({d['infeasible_reason']})"
    return f"{_seconds(d['total']['time_s'])}, {d['total']['energy_j'] * 1e3:.3g} mJ"


def _install(env: PeerEnv) -> str:
    if env.error:
        return "not installed"
    how = (f"reused (created {env.created}; venv + pip install took {env.install_s:.0f} s)" if env.reused
           else f"created in this run (venv + pip install: {env.install_s:.0f} s)")
    deps = ", ".join(f"{k} {env.versions[k]}" for k in ("numpy", "onnx", "networkx", "sympy") if k in env.versions)
    return f"`{VENV.relative_to(VENV.parents[2])}`, {how}; in it: {deps}"


def _zigzag_setup(zz: ZigZagRun) -> list[str]:
    pins = " + ".join(f"`{r}`" for r in ZIGZAG_REQUIREMENTS)
    lines = [f"**ZigZag** ({pins}; `six` because zigzag-dse 3.9.1 imports it without declaring it) in its own venv: "
             f"{_install(zz.env)}. Accelerator: ZigZag's bundled `zigzag/inputs/hardware/{ACCELERATOR}.yaml` with "
             f"its bundled mapping `zigzag/inputs/mapping/{MAPPING}.yaml` (spatial mapping K 32 x C 32 fixed by "
             "that file). Called through its documented API, `get_hardware_performance_zigzag(net, accelerator, "
             f"mapping, temporal_mapping_search_engine=\"loma\", lpf_limit={LPF_LIMIT}, "
             "nb_spatial_mappings_generated=1, opt=\"latency\")`, LOMA's smallest search: ZigZag raises `lpf_limit` "
             "to each layer's number of temporal loop dimensions, so no loop is split into prime factors and LOMA "
             "enumerates the orderings of the whole loops; one spatial mapping per layer; the latency-best mapping "
             "is kept per layer.", ""]
    if zz.error:
        return lines + [f"**ZigZag could not run, so there are no ZigZag numbers in this run**: {zz.error}", ""]
    r = zz.result
    n, cme = len(r["layers"]), r["cost_model_evaluations"]
    return lines + [
        "| ZigZag run (one process, wall time) | |", "|---|---|",
        f"| interpreter and venv start-up, result file write (not counted below) | {zz.startup_s:.2f} s |",
        f"| `import zigzag` (not counted below) | {r['import_s']:.2f} s |",
        "| **evaluation of the whole network** (parse, mapping search, cost model, its own result files) "
        f"| **{r['eval_s']:.1f} s** |",
        f"| layers it costs | {n} (Conv and Gemm; pooling, Add, BatchNormalization, ReLU are dummy nodes) |",
        f"| design-point x layer evaluations | {n} (1 hardware point x {n} layers): {_rate(zz.evals_per_s)} per s |",
        f"| cost-model evaluations inside them (mappings tried) | {cme:,} ({cme / n:,.0f} per layer): "
        f"{_rate(cme / r['eval_s'])} per s |",
        f"| what it reports | latency {r['latency_cycles']:.4g} cycles, energy {r['energy_pj']:.4g} pJ |", ""]


def _table(c: Comparison) -> list[str]:
    zz = c.zigzag
    base = None if zz.error else zz.evals_per_s
    rows = [_row(*HEADER), _row(*["---"] * len(HEADER))]
    if zz.error:
        rows.append(_row("ZigZag", f"`{ACCELERATOR}`", "`resnet18.onnx`", NA, "could not run (see above)",
                         *[NA] * 7))
    else:
        r = zz.result
        rows.append(_row(f"ZigZag {r['zigzag_version']}", f"`{ACCELERATOR}` (LOMA search)", "`resnet18.onnx`",
                         len(r["layers"]), f"{r['eval_s']:.1f} s", _rate(base), NA, NA, "1x", NA, NA,
                         f"{r['latency_cycles']:.3g} cycles, {r['energy_pj'] * 1e-9:.3g} mJ"))

    def accel(label: str, wl: str, t: Throughput, share: str, default: str) -> str:
        return _row("accel-dse", label, wl, t.layers, _seconds(t.one_point_s), _rate(t.scalar_evals_per_s),
                    f"{t.batch_size:,}", _rate(t.batch_evals_per_s),
                    _ratio(t.scalar_evals_per_s / base) if base else NA,
                    _ratio(t.batch_evals_per_s / base) if base else NA, share, default)

    for row in c.accel:
        if row.t is None:
            rows.append(_row("accel-dse", f"`{row.arch}`", "`resnet18.onnx`", NA, f"could not evaluate: {row.error}",
                             *[NA] * 7))
        else:
            rows.append(accel(f"`{row.arch}`", "`resnet18.onnx`", row.t, f"{row.feasible_share:.0%}", _default(row)))
    if c.emaxvr_vgg16:
        rows.append(accel("`emaxvr`", "built-in `vgg16`", c.emaxvr_vgg16, NA, NA))
    rows.append(_row("MAESTRO (published, not run here)", *[NA] * 6, f"{MAESTRO_DESIGNS_PER_S:,.0f} designs/s",
                     *[NA] * 4))
    return rows + [""]


def _interpretation(c: Comparison) -> list[str]:
    out = []
    zz = c.zigzag
    ok = [a for a in c.accel if a.t is not None]
    if not zz.error and ok:
        r = zz.result
        n, cm_rate = len(r["layers"]), r["cost_model_evaluations"] / r["eval_s"]
        best = max(ok, key=lambda a: a.t.batch_evals_per_s)
        worst = min(ok, key=lambda a: a.t.scalar_evals_per_s)
        out.append(
            "What is and is not comparable. The two tools do different work per design-point x layer: ZigZag "
            f"searches temporal mappings for each layer ({r['cost_model_evaluations']:,} cost-model evaluations for "
            f"{n} layers here) and keeps the best, while accel-dse evaluates analytical models of given "
            "architectures: whatever mapping or schedule choice a model makes (the EMAX models pick among the "
            "mappings their CGRA rules allow, IMAX searches its LMM schedule, the others evaluate the given "
            "parameters directly) is built into the model and included in its time, with no generic loop-order "
            "search. The ratios therefore measure the time each tool needs to give a cost for one hardware point "
            f"on one layer, not the speed of equal work. Counted per single cost-model call, ZigZag runs "
            f"{_rate(cm_rate)} calls/s, {'faster' if cm_rate > worst.t.scalar_evals_per_s else 'slower'} than the "
            f"slowest accel-dse scalar path here (`{worst.arch}`, {_rate(worst.t.scalar_evals_per_s)} evals/s); "
            f"batched, `{best.arch}` reaches {_ratio(best.t.batch_evals_per_s / zz.evals_per_s)} ZigZag's "
            "design-point x layer rate.")
        if c.emaxvr_vgg16:
            t = c.emaxvr_vgg16
            out.append(f"EMAXVR batched on VGG16: {_rate(t.batch_evals_per_s)} evals/s, {_ratio(t.ratio)} its "
                       f"scalar path and {_ratio(t.batch_evals_per_s / zz.evals_per_s)} ZigZag's design-point x "
                       "layer rate on ResNet-18 (ZigZag was not run on VGG16; the same-network comparison is the "
                       "`emaxvr` ResNet-18 row).")
        out.append("The latency and energy columns are what each tool reports and are not comparable across rows: "
                   "different hardware (ZigZag's TPU-like array versus each accel-dse model's default design), and "
                   "ZigZag reports cycles and pJ where accel-dse reports seconds and joules. accel-dse also costs the "
                   f"pooling layers ({ok[0].t.layers} layers) where ZigZag costs {n}; every rate uses each tool's "
                   "own count.")
    if not c.emaxvr_vgg16:
        out.append("No `emaxvr` VGG16 line: the model is not available in this checkout or failed on VGG16 "
                   "(printed on the console).")
    out.append("Models whose default or random points are infeasible on ResNet-18 (a layer they cannot run or that "
               "does not fit) still evaluate every layer, so their rates are real evaluation rates.")
    out.append(f"MAESTRO's 0.17 M designs/s is a **published figure, not measured here** ({MAESTRO_CITE}): the "
               "average rate of its hardware design-space exploration tool on the authors' machine, an *effective* "
               "rate in which design points skipped by its area and power pruning count as explored. Its unit (as "
               "we read the paper, a hardware design point for given layers and a given dataflow) is close to, but "
               "not the same as, a design-point x layer evaluation here; it is a reference line, not a ratio.")
    return [p for s in out for p in (s, "")]


def markdown(c: Comparison) -> list[str]:
    """The whole peer section: set-up, ZigZag's run, the side-by-side table, interpretation."""
    env = c.zigzag.env
    lines = ["## Peers: ZigZag and MAESTRO", "",
             "Both tools read literally the same file: a full ResNet-18 (batch 1, 224 x 224, "
             f"{c.onnx_macs / 1e9:.3f} G MACs; 20 Conv, 1 Gemm, plus BatchNormalization, ReLU, Add, MaxPool, "
             "GlobalAveragePool, Flatten nodes) written by `benchmarks/onnx_nets.py` (the builder of "
             "`tests/test_onnx_import.py`) with ONNX shape inference stored in it, because ZigZag reads tensor "
             "shapes from the file. Every number below except MAESTRO's was measured in this run; wall times "
             "exclude interpreter start-up and imports.", ""]
    lines += _zigzag_setup(c.zigzag)
    lines += ["**accel-dse** evaluates the same file on every available model as in the throughput section: "
              "*scalar* = `model.evaluate`, one random design point per call; *batched* = `evaluate_batch` calls "
              "over the same random points of the model's declared space (infeasible ones included), the batch "
              f"sized by a probe call on {PROBE} other random points so that one call takes about a second (at most "
              "4,096 points, 1,024 in quick mode; the probe also gives the feasible share); *one network* = one "
              "`evaluate` at the model's defaults. *evals/s* = design-point x layer evaluations per second, each "
              "tool counting the layers it costs. The `emaxvr` on `vgg16` line is the throughput section's "
              "measurement (with that section's batch) when it ran in the same invocation, measured here otherwise.",
              ""]
    lines += _table(c)
    lines += _interpretation(c)
    install = f" (ZigZag venv creation and install {env.install_s:.0f} s)" if not (env.reused or env.error) else ""
    return lines + [f"_Peer section time: {c.seconds:.0f} s{install}._", ""]
