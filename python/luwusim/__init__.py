"""luwusim from Python: scenarios in, dicts and pandas DataFrames out.

    import luwusim
    result = luwusim.run("scenarios/luwu-paper-175b-8w.json")      # as `luwusim run --json`
    frame = luwusim.run_frame({"model": "gpt3-125m", ...})          # one row per system
    sweep = luwusim.sweep("scenarios/small-zero3-vs-ddp.json",
                          {"cluster.workers": [2, 4], "model": ["gpt3-125m", "gpt3-350m"]})

A scenario is a file name or a dict in the scenario format (README, "Writing a scenario"); a
dict's relative paths (topology_file) are taken from the current directory.  Bad input raises
InputError (a ValueError) naming the file (or "<dict>") and the JSON path of the bad field: files
that are not regular files or exceed 512 MiB, JSON nested more than 256 levels, NaN or infinite
numbers.  Simulations run in child processes, as with the command line; Ctrl-C during `sweep`
raises KeyboardInterrupt (the points that finished stay in `output`), never a partial frame.
"""
import io
import json
import math
import os
import stat
import sys
import tempfile

# Installed with pip, the package carries the shipped profiles and price lists (setup.py).
_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
for _variable, _folder in (("LUWUSIM_PROFILE_DIR", "profiles"), ("LUWUSIM_PRICES_DIR", "prices")):
    if not os.environ.get(_variable) and os.path.isdir(os.path.join(_DATA, _folder)):
        os.environ[_variable] = os.path.join(_DATA, _folder)

from . import _luwusim  # noqa: E402 (after the data folders are known)

__all__ = ["run", "run_frame", "sweep", "InputError"]

InputError = _luwusim.InputError


# As the command line's loaders: a scenario file is a regular file of at most 512 MiB.
_MAX_INPUT_BYTES = 512 << 20


def _read_input_file(path):
    """The text of a scenario file, refused (InputError) unless it is a regular file under the cap:
    a device such as /dev/zero, a FIFO or a directory is never read."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise InputError(f"{path}: cannot open file: {e.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{path}: is a directory, not a JSON file")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{path}: is not a regular file (a device or a pipe); give a JSON file")
    if st.st_size > _MAX_INPUT_BYTES:
        raise InputError(f"{path}: is {st.st_size >> 20} MiB; input files are at most {_MAX_INPUT_BYTES >> 20} MiB")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte {e.start})") from None


# As the command line's parser: JSON nests at most this deep.
_MAX_NESTING = 256


def _non_finite_path(value):
    """The JSON path of the first NaN or infinite number in a dict/list, or None; walked without
    recursion (InputError past _MAX_NESTING levels, as the command line refuses them)."""
    stack = [(value, "$", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return path
        if isinstance(item, (dict, list, tuple)):
            if depth >= _MAX_NESTING:
                raise InputError(f"{path}: JSON nested more than {_MAX_NESTING} levels deep")
            children = ([(v, f"{path}.{k}") for k, v in item.items()] if isinstance(item, dict)
                        else [(v, f"{path}[{i}]") for i, v in enumerate(item)])
            stack.extend((v, p, depth + 1) for v, p in reversed(children))
    return None


def _json_text(value, origin):
    """JSON text of a dict or axis value; NaN and infinities are not JSON (InputError naming where)."""
    try:
        bad = _non_finite_path(value)
    except InputError as e:
        raise InputError(f"{origin}: at {e}") from None
    if bad:
        raise InputError(f"{origin}: at {bad}: expected a finite number")
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        raise InputError(f"{origin}: cannot be written as JSON: {e}") from None


def _scenario_text(scenario):
    """(JSON text, origin for errors and relative paths)."""
    if isinstance(scenario, (str, os.PathLike)):
        path = os.fspath(scenario)
        return _read_input_file(path), path
    if isinstance(scenario, dict):
        origin = os.path.join(os.getcwd(), "<dict>")
        return _json_text(scenario, origin), origin
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


def _pandas():
    """pandas, which run_frame and sweep return frames of (a dependency of the pip package)."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError("luwusim.run_frame and luwusim.sweep return pandas DataFrames: install pandas "
                          "(`pip install pandas`, or Debian's python3-pandas); luwusim.run needs none") from e
    return pandas


def run_frame(scenario, systems=None):
    """The same run as a pandas DataFrame: the columns of `luwusim run --csv`, one row per system."""
    pandas = _pandas()
    text, origin = _scenario_text(scenario)
    return pandas.read_csv(io.StringIO(_luwusim.run_csv(text, origin, _systems(systems))))


def _print_progress(p):
    print(f"luwusim.sweep: {p['done']}/{p['total']} points, {p['failed']} failed, {p['running']} running, "
          f"{p['elapsed_s']:.0f} s elapsed", file=sys.stderr, flush=True)


def sweep(base, axes, jobs=0, output=None, resume=False, progress=True):
    """Runs the cartesian product of `axes` ({"dotted.key": [values]}, as `luwusim sweep --set`)
    over the base scenario, in `jobs` processes (0: one per CPU), and returns the sweep's CSV as a
    pandas DataFrame (one row per point and system).  `output` keeps the JSON Lines results
    (resumable with resume=True or `luwusim sweep --resume`); by default a temporary file.
    `progress`: True prints a line to stderr at the start and as each point finishes, False nothing,
    a callable gets {"done", "total", "failed", "running", "elapsed_s"} instead."""
    pandas = _pandas()
    report = _print_progress if progress is True else (progress or None)
    text, origin = _scenario_text(base)
    axis_list = [(key, [_json_text(v, f"axis {key}") for v in (values if isinstance(values, list) else [values])])
                 for key, values in axes.items()]
    if output is not None:
        csv = _luwusim.sweep_csv(text, origin, axis_list, jobs, os.fspath(output), resume, report)
    else:
        with tempfile.TemporaryDirectory(prefix="luwusim-sweep-") as folder:
            csv = _luwusim.sweep_csv(text, origin, axis_list, jobs, os.path.join(folder, "results.jsonl"), False, report)
    return pandas.read_csv(io.StringIO(csv))
