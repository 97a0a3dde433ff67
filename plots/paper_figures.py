"""The LuWu paper's experiments on its testbed (scenarios/paper/), one function per figure.

Each function takes result lines (sweep_results.read_lines; for max_model_size the lines that
make_figures.py writes from `luwusim memory`), draws into `out_dir` as PNG and PDF, records the
table behind the figure in figures.TABLES (for `make_figures.py --report`) and returns the paths
written.  What is missing (a sweep not run, a system that does not fit, a model absent from the
results) is said in a note under the figure, or in a "no results" panel; nothing crashes on
partial results.

Speedups are written on the bars: "2.02x" over a baseline's bar is LuWu's speedup over it (the
baseline's iteration time / LuWu's), the ratio the paper argues about (3.98x at Custom-175B on
8 workers).  Axes are linear wherever a ratio is read off them.
"""
import matplotlib.pyplot as plt

import figures
import style
from figures import _finish, _no_data, _network_text, _missing_notes, _stacked_breakdown
from sweep_results import rows

PAPER_SPEEDUP = 3.98  # LuWu over ZeRO-Infinity, Custom-175B, 8 workers, micro-batch 16, 100 Gb/s
REFERENCE = "luwu"


# ---------------------------------------------------------------------------------------------
# Helpers


def _table(lines):
    """Rows of the systems of every point (feasible, not fitting, or failed: a row with an "error"
    is never feasible), and notes for the absent systems and for every failure."""
    table = [r for r in rows(lines) if r["system"] is not None]
    present = {r["system"] for r in table if not r.get("error")}
    notes = _missing_notes(lines, present)
    for system in sorted({r["system"] for r in table if r.get("error")} & present, key=style.system_sort_key):
        failed = [r for r in table if r["system"] == system and r.get("error")]
        notes.append(f"{style.system_name(system)} failed at {len(failed)} point(s): {failed[0]['error']}")
    return table, notes


def _why_not(row):
    """Where a system has no result: "failed" for a simulation that failed (its reason is in the
    notes), "does not fit" for a configuration that cannot run, "no result" for none."""
    if row is None:
        return "no result"
    return "failed" if row.get("error") else "does not fit"


def _reason(row):
    """The reason written beside a system without a result."""
    if row.get("error"):
        return "failed: " + row["error"]
    return row.get("reason") or "does not fit"


def _short_name(label):
    """A system name broken into lines for tick labels at column width."""
    return style.system_name(label).replace("ZeRO-Infinity", "ZeRO-\nInfinity").replace(" + ", "\n+ ").replace(
        " (", "\n(")


def _params_text(params):
    if params >= 1e12:
        return f"{params / 1e12:.3g}T"
    return figures._params_text(params)


def _time_text(seconds):
    if seconds >= 100:
        return f"{seconds:.0f} s"
    if seconds >= 10:
        return f"{seconds:.1f} s"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1e3:.0f} ms"


def _mb_list(values):
    return ", ".join(str(v) for v in sorted(values))


def _is_kind(label, kinds):
    return style.kind_of(label) in kinds


def _breakdown_panel(ax, groups, tick_names=None, show_group_titles=True, reference=None):
    """Stacked breakdown bars in groups [(group title or None, [(label, row or None)])]; the total
    time over each bar and, over each baseline, LuWu's speedup over it (within the group, or over
    `reference`, a LuWu row, in a group without LuWu).  Returns the table rows [group, system,
    time, ratio, parts...]."""
    tick_names = tick_names or {}
    positions, labels, breakdowns, group_spans = [], [], [], []
    table = []
    x = 0.0
    for title, entries in groups:
        start = x
        for label, row in entries:
            positions.append(x)
            labels.append(label)
            breakdowns.append(row["breakdown_s"] if row and row["feasible"] else None)
            x += 1
        group_spans.append((title, start, x - 1))
        x += 0.6
    tops = _stacked_breakdown(ax, labels, breakdowns, positions=positions, width=0.7)
    top = max(tops) if tops and max(tops) > 0 else 1.0
    i = 0
    for title, entries in groups:
        ref = next((row for label, row in entries if label == REFERENCE and row and row["feasible"]), reference)
        for label, row in entries:
            xpos = positions[i]
            if row is None or not row["feasible"]:
                why = _why_not(row)
                ax.text(xpos, 0.02 * top, why, rotation=90, ha="center", va="bottom", fontsize=7, color="#333333")
                table.append([title or "", style.system_name(label), None, None] + [None] * len(style.BREAKDOWN_PARTS)
                             + [_reason(row) if row else why])
                i += 1
                continue
            t = row["iteration_time_s"]
            text = _time_text(t)
            ratio = None
            if ref is not None and row is not ref:
                ratio = t / ref["iteration_time_s"]
            ax.text(xpos, tops[i] + 0.01 * top, text, ha="center", va="bottom", fontsize=7)
            if ratio is not None:
                ax.text(xpos, tops[i] + 0.075 * top, f"{ratio:.2f}x", ha="center", va="bottom", fontsize=9.5,
                        fontweight="bold", color=style.system_color(REFERENCE))
            table.append([title or "", style.system_name(label), round(t, 3), round(ratio, 3) if ratio else None]
                         + [round(row["breakdown_s"].get(p, 0.0), 3) for p, _, _ in style.BREAKDOWN_PARTS] + [""])
            i += 1
    ax.set_ylim(0, top * (1.3 if show_group_titles and any(g[0] for g in groups) else 1.2))
    ax.set_xticks(positions)
    ax.set_xticklabels([tick_names.get(l, _short_name(l)) for l in labels], fontsize=7.5)
    for tick, label in zip(ax.get_xticklabels(), labels):
        tick.set_color(style.system_color(label))
        tick.set_fontweight("bold")
    for title, a, b in group_spans:
        if title and show_group_titles:
            ax.text((a + b) / 2, 0.985, title, ha="center", va="top", fontsize=8.5, transform=ax.get_xaxis_transform())
    ax.set_xlim(-0.6, x - 1.0)
    ax.set_ylabel("Time per iteration (s)")
    ax.grid(axis="y", alpha=0.3)
    return table


def _legend_right(ax):
    ax.legend(handles=figures.breakdown_legend_handles(), fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              title="Per iteration", title_fontsize=7)


BREAKDOWN_COLUMNS = ["setting", "system", "iteration (s)", "LuWu speedup (x)"] + \
    [f"{label} (s)" for _, label, _ in style.BREAKDOWN_PARTS] + ["note"]
RATIO_NOTE = "Bold Nx over a bar: LuWu's speedup over that system (its iteration time / LuWu's)."


def _common_text(table, key):
    return ", ".join(sorted({str(r[key]) for r in table if r.get(key) is not None})) or "?"


def _pick(table, **want):
    for r in table:
        if all(r.get(k) == v for k, v in want.items()):
            return r
    return None


# ---------------------------------------------------------------------------------------------
# 1. The headline: Custom-175B, 8 workers, and the 4/8/16-worker variants


def _headline_systems(table):
    """LuWu and the ZeRO-Infinity variants, the systems the headline compares."""
    return sorted({r["system"] for r in table if _is_kind(r["system"], ("luwu", "zero-infinity"))},
                  key=style.system_sort_key)


def _others_note(table, systems):
    others = sorted({r["system"] for r in table if r["system"] not in systems and not r["feasible"]},
                    key=style.system_sort_key)
    if not others:
        return []
    return ["Not shown, they do not fit at this size: " + ", ".join(style.system_name(s) for s in others)
            + " (luwusim memory says why)."]


