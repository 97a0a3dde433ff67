"""The Python module against the command line: the same scenario gives the same numbers through
both; sweeps come back as DataFrames with one row per point and system; bad input is ValueError
naming the JSON path.  Run by CTest with PYTHONPATH=build/python and LUWUSIM_BINARY."""
import copy
import json
import os
import subprocess
import unittest

import luwusim

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCENARIO = os.path.join(REPO, "scenarios", "small-zero3-vs-ddp.json")


def cli_run(path):
    out = subprocess.run([os.environ["LUWUSIM_BINARY"], "run", path, "--json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def tiny():
    with open(SCENARIO) as f:
        s = json.load(f)
    s["model"] = "gpt3-125m"
    s["training"]["micro_batch"] = 1
    s["training"]["seq_len"] = 256
    s["cluster"]["workers"] = 2
    return s


class RunTest(unittest.TestCase):
    def test_a_file_gives_what_the_command_line_prints(self):
        ours = luwusim.run(SCENARIO)
        theirs = cli_run(SCENARIO)
        self.assertEqual([r["system"] for r in ours["results"]], ["ddp", "zero3"])
        for a, b in zip(ours["results"], theirs["results"]):
            self.assertEqual(a["iteration_time_s"], b["iteration_time_s"])
            self.assertEqual(a["breakdown_s"], b["breakdown_s"])

    def test_a_dict_and_only_some_systems(self):
        result = luwusim.run(tiny(), systems="zero3")
        self.assertEqual([r["system"] for r in result["results"]], ["zero3"])
        self.assertGreater(result["results"][0]["iteration_time_s"], 0)

    def test_run_frame_has_a_row_per_system_with_the_run_numbers(self):
        frame = luwusim.run_frame(tiny())
        result = luwusim.run(tiny())
        self.assertEqual(list(frame["system"]), ["ddp", "zero3"])
        for i, r in enumerate(result["results"]):
            self.assertAlmostEqual(frame["iteration_time_s"][i], r["iteration_time_s"], delta=1e-12 * r["iteration_time_s"])
            self.assertEqual(frame["workers"][i], 2)


class SweepTest(unittest.TestCase):
    def test_a_two_by_two_sweep_is_four_points_of_two_systems(self):
        frame = luwusim.sweep(tiny(), {"cluster.workers": [2, 4], "training.micro_batch": [1, 2]}, jobs=2)
        self.assertEqual(len(frame), 8)
        self.assertEqual(sorted(set(frame["system"])), ["ddp", "zero3"])
        # One point against a run of the scenario with the same settings applied by hand.
        by_hand = copy.deepcopy(tiny())
        by_hand["cluster"]["workers"] = 4
        by_hand["training"]["micro_batch"] = 2
        expected = luwusim.run(by_hand, systems="ddp")["results"][0]["iteration_time_s"]
        row = frame[(frame["workers"] == 4) & (frame["system"] == "ddp") & (frame["iteration_time_s"] > 0)]
        got = [t for t in row["iteration_time_s"] if abs(t - expected) <= 1e-12 * expected]
        self.assertEqual(len(got), 1, f"{expected} not among {list(row['iteration_time_s'])}")

    def test_a_sweep_reports_its_progress_point_by_point(self):
        seen = []
        frame = luwusim.sweep(tiny(), {"cluster.workers": [2, 4, 8]}, jobs=1, progress=seen.append)
        self.assertEqual(len(frame), 6)
        # One report at the start, then one per finished point, the last with all three done.
        self.assertEqual([p["done"] for p in seen], [0, 1, 2, 3])
        self.assertEqual({p["total"] for p in seen}, {3})
        self.assertEqual(seen[-1]["failed"], 0)
        self.assertEqual(seen[-1]["running"], 0)

    def test_results_kept_in_a_file_resume(self):
        import tempfile
        with tempfile.TemporaryDirectory() as folder:
            out = os.path.join(folder, "r.jsonl")
            first = luwusim.sweep(tiny(), {"cluster.workers": [2]}, jobs=1, output=out)
            again = luwusim.sweep(tiny(), {"cluster.workers": [2]}, jobs=1, output=out, resume=True)
            self.assertTrue(os.path.exists(out))
            self.assertEqual(list(first["iteration_time_s"]), list(again["iteration_time_s"]))


class ErrorTest(unittest.TestCase):
    def test_a_bad_field_names_its_json_path(self):
        s = tiny()
        s["training"]["micro_batch"] = -1
        with self.assertRaises(ValueError) as caught:
            luwusim.run(s)
        self.assertIn("$.training.micro_batch", str(caught.exception))

    def test_a_missing_file(self):
        with self.assertRaises(ValueError) as caught:
            luwusim.run("no-such-scenario.json")
        self.assertIn("no-such-scenario.json", str(caught.exception))

    def test_a_bad_sweep_key_names_the_point(self):
        with self.assertRaises(ValueError):
            luwusim.sweep(tiny(), {"training.micro_batch": [0]})


class HostileInput(unittest.TestCase):
    """The module's doors refuse what the command line's refuse, as InputError (a ValueError)."""

    def test_devices_fifos_and_folders_are_refused_at_once(self):
        # run("/dev/zero") read until MemoryError.
        folder = os.path.dirname(SCENARIO)
        fifo = os.path.join(os.getcwd(), f"py-fifo-{os.getpid()}")
        os.mkfifo(fifo)
        try:
            for path, why in (("/dev/zero", "not a regular file"), (fifo, "not a regular file"), (folder, "directory")):
                with self.assertRaises(luwusim.InputError) as caught:
                    luwusim.run(path)
                self.assertIn(why, str(caught.exception))
                self.assertIn(path, str(caught.exception))
        finally:
            os.remove(fifo)

    def test_nan_and_infinity_name_their_field(self):
        # A NaN in a dict reached the C++ parser as a raw nlohmann parse_error (RuntimeError).
        s = tiny()
        s["training"]["micro_batch"] = float("nan")
        with self.assertRaises(luwusim.InputError) as caught:
            luwusim.run(s)
        self.assertIn("$.training.micro_batch", str(caught.exception))
        self.assertTrue(issubclass(luwusim.InputError, ValueError))
        with self.assertRaises(luwusim.InputError) as caught:
            luwusim.sweep(tiny(), {"cluster.workers": [2, float("inf")]})
        self.assertIn("cluster.workers", str(caught.exception))

    def test_deep_nesting_is_refused_not_a_crash(self):
        # A base nested a few thousand levels deep overflowed the stack of a recursive walk.
        deep = 0
        for _ in range(3000):
            deep = [deep]
        s = tiny()
        s["model"] = deep
        with self.assertRaises(luwusim.InputError) as caught:
            luwusim.run(s)
        self.assertIn("nested more than 256 levels", str(caught.exception))

    def test_an_interrupted_sweep_raises_keyboard_interrupt(self):
        # Ctrl-C during sweep returned the finished points as if the sweep were done.
        import signal
        import threading
        output = os.path.join(os.getcwd(), f"py-interrupted-{os.getpid()}.jsonl")
        s = tiny()
        timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        try:
            with self.assertRaises(KeyboardInterrupt):
                luwusim.sweep(s, {"training.micro_batch": list(range(1, 65))}, jobs=1, output=output)
        finally:
            timer.cancel()
            if os.path.exists(output):
                os.remove(output)


if __name__ == "__main__":
    unittest.main()
