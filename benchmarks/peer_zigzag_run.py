"""Run ZigZag on one ONNX network (executed by the peer venv's Python, not accel-dse's).

Usage: ``python peer_zigzag_run.py NET.onnx ACCELERATOR MAPPING OUT.json [LPF_LIMIT]``, where
ACCELERATOR and MAPPING name YAML files bundled with ZigZag
(``zigzag/inputs/hardware/<ACCELERATOR>.yaml``, ``zigzag/inputs/mapping/<MAPPING>.yaml``).

Calls ZigZag's documented entry point ``zigzag.api.get_hardware_performance_zigzag``
with the LOMA temporal-mapping engine. The only instrumentation is a counter
around ZigZag's ``CostModelStage.run`` (one call = one cost-model evaluation
of one mapping of one layer). Writes JSON with the import time, the
evaluation wall time and what ZigZag reports. Standard library + ZigZag only.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    onnx_path, accelerator, mapping, out = argv[:4]
    lpf_limit = int(argv[4]) if len(argv) > 4 else 1
    logging.basicConfig(level=logging.WARNING)  # before ZigZag's own basicConfig(INFO), which then does nothing

    t0 = time.perf_counter()
    import zigzag
    from zigzag.api import get_hardware_performance_zigzag
    from zigzag.stages.evaluation.cost_model_evaluation import CostModelStage
    import_s = time.perf_counter() - t0

    calls = [0]
    original = CostModelStage.run

    def counted(self):  # noqa: ANN001, ANN202
        calls[0] += 1
        yield from original(self)

    CostModelStage.run = counted
    inputs = Path(zigzag.__file__).parent / "inputs"
    hw = inputs / "hardware" / f"{accelerator}.yaml"
    mp = inputs / "mapping" / f"{mapping}.yaml"
    dump = str(Path(out).parent / "zigzag-out")

    t0 = time.perf_counter()
    energy, latency, cmes = get_hardware_performance_zigzag(
        onnx_path, str(hw), str(mp), temporal_mapping_search_engine="loma", opt="latency", lpf_limit=lpf_limit,
        nb_spatial_mappings_generated=1, dump_folder=dump, loma_show_progress_bar=False)
    eval_s = time.perf_counter() - t0

    layers = [cme.layer.name for cme, _ in cmes[0][1]]
    Path(out).write_text(json.dumps({
        "zigzag_version": getattr(zigzag, "__version__", ""),
        "accelerator": f"zigzag/inputs/hardware/{hw.name}", "mapping": f"zigzag/inputs/mapping/{mp.name}",
        "lpf_limit": lpf_limit, "import_s": import_s, "eval_s": eval_s,
        "energy_pj": float(energy), "latency_cycles": float(latency),
        "layers": layers, "cost_model_evaluations": calls[0],
    }, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