def headline_175b(lines, out_dir, name="headline_175b"):
    """The paper's headline: LuWu vs ZeRO-Infinity on Custom-175B, 8 workers, stacked breakdown."""
    table, notes = _table(lines)
    eight = [r for r in table if r["workers"] == 8]
    title = f"{eight[0]['model'] if eight else 'Custom-175B'} on 8 workers: LuWu vs ZeRO-Infinity"
    if not eight:
        return _no_data(out_dir, name, title, notes + ["no 8-worker point in the headline sweep"])
    systems = _headline_systems(eight)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    t = _breakdown_panel(ax, [(None, [(s, _pick(eight, system=s)) for s in systems])])
    figures.TABLES[name] = (BREAKDOWN_COLUMNS, t)
    _legend_right(ax)
    r0 = eight[0]
    ax.set_title(f"{title}\n{r0['model']}, micro-batch {r0['micro_batch']}, "
                 f"{_network_text(r0['network'])} (paper: {PAPER_SPEEDUP}x)", fontsize=9)
    notes = notes + [RATIO_NOTE] + _others_note(eight, systems)
    return _finish(fig, notes, out_dir, name)


def headline_175b_workers(lines, out_dir, name="headline_175b_workers"):
    """The headline on 4, 8 and 16 workers side by side."""
    table, notes = _table(lines)
    if not table:
        return _no_data(out_dir, name, "LuWu vs ZeRO-Infinity by worker count", notes)
    systems = _headline_systems(table)
    workers = sorted({r["workers"] for r in table})
    title = (f"{_common_text(table, 'model')}: LuWu vs ZeRO-Infinity on "
             f"{', '.join(str(w) for w in workers[:-1])} and {workers[-1]} workers" if len(workers) > 1 else
             f"{_common_text(table, 'model')}: LuWu vs ZeRO-Infinity on {workers[0]} workers")
    fig, ax = plt.subplots(figsize=(8.4, 4.2))
    groups = [(f"{w} workers", [(s, _pick(table, system=s, workers=w)) for s in systems]) for w in workers]
    t = _breakdown_panel(ax, groups)
    figures.TABLES[name] = (BREAKDOWN_COLUMNS, t)
    _legend_right(ax)
    r0 = table[0]
    ax.set_title(f"{title}\n(micro-batch {r0['micro_batch']}, {_network_text(r0['network'])})", fontsize=9)
    notes = notes + [RATIO_NOTE] + _others_note(table, systems)
    return _finish(fig, notes, out_dir, name)


# ---------------------------------------------------------------------------------------------
# 2. Sensitivity of the ratio to what no source pins

# The headline scenario's values of the sensitivity axes (its defaults: GPU profile a100-40gb-pcie,
# SSD profile paper-testbed-ssd-gen3, the scenario's training block), to mark its bar.
SCENARIO_DEFAULTS = {
    "collective_interference": 0.15,
    "memory_efficient_attention": False,
    "paper-testbed-ssd-gen3": {},  # no override: the Gen3 hosts' path limits each direction
    "nccl_host_staged_bandwidth": "6GB/s",
    "swapper": "serial",
}


def _setting_text(key, value):
    leaf = key.split(".")[-1]
    if leaf == "collective_interference":
        return "interference", f"interf. {value:g}"
    if leaf == "memory_efficient_attention":
        return "attention", "fused" if value else "unfused"
    if leaf == "paper-testbed-ssd-gen3":
        return "worker_ssd", _worker_ssd_limit(value)
    if leaf == "nccl_host_staged_bandwidth":
        return "nccl_path", f"NCCL via host {value}"
    if leaf == "systems":
        labels = [s.get("label", s.get("name")) if isinstance(s, dict) else s for s in value]
        return "swapper", _swapper_variant(value), labels
    return leaf, f"{leaf} {value}"


def _worker_ssd_limit(overrides):
    """How the worker SSDs' measured 1:1 mixed rate limits them in a sensitivity point: the profile's
    own per-direction host path, or (overriding the path and the drive's read + write total) a total
    in the drive, which lets a read-only or write-only stream move twice as fast."""
    if not overrides:
        return "SSD as profiled (host path, per direction)"
    if "read_write_bandwidth" in overrides:
        return f"SSD {overrides['read_write_bandwidth']} read + write"
    return "SSD " + ", ".join(f"{k} {v}" for k, v in sorted(overrides.items()))


def _swapper_variant(systems):
    """ZeRO-Infinity's swapper in a systems axis value: serial or pipelined (pipeline_read/write),
    and where its files sit when not striped over the drives (nvme_layout)."""
    dicts = [s for s in systems if isinstance(s, dict)]
    pipelined = any(s.get("pipeline_read") or s.get("pipeline_write") for s in dicts)
    text = "pipelined" if pipelined else "serial"
    if any(s.get("nvme_layout") == "split" for s in dicts):
        text += ", drives split"
    return text


def _is_default(point):
    for key, value in point.items():
        leaf = key.split(".")[-1]
        if leaf == "systems":
            if _swapper_variant(value) != SCENARIO_DEFAULTS["swapper"]:
                return False
        elif leaf in SCENARIO_DEFAULTS and value != SCENARIO_DEFAULTS[leaf]:
            return False
    return True


def sensitivity(lines, out_dir, name="sensitivity"):
    """LuWu's speedup over ZeRO-Infinity (NVMe) for each variant of the sensitivity sweep."""
    title = "Sensitivity of LuWu's speedup\nover ZeRO-Infinity (NVMe)\nCustom-175B, 8 workers, micro-batch 16"
    table, notes = _table(lines)
    bars = []
    for index in sorted({r["index"] for r in table}):
        point_rows = [r for r in table if r["index"] == index]
        luwu = next((r for r in point_rows if r["system"] == REFERENCE and r["feasible"]), None)
        zi = next((r for r in point_rows if _is_kind(r["system"], ("zero-infinity",)) and r["feasible"]), None)
        point = point_rows[0]["point"]
        text = ", ".join(_setting_text(k, v)[1] for k, v in point.items())
        if luwu is None or zi is None:
            failed = next((r["error"] for r in point_rows if r.get("error")), None)
            notes.append(f"{text}: no ratio ({'failed: ' + failed if failed else 'LuWu or ZeRO-Infinity absent or does not fit'})")
            continue
        bars.append((zi["iteration_time_s"] / luwu["iteration_time_s"], text, _is_default(point),
                     luwu["iteration_time_s"], zi["iteration_time_s"]))
    if not bars:
        return _no_data(out_dir, name, title, notes)
    bars.sort(key=lambda b: b[0])
    fig, ax = plt.subplots(figsize=(7.5, 1.6 + 0.22 * len(bars)))
    ys = range(len(bars))
    colors = [style.system_color(REFERENCE) if b[2] else "#F2B27F" for b in bars]
    ax.barh(list(ys), [b[0] for b in bars], 0.7, color=colors, edgecolor=[style.system_color(REFERENCE)] * len(bars))
    for y, b in zip(ys, bars):
        ax.text(b[0] + 0.03, y, f"{b[0]:.2f}x", va="center", fontsize=7.5, fontweight="bold" if b[2] else "normal")
    ax.set_yticks(list(ys))
    ax.set_yticklabels([b[1] + ("  [scenario]" if b[2] else "") for b in bars], fontsize=7)
    for tick, b in zip(ax.get_yticklabels(), bars):
        if b[2]:
            tick.set_fontweight("bold")
    ax.axvline(1.0, color="#555555", lw=0.8)
    ax.axvline(PAPER_SPEEDUP, color="#333333", lw=1.2, ls="--")
    ax.text(PAPER_SPEEDUP - 0.04, len(bars) - 0.4, f"paper: {PAPER_SPEEDUP}x", fontsize=7.5, va="bottom", ha="right")
    ax.set_xlim(0, max(PAPER_SPEEDUP, max(b[0] for b in bars)) * 1.08)
    ax.set_ylim(-0.6, len(bars) + 0.3)
    # Aligned to the axes' right edge: the long variant labels push the axes right, and a centred
    # title or label would run off the figure.
    ax.set_xlabel("LuWu speedup (x): ZeRO-Infinity iteration time / LuWu's", loc="right")
    ax.set_title(title, fontsize=9.5, loc="right")
    ax.grid(axis="x", alpha=0.3)
    figures.TABLES[name] = (["variant", "scenario default", "LuWu (s)", "ZeRO-Infinity (s)", "speedup (x)"],
                            [[b[1], "yes" if b[2] else "", round(b[3], 3), round(b[4], 3), round(b[0], 3)]
                             for b in reversed(bars)])
    lo, hi = min(b[0] for b in bars), max(b[0] for b in bars)
    notes.append(f"{len(bars)} variants: {lo:.2f}x to {hi:.2f}x; the dark bar is the headline scenario. Each label: "
                 "ZeRO-Infinity's swapper (DeepSpeed pipeline_read/write off = serial; drives split = nvme_layout "
                 "\"split\", parameters and optimizer state on separate drives), compute lost beside a "
                 "collective kernel (collective_interference), attention kernel, how the worker SSDs' measured 1:1 "
                 "mixed rate limits them (per direction on the host's path, or a read + write total in the drive), the rate "
                 "of NCCL's path through host memory (nccl_host_staged_bandwidth).")
    return _finish(fig, notes, out_dir, name)


