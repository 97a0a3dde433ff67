"""plots/style.py's font pass: every text of a figure wider than the page reads at MIN_FONT_PT or
more once the figure is shrunk to PAGE_WIDTH_IN, and category labels that then collide are
slanted (one line each, in the figure).  Run by CTest with PYTHONPATH=plots."""
import unittest

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.text  # noqa: E402

import style  # noqa: E402


def effective_sizes(fig):
    """Each text's size as printed at page width (a figure narrower than the page is not enlarged)."""
    shrink = min(1.0, style.PAGE_WIDTH_IN / fig.get_figwidth())
    fig.canvas.draw()
    return [t.get_fontsize() * shrink for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


class FontPass(unittest.TestCase):
    def crowded(self, width_in):
        fig, ax = plt.subplots(figsize=(width_in, 3))
        names = [f"a long system\nname {i}" for i in range(12)]
        ax.bar(range(12), range(1, 13))
        ax.set_xticks(range(12))
        ax.set_xticklabels(names, fontsize=6)
        ax.set_title("title", fontsize=7)
        ax.text(0.5, 0.5, "note", fontsize=5, transform=ax.transAxes)
        return fig, ax

    def test_a_wide_figure_reads_at_page_width(self):
        fig, ax = self.crowded(13.0)
        self.assertLess(min(effective_sizes(fig)), style.MIN_FONT_PT)
        height = fig.get_figheight()
        self.assertGreater(style.raise_small_fonts(fig), 0)
        self.assertGreaterEqual(min(effective_sizes(fig)), style.MIN_FONT_PT - 1e-9)
        # 12 labels of "a long system name i" at 14 pt collide on a 13 in axis: slanted, one line
        # each, and the figure grew to hold them.
        labels = [t for t in ax.get_xticklabels() if t.get_text()]
        self.assertEqual(len(labels), 12)
        self.assertTrue(all(t.get_rotation() == 35 and "\n" not in t.get_text() for t in labels))
        self.assertGreater(fig.get_figheight(), height)
        plt.close(fig)

    def test_a_figure_narrower_than_the_page_keeps_what_is_readable(self):
        fig, ax = plt.subplots(figsize=(5.0, 3))
        ax.set_title("title", fontsize=9)
        ax.text(0.5, 0.5, "small", fontsize=6, transform=ax.transAxes)
        style.raise_small_fonts(fig)
        sizes = sorted(t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_text() in ("title", "small"))
        self.assertEqual(sizes, [style.MIN_FONT_PT, 9])
        plt.close(fig)


if __name__ == "__main__":
    unittest.main()
