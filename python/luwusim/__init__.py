"""luwusim from Python: scenarios in, dicts and pandas DataFrames out.

    import luwusim
    result = luwusim.run("scenarios/luwu-paper-175b-8w.json")      # as `luwusim run --json`
    frame = luwusim.run_frame({"model": "gpt3-125m", ...})          # one row per system
    sweep = luwusim.sweep("scenarios/small-zero3-vs-ddp.json",
                          {"cluster.workers": [2, 4], "model": ["gpt3-125m", "gpt3-350m"]})

A scenario is a file name or a dict in the scenario format (README, "Writing a scenario"); a
dict's relative paths (topology_file) are taken from the current directory.  Bad input raises
ValueError naming the file (or "<dict>") and the JSON path of the bad field.  Simulations run in
child processes, as with the command line.
"""
import io
import json
import os
import tempfile

from . import _luwusim

__all__ = ["run", "run_frame", "sweep", "InputError"]

InputError = _luwusim.InputError


def _scenario_text(scenario):
    """(JSON text, origin for errors and relative paths)."""
    if isinstance(scenario, (str, os.PathLike)):
        path = os.fspath(scenario)
        try:
            with open(path) as f:
                return f.read(), path
        except OSError as e:
            raise ValueError(f"{path}: {e.strerror}") from None
    if isinstance(scenario, dict):
        return json.dumps(scenario), os.path.join(os.getcwd(), "<dict>")
    raise TypeError(f"a scenario is a file name or a dict, not {type(scenario).__name__}")


def _systems(systems):
    if systems is None:
        return []
    return [systems] if isinstance(systems, str) else list(systems)


def run(scenario, systems=None):
    """Simulates the scenario's systems (or only `systems`, labels or kinds); returns what
    `luwusim run --json` prints: {"scenario": ..., "results": [...]}."""
    text, origin = _scenario_text(scenario)
    return json.loads(_luwusim.run_json(text, origin, _systems(systems)))


def run_frame(scenario, systems=None):
    """The same run as a pandas DataFrame: the columns of `luwusim run --csv`, one row per system."""
    import pandas
    text, origin = _scenario_text(scenario)
    return pandas.read_csv(io.StringIO(_luwusim.run_csv(text, origin, _systems(systems))))


def sweep(base, axes, jobs=0, output=None, resume=False):
    """Runs the cartesian product of `axes` ({"dotted.key": [values]}, as `luwusim sweep --set`)
    over the base scenario, in `jobs` processes (0: one per CPU), and returns the sweep's CSV as a
    pandas DataFrame (one row per point and system).  `output` keeps the JSON Lines results
    (resumable with resume=True or `luwusim sweep --resume`); by default a temporary file."""
    import pandas
    text, origin = _scenario_text(base)
    axis_list = [(key, [json.dumps(v) for v in (values if isinstance(values, list) else [values])])
                 for key, values in axes.items()]
    if output is not None:
        csv = _luwusim.sweep_csv(text, origin, axis_list, jobs, os.fspath(output), resume)
    else:
        with tempfile.TemporaryDirectory(prefix="luwusim-sweep-") as folder:
            csv = _luwusim.sweep_csv(text, origin, axis_list, jobs, os.path.join(folder, "results.jsonl"), False)
    return pandas.read_csv(io.StringIO(csv))