# ---------------------------------------------------------------------------------------------
# 3. MFU vs model size at the largest micro-batch that fits (unless a smaller one runs faster)


def _best_feasible(table):
    """{(model, system): the feasible row of the highest MFU, the largest micro-batch among equals}.

    The paper plots each system at its largest micro-batch that fits, which is its best while a
    larger micro-batch never runs slower; LuWu, which streams fewer layers ahead where the GPU
    holds fewer, can run a larger micro-batch slower, and then its best is shown."""
    best = {}
    for r in table:
        if not r["feasible"] or r["micro_batch"] is None:
            continue
        key = (r["model"], r["system"])
        if key not in best or (r["mfu"], r["micro_batch"]) > (best[key]["mfu"], best[key]["micro_batch"]):
            best[key] = r
    return best


def mfu_vs_model_size(lines, out_dir, name="mfu_vs_model_size"):
    """MFU of each system per model, each at its best micro-batch that fits (written at the point)."""
    title = "MFU vs model size, each system at its best micro-batch that fits"
    table, notes = _table(lines)
    if not table:
        return _no_data(out_dir, name, title, notes)
    models = sorted({r["model"] for r in table}, key=lambda m: next(r["params"] for r in table if r["model"] == m))
    params = {m: next(r["params"] for r in table if r["model"] == m) for m in models}
    systems = sorted({r["system"] for r in table}, key=style.system_sort_key)
    mbs = sorted({r["micro_batch"] for r in table if r["micro_batch"] is not None})
    best = _best_feasible(table)
    fig, ax = plt.subplots(figsize=(8.0, 4.4))
    never = {}
    for k, system in enumerate(systems):
        pts = [(i, best[(m, system)]) for i, m in enumerate(models) if (m, system) in best]
        missing = [m for m in models if (m, system) not in best]
        if missing:
            never[system] = missing
        if not pts:
            continue
        xs = [i for i, _ in pts]
        ys = [100 * r["mfu"] for _, r in pts]
        ax.plot(xs, ys, color=style.system_color(system), marker=style.system_marker(system),
                ls=style.system_linestyle(system), label=style.system_name(system), ms=5, lw=1.5)
        for x, (i, r) in zip(xs, pts):
            dy = 6 if k % 2 == 0 else -10
            ax.annotate(str(r["micro_batch"]), (x, 100 * r["mfu"]), textcoords="offset points", xytext=(4, dy),
                        fontsize=6.5, color=style.system_color(system))
    zi = next((s for s in systems if _is_kind(s, ("zero-infinity",))), None)
    ratio_row = []
    if REFERENCE in systems and zi:
        for i, m in enumerate(models):
            a, b = best.get((m, REFERENCE)), best.get((m, zi))
            if a and b and b["mfu"]:
                ratio_row.append((i, a["mfu"] / b["mfu"]))
                ax.text(i, 1.005, f"{a['mfu'] / b['mfu']:.2f}x", ha="center", va="bottom", fontsize=7.5,
                        fontweight="bold", color=style.system_color(REFERENCE), transform=ax.get_xaxis_transform())
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels([f"{m}\n{_params_text(params[m])}" for m in models], fontsize=7, rotation=30, ha="right")
    ax.set_xlabel("Model (parameters)")
    ax.set_ylabel("Model FLOPs utilization, MFU (%)")
    top = max((100 * r["mfu"] for r in best.values()), default=1.0)
    ax.set_ylim(0, top * 1.2)  # room for the micro-batch labels under the ratio row
    ax.set_xlim(-0.5, len(models) - 0.5)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    r0 = table[0]
    ax.set_title(f"{title}\n({r0['workers']} workers, {_network_text(r0['network'])}; number at a point: its "
                 f"micro-batch; bold on top: LuWu MFU / {style.system_name(zi) if zi else 'ZeRO-Infinity'} MFU)",
                 fontsize=8.5, pad=14)
    notes.append(f"Micro-batches swept: {_mb_list(mbs)}.")
    for system, missing in never.items():
        notes.append(f"{style.system_name(system)} fits at no micro-batch swept for: {', '.join(missing)}")
    columns = ["model", "params"] + [f"{style.system_name(s)} MFU % (micro-batch)" for s in systems] + \
        ["LuWu / ZeRO-Infinity MFU"]
    t = []
    ratios = dict(ratio_row)
    for i, m in enumerate(models):
        cells = [m, _params_text(params[m])]
        for s in systems:
            r = best.get((m, s))
            failed = any(x["model"] == m and x["system"] == s and x.get("error") for x in table)
            cells.append(f"{100 * r['mfu']:.1f} ({r['micro_batch']})" if r else "failed" if failed else "does not fit")
        cells.append(f"{ratios[i]:.2f}x" if i in ratios else "")
        t.append(cells)
    figures.TABLES[name] = (columns, t)
    return _finish(fig, notes, out_dir, name)


# ---------------------------------------------------------------------------------------------
# 4. Throughput vs micro-batch

MICRO_BATCH_PANELS = [
    ("custom-175b", ("luwu", "zero-infinity")),
    ("opt-1.3b", ("luwu", "zero-infinity", "zero3", "atp")),
]


