"""plots/paper_figures.py's labels for the sensitivity sweep's swapper axis: serial or pipelined
(pipeline_read / pipeline_write), and split drives (nvme_layout "split") named, so that only the
scenario's own serial, striped swapper is marked as the default; and for its worker-SSD axis, the
profile as shipped (the default) told apart from the read + write total it overrides.  Run by CTest with PYTHONPATH=plots."""
import unittest

import matplotlib

matplotlib.use("Agg")
import paper_figures  # noqa: E402

LUWU = {"name": "luwu", "offload_activation_checkpoints": True}


def systems(**zero_infinity):
    return [LUWU, dict({"name": "zero-infinity", "offload": "nvme"}, **zero_infinity)]


class SwapperLabels(unittest.TestCase):
    def test_each_variant_has_its_own_label(self):
        self.assertEqual(paper_figures._swapper_variant(systems()), "serial")
        self.assertEqual(paper_figures._swapper_variant(systems(pipeline_read=True, pipeline_write=True)), "pipelined")
        self.assertEqual(paper_figures._swapper_variant(systems(nvme_layout="split")), "serial, drives split")
        self.assertEqual(paper_figures._swapper_variant(systems(nvme_layout="striped")), "serial")

    def test_only_the_serial_striped_swapper_is_the_default(self):
        self.assertTrue(paper_figures._is_default({"systems": systems()}))
        self.assertFalse(paper_figures._is_default({"systems": systems(nvme_layout="split")}))
        self.assertFalse(paper_figures._is_default({"systems": systems(pipeline_read=True)}))


class WorkerSsdLabels(unittest.TestCase):
    KEY = "cluster.overrides.paper-testbed-ssd-gen3"
    TOTAL = {"host_path_bandwidth": "3.58GB/s", "read_write_bandwidth": "3.25GB/s"}

    def test_the_profile_and_the_total_reading_are_told_apart(self):
        self.assertEqual(paper_figures._setting_text(self.KEY, {})[1], "SSD as profiled (host path, per direction)")
        self.assertEqual(paper_figures._setting_text(self.KEY, self.TOTAL)[1], "SSD 3.25GB/s read + write")

    def test_only_the_profile_as_shipped_is_the_default(self):
        self.assertTrue(paper_figures._is_default({self.KEY: {}, "systems": systems()}))
        self.assertFalse(paper_figures._is_default({self.KEY: self.TOTAL, "systems": systems()}))


if __name__ == "__main__":
    unittest.main()
