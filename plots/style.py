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
# parts never read as systems: sand, wine, olive, indigo, pale grey.
BREAKDOWN_PARTS = [
    ("compute", "Compute", "#DDCC77"),
    ("exposed_communication", "Exposed communication", "#882255"),
    ("exposed_optimizer", "Exposed optimizer", "#999933"),
    ("io_stall", "I/O stall (PCIe/NVMe)", "#332288"),
    ("idle", "Idle", "#DDDDDD"),
]
BREAKDOWN_HATCHES = {"compute": "", "exposed_communication": "//", "exposed_optimizer": "..",
                     "io_stall": "xx", "idle": ""}

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