def throughput_vs_micro_batch(lines, out_dir, name="throughput_vs_micro_batch"):
    """Tokens/s against the micro-batch: Custom-175B (LuWu, ZeRO-Infinity) and OPT-1.3B (LuWu,
    ZeRO-Infinity, ZeRO-3, ATP)."""
    title = "Training throughput vs micro-batch size"
    table, notes = _table(lines)
    if not table:
        return _no_data(out_dir, name, title, notes)
    fig, axes = plt.subplots(1, len(MICRO_BATCH_PANELS), figsize=(4.2 * len(MICRO_BATCH_PANELS), 4.0), squeeze=False)
    t = []
    for ax, (model, kinds) in zip(axes[0], MICRO_BATCH_PANELS):
        sub = [r for r in table if r["model"] == model and _is_kind(r["system"], kinds)]
        if not sub:
            ax.text(0.5, 0.5, f"no {model} results in the sweep", ha="center", va="center", transform=ax.transAxes)
            ax.set_title(model, fontsize=9)
            ax.set_xlabel("Micro-batch size (sequences)")
            ax.set_ylabel("Training throughput (tokens/s)")
            notes.append(f"{model}: not in the sweep results")
            continue
        systems = sorted({r["system"] for r in sub}, key=style.system_sort_key)
        mbs = sorted({r["micro_batch"] for r in sub})
        by = {(r["system"], r["micro_batch"]): r for r in sub}
        for system in systems:
            pts = [(mb, by[(system, mb)]["tokens_per_s"]) for mb in mbs
                   if (system, mb) in by and by[(system, mb)]["feasible"]]
            unfit = [mb for mb in mbs if (system, mb) in by and not by[(system, mb)]["feasible"]
                     and not by[(system, mb)].get("error")]
            failed = [mb for mb in mbs if (system, mb) in by and by[(system, mb)].get("error")]
            if unfit:
                notes.append(f"{model}, {style.system_name(system)}: does not fit at micro-batch {_mb_list(unfit)}")
            if failed:
                notes.append(f"{model}, {style.system_name(system)}: FAILED at micro-batch {_mb_list(failed)}: "
                             f"{by[(system, failed[0])]['error']}")
            if pts:
                ax.plot(*zip(*pts), color=style.system_color(system), marker=style.system_marker(system),
                        ls=style.system_linestyle(system), label=style.system_name(system), ms=5)
        zi = next((s for s in systems if _is_kind(s, ("zero-infinity",))), None)
        for mb in mbs:
            a, b = by.get((REFERENCE, mb)), by.get((zi, mb)) if zi else None
            ratio = None
            if a and b and a["feasible"] and b["feasible"]:
                ratio = a["tokens_per_s"] / b["tokens_per_s"]
                ax.text(mb, 1.005, f"{ratio:.2f}x", ha="center", va="bottom", fontsize=7, fontweight="bold",
                        color=style.system_color(REFERENCE), transform=ax.get_xaxis_transform())
            for s in systems:
                r = by.get((s, mb))
                t.append([model, mb, style.system_name(s),
                          round(r["tokens_per_s"], 1) if r and r["feasible"] else _why_not(r),
                          round(r["iteration_time_s"], 3) if r and r["feasible"] else "",
                          f"{ratio:.2f}x" if ratio and s == REFERENCE else ""])
        ax.set_xscale("log", base=2)
        ax.set_xticks(mbs)
        ax.set_xticklabels([str(m) for m in mbs])
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(figures.FuncFormatter(figures._count_text))
        ax.set_xlabel("Micro-batch size (sequences of 1024 tokens)" if sub[0]["input"].get("training", {}).get(
            "seq_len") == 1024 else "Micro-batch size (sequences)")
        ax.set_ylabel("Training throughput (tokens/s)")
        ax.set_title(f"{model} ({_params_text(sub[0]['params'])}), {sub[0]['workers']} workers\n"
                     f"bold: LuWu / {style.system_name(zi) if zi else 'ZeRO-Infinity'}", fontsize=8.5, pad=12)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.suptitle(title, fontsize=10)
    figures.TABLES[name] = (["model", "micro-batch", "system", "tokens/s", "iteration (s)",
                             "LuWu / ZeRO-Infinity throughput"], t)
    notes.append("ATP: in-switch aggregation of a replicated model, its parameter servers colocated on the workers "
                 "and the switch's aggregators all free (sim/systems/atp).")
    return _finish(fig, notes, out_dir, name)


# ---------------------------------------------------------------------------------------------
# 5. Per-iteration breakdowns in the paper's three settings

BREAKDOWN_SETTINGS = [("opt-1.3b", 64), ("opt-30b", 32), ("custom-175b", 16)]


def paper_breakdowns(lines, out_dir, name="paper_breakdowns"):
    """LuWu vs ZeRO-Infinity per iteration: OPT-1.3B at micro-batch 64, OPT-30B at 32, Custom-175B at 16."""
    title = "Per-iteration breakdown, LuWu vs ZeRO-Infinity, in the paper's three settings"
    table, notes = _table(lines)
    if not table:
        return _no_data(out_dir, name, title, notes)
    fig, axes = plt.subplots(1, len(BREAKDOWN_SETTINGS), figsize=(8.0, 4.2))
    t = []
    for ax, (model, mb) in zip(axes, BREAKDOWN_SETTINGS):
        sub = [r for r in table if r["model"] == model and r["micro_batch"] == mb
               and _is_kind(r["system"], ("luwu", "zero-infinity"))]
        if not sub:
            ax.text(0.5, 0.5, f"{model} at micro-batch {mb}\nnot in the sweep", ha="center", va="center",
                    transform=ax.transAxes, fontsize=8)
            ax.set_xticks([])
            ax.set_ylabel("Time per iteration (s)")
            notes.append(f"{model} at micro-batch {mb}: not in the sweep results")
            continue
        systems = sorted({r["system"] for r in sub}, key=style.system_sort_key)
        t += _breakdown_panel(ax, [(f"{model}, mb {mb}", [(s, _pick(sub, system=s)) for s in systems])],
                              show_group_titles=False)
        ax.set_title(f"{model} ({_params_text(sub[0]['params'])})\nmicro-batch {mb}", fontsize=9)
        if ax is not axes[0]:
            ax.set_ylabel("")
    figures.TABLES[name] = (BREAKDOWN_COLUMNS, t)
    fig.legend(handles=figures.breakdown_legend_handles(), loc="upper center", ncol=5, fontsize=7,
               bbox_to_anchor=(0.5, 0.945), handlelength=1.5, columnspacing=1.0)
    fig.suptitle(title, fontsize=9.5, y=0.99)
    notes.append(RATIO_NOTE)
    notes.append("Exposed parts are those not hidden behind compute (the paper splits forward, backward and optimizer "
                 "instead).")
    return _finish_keep(fig, notes, out_dir, name, top=0.87)


def _finish_keep(fig, notes, out_dir, name, top):
    """_finish with room kept at the top for a figure legend."""
    style.raise_small_fonts(fig)
    text = figures._notes_text(notes)
    n_lines = text.count("\n") + 1 if text else 0
    bottom = 0.02 + figures.notes_height(fig, n_lines)
    fig.tight_layout(rect=(0, bottom, 1, top))
    if text:
        fig.text(0.01, 0.01, text, fontsize=figures.note_font_pt(fig), va="bottom", ha="left", color="#444444", wrap=True)
    return figures._save(fig, out_dir, name)


# ---------------------------------------------------------------------------------------------
# 6. SM sharing what-if and the other ablations

SM_SHARING = ["zero-infinity-nvme", "zero-infinity-mps", "zero-infinity-preemptive", "luwu"]
SM_SHARING_NAMES = {
    "zero-infinity-nvme": "ZeRO-Infinity\n(NVMe), default:\nnon-preemptive",
    "zero-infinity-mps": "ZeRO-Infinity\n+ MPS (SMs\npartitioned)",
    "zero-infinity-preemptive": "ZeRO-Infinity\n+ SM preemption\n(hypothetical)",
    "luwu": "LuWu",
}


def sm_sharing_what_if(lines, out_dir, name="sm_sharing_what_if"):
    """ZeRO-Infinity with the GPU's default non-preemptive SM sharing, with MPS and with SM
    preemption, against LuWu (Custom-175B, 8 workers)."""
    title = "What if ZeRO-Infinity's collectives got SMs by MPS or by preemption?"
    table, notes = _table(lines)
    present = [s for s in SM_SHARING if _pick(table, system=s)]
    if not present:
        return _no_data(out_dir, name, title, notes + ["none of " + ", ".join(SM_SHARING) + " in the ablation results"])
    for s in SM_SHARING:
        if s not in present:
            notes.append(f"{s}: not in the ablation results")
    fig, ax = plt.subplots(figsize=(7.0, 4.4))
    t = _breakdown_panel(ax, [(None, [(s, _pick(table, system=s)) for s in present])], tick_names=SM_SHARING_NAMES)
    figures.TABLES[name] = (BREAKDOWN_COLUMNS, t)
    _legend_right(ax)
    r0 = table[0]
    ax.set_title(f"{title}\n{r0['model']}, {r0['workers']} workers, micro-batch {r0['micro_batch']}", fontsize=9)
    notes.append(RATIO_NOTE)
    notes.append("sm_sharing: non-preemptive (a collective launches at a kernel boundary), mps (SMs statically "
                 "partitioned), preemptive (takes its SMs at once).")
    return _finish(fig, notes, out_dir, name)


