#!/usr/bin/python3
"""Regenerates every comparison figure of the LuWu paper, in kind, as PNG and PDF.

    /usr/bin/python3 plots/make_figures.py [--out figures] [--jobs N]

runs the sweeps of scenarios/sweeps/ with `luwusim sweep --resume` (so a second call only draws,
and an interrupted one continues), one timeline per system with `luwusim run --timeline`, and
draws the figures into OUT.  With --skip-runs it only draws from the results already in
OUT/results.  Needs Debian's python3-matplotlib; nothing else.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

# (figure file name, the sweep scenarios/sweeps/<sweep>.json it draws, the function in figures.py)
FIGURES = [
    ("throughput_vs_model_size", "model-size", "throughput_vs_model_size"),
    ("iteration_breakdown", "model-size", "iteration_breakdown"),
    ("switchml_breakdown", "model-size", "switchml_breakdown"),
    ("scalability", "scalability", "scalability"),
    ("network_100_vs_200", "network", "network_bandwidth"),
]
TIMELINE_SCENARIO = os.path.join("scenarios", "sweeps", "timeline.json")


def run(cmd, allow_failure=False):
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    result = subprocess.run(cmd)
    if result.returncode != 0 and not allow_failure:
        sys.exit(f"make_figures: {cmd[1]} failed with exit code {result.returncode}")
    return result.returncode


def run_sweeps(luwusim, sweeps_dir, results_dir, jobs):
    for sweep in sorted({sweep for _, sweep, _ in FIGURES}):
        cmd = [luwusim, "sweep", os.path.join(sweeps_dir, sweep + ".json"), "-o",
               os.path.join(results_dir, sweep + ".jsonl"), "--resume"]
        if jobs:
            cmd += ["--jobs", str(jobs)]
        # Exit code 1 = some points failed; their lines say why and the figures note it.
        if run(cmd, allow_failure=True) not in (0, 1):
            sys.exit(f"make_figures: the {sweep} sweep did not finish")


def run_timelines(luwusim, scenario, results_dir):
    """One `luwusim run --timeline` per system, so a system that cannot be simulated yet costs
    only its own timeline.  Returns notes for the systems without one."""
    with open(scenario, "r", encoding="utf-8") as f:
        systems = json.load(f)["systems"]
    notes = []
    out_dir = os.path.join(results_dir, "timeline")
    os.makedirs(out_dir, exist_ok=True)
    for s in systems:
        label = s if isinstance(s, str) else s.get("label", s["name"])
        path = os.path.join(out_dir, label + ".json")
        if os.path.exists(path):
            continue
        cmd = [luwusim, "run", scenario, "--system", label, "--timeline", path, "--json"]
        print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
        result = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if result.returncode != 0:
            why = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else f"exit {result.returncode}"
            notes.append(f"{label} absent: {why}")
    return notes


def draw(results_dir, out_dir, timeline_notes=()):
    import figures
    from sweep_results import read_lines

    written = []
    for figure, sweep, function in FIGURES:
        lines = read_lines(os.path.join(results_dir, sweep + ".jsonl"))
        written += getattr(figures, function)(lines, out_dir, name=figure)
    timelines = sorted(glob.glob(os.path.join(results_dir, "timeline", "*.json")))
    written += figures.compute_communication_streams(timelines, out_dir, notes=timeline_notes)
    return written


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(REPO, "figures"), help="output folder (default: figures/)")
    parser.add_argument("--results", help="sweep results folder (default: OUT/results)")
    parser.add_argument("--luwusim", default=os.path.join(REPO, "build", "luwusim"), help="the luwusim binary")
    parser.add_argument("--sweeps", default=os.path.join(REPO, "scenarios", "sweeps"), help="sweep definitions")
    parser.add_argument("--jobs", type=int, default=0, help="processes per sweep (default: the number of CPUs)")
    parser.add_argument("--skip-runs", action="store_true", help="only draw from the results already there")
    args = parser.parse_args()

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        sys.exit("make_figures: matplotlib is missing (Debian: apt-get install python3-matplotlib)")

    results_dir = args.results or os.path.join(args.out, "results")
    os.makedirs(results_dir, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    timeline_notes = []
    if not args.skip_runs:
        if not os.access(args.luwusim, os.X_OK):
            sys.exit(f"make_figures: no luwusim binary at {args.luwusim} (build it, or pass --luwusim)")
        run_sweeps(args.luwusim, args.sweeps, results_dir, args.jobs)
        timeline_notes = run_timelines(args.luwusim, os.path.join(args.sweeps, "timeline.json"), results_dir)
    for path in draw(results_dir, args.out, timeline_notes):
        print(path)


if __name__ == "__main__":
    main()
