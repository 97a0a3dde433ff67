"""The LuWu paper's comparison figures, in kind, drawn from `luwusim sweep` results.

Each figure function takes result lines (sweep_results.read_lines) or a timeline, draws into
`out_dir` as PNG and PDF, and returns the paths written.  A system missing from the results (not
simulated yet, or failed) is left out of the figure and named in a note under it.
"""
import json
import math
import os

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator  # noqa: E402

import style  # noqa: E402
from sweep_results import requested_systems, rows  # noqa: E402


# The table behind each figure drawn, {figure name: (column names, rows)}, for the HTML report
# (make_figures.py --report).  Figures that record none get the rows of their sweep.
TABLES = {}


def _save(fig, out_dir, name):
    paths = []
    for ext in ("png", "pdf"):
        path = os.path.join(out_dir, f"{name}.{ext}")
        # PDF: no creation date, so the same results give the same file.
        metadata = {"CreationDate": None} if ext == "pdf" else {"Software": None}
        fig.savefig(path, dpi=150, metadata=metadata)
        paths.append(path)
    plt.close(fig)
    return paths


def _notes_text(notes):
    return "\n".join("Note: " + n for n in notes)


def note_font_pt(fig):
    """The notes' size under a figure: 7.5 pt, or more where the figure is wider than the page."""
    return max(7.5, style.font_floor_pt(fig))


def notes_height(fig, n_lines):
    """The share of the figure's height that n_lines of notes take (1.4 line spacing)."""
    return n_lines * note_font_pt(fig) * 1.4 / 72 / fig.get_figheight()


def _finish(fig, notes, out_dir, name):
    """Lays the figure out, fonts readable at page width, with its notes under it, and saves it."""
    style.raise_small_fonts(fig)
    text = _notes_text(notes)
    n_lines = text.count("\n") + 1 if text else 0
    bottom = 0.02 + notes_height(fig, n_lines)
    fig.tight_layout(rect=(0, bottom, 1, 1))
    if text:
        fig.text(0.01, 0.01, text, fontsize=note_font_pt(fig), va="bottom", ha="left", color="#444444", wrap=True)
    return _save(fig, out_dir, name)


def _missing_notes(lines, present_systems):
    """Why each requested system is absent: its error, once per system."""
    notes = []
    errors = {}
    for r in rows(lines):
        if r["system"] is None:
            notes.append(f"point {r['index']} failed: {r['error']}")
        elif r.get("error") and r["system"] not in errors:
            errors[r["system"]] = r["error"]
    for system in sorted(set(requested_systems(lines)) | set(errors), key=style.system_sort_key):
        if system in present_systems:
            continue
        why = errors.get(system, "no result")
        notes.append(f"{style.system_name(system)} absent: {why}")
    return notes


def _no_data(out_dir, name, title, notes):
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    ax.set_axis_off()
    ax.set_title(title)
    ax.text(0.5, 0.5, "no results to plot", ha="center", va="center", transform=ax.transAxes, fontsize=12)
    return _finish(fig, notes or ["no result lines: run the figure's sweep first (plots/make_figures.py without --skip-runs)"],
                   out_dir, name)


def missing_results(out_dir, name, sweep, results_file, command, files=1):
    """The panel of a figure whose results file (or `files` of them) does not exist: which sweep is
    missing and the command that runs it."""
    title = name.replace("_", " ")
    what = f"{results_file} {'is' if files == 1 else 'are'} missing"
    return _no_data(out_dir, name, title, [f"no results from the {sweep} sweep{'' if files == 1 else 's'} ({what})",
                                           f"run: {command}"])


def _systems(table):
    return sorted({r["system"] for r in table}, key=style.system_sort_key)


def _models_by_size(table):
    sizes = {}
    for r in table:
        if r["model"] is not None:
            sizes[r["model"]] = r["params"] or 0
    return sorted(sizes, key=lambda m: (sizes[m], m)), sizes


def _common(table, key, fmt=str):
    values = sorted({fmt(r[key]) for r in table if r.get(key) is not None})
    return ", ".join(values) if values else "?"