# Short tick names for the ablation's bars at column width.
ABLATION_NAMES = {
    "luwu": "LuWu",
    "luwu-layer-centric": "LuWu\nlayer-\ncentric",
    "luwu-gpu-kernel-push-pull": "LuWu\nGPU-kernel\npush/pull",
    "luwu-colocated-ps": "LuWu\nserver on\nworkers",
    "luwu-dram-first": "LuWu\nnode\nin DRAM",
    "zero-infinity-nvme": "ZeRO-Inf.\n(NVMe)",
    "zero-infinity-mps": "ZeRO-Inf.\n+ MPS",
    "zero-infinity-preemptive": "ZeRO-Inf.\n+ SM\npreemption",
    "zero-infinity-two-streams": "ZeRO-Inf.\n+ two\nstreams",
    "zero-infinity-pipelined-swapper": "ZeRO-Inf.\n+ pipelined\nswapper",
    "zero-infinity-async-gradient-copies": "ZeRO-Inf.\nasync\ngradient\ncopies",
    "zero-infinity-async-shard-copies": "ZeRO-Inf.\nasync\nshard\ncopies",
    "zero-infinity-async-copies": "ZeRO-Inf.\nall copies\nasync",
    "zero-infinity-parameter-hooks-only": "ZeRO-Inf.\nhooks only\nwith params",
}


def ablations(lines, out_dir, name="ablations"):
    """Every variant of the ablation scenario, stacked, with LuWu's speedup over each."""
    table, notes = _table(lines)
    title = (f"Ablations on {_common_text(table, 'model')}, {_common_text(table, 'workers')} workers: "
             "each mechanism switched in turn")
    if not table:
        return _no_data(out_dir, name, "Ablations", notes)
    systems = sorted({r["system"] for r in table}, key=style.system_sort_key)
    fig, ax = plt.subplots(figsize=(max(9.0, 0.8 * len(systems) + 2), 4.6))
    t = _breakdown_panel(ax, [(None, [(s, _pick(table, system=s)) for s in systems])], tick_names=ABLATION_NAMES)
    figures.TABLES[name] = (BREAKDOWN_COLUMNS, t)
    _legend_right(ax)
    r0 = table[0]
    ax.set_title(f"{title}\n({r0['model']}, micro-batch {r0['micro_batch']}, {_network_text(r0['network'])})",
                 fontsize=9)
    notes.append(RATIO_NOTE + " LuWu's own variants are compared with LuWu as designed (step-centric node, "
                 "SmartNIC DMA, the optimizer node).")
    return _finish(fig, notes, out_dir, name)


# ---------------------------------------------------------------------------------------------
# 7. Maximum trainable model size vs workers (from `luwusim memory`)


def max_model_size(lines, out_dir, name="max_model_size"):
    """The largest catalog model each system can train per worker count, judged by `luwusim
    memory` (GPU, host and optimizer-node memory), at the sweep's micro-batch."""
    title = "Largest trainable model vs number of workers"
    entries, notes = [], []
    for line in lines:
        if "memory" not in line:
            notes.append(f"point {line.get('index')} ({line.get('point')}): {line.get('error', 'no result')}")
            continue
        for m in line["memory"]:
            entries.append(dict(model=m["model"], params=m["params"], workers=m["workers"], system=m["system"],
                                runs=m["runs"], why=m.get("problem") or m.get("reason"),
                                micro_batch=line.get("input", {}).get("training", {}).get("micro_batch")))
    if not entries:
        return _no_data(out_dir, name, title, notes)
    models = sorted({e["model"] for e in entries}, key=lambda m: next(e["params"] for e in entries if e["model"] == m))
    params = {m: next(e["params"] for e in entries if e["model"] == m) for m in models}
    workers = sorted({e["workers"] for e in entries})
    systems = sorted({e["system"] for e in entries}, key=style.system_sort_key)
    fig, ax = plt.subplots(figsize=(6.8, 4.6))
    largest = {}
    for k, system in enumerate(systems):
        offset = (k - (len(systems) - 1) / 2) * 0.07
        ys = []
        for w in workers:
            ok = [models.index(e["model"]) for e in entries if e["system"] == system and e["workers"] == w and e["runs"]]
            y = max(ok) if ok else -1
            largest[(system, w)] = y
            ys.append(y + offset)
        ax.plot(workers, ys, color=style.system_color(system), marker=style.system_marker(system),
                ls=style.system_linestyle(system), label=style.system_name(system), ms=6, lw=1.5)
    ax.set_xscale("log", base=2)
    ax.set_xticks(workers)
    ax.set_xticklabels([str(w) for w in workers])
    ax.set_yticks(range(-1, len(models)))
    ax.set_yticklabels(["none fits"] + [f"{m} ({_params_text(params[m])})" for m in models], fontsize=7.5)
    ax.set_ylim(-1.5, len(models) - 0.5)
    ax.set_xlabel("Workers (one GPU each)")
    ax.set_ylabel("Largest model that runs (catalog, by parameters)")
    mbs = sorted({e["micro_batch"] for e in entries if e["micro_batch"]})
    ax.set_title(f"{title}\n(micro-batch {_mb_list(mbs)}, the paper's testbed per worker; luwusim memory)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    # Why the largest model fails for each system at the most workers.
    w_max = workers[-1]
    for system in systems:
        y = largest[(system, w_max)]
        if y + 1 < len(models):
            nxt = models[y + 1]
            e = next((e for e in entries if e["system"] == system and e["workers"] == w_max and e["model"] == nxt), None)
            if e and e["why"]:
                notes.append(f"{style.system_name(system)}, {w_max} workers, {nxt}: {e['why']}")
    notes.append("Markers of systems at the same model are offset slightly so that none hides another.")
    columns = ["workers"] + [style.system_name(s) for s in systems]
    figures.TABLES[name] = (columns, [[w] + [models[largest[(s, w)]] if largest[(s, w)] >= 0 else "none"
                                           for s in systems] for w in workers])
    return _finish(fig, notes, out_dir, name)


# ---------------------------------------------------------------------------------------------
# 9. Algorithm bandwidth of push/pull vs NCCL all-reduce, alone and beside a GEMM
#    (from `luwusim all-reduce-bandwidth --json`, one point per line)

ALL_REDUCE_MECHANISMS = [
    # (mechanism, legend, colour: LuWu's for its push/pull, ZeRO-Infinity's for the NCCL kernels it runs)
    ("nccl", "NCCL all-reduce (GPU kernels)", style.SYSTEM_COLORS["zero-infinity"]),
    ("push-pull", "LuWu push/pull (SmartNIC DMA)", style.SYSTEM_COLORS["luwu"]),
    ("push-pull-gpu-kernel", "push/pull by GPU kernels (ablation)", "#E69F00"),
]


def all_reduce_bandwidth(lines, out_dir, name="all_reduce_bandwidth"):
    """Algorithm bandwidth (buffer bytes / time) of one all-reduce on 2, 4 and 8 GPUs, alone
    (solid) and beside a GEMM (hatched), with the change beside a GEMM written on each bar."""
    title = "All-reduce algorithm bandwidth: push/pull vs NCCL, alone and beside a GEMM"
    points = [p for p in lines if "algbw_Bps" in p]
    notes = [f"{p['mechanism']} on {p['workers']} workers: {p['problem']}" for p in lines if "problem" in p]
    if not points:
        return _no_data(out_dir, name, title, notes)
    workers = sorted({p["workers"] for p in points})
    mechanisms = [m for m in ALL_REDUCE_MECHANISMS if any(p["mechanism"] == m[0] for p in points)]
    fig, ax = plt.subplots(figsize=(8.0, 4.2))
    width = 0.8 / (2 * len(mechanisms))
    table = []
    for wi, w in enumerate(workers):
        for mi, (mech, legend, colour) in enumerate(mechanisms):
            alone = next((p for p in points if p["mechanism"] == mech and p["workers"] == w and not p["beside_gemm"]), None)
            gemm = next((p for p in points if p["mechanism"] == mech and p["workers"] == w and p["beside_gemm"]), None)
            for k, (p, hatch) in enumerate(((alone, ""), (gemm, "//"))):
                if p is None:
                    continue
                x = wi + (2 * mi + k + 0.5) * width - 0.4
                gbps = p["algbw_Bps"] * 8 / 1e9
                ax.bar(x, gbps, width, color=colour, hatch=hatch, alpha=1.0 if k == 0 else 0.6, edgecolor="white",
                       label=(legend if k == 0 else f"{legend}, beside a GEMM") if wi == 0 else None)
                if k == 1 and alone is not None:
                    change = 100 * (p["algbw_Bps"] / alone["algbw_Bps"] - 1)
                    ax.annotate(f"{change:+.0f}%", (x, gbps), ha="center", va="bottom", fontsize=7)
            if alone is not None and gemm is not None:
                table.append([w, legend, f"{alone['buffer_bytes'] / 1e9:g}", f"{alone['algbw_Bps'] * 8 / 1e9:.1f}",
                              f"{gemm['algbw_Bps'] * 8 / 1e9:.1f}",
                              f"{100 * (gemm['algbw_Bps'] / alone['algbw_Bps'] - 1):+.1f}"])
    figures.TABLES[name] = (["GPUs", "mechanism", "buffer (GB)", "alone (Gb/s)", "beside a GEMM (Gb/s)", "change (%)"],
                            table)
    ax.set_xticks(range(len(workers)))
    ax.set_xticklabels([f"{w} GPUs" for w in workers])
    ax.set_ylabel("algorithm bandwidth (Gb/s)")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.1)
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    buffer_gb = points[0]["buffer_bytes"] / 1e9
    ax.set_title(f"{title}\n(one all-reduce of {buffer_gb:g} GB; GPUs' SMs partitioned by MPS, as the paper measured)",
                 fontsize=9)
    notes = notes + ["algbw = buffer bytes / time of one all-reduce (NCCL's algbw). Push/pull sends the switch's "
                     "4-byte integers per 2-byte element, in packets of the switch's payload."]
    return _finish(fig, notes, out_dir, name)


