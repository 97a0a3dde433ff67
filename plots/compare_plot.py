"""Predicted against measured, from `luwusim compare MEASURED --json > comparisons.json`:

    /usr/bin/python3 plots/compare_plot.py comparisons.json -o compare.png

One panel per measured field: each system's point at (measured, predicted), the diagonal where
they agree, a +-10% band, and each point's error written beside it."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import style  # noqa: E402

UNITS = {"tokens_per_s": "tokens/s"}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("comparisons", help="luwusim compare --json output")
    parser.add_argument("-o", "--out", default="compare.png", help="figure file (PNG or PDF)")
    args = parser.parse_args()
    with open(args.comparisons) as f:
        rows = [r for r in json.load(f) if "predicted" in r]
    if not rows:
        sys.exit("compare_plot: no predicted rows to draw")
    fields = [f for f in dict.fromkeys(r["field"] for r in rows)]
    fig, axes = plt.subplots(1, len(fields), figsize=(4.2 * len(fields), 4.0), squeeze=False)
    for ax, field in zip(axes[0], fields):
        points = [r for r in rows if r["field"] == field]
        top = max(max(r["measured"], r["predicted"]) for r in points) * 1.15
        ax.plot([0, top], [0, top], color="#444444", linewidth=0.8)
        ax.fill_between([0, top], [0, 0.9 * top], [0, 1.1 * top], color="#DDDDDD", alpha=0.6, label="within 10%")
        for r in points:
            ax.scatter(r["measured"], r["predicted"], color=style.system_color(r["system"]), zorder=3)
            ax.annotate(f"{r['system']} {100 * r['relative_error']:+.0f}%", (r["measured"], r["predicted"]),
                        textcoords="offset points", xytext=(4, 4), fontsize=7)
        unit = UNITS.get(field, "s")
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_xlabel(f"measured {field} ({unit})")
        ax.set_ylabel(f"predicted {field} ({unit})")
        ax.set_title(field, fontsize=9)
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle("luwusim compare: predicted vs measured (error = predicted / measured - 1)", fontsize=10)
    fig.tight_layout()
    fig.savefig(args.out, dpi=150)
    print(args.out)


if __name__ == "__main__":
    main()
