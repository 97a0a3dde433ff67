"""The one place that decides how systems and time components look in every figure."""

# Systems in the order figures list them: LuWu first, then the baselines from the most to the
# least memory-frugal.
SYSTEM_ORDER = ["luwu", "zero-infinity", "zero-offload", "zero3", "switchml", "ddp"]

SYSTEM_NAMES = {
    "luwu": "LuWu",
    "zero-infinity": "ZeRO-Infinity",
    "zero-offload": "ZeRO-Offload",
    "zero3": "ZeRO-3",
    "switchml": "SwitchML",
    "ddp": "DDP",
}

# Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
SYSTEM_COLORS = {
    "luwu": "#D55E00",
    "zero-infinity": "#0072B2",
    "zero-offload": "#56B4E9",
    "zero3": "#009E73",
    "switchml": "#CC79A7",
    "ddp": "#7F7F7F",
}
FALLBACK_COLORS = ["#E69F00", "#F0E442", "#000000", "#8C564B", "#17BECF"]

MARKERS = {"luwu": "o", "zero-infinity": "s", "zero-offload": "D", "zero3": "^", "switchml": "v", "ddp": "x"}

# The parts of an iteration (result "breakdown_s"), bottom to top in stacked bars.
BREAKDOWN_PARTS = [
    ("compute", "Compute", "#4C72B0"),
    ("exposed_communication", "Exposed communication", "#DD8452"),
    ("exposed_optimizer", "Exposed optimizer", "#55A868"),
    ("io_stall", "I/O stall (PCIe/NVMe)", "#C44E52"),
    ("idle", "Idle", "#BBBBBB"),
]

# Timeline span categories (sim/engine/timeline.hpp).
CATEGORY_COLORS = {
    "compute": "#4C72B0",
    "communication": "#DD8452",
    "optimizer": "#55A868",
    "io": "#C44E52",
    "idle": "#BBBBBB",  # a stream waiting (for parameters, gradients, the optimizer)
}


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
    return SYSTEM_NAMES[kind] + label[len(kind):]


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
    kind = kind_of(label)
    rank = SYSTEM_ORDER.index(kind) if kind in SYSTEM_ORDER else len(SYSTEM_ORDER)
    return (rank, label)