# ---------------------------------------------------------------------------------------------
# 10. Reliable-protocol throughput vs number of workers


def reliable_transport(lines, out_dir, name="reliable_transport"):
    """Training throughput per worker as workers grow, LuWu with switch-aggregated heartbeats and
    with per-packet ACK (scenarios/paper/reliable-transport.json); the ratio at each point."""
    title = "Reliable transport: per-packet ACK vs switch-aggregated heartbeats"
    table, notes = _table(lines)
    table = [r for r in table if r["feasible"]]
    if not table:
        return _no_data(out_dir, name, title, notes)
    systems = sorted({r["system"] for r in table}, key=style.system_sort_key)
    fig, ax = plt.subplots(figsize=(7.2, 4.2))
    series = {}
    for system in systems:
        pts = sorted((r["workers"], r["tokens_per_s"] / r["workers"], r["iteration_time_s"]) for r in table
                     if r["system"] == system)
        series[system] = pts
        ack = "ack" in system
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=style.system_color(system),
                linestyle="--" if ack else "-", marker="s" if ack else "o", label=style.system_name(system))
    t = []
    if len(systems) == 2:
        hb, ack = (systems if "ack" in systems[1] else systems[::-1])
        by_workers = {w: (tps, it) for w, tps, it in series[ack]}
        for w, tps, it in series[hb]:
            if w in by_workers:
                ratio = tps / by_workers[w][0]
                t.append([w, f"{it * 1e3:.1f}", f"{by_workers[w][1] * 1e3:.1f}", f"{ratio:.2f}"])
                if ratio >= 1.01:
                    ax.annotate(f"{ratio:.2f}x", (w, by_workers[w][0]), textcoords="offset points", xytext=(0, -12),
                                ha="center", fontsize=7)
        figures.TABLES[name] = (["workers", "heartbeats iteration (ms)", "per-packet ACK iteration (ms)",
                                 "heartbeats / per-packet ACK"], t)
    ax.set_xlabel("Workers (one GPU each)")
    ax.set_ylabel("Tokens/s per worker")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    r0 = table[0]
    ax.set_title(f"{title}\n({r0['model']}, micro-batch {r0['micro_batch']}, {_network_text(r0['network'])}; "
                 "ratios: heartbeats over per-packet ACK)", fontsize=9)
    notes.append("Per-packet ACK: every worker acknowledges every parameter frame the node multicasts, and the node "
                 "every aggregated frame (models/reliable_transport.hpp).")
    return _finish(fig, notes, out_dir, name)


# ---------------------------------------------------------------------------------------------
# 14. Parameter-server sizing

def parameter_server_sizing(lines, out_dir, name="parameter_server_sizing"):
    """Tokens/s per worker of plain parameter servers against the number of dedicated CPU machines
    (scenarios/paper/parameter-server-sizing.json), with the colocated servers (no extra machine),
    LuWu (one optimizer node) and ATP as reference lines."""
    title = "Parameter-server sizing: extra CPU machines to keep up with the workers"
    table, notes = _table(lines)
    table = [r for r in table if r["feasible"]]
    if not table:
        return _no_data(out_dir, name, title, notes)
    fig, ax = plt.subplots(figsize=(7.2, 4.2))

    def servers(r):
        return r["point"].get("cluster.parameter_servers")

    dedicated = sorted((servers(r), r["tokens_per_s"] / r["workers"], r["iteration_time_s"]) for r in table
                       if r["system"] == "parameter-server-dedicated" and servers(r) is not None)
    t = []
    if dedicated:
        ax.plot([p[0] for p in dedicated], [p[1] for p in dedicated], color=style.system_color("parameter-server"),
                marker=style.system_marker("parameter-server"), label=style.system_name("parameter-server-dedicated"))
        best = max(p[1] for p in dedicated)
        # The fewest machines within 5% of the best the dedicated servers reach: "keeping up".
        enough = next(p for p in dedicated if p[1] >= 0.95 * best)
        ax.annotate(f"{enough[0]} machines: within 5% of the best", (enough[0], enough[1]), textcoords="offset points",
                    xytext=(15, -48), fontsize=7.5, arrowprops={"arrowstyle": "->", "lw": 0.6})
        t += [[f"parameter servers, {s} dedicated", s, f"{it * 1e3:.1f}", f"{tps:.0f}"] for s, tps, it in dedicated]
    x_max = max([p[0] for p in dedicated] or [1])
    workers = table[0]["workers"]
    ax.axvline(workers, color="#999999", lw=0.8, linestyle="-.")
    ax.text(workers, 0.45, f" S = N = {workers}", transform=ax.get_xaxis_transform(), fontsize=7, color="#555555")
    for label in ("parameter-server-colocated", "luwu", "atp"):
        pts = [r for r in table if r["system"] == label]
        if not pts:
            continue
        r = pts[0]  # these do not depend on the dedicated machines: every point gives the same
        tps = r["tokens_per_s"] / r["workers"]
        extra = {"parameter-server-colocated": 0, "luwu": 1, "atp": 0}[label]
        ax.axhline(tps, color=style.system_color(label), linestyle=style.system_linestyle(label) if label != "luwu" else ":",
                   lw=1.4, label=f"{style.system_name(label)}: {extra} extra machine{'s' if extra != 1 else ''}")
        t.append([style.system_name(label), extra, f"{r['iteration_time_s'] * 1e3:.1f}", f"{tps:.0f}"])
    figures.TABLES[name] = (["system", "extra CPU machines", "iteration (ms)", "tokens/s per worker"], t)
    r0 = table[0]
    ax.set_xlabel("Dedicated parameter-server machines (100 Gb/s each)")
    ax.set_ylabel("Tokens/s per worker")
    ax.set_xlim(0, x_max + 1)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7.5, loc="lower right")
    ax.set_title(f"{title}\n({r0['model']}, micro-batch {r0['micro_batch']}, {r0['workers']} workers, "
                 f"{_network_text(r0['network'])})", fontsize=9)
    notes.append("Each dedicated server owns 1/S of every gradient: N workers' pushes share its one NIC, so at equal "
                 "line rates S = N servers keep up with the workers' links. Colocated servers add no machine but "
                 "carry 2(N-1)/N of a gradient each way on every worker's NIC and use the workers' CPUs.")
    return _finish(fig, notes, out_dir, name)


