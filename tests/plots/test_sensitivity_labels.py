"""plots/paper_figures.py's labels for the sensitivity sweep's swapper axis: serial or pipelined
(pipeline_read / pipeline_write), and split drives (nvme_layout "split") named, so that only the
scenario's own serial, striped swapper is marked as the default.  Run by CTest with PYTHONPATH=plots."""
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


if __name__ == "__main__":
    unittest.main()
