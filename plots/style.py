"""The one place that decides how systems and time components look in every figure."""

# Systems in the order figures list them: LuWu first, then the baselines from the most to the
# least memory-frugal.
SYSTEM_ORDER = ["luwu", "zero-infinity", "zero-offload", "zero3", "zero++", "zero-hierarchical", "atp", "switchml", "parameter-server", "onebit-adam", "ddp"]

SYSTEM_NAMES = {
    "luwu": "LuWu",
    "zero-infinity": "ZeRO-Infinity",
    "zero-offload": "ZeRO-Offload",
    "zero3": "ZeRO-3",
    "zero++": "ZeRO++",
    "zero-hierarchical": "ZeRO-3, hierarchical partitions",
    "atp": "ATP",
    "switchml": "SwitchML",
    "parameter-server": "Parameter servers",
    "onebit-adam": "1-bit Adam",
    "ddp": "DDP",
}

# Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
SYSTEM_COLORS = {
    "luwu": "#D55E00",
    "zero-infinity": "#0072B2",
    "zero-offload": "#56B4E9",
    "zero3": "#009E73",
    "zero++": "#8C564B",
    "zero-hierarchical": "#6A3D9A",
    "atp": "#E69F00",
    "switchml": "#CC79A7",
    "parameter-server": "#000000",
    "onebit-adam": "#17BECF",
    "ddp": "#7F7F7F",
}
FALLBACK_COLORS = ["#F0E442", "#BCBD22", "#9467BD", "#E377C2"]

MARKERS = {"luwu": "o", "zero-infinity": "s", "zero-offload": "D", "zero3": "^", "zero++": "P", "zero-hierarchical": "h", "atp": "<", "switchml": "v",
           "parameter-server": "*", "onebit-adam": "d", "ddp": "x"}

# The parts of an iteration (result "breakdown_s"), bottom to top in stacked bars.  Colours (Paul
# Tol's muted scheme) and hatches chosen away from every system colour above, so a stacked bar's
# parts never read as systems: sand, wine, olive, indigo, teal, pale grey.
BREAKDOWN_PARTS = [
    ("compute", "Compute", "#DDCC77"),
    ("exposed_communication", "Exposed communication", "#882255"),
    ("exposed_optimizer", "Exposed optimizer", "#999933"),
    ("io_stall", "I/O stall (PCIe/NVMe)", "#332288"),
    ("host_launch", "Host launching", "#44AA99"),
    ("idle", "Idle", "#DDDDDD"),
]
BREAKDOWN_HATCHES = {"compute": "", "exposed_communication": "//", "exposed_optimizer": "..",
                     "io_stall": "xx", "host_launch": "\\\\", "idle": ""}

# Timeline span categories (sim/engine/timeline.hpp), in the breakdown's colours.
CATEGORY_COLORS = {
    "compute": "#DDCC77",
    "communication": "#882255",
    "optimizer": "#999933",
    "io": "#332288",
    "idle": "#DDDDDD",  # a stream waiting (for parameters, gradients, the optimizer)
}

# How a labelled variant of a system reads in legends ("zero-infinity-nvme" -> "ZeRO-Infinity
# (NVMe)"), and its line style where variants of one system share its colour.
VARIANT_NAMES = {
    "nvme": " (NVMe)",
    "dram": " (DRAM)",
    "mps": " + MPS (SMs partitioned)",
    "preemptive": " + SM preemption",
    "two-streams": " + two collective streams",
    "pipelined-swapper": " + pipelined swapper",
    "layer-centric": " (layer-centric node)",
    "gpu-kernel-push-pull": " (push/pull by GPU kernels)",
    "colocated-ps": " (parameter server colocated on the workers)",
    "dram-first": " (node's model in DRAM)",
    "async-gradient-copies": " + asynchronous gradient copies",
    "async-shard-copies": " + asynchronous shard copies",
    "async-copies": " + every copy asynchronous",
    "parameter-hooks-only": " + hooks only where parameters are gathered",
    "warmup": " (warm-up stage)",
    "compressed": " (compression stage)",
    "heartbeats": " (switch-aggregated heartbeats)",
    "sub-module": " (sub-module streaming)",
    "per-packet-ack": " (per-packet ACK)",
    "nvme-pipelined": " (NVMe, pipelined swapper)",
    "nvme-sharp": " (NVMe) + SHARP (in-network reduction)",
    "dpu": " + delayed parameter update",
    "commodity": " (commodity servers)",
    "dgx-a100": " (DGX A100 servers)",
    "qwz": " (qwZ only)",
    "hpz": " (hpZ only)",
    "qgz": " (qgZ only)",
    "dedicated": " (dedicated machines)",
    "colocated": " (colocated on the workers)",
}
# Hatches of a system's variants where bars of one colour stand side by side.
VARIANT_HATCHES = {"nvme-sharp": "//", "dpu": "//", "dgx-a100": "//"}
VARIANT_LINESTYLES = {"colocated": "--", "sub-module": "--", "dram": "--", "mps": "--", "preemptive": ":", "nvme-pipelined": "-."}