# ---------------------------------------------------------------------------------------------
# 11. ZeRO-Infinity with SHARP-style in-network reduction vs LuWu (OPT-30B, 4 workers)


def _gb_sent(row):
    """Bytes one worker sends over the network per iteration, in GB (network_bytes_per_worker's
    "sent"), or None."""
    sent = (row.get("network_bytes_per_worker") or {}).get("sent")
    return sent / 1e9 if isinstance(sent, (int, float)) else None


def sharp_vs_luwu(lines, out_dir, name="sharp_vs_luwu", missing=None):
    """LuWu against ZeRO-Infinity (NVMe) with and without the switch reducing its collectives
    (scenarios/paper/sharp-opt30b-4w.json): the iteration's breakdown with LuWu's speedup over
    each, and the bytes each worker sends per iteration."""
    title = "ZeRO-Infinity with in-network reduction (SHARP-style) vs LuWu"
    table, notes = _table(lines)
    notes = list(missing or []) + notes
    if not table:
        return _no_data(out_dir, name, title, notes)
    systems = sorted({r["system"] for r in table}, key=style.system_sort_key)
    fig, (ax, ax_bytes) = plt.subplots(1, 2, figsize=(10.0, 4.4), gridspec_kw={"width_ratios": [1.5, 1]})
    names = {"zero-infinity-nvme-sharp": "ZeRO-\nInfinity\n(NVMe)\n+ SHARP"}
    t = _breakdown_panel(ax, [(None, [(s, _pick(table, system=s)) for s in systems])], tick_names=names)
    ax.legend(handles=figures.breakdown_legend_handles(), fontsize=7, loc="upper left", title="Per iteration",
              title_fontsize=7)
    r0 = table[0]
    ax.set_title(f"Iteration time ({r0['model']}, {r0['workers']} workers, micro-batch {r0['micro_batch']}, "
                 f"{_network_text(r0['network'])})", fontsize=9)
    # Bytes each worker sends per iteration.
    sent = [(s, _gb_sent(_pick(table, system=s) or {})) for s in systems]
    sent = [(s, v) for s, v in sent if v is not None]
    for i, (s, v) in enumerate(sent):
        ax_bytes.bar(i, v, 0.65, color=style.system_color(s), hatch=style.system_hatch(s), edgecolor="white")
        ax_bytes.text(i, v, f"{v:.0f} GB", ha="center", va="bottom", fontsize=7.5)
    ax_bytes.set_xticks(range(len(sent)))
    ax_bytes.set_xticklabels([names.get(s, _short_name(s)) for s, _ in sent], fontsize=7.5)
    for tick, (s, _) in zip(ax_bytes.get_xticklabels(), sent):
        tick.set_color(style.system_color(s))
    ax_bytes.set_ylabel("Network bytes sent per worker per iteration (GB)")
    ax_bytes.set_ylim(0, max([v for _, v in sent] + [1]) * 1.15)
    ax_bytes.grid(axis="y", alpha=0.3)
    ax_bytes.set_title("What each GPU's NIC sends", fontsize=9)
    columns = BREAKDOWN_COLUMNS[:-1] + ["sent per worker (GB)", "note"]
    by_name = {style.system_name(s): v for s, v in sent}
    figures.TABLES[name] = (columns, [row[:-1] + [round(by_name[row[1]], 1) if by_name.get(row[1]) is not None
                                                  else None, row[-1]] for row in t])
    fig.suptitle(title, fontsize=10)
    notes.append(RATIO_NOTE)
    notes.append("SHARP is modelled as collective_algorithm \"in-network\": the switch reduces the reduce-scatters and "
                 "multicasts the all-gathers, but they are still launched as GPU kernels (docs/baselines.md).")
    return _finish(fig, notes, out_dir, name)


# ---------------------------------------------------------------------------------------------
# 12. LuWu at 100 Gb/s vs ZeRO-Offload on one 8 x A100 NVLink server (OPT-13B)

NVLINK_GROUP_TITLES = {
    "luwu-opt13b-8w": "8 workers (A100 PCIe), 100 Gb/s:\nthe paper's testbed",
    "zero-offload-nvlink-opt13b": "one 8 x A100-SXM server,\nNVLink 600 GB/s",
}


def nvlink_zero_offload(lines, out_dir, name="nvlink_zero_offload", missing=None):
    """LuWu on the 100 Gb/s testbed against ZeRO-Offload on one 8-GPU NVLink server
    (scenarios/paper/luwu-opt13b-8w.json and zero-offload-nvlink-opt13b.json), each scenario a
    group of stacked bars; LuWu's speedup over every other bar, across the groups."""
    title = "LuWu at 100 Gb/s vs ZeRO-Offload on one NVLink server"
    table, notes = _table(lines)
    notes = list(missing or []) + notes
    if not table:
        return _no_data(out_dir, name, title, notes)
    scenarios = []
    for r in table:
        if r["scenario_name"] not in scenarios:
            scenarios.append(r["scenario_name"])
    # The scenario with LuWu first.
    scenarios.sort(key=lambda n: 0 if any(r["system"] == REFERENCE for r in table if r["scenario_name"] == n) else 1)
    reference = next((r for r in table if r["system"] == REFERENCE and r["feasible"]), None)
    groups = []
    for n in scenarios:
        sub = [r for r in table if r["scenario_name"] == n]
        systems = sorted({r["system"] for r in sub}, key=style.system_sort_key)
        groups.append((NVLINK_GROUP_TITLES.get(n, n), [(s, _pick(sub, system=s)) for s in systems]))
    fig, ax = plt.subplots(figsize=(8.6, 4.6))
    names = {"zero-offload-dpu": "ZeRO-\nOffload\n+ DPU"}
    t = _breakdown_panel(ax, groups, tick_names=names, reference=reference)
    figures.TABLES[name] = (BREAKDOWN_COLUMNS, t)
    _legend_right(ax)
    r0 = table[0]
    ax.set_title(f"{title}\n({r0['model']}, micro-batch {r0['micro_batch']}, {_common_text(table, 'workers')} GPUs)",
                 fontsize=9)
    notes.append(RATIO_NOTE + " Across the groups: LuWu on the testbed is the reference of every bar.")
    notes.append("DPU: ZeRO-Offload's delayed parameter update (the CPU's optimizer step overlaps the next iteration, "
                 "one step stale).")
    infeasible = [r for r in table if not r["feasible"]]
    for r in infeasible:
        notes.append(f"{style.system_name(r['system'])} ({r['scenario_name']}): {_reason(r)}")
    return _finish(fig, notes, out_dir, name)


# ---------------------------------------------------------------------------------------------
# 13. Cost efficiency at 32 GPUs: tokens/s per $1,000

COST_TICKS = {"zero-infinity-commodity": "ZeRO-Infinity\n(commodity\nservers)",
              "zero-infinity-dgx-a100": "ZeRO-Infinity\n(DGX A100\nservers)"}
COST_CLUSTERS = {
    "luwu": "4 x 8 A100 PCIe (32 single-GPU\nworkers), SmartNICs, Tofino,\noptimizer node",
    "zero-infinity-commodity": "4 servers x 8 A100 PCIe,\nConnectX NICs, SN2700",
    "zero-infinity-dgx-a100": "4 DGX A100, SN2700",
}


