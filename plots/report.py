"""One self-contained HTML page of the figures (make_figures.py --report): each figure as an
embedded PNG, the table behind it, and the assumptions of each sweep's scenario (model, training,
cluster, system settings), so that a result can be shared as one file."""
import base64
import datetime
import html
import json
import os
import subprocess

import figures
import style
from sweep_results import read_lines, rows

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; max-width: 1100px; margin: 2em auto;
       padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
h3 { font-size: 1.05em; }
img { max-width: 100%; border: 1px solid #eee; }
table { border-collapse: collapse; font-size: 12px; margin: .5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f7f7f7; padding: .6em; overflow-x: auto; font-size: 11.5px; }
details { margin: .4em 0 1em; }
.muted { color: #666; font-size: .9em; }
"""

GENERIC_LIMIT = 400  # rows of a generic table shown; the rest is counted


def _cell(value):
    if value is None:
        return "<td></td>"
    if isinstance(value, float):
        text = f"{value:.4g}" if abs(value) < 1e5 else f"{value:.4e}"
        return f'<td class="num">{text}</td>'
    if isinstance(value, int) and not isinstance(value, bool):
        return f'<td class="num">{value}</td>'
    return f"<td>{html.escape(str(value))}</td>"


def _table_html(columns, table_rows, limit=None):
    out = ["<table><thead><tr>" + "".join(f"<th>{html.escape(str(c))}</th>" for c in columns) + "</tr></thead><tbody>"]
    shown = table_rows if limit is None else table_rows[:limit]
    for r in shown:
        out.append("<tr>" + "".join(_cell(v) for v in r) + "</tr>")
    out.append("</tbody></table>")
    if limit is not None and len(table_rows) > limit:
        out.append(f'<p class="muted">{len(table_rows) - limit} more rows in the results file.</p>')
    return "\n".join(out)


def _point_text(point):
    parts = []
    for key, value in point.items():
        if key == "systems":
            value = [s.get("label", s.get("name")) if isinstance(s, dict) else s for s in value]
        parts.append(f"{key}={json.dumps(value)}")
    return ", ".join(parts)


def generic_table(lines):
    """Every point and system of a sweep: settings, verdict, times and the breakdown."""
    columns = ["point", "model", "workers", "micro-batch", "system", "feasible", "iteration (s)", "tokens/s",
               "MFU %"] + [f"{label} (s)" for _, label, _ in style.BREAKDOWN_PARTS] + ["reason / error"]
    out = []
    for r in rows(lines):
        feasible = r.get("feasible", False)
        b = r.get("breakdown_s") or {}
        out.append([_point_text(r["point"]), r["model"], r["workers"], r["micro_batch"],
                    style.system_name(r["system"]) if r["system"] else "(point)", "yes" if feasible else "no",
                    r.get("iteration_time_s") if feasible else None, r.get("tokens_per_s") if feasible else None,
                    100 * r["mfu"] if feasible and r.get("mfu") is not None else None]
                   + [b.get(p) if feasible else None for p, _, _ in style.BREAKDOWN_PARTS]
                   + [r.get("error") or ("" if feasible else r.get("reason"))])
    return columns, out


def _assumptions(stem, sweep_path, lines):
    """The sweep's description and axes, and the scenario its first point ran (model, training,
    cluster, systems), with the summary luwusim printed for it."""
    out = [f"<h3 id='sweep-{html.escape(stem)}'>{html.escape(stem)}</h3>"]
    try:
        with open(sweep_path, "r", encoding="utf-8") as f:
            definition = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        definition = {}
        out.append(f"<p class='muted'>{html.escape(str(e))}</p>")
    out.append(f"<p><code>{html.escape(os.path.relpath(sweep_path, figures_repo()))}</code>: "
               f"{html.escape(definition.get('description', ''))}</p>")
    axes = definition.get("axes")
    if axes:
        out.append("<table><thead><tr><th>axis</th><th>values</th></tr></thead><tbody>")
        for key, values in axes.items():
            out.append(f"<tr><td><code>{html.escape(key)}</code></td><td>{html.escape(json.dumps(values))}</td></tr>")
        out.append("</tbody></table>")
    if not lines:
        out.append("<p class='muted'>No results: the sweep was not run.</p>")
        return "\n".join(out)
    scenario = lines[0].get("input", {})
    summary = lines[0].get("scenario", {})
    if scenario.get("description"):
        out.append(f"<p><b>Scenario</b> {html.escape(scenario.get('name', ''))}: "
                   f"{html.escape(scenario['description'])}</p>")
    out.append("<table><thead><tr><th>part</th><th>settings (first point of the sweep)</th></tr></thead><tbody>")
    for key in ("model", "training", "cluster", "systems", "simulation"):
        if key in scenario:
            out.append(f"<tr><td>{key}</td><td><pre>{html.escape(json.dumps(scenario[key], indent=1))}</pre></td></tr>")
    if summary:
        keep = {k: v for k, v in summary.items() if k not in ("description", "cluster", "name")}
        out.append(f"<tr><td>as simulated</td><td><pre>{html.escape(json.dumps(keep, indent=1))}</pre></td></tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def figures_repo():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _version(luwusim):
    if not luwusim or not os.access(luwusim, os.X_OK):
        return "unknown (no binary given)"
    try:
        r = subprocess.run([luwusim, "--version"], capture_output=True, text=True, timeout=10)
        version = (r.stdout or r.stderr).strip()
        # "luwusim 0.1.0": the header already names the program.
        return version.removeprefix("luwusim ").strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _git_commit():
    try:
        r = subprocess.run(["git", "-C", figures_repo(), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                           timeout=10)
        return r.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _sweep_lines(results_dir, stem):
    """A sweep's result lines; none for a results file of another kind (the all-reduce
    microbenchmark writes rows of measurements, not sweep points)."""
    path = os.path.join(results_dir, stem + ".jsonl")
    if os.path.exists(path):
        with open(path, "r", encoding="utf-8") as f:
            first = f.readline()
        if first.strip() and "\"index\"" not in first:
            return []
    return read_lines(path)


def write_report(path, drawn, results_dir, sweep_paths, luwusim=None, descriptions=None, elapsed_s=None):
    """drawn: [(figure, sweep stem, a tuple of stems or None, [paths])]; sweep_paths: {stem: sweep file}."""
    descriptions = descriptions or {}
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>luwusim: the LuWu paper's figures</title>",
             f"<style>{CSS}</style></head><body>",
             "<h1>luwusim: the LuWu paper's comparisons, regenerated</h1>",
             f"<p class='muted'>Generated {now} by <code>plots/make_figures.py --report</code>; luwusim "
             f"{html.escape(_version(luwusim))}, commit {html.escape(_git_commit())}"
             + (f"; the runs and drawing took {elapsed_s:.0f} s" if elapsed_s is not None else "")
             + ". Every number is the simulator's prediction at this commit, not a measurement; they change as "
               "the models improve. Regenerate: <code>/usr/bin/python3 plots/make_figures.py --report</code>.</p>",
             "<p>Figures: " + ", ".join(f"<a href='#{html.escape(f)}'>{html.escape(f)}</a>" for f, _, _ in drawn)
             + "</p>"]
    line_cache = {}
    for figure, stem, paths in drawn:
        parts.append(f"<h2 id='{html.escape(figure)}'>{html.escape(figure.replace('_', ' '))}</h2>")
        if figure in descriptions:
            parts.append(f"<p>{html.escape(descriptions[figure])}</p>")
        png = next((p for p in paths if p.endswith(".png")), None)
        if png and os.path.exists(png):
            with open(png, "rb") as f:
                data = base64.b64encode(f.read()).decode("ascii")
            parts.append(f"<img alt='{html.escape(figure)}' src='data:image/png;base64,{data}'>")
        # A figure drawn from several sweeps (the results of different scenarios) names each.
        stems = list(stem) if isinstance(stem, (list, tuple)) else ([stem] if stem else [])
        if stems:
            sources = " and ".join(
                f"the <a href='#sweep-{html.escape(s)}'>{html.escape(s)}</a> sweep "
                f"(<code>{html.escape(os.path.relpath(sweep_paths[s], figures_repo()))}</code>, "
                f"results <code>{html.escape(s)}.jsonl</code>)" for s in stems)
            parts.append(f"<p class='muted'>From {sources}.</p>")
        if figure in figures.TABLES:
            columns, table_rows = figures.TABLES[figure]
            parts.append(_table_html(columns, table_rows))
        elif stems:
            lines = []
            for s in stems:
                if s not in line_cache:
                    line_cache[s] = _sweep_lines(results_dir, s)
                lines += line_cache[s]
            if any("results" in line for line in lines):
                columns, table_rows = generic_table(lines)
                parts.append("<details><summary>Every point and system of the sweep</summary>")
                parts.append(_table_html(columns, table_rows, limit=GENERIC_LIMIT))
                parts.append("</details>")
            else:
                parts.append("<p class='muted'>No results.</p>")
        else:
            parts.append("<p class='muted'>From one <code>luwusim run --timeline</code> per system "
                         "(<code>scenarios/sweeps/timeline.json</code>); open the trace files in Perfetto for "
                         "every span.</p>")
    parts.append("<h2 id='assumptions'>Scenario assumptions, per sweep</h2>")
    for stem, sweep_path in sweep_paths.items():
        if stem not in line_cache:
            line_cache[stem] = _sweep_lines(results_dir, stem)
        parts.append(_assumptions(stem, sweep_path, line_cache[stem]))
    parts.append("</body></html>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts))
    return path