def _count_text(value, _position=None):
    """Axis labels for counts: 20k, 1.5M."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def _log_count_axis(axis):
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(_count_text))
    axis.set_minor_formatter(FuncFormatter(lambda v, p: ""))


def _network_text(value):
    return value if isinstance(value, str) else f"{value * 8 / 1e9:g} Gb/s"


def _params_text(params):
    return f"{params / 1e9:.3g}B" if params >= 1e9 else f"{params / 1e6:.3g}M"


def _simulated_rows(lines):
    """The rows of systems that were simulated (feasible or not), and notes naming the ones
    absent from the results."""
    table = [r for r in rows(lines) if r["system"] is not None and not r.get("error")]
    return table, _missing_notes(lines, {r["system"] for r in table})


def throughput_vs_model_size(lines, out_dir, name="throughput_vs_model_size"):
    """Tokens/s of each system for each model on a log scale, as markers (a bar's length means
    nothing on a log axis), each system's points joined in model-size order; a variant of a system
    has its marker hollow and its own line style; "OOM" where a system's state does not fit in GPU
    memory."""
    title = "End-to-end training throughput vs model size"
    table, notes = _simulated_rows(lines)
    if not table:
        return _no_data(out_dir, name, title, notes)
    models, sizes = _models_by_size(table)
    systems = _systems(table)
    fig, ax = plt.subplots(figsize=(max(6.4, 1.3 * len(models) + 2), 4.2))
    width = 0.8 / len(systems)
    positive = [r["tokens_per_s"] for r in table if r["feasible"] and r["tokens_per_s"]]
    floor = min(positive) / 3 if positive else 1
    for k, system in enumerate(systems):
        xs, ys, oom = [], [], []
        for i, model in enumerate(models):
            match = [r for r in table if r["system"] == system and r["model"] == model]
            if not match:
                continue
            x = i - 0.4 + width * (k + 0.5)
            if match[0]["feasible"]:
                xs.append(x)
                ys.append(match[0]["tokens_per_s"])
            else:
                oom.append(x)
        # Systems drawn in one colour (a system's variants) apart: the first filled and solid, the
        # others hollow, each with its own dashes.
        shade = [t for t in systems[:k] if style.system_color(t) == style.system_color(system)]
        dashes = ["-", "--", ":", "-."][len(shade) % 4]
        ax.plot(xs, ys, color=style.system_color(system), label=style.system_name(system),
                marker=style.system_marker(system), markersize=7, linewidth=1.2, linestyle=dashes,
                markerfacecolor="white" if shade else style.system_color(system))
        for x in oom:
            ax.text(x, floor * 1.1, "OOM", rotation=90, ha="center", va="bottom", fontsize=7,
                    color=style.system_color(system))
    ax.set_yscale("log")
    # Headroom above the tallest bar for the legend.
    ax.set_ylim(bottom=floor, top=max(positive) * 6 if positive else None)
    _log_count_axis(ax.yaxis)
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels([f"{m}\n({_params_text(sizes[m])} params)" for m in models], fontsize=8)
    ax.set_xlabel("Model")
    ax.set_ylabel("Training throughput (tokens/s, log scale)")
    ax.set_title(f"{title}\n{_common(table, 'workers')} workers, "
                 f"{_common(table, 'network', _network_text)} network", fontsize=10)
    ax.grid(axis="y", which="both", alpha=0.3)
    long_names = max(len(style.system_name(s)) for s in systems) > 24
    ax.legend(fontsize=8 if not long_names else 7, ncol=min(2 if long_names else 3, len(systems)))
    if any(not r["feasible"] for r in table):
        notes.append("OOM: the system's per-GPU state does not fit in GPU memory (not simulated).")
    return _finish(fig, notes, out_dir, name)


def scalability(lines, out_dir, name="scalability"):
    """Throughput and per-GPU scaling efficiency against the worker count."""
    title = "Scalability with the number of workers"
    table, notes = _simulated_rows(lines)
    if not table:
        return _no_data(out_dir, name, title, notes)
    fig, (ax, ax_eff) = plt.subplots(1, 2, figsize=(10, 4))
    workers_all = sorted({r["workers"] for r in table})
    for system in _systems(table):
        points = sorted((r["workers"], r["tokens_per_s"]) for r in table if r["system"] == system and r["feasible"])
        if not points:
            notes.append(f"{style.system_name(system)}: does not fit in GPU memory at any worker count")
            continue
        xs, ys = zip(*points)
        kw = dict(color=style.system_color(system), marker=style.system_marker(system), label=style.system_name(system))
        ax.plot(xs, ys, **kw)
        base_n, base_t = points[0]
        ax_eff.plot(xs, [100 * (t / n) / (base_t / base_n) for n, t in points], **kw)
    for a in (ax, ax_eff):
        a.set_xscale("log", base=2)
        a.set_xticks(workers_all)
        a.set_xticklabels([str(w) for w in workers_all])
        a.set_xlabel("Workers (GPUs)")
        a.grid(alpha=0.3)
    ax.set_ylabel("Training throughput (tokens/s)")
    ax.set_title(f"Throughput ({_common(table, 'model')}, {_common(table, 'network', _network_text)})", fontsize=10)
    ax_eff.set_ylabel("Per-GPU throughput vs fewest workers (%)")
    ax_eff.set_title("Scaling efficiency", fontsize=10)
    ax.legend(fontsize=8)
    fig.suptitle(title)
    return _finish(fig, notes, out_dir, name)


def _stacked_breakdown(ax, labels, breakdowns, colors_edge=None, positions=None, width=0.65):
    """Stacked bars of the breakdown parts, one per label, at `positions` (default 0, 1, ...).
    Returns the bar tops."""
    xs = list(positions) if positions is not None else list(range(len(labels)))
    bottoms = [0.0] * len(labels)
    for part, part_label, color in style.BREAKDOWN_PARTS:
        values = [b.get(part, 0.0) if b else 0.0 for b in breakdowns]
        # The hatch is drawn in the edge colour; a zero line width keeps the outline off.
        ax.bar(xs, values, width, bottom=bottoms, color=color, label=part_label,
               hatch=style.BREAKDOWN_HATCHES.get(part, ""), edgecolor=colors_edge or "#FFFFFF",
               linewidth=1.2 if colors_edge else 0)
        bottoms = [x + y for x, y in zip(bottoms, values)]
    return bottoms


def breakdown_legend_handles():
    return [Patch(facecolor=color, hatch=style.BREAKDOWN_HATCHES.get(part, ""), edgecolor="#FFFFFF", label=label)
            for part, label, color in style.BREAKDOWN_PARTS]


def iteration_breakdown(lines, out_dir, name="iteration_breakdown", panels_per_row=3):
    """Per model, a stacked bar per system: where one iteration's time goes."""
    title = "Per-iteration time breakdown"
    table, notes = _simulated_rows(lines)
    if not table:
        return _no_data(out_dir, name, title, notes)
    models, sizes = _models_by_size(table)
    systems = _systems(table)
    n_rows = math.ceil(len(models) / panels_per_row)
    n_cols = min(panels_per_row, len(models))
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(1.2 + (0.45 * len(systems) + 0.8) * n_cols, 0.6 + 3.4 * n_rows),
                             squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[len(models):]:
        ax.set_axis_off()
    for ax, model in zip(flat, models):
        labels, breakdowns = [], []
        for system in systems:
            match = [r for r in table if r["system"] == system and r["model"] == model]
            if match:
                labels.append(system)
                breakdowns.append(match[0]["breakdown_s"] if match[0]["feasible"] else None)
        tops = _stacked_breakdown(ax, labels, breakdowns)
        ax.set_ylim(0, 1.08 * max(tops) if tops and max(tops) > 0 else 1)
        for i, b in enumerate(breakdowns):
            if b is None:
                ax.text(i, 0.03, "does not fit", rotation=90, ha="center", va="bottom", fontsize=7,
                        transform=ax.get_xaxis_transform())
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels([style.system_name(s) for s in labels], rotation=35, ha="right", fontsize=8)
        for tick, s in zip(ax.get_xticklabels(), labels):
            tick.set_color(style.system_color(s))
        ax.set_title(f"{model} ({_params_text(sizes[model])})", fontsize=9)
        ax.set_ylabel("Time per iteration (s)", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    handles = breakdown_legend_handles()
    fig.legend(handles=handles, loc="upper right", fontsize=7.5, ncol=3)
    fig.suptitle(f"{title}\n({_common(table, 'workers')} workers, {_common(table, 'network', _network_text)})",
                 x=0.01, ha="left", fontsize=10)
    style.raise_small_fonts(fig)
    text = _notes_text(notes)
    bottom = 0.02 + notes_height(fig, text.count("\n") + 1) if text else 0
    fig.tight_layout(rect=(0, bottom, 1, 1 - 0.12 / n_rows))
    if text:
        fig.text(0.01, 0.01, text, fontsize=note_font_pt(fig), va="bottom", ha="left", color="#444444")
    return _save(fig, out_dir, name)


def switchml_breakdown(lines, out_dir, name="switchml_breakdown"):
    """SwitchML's iteration, per model: compute against exposed communication (in-network
    aggregation), with the communication share on top of each bar."""
    title = "SwitchML iteration breakdown"
    table = [r for r in rows(lines) if r["system"] is not None and style.kind_of(r["system"]) == "switchml"]
    simulated = [r for r in table if not r.get("error")]
    notes = []
    if not simulated:
        why = next((r["error"] for r in table if r.get("error")), "no SwitchML result in the sweep")
        return _no_data(out_dir, name, title, [f"SwitchML absent: {why}"])
    models, sizes = _models_by_size(simulated)
    fig, ax = plt.subplots(figsize=(max(5.5, 1.2 * len(models) + 2), 4))
    breakdowns = []
    for model in models:
        r = next(r for r in simulated if r["model"] == model)
        breakdowns.append(r["breakdown_s"] if r["feasible"] else None)
        if not r["feasible"]:
            notes.append(f"{model}: {r.get('reason') or 'does not fit in GPU memory'}")
    tops = _stacked_breakdown(ax, models, breakdowns)
    for i, b in enumerate(breakdowns):
        if b is None:
            ax.text(i, 0.03, "does not fit", rotation=90, ha="center", va="bottom", fontsize=7,
                    transform=ax.get_xaxis_transform())
            continue
        total = sum(b.values())
        if total > 0:
            ax.text(i, tops[i], f"{100 * b.get('exposed_communication', 0) / total:.0f}% comm.", ha="center",
                    va="bottom", fontsize=7)
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels([f"{m}\n({_params_text(sizes[m])})" for m in models], fontsize=8)
    ax.set_ylabel("Time per iteration (s)")
    ax.set_xlabel("Model")
    ax.set_title(f"{title} ({_common(simulated, 'workers')} workers, "
                 f"{_common(simulated, 'network', _network_text)})", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(handles=breakdown_legend_handles(), fontsize=7.5)
    return _finish(fig, notes, out_dir, name)


def network_bandwidth(lines, out_dir, name="network_100_vs_200"):
    """Per model, each system's throughput at each network rate, with the speedup of the fastest
    rate over the slowest."""
    title = "Network bandwidth: 100 vs 200 Gb/s"
    table, notes = _simulated_rows(lines)
    if not table:
        return _no_data(out_dir, name, title, notes)
    models, sizes = _models_by_size(table)
    systems = _systems(table)

    def rate_key(value):
        try:
            return float(str(value).split("G")[0]) if isinstance(value, str) else value * 8 / 1e9
        except ValueError:
            return math.inf

    rates = sorted({r["network"] for r in table if r["network"] is not None}, key=rate_key)
    hatches = ["", "//", "..", "xx"]
    fig, axes = plt.subplots(1, len(models), figsize=(max(6.4, 1.2 + 0.9 * len(systems) * len(models)), 4.2),
                             squeeze=False)
    for ax, model in zip(axes[0], models):
        width = 0.8 / max(1, len(rates))
        for i, system in enumerate(systems):
            values = {}
            for k, rate in enumerate(rates):
                match = [r for r in table if r["system"] == system and r["model"] == model and r["network"] == rate]
                if match and match[0]["feasible"]:
                    values[rate] = match[0]["tokens_per_s"]
                    ax.bar(i - 0.4 + width * (k + 0.5), values[rate], width, color=style.system_color(system),
                           hatch=hatches[k % len(hatches)], edgecolor="white")
            if len(values) >= 2 and values.get(rates[0]):
                ax.text(i, max(values.values()), f"{values[rates[-1]] / values[rates[0]]:.2f}x", ha="center",
                        va="bottom", fontsize=7)
            elif not values:
                ax.text(i, 0.03, "does not fit", rotation=90, ha="center", va="bottom", fontsize=7,
                        transform=ax.get_xaxis_transform())
        ax.set_xlim(-0.6, len(systems) - 0.4)
        ax.set_xticks(range(len(systems)))
        ax.set_xticklabels([style.system_name(s) for s in systems], rotation=35, ha="right", fontsize=8)
        for tick, s in zip(ax.get_xticklabels(), systems):
            tick.set_color(style.system_color(s))
        ax.set_title(f"{model} ({_params_text(sizes[model])})", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.margins(y=0.12)
    axes[0][0].set_ylabel("Training throughput (tokens/s)")
    legend = [Patch(facecolor="#999999", hatch=hatches[k % len(hatches)], edgecolor="white",
                    label=_network_text(rate)) for k, rate in enumerate(rates)]
    axes[0][-1].legend(handles=legend, fontsize=8, title="Network", title_fontsize=8)
    fig.suptitle(f"{title} ({_common(table, 'workers')} workers; label: speedup of "
                 f"{_network_text(rates[-1])} over {_network_text(rates[0])})", fontsize=10)
    return _finish(fig, notes, out_dir, name)


def _timeline_rows(trace, component="gpu0"):
    """{system: {track: [(start_ms, duration_ms, category)]}} for one component of each system."""
    process, thread = {}, {}
    for e in trace.get("traceEvents", []):
        if e.get("ph") == "M" and e.get("name") == "process_name":
            process[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            thread[(e["pid"], e["tid"])] = e["args"]["name"]
    out = {}
    for e in trace.get("traceEvents", []):
        if e.get("ph") != "X":
            continue
        proc = process.get(e["pid"], "")
        system, _, comp = proc.rpartition("/")
        if comp != component:
            continue
        track = thread.get((e["pid"], e["tid"]), str(e["tid"]))
        out.setdefault(system or "?", {}).setdefault(track, []).append(
            (e["ts"] / 1e3, e["dur"] / 1e3, e.get("cat", "")))
    return out


def compute_communication_streams(timeline_files, out_dir, name="compute_communication_streams", notes=None):
    """One iteration of rank 0 under each system: the compute stream and each communication or
    I/O stream as bars over time, so overlap (and interference) shows."""
    title = "Compute and communication streams of one GPU (rank 0) over one iteration"
    notes = list(notes or [])
    per_system = {}
    for path in timeline_files:
        with open(path, "r", encoding="utf-8") as f:
            per_system.update(_timeline_rows(json.load(f)))
    if not per_system:
        return _no_data(out_dir, name, title, notes or ["no timeline"])
    systems = sorted(per_system, key=style.system_sort_key)
    labels, y = [], 0
    fig_height = 1.2 + 0.32 * sum(len(per_system[s]) for s in systems)
    fig, ax = plt.subplots(figsize=(10, max(3, fig_height)))
    yticks = []
    for system in systems:
        tracks = sorted(per_system[system], key=lambda t: (t != "compute", t))
        for track in tracks:
            spans = per_system[system][track]
            by_category = {}
            for start, dur, cat in spans:
                by_category.setdefault(cat, []).append((start, dur))
            for cat, bars in sorted(by_category.items()):
                ax.broken_barh(bars, (y - 0.4, 0.8), facecolors=style.CATEGORY_COLORS.get(cat, "#999999"),
                               edgecolor="none")
            labels.append(f"{style.system_name(system)}: {track}")
            yticks.append(y)
            y -= 1
        y -= 0.6  # a gap between systems
    ax.set_yticks(yticks)
    ax.set_yticklabels(labels, fontsize=7.5)
    for tick, text in zip(ax.get_yticklabels(), labels):
        system = next(s for s in systems if text.startswith(style.system_name(s) + ":"))
        tick.set_color(style.system_color(system))
    ax.set_xlabel("Time since the iteration started (ms)")
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(handles=[Patch(color=c, label=k) for k, c in style.CATEGORY_COLORS.items()], fontsize=7.5,
              loc="lower right", ncol=len(style.CATEGORY_COLORS))
    return _finish(fig, notes, out_dir, name)


def oversubscription_knee(lines, out_dir, name="oversubscription_knee"):
    """Iteration time against leaf oversubscription on a fat-tree, ECMP and single-path routing,
    each DDP variant (scenarios/sweeps/fat-tree-oversubscription.json; docs/routing.md gives the
    knee in closed form)."""
    title = "Fat-tree oversubscription: where the uplinks start to bind"
    table, notes = _simulated_rows(lines)
    table = [r for r in table if r["feasible"]]
    if not table:
        return _no_data(out_dir, name, title, notes)
    fig, ax = plt.subplots(figsize=(7.2, 4))
    over_all = sorted({r["point"].get("cluster.oversubscription") for r in table if r["point"].get("cluster.oversubscription")})
    routes = sorted({r["point"].get("simulation.routing", "ecmp") for r in table})
    markers = ["o", "s", "^", "D"]
    for i, system in enumerate(_systems(table)):
        for route in routes:
            points = sorted((r["point"].get("cluster.oversubscription"), r["iteration_time_s"] * 1e3) for r in table
                            if r["system"] == system and r["point"].get("simulation.routing", "ecmp") == route
                            and r["point"].get("cluster.oversubscription"))
            if not points:
                continue
            xs, ys = zip(*points)
            ax.plot(xs, ys, color=style.system_color(system), marker=markers[i % len(markers)],
                    linestyle="-" if route == "ecmp" else "--", label=f"{system} ({route})")
    ax.set_xscale("log", base=2)
    ax.set_xticks(over_all)
    ax.set_xticklabels([f"{o:g}:1" for o in over_all])
    ax.set_xlabel("Leaf oversubscription (down : up)")
    ax.set_ylabel("Iteration time (ms)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.set_title(f"{_common(table, 'model')}, {_common(table, 'workers')} GPUs, "
                 f"{_common(table, 'network', _network_text)}; solid: ECMP, dashed: single-path", fontsize=9)
    ax.legend(fontsize=8)
    notes.append("docs/routing.md: the uplinks saturate at 4:1 with balanced routing; ECMP's hash collisions "
                 "put 3 ring flows on the busiest uplink before the knee")
    fig.suptitle(title)
    return _finish(fig, notes, out_dir, name)


def _routing_label(simulation):
    """"ECMP", "ECMP, k=2 sub-flows", "spraying", "single-path" from a point's simulation settings."""
    simulation = simulation if isinstance(simulation, dict) else {"routing": simulation or "ecmp"}
    routing = simulation.get("routing", "ecmp")
    k = simulation.get("flow_splitting", 1)
    if routing == "spray":
        return "spraying"
    if routing == "ecmp":
        return "ECMP" if k == 1 else f"ECMP, {k} sub-flows"
    return routing


def packet_spraying(lines, out_dir, name="packet_spraying"):
    """Iteration time under each routing (ECMP, ECMP with flow splitting k = 2, 4, spraying), one
    line per DDP variant and leaf oversubscription (scenarios/sweeps/fat-tree-spraying.json;
    docs/routing.md gives the balanced closed form that spraying meets)."""
    title = "Packet spraying against ECMP with flow splitting"
    table, notes = _simulated_rows(lines)
    table = [r for r in table if r["feasible"]]
    if not table:
        return _no_data(out_dir, name, title, notes)

    def routing_of(r):
        return _routing_label(r["point"].get("simulation", r["point"].get("simulation.routing", "ecmp")))

    order = ["single-path", "ECMP"] + [f"ECMP, {k} sub-flows" for k in (2, 4, 8, 16)] + ["spraying"]
    labels = sorted({routing_of(r) for r in table}, key=lambda x: (order.index(x) if x in order else len(order), x))
    overs = sorted({r["point"].get("cluster.oversubscription", 1) for r in table})
    fig, ax = plt.subplots(figsize=(7.2, 4))
    markers = ["o", "s", "^", "D"]
    for i, system in enumerate(_systems(table)):
        for j, over in enumerate(overs):
            ys = []
            for label in labels:
                match = [r["iteration_time_s"] * 1e3 for r in table if r["system"] == system and routing_of(r) == label
                         and r["point"].get("cluster.oversubscription", 1) == over]
                ys.append(match[0] if match else float("nan"))
            ax.plot(range(len(labels)), ys, color=style.system_color(system), marker=markers[i % len(markers)],
                    linestyle=["-", "--", ":", "-."][j % 4], label=f"{system}, {over:g}:1")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_xlabel("Routing")
    ax.set_ylabel("Iteration time (ms)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.set_title(f"{_common(table, 'model')}, {_common(table, 'workers')} GPUs, "
                 f"{_common(table, 'network', _network_text)}, leaf-spine; line style: oversubscription", fontsize=9)
    ax.legend(fontsize=8)
    notes.append("docs/routing.md: spraying balances every uplink (spine imbalance 1), the closed form with "
                 "L = max(1, G / U) ring flows per uplink")
    fig.suptitle(title)
    return _finish(fig, notes, out_dir, name)


def _rate_bps(text):
    """"10Gb/s" -> 1e10 (bits per second); numbers are bytes per second."""
    if isinstance(text, (int, float)):
        return text * 8
    units = {"Tb/s": 1e12, "Gb/s": 1e9, "Mb/s": 1e6, "kb/s": 1e3, "b/s": 1}
    for unit, scale in units.items():
        if str(text).endswith(unit):
            return float(str(text)[:-len(unit)]) * scale
    return float("nan")


def streaming_diloco_wan(lines, out_dir, name="streaming_diloco_wan"):
    """Left: time per step against the WAN bandwidth of each group, Streaming DiLoCo (a step that
    carries a fragment) and DDP across the groups.  Right: the WAN bandwidth Streaming DiLoCo's
    schedule uses (peak: a fragment-carrying step; average over H steps) against data
    parallelism's and DiLoCo's peaks (scenarios/sweeps/streaming-diloco-wan.json; docs/baselines.md)."""
    title = "Streaming DiLoCo across a wide-area network"
    table, notes = _simulated_rows(lines)
    table = [r for r in table if r["feasible"]]
    if not table:
        return _no_data(out_dir, name, title, notes)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for system in _systems(table):
        points = sorted((_rate_bps(r["point"].get("cluster.wan_bandwidth")) / 1e9, r["iteration_time_s"]) for r in table
                        if r["system"] == system and r["point"].get("cluster.wan_bandwidth") is not None)
        if points:
            xs, ys = zip(*points)
            left.plot(xs, ys, color=style.system_color(system), marker="o", label=system)
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("WAN bandwidth per group (Gb/s)")
    left.set_ylabel("Time per step (s)")
    left.grid(alpha=0.3)
    left.legend(fontsize=8)
    diloco = sorted(((_rate_bps(r["point"].get("cluster.wan_bandwidth")) / 1e9, r["details"]) for r in table
                     if r.get("details") and r["point"].get("cluster.wan_bandwidth") is not None), key=lambda p: p[0])
    if diloco:
        xs = [x for x, _ in diloco]
        for key, label, style_ in (("peak_wan_Bps", "Streaming DiLoCo, peak", "-"),
                                   ("average_wan_Bps", "Streaming DiLoCo, average", "--"),
                                   ("data_parallel_peak_wan_Bps", "data parallelism, peak", ":"),
                                   ("diloco_peak_wan_Bps", "DiLoCo, peak", "-.")):
            right.plot(xs, [d[key] * 8 / 1e9 for _, d in diloco], linestyle=style_, marker="o", label=label)
        right.plot(xs, xs, color="grey", linewidth=0.8, label="the WAN's bandwidth")
        right.set_xscale("log")
        right.set_yscale("log")
        right.set_xlabel("WAN bandwidth per group (Gb/s)")
        right.set_ylabel("WAN bandwidth used (Gb/s)")
        right.grid(alpha=0.3)
        right.legend(fontsize=7)
    fig.suptitle(f"{title}: {_common(table, 'model')}, {_common(table, 'workers')} GPUs")
    notes.append("bandwidth used = bytes per step / step time; where the WAN does not bind it is what the schedule "
                 "needs (docs/baselines.md)")
    return _finish(fig, notes, out_dir, name)