def cost_efficiency_32gpu(lines, out_dir, name="cost_efficiency_32gpu", missing=None):
    """Throughput, the cluster's price and throughput per dollar (tokens/s per $1,000) of each
    system's 32-GPU cluster (scenarios/paper/cost-32gpu-*.json, priced by the paper's table);
    LuWu's advantage in throughput per dollar over each written in bold."""
    table, notes = _table(lines)
    title = f"Cost efficiency on {_common_text(table, 'workers')} GPUs: training throughput per dollar"
    notes = list(missing or []) + notes
    bars = []
    for r in sorted(table, key=lambda r: style.system_sort_key(r["system"])):
        cost = r.get("cost") or {}
        if not r["feasible"]:
            notes.append(f"{style.system_name(r['system'])} ({r['scenario_name']}): {_reason(r)}")
            continue
        if cost.get("usd") is None:
            why = ", ".join(cost.get("unpriced", [])) or "no price list"
            notes.append(f"{style.system_name(r['system'])}: cost unknown (unpriced: {why})")
            continue
        bars.append(r)
    if not bars:
        return _no_data(out_dir, name, title, notes)
    ref = next((r for r in bars if r["system"] == REFERENCE), None)
    fig, axes = plt.subplots(1, 3, figsize=(11.0, 4.4))
    panels = [
        ("Training throughput (tokens/s)", lambda r: r["tokens_per_s"], lambda v: f"{v:,.0f}"),
        ("Cluster price (thousand US$)", lambda r: r["cost"]["usd"] / 1e3, lambda v: f"${v:,.1f}k"),
        ("Throughput per dollar (tokens/s per $1,000)", lambda r: r["cost"]["tokens_per_s_per_1000_usd"],
         lambda v: f"{v:.2f}"),
    ]
    for k, (ax, (label, value, fmt)) in enumerate(zip(axes, panels)):
        values = [value(r) for r in bars]
        top = max(values) if values else 1
        for i, (r, v) in enumerate(zip(bars, values)):
            ax.bar(i, v, 0.65, color=style.system_color(r["system"]), hatch=style.system_hatch(r["system"]),
                   edgecolor="white")
            text = fmt(v) + (f"\n({_time_text(r['iteration_time_s'])} / iteration)" if k == 0 else "")
            ax.text(i, v + 0.01 * top, text, ha="center", va="bottom", fontsize=7 if k == 0 else 7.5)
            if k == 2 and ref is not None and r is not ref and v > 0:
                ax.text(i, v + 0.08 * top, f"{value(ref) / v:.2f}x", ha="center", va="bottom", fontsize=9.5,
                        fontweight="bold", color=style.system_color(REFERENCE))
        ax.set_ylim(0, top * 1.25)
        ax.set_ylabel(label, fontsize=8.5)
        ax.set_xticks(range(len(bars)))
        ax.set_xticklabels([COST_TICKS.get(r["system"], _short_name(r["system"])) for r in bars], fontsize=7.5)
        for tick, r in zip(ax.get_xticklabels(), bars):
            tick.set_color(style.system_color(r["system"]))
            tick.set_fontweight("bold")
        ax.grid(axis="y", alpha=0.3)
    r0 = bars[0]
    fig.suptitle(f"{title}\n({r0['model']}, micro-batch {r0['micro_batch']}, "
                 f"{_common_text(bars, 'network')}; priced by the LuWu paper's cost table)", fontsize=9.5)
    figures.TABLES[name] = (
        ["system", "cluster", "GPUs", "iteration (s)", "tokens/s", "price (US$)", "tokens/s per $1,000",
         "LuWu's advantage (x)", "parts priced"],
        [[style.system_name(r["system"]), COST_CLUSTERS.get(r["system"], r["scenario_name"]).replace("\n", " "),
          r["workers"], round(r["iteration_time_s"], 3), round(r["tokens_per_s"], 1), round(r["cost"]["usd"]),
          round(r["cost"]["tokens_per_s_per_1000_usd"], 3),
          round(ref["cost"]["tokens_per_s_per_1000_usd"] / r["cost"]["tokens_per_s_per_1000_usd"], 3)
          if ref is not None and r is not ref else None,
          ", ".join(f"{n} x {p}" for p, n in sorted((r["cost"].get("parts") or {}).items()))] for r in bars])
    notes.append("Bold Nx over a bar: LuWu's throughput per dollar over that system's.")
    for r in bars:
        if r["system"] in COST_CLUSTERS:
            notes.append(f"{style.system_name(r['system'])}: {COST_CLUSTERS[r['system']].replace(chr(10), ' ')}")
    return _finish(fig, notes, out_dir, name)


# ---------------------------------------------------------------------------------------------
# 14. Scale-out: tensor 8 x pipeline 16 x data parallelism, LuWu vs ZeRO-Infinity (ring, PAT)
# ---------------------------------------------------------------------------------------------

def _data_parallel(row):
    """The row's data-parallel degree: its GPUs over the tensor x pipeline grid of its scenario."""
    layout = row["input"].get("parallelism", {})
    grid = layout.get("tensor", 1) * layout.get("pipeline", 1)
    return row["workers"] // grid if row["workers"] else None


def scale_out(lines, out_dir, name="scale_out", missing=None):
    """The paper's scale-out experiment (scenarios/paper/scale-out/): throughput and iteration time
    against data parallelism at tensor 8 x pipeline 16, one line per system."""
    title = "Scale-out: tensor x pipeline x data parallelism"
    table, notes = _table(lines)
    notes = list(missing or []) + notes
    if not table:
        return _no_data(out_dir, name, title, notes)
    layout = table[0]["input"].get("parallelism", {})
    tensor, pipeline = layout.get("tensor", 1), layout.get("pipeline", 1)
    title = f"Scale-out: tensor {tensor} x pipeline {pipeline} x data parallelism"
    fig, (ax, ax_time) = plt.subplots(1, 2, figsize=(10, 4))
    degrees = sorted({_data_parallel(r) for r in table if _data_parallel(r)})
    systems = sorted({r["system"] for r in table}, key=style.system_sort_key)
    rows_out = []
    for system in systems:
        points = sorted((_data_parallel(r), r) for r in table if r["system"] == system and r["feasible"])
        for r in table:
            if r["system"] == system and not r["feasible"]:
                notes.append(f"{style.system_name(system)} at data parallelism {_data_parallel(r)}: "
                             f"{r.get('reason') or 'does not run'}")
        if not points:
            continue
        kw = dict(color=style.system_color(system), marker=style.system_marker(system), label=style.system_name(system))
        if "pat" in system:  # the same system's colour as its ring variant: told apart by the line
            kw.update(linestyle="--", marker="^")
        ax.plot([d for d, _ in points], [r["tokens_per_s"] for _, r in points], **kw)
        ax_time.plot([d for d, _ in points], [r["iteration_time_s"] for _, r in points], **kw)
        rows_out += [[style.system_name(system), d, r["workers"], round(r["iteration_time_s"], 3),
                      round(r["tokens_per_s"], 1), round(100 * r["mfu"], 2)] for d, r in points]
    for a in (ax, ax_time):
        a.set_xscale("log", base=2)
        a.set_xticks(degrees)
        a.set_xticklabels([str(d) for d in degrees])
        a.set_xlabel(f"Data parallelism (x {tensor * pipeline} GPUs)")
        a.grid(alpha=0.3)
    ax.set_ylabel("Training throughput (tokens/s)")
    ax_time.set_ylabel("Iteration time (s)")
    r0 = table[0]
    ax.set_title(f"Throughput ({r0['model']}, micro-batch {r0['micro_batch']}, {_common_text(table, 'network')})",
                 fontsize=9)
    ax_time.set_title("Iteration time", fontsize=9)
    ax.legend(fontsize=8)
    figures.TABLES[name] = (["system", "data parallelism", "GPUs", "iteration (s)", "tokens/s", "MFU (%)"], rows_out)
    notes.append("Each data-parallel group simulated by 2 of its ranks (simulation.fold_data_parallel; "
                 "docs/performance.md, Folding).")
    if not any(r["system"].startswith("luwu") and _data_parallel(r) and _data_parallel(r) > 16 for r in table):
        notes.append("No LuWu results past data parallelism 16 (those points need the third level of switches, "
                     "luwu-star's pods).")
    fig.suptitle(title)
    return _finish(fig, notes, out_dir, name)