def kind_of(label):
    """The system kind behind a result label ("zero-infinity-nvme" -> "zero-infinity")."""
    best = None
    for kind in SYSTEM_ORDER:
        if label == kind or label.startswith(kind + "-"):
            if best is None or len(kind) > len(best):
                best = kind
    return best


def system_name(label):
    kind = kind_of(label)
    if kind is None:
        return label
    if label == kind:
        return SYSTEM_NAMES[kind]
    variant = label[len(kind) + 1:]
    return SYSTEM_NAMES[kind] + VARIANT_NAMES.get(variant, " " + variant.replace("-", " "))


def system_linestyle(label):
    kind = kind_of(label)
    if kind is None or label == kind:
        return "-"
    return VARIANT_LINESTYLES.get(label[len(kind) + 1:], "-")


def system_color(label):
    kind = kind_of(label)
    if label in SYSTEM_COLORS:
        return SYSTEM_COLORS[label]
    if kind is not None:
        return SYSTEM_COLORS[kind]
    return FALLBACK_COLORS[sum(map(ord, label)) % len(FALLBACK_COLORS)]


def system_marker(label):
    return MARKERS.get(kind_of(label) or "", "o")


def system_sort_key(label):
    """Systems in SYSTEM_ORDER; a system's variants after it, in the order of VARIANT_NAMES."""
    kind = kind_of(label)
    rank = SYSTEM_ORDER.index(kind) if kind in SYSTEM_ORDER else len(SYSTEM_ORDER)
    variants = list(VARIANT_NAMES)
    variant = label[len(kind) + 1:] if kind is not None and label != kind else None
    variant_rank = -1 if variant is None else (variants.index(variant) if variant in variants else len(variants))
    return (rank, variant_rank, label)


def system_hatch(label):
    kind = kind_of(label)
    if kind is None or label == kind:
        return ""
    return VARIANT_HATCHES.get(label[len(kind) + 1:], "")


import re
import textwrap

# Figures are read at a page's width: one W inches wide is shrunk by PAGE_WIDTH_IN / W when placed
# there (a 6.5 in text block: US Letter with 1 in margins; a two-column paper's full width is
# about 7 in), and no text may then fall below MIN_FONT_PT, what stays legible in print (a choice
# of this project, not a publisher's rule).  raise_small_fonts applies it before a figure is laid
# out; narrower figures than the page keep their sizes.
PAGE_WIDTH_IN = 6.5
MIN_FONT_PT = 7.0
SLANTED_LABEL_CHARS = 24  # a slanted category label longer than this wraps


def font_floor_pt(fig):
    """The smallest font size, in the figure's own points, that reads as MIN_FONT_PT at page width."""
    return MIN_FONT_PT * max(1.0, fig.get_figwidth() / PAGE_WIDTH_IN)


def raise_small_fonts(fig):
    """Raises every text of `fig` below font_floor_pt to it (tick labels too, which exist once the
    figure is drawn); returns how many were raised."""
    import matplotlib.text

    fig.canvas.draw()
    floor = font_floor_pt(fig)
    raised = 0
    for text in fig.findobj(matplotlib.text.Text):
        if text.get_text() and text.get_fontsize() < floor - 1e-9:
            text.set_fontsize(floor)
            raised += 1
    if raised:
        fig.canvas.draw()
        for ax in fig.axes:
            _slant_crowded_xticklabels(ax)
    return raised


def _slant_crowded_xticklabels(ax):
    """Slants an axis's horizontal category labels by 35 degrees, each on one line (up to
    SLANTED_LABEL_CHARS, then wrapped), where at their size neighbours overlap."""
    labels = [t for t in ax.get_xticklabels() if t.get_visible()]
    shown = [t for t in labels if t.get_text() and t.get_rotation() == 0]
    renderer = ax.figure.canvas.get_renderer()
    boxes = sorted((t.get_window_extent(renderer) for t in shown), key=lambda b: b.x0)
    if not any(a.x1 > b.x0 for a, b in zip(boxes, boxes[1:])):
        return
    # Tick labels are made again from the axis's formatter: set them anew, keeping each one's look;
    # the figure grows by what the slanted labels need beyond the upright ones, so that the plot
    # keeps its height.
    height_before = max(b.height for b in boxes)
    looks = [(t.get_color(), t.get_fontweight(), t.get_fontsize()) for t in labels]
    one_line = [textwrap.fill(re.sub(r"-\n", "-", t.get_text()).replace("\n", " "), SLANTED_LABEL_CHARS) for t in labels]
    new = ax.set_xticklabels(one_line, rotation=35, ha="right", rotation_mode="anchor")
    for t, (color, weight, size) in zip(new, looks):
        t.set_color(color)
        t.set_fontweight(weight)
        t.set_fontsize(size)
    ax.figure.canvas.draw()
    height_after = max(t.get_window_extent(renderer).height for t in new if t.get_text())
    if height_after > height_before:
        fig = ax.figure
        fig.set_figheight(fig.get_figheight() + (height_after - height_before) / fig.dpi)
