"""A seeded fuzz of the module's entry points (issue 36): a small scenario, mutated field by
field with values of every JSON type and edge (negative, zero, huge, NaN, infinite, deep, empty,
unknown keys), is given to `run`, `run_frame` and `sweep`.  Each call must either return a result
or raise InputError (a ValueError naming the field); any other exception is a finding.  The seed
is fixed: the same mutations every run.  Run by CTest with PYTHONPATH=build/python."""
import copy
import random
import unittest

import luwusim

BASE = {
    "name": "fuzz",
    "model": "gpt3-125m",
    "training": {"micro_batch": 1, "seq_len": 128, "grad_accum": 1, "recompute": True, "dtype": "fp16"},
    "cluster": {"topology": "luwu-star", "workers": 2, "network": "100Gb/s"},
    "systems": ["ddp"],
}

# Values a field may be given: each type, and the edges of numbers.
VALUES = [None, True, False, 0, 1, 2, 3, -1, 0.5, 1e308, -1e308, 2 ** 63, float("nan"), float("inf"), "", "x",
          "gpt3-125m", "fp16", "fat-tree", [], [1], [[[[]]]], {}, {"a": 1}, "100Gb/s", "1e400", 10 ** 400]


def paths(value, prefix=()):
    """Every path to a field of a nested dict (lists' items included)."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths(v, prefix + (i,))
    return out


def mutated(rng):
    s = copy.deepcopy(BASE)
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(paths(s))
        parent = s
        for key in path[:-1]:
            parent = parent[key]
        action = rng.random()
        if action < 0.15 and isinstance(parent, dict):
            del parent[path[-1]]  # a field left out
        elif action < 0.25 and isinstance(parent, dict):
            parent["unknown_" + str(rng.randint(0, 9))] = rng.choice(VALUES)  # a field luwusim lacks
        else:
            parent[path[-1]] = copy.deepcopy(rng.choice(VALUES))
    return s


class FuzzTest(unittest.TestCase):
    def call(self, what, function, *args, **kwargs):
        try:
            function(*args, **kwargs)
        except luwusim.InputError:
            pass
        except Exception as e:  # anything else escaping is a finding
            self.fail(f"{what}: {type(e).__name__}: {e}")

    def test_run_and_run_frame_return_or_raise_input_error(self):
        rng = random.Random(36)
        for i in range(80):
            scenario = mutated(rng)
            with self.subTest(i=i, scenario=scenario):
                self.call("run", luwusim.run, scenario)
                if i % 4 == 0:
                    self.call("run_frame", luwusim.run_frame, scenario)

    def test_sweep_axes_return_or_raise_input_error(self):
        rng = random.Random(3636)
        keys = ["cluster.workers", "training.micro_batch", "training.seq_len", "model", "systems", "cluster.network",
                "no.such.key", "training", ""]
        for i in range(25):
            axes = {rng.choice(keys): [copy.deepcopy(rng.choice(VALUES)) for _ in range(rng.randint(1, 2))]}
            with self.subTest(i=i, axes=axes):
                self.call("sweep", luwusim.sweep, BASE, axes, jobs=1)


if __name__ == "__main__":
    unittest.main()
