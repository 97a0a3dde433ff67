"""Regenerates every comparison figure of the LuWu paper, in kind, as PNG and PDF.

    /usr/bin/python3 plots/make_figures.py [--out figures] [--jobs N] [--report] [--scale-out]

runs the sweeps of scenarios/sweeps/ and scenarios/paper/ with `luwusim sweep --resume` (so a
second call only draws, and an interrupted one continues), judges scenarios/paper/max-model-size
with `luwusim memory` (no simulation), records one timeline per system with
`luwusim run --timeline`, and draws the figures into OUT.  With --skip-runs it only draws from the
results already in OUT/results; a figure whose results file is missing is drawn as a panel naming
the missing sweep.  With --report it also writes OUT/report.html: every figure (embedded), the
table behind it, and each sweep's scenario assumptions, in one file.  Needs Debian's
python3-matplotlib; nothing else.
"""
import argparse
import copy
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

# The results of each sweep: (results file stem in OUT/results, where its file is: "sweeps" for
# --sweeps, "paper" for --paper, how it runs: "sweep" = luwusim sweep, "memory" = each point
# judged by luwusim memory, "all-reduce-bandwidth" = luwusim all-reduce-bandwidth on the file's
# cluster (a scenario), ALL_REDUCE_ARGS).
SWEEPS = [
    ("model-size", "sweeps", "sweep"),
    ("scalability", "sweeps", "sweep"),
    ("network", "sweeps", "sweep"),
    ("headline", "paper", "sweep"),
    ("paper-sensitivity", "sweeps", "sweep"),
    ("model-microbatch", "paper", "sweep"),
    ("ablations", "paper", "sweep"),
    ("max-model-size", "paper", "memory"),
    ("fat-tree-oversubscription", "sweeps", "sweep"),
    ("fat-tree-spraying", "sweeps", "sweep"),
    ("streaming-diloco-wan", "sweeps", "sweep"),
    ("all-reduce-bandwidth", "paper", "all-reduce-bandwidth"),
    ("reliable-transport", "paper", "sweep"),
    ("parameter-server-sizing", "paper", "sweep"),
    ("systems-dgx", "sweeps", "sweep"),
    ("systems-offload-dgx", "sweeps", "sweep"),
    # Single scenarios (a plain scenario file is a sweep of one point).
    ("sharp-opt30b-4w", "paper", "sweep"),
    ("luwu-opt13b-8w", "paper", "sweep"),
    ("zero-offload-nvlink-opt13b", "paper", "sweep"),
    ("cost-32gpu-luwu", "paper", "sweep"),
    ("cost-32gpu-zero-infinity", "paper", "sweep"),
    ("cost-32gpu-dgx-a100", "paper", "sweep"),
    # The scale-out experiment (scenarios/paper/scale-out/): run only with --scale-out (about half
    # an hour on 2 cores: 175B at up to 32,768 GPUs, folded).
    ("scale-out-luwu", "scale-out", "sweep"),
    ("scale-out-zero-infinity", "scale-out", "sweep"),
]
SLOW_SWEEPS = {"scale-out-luwu", "scale-out-zero-infinity"}

# (figure file name, the sweep (results stem) it draws, or a tuple of stems whose results it draws
# together (scenarios on different clusters), module, function)
FIGURES = [
    ("throughput_vs_model_size", "model-size", "figures", "throughput_vs_model_size"),
    ("iteration_breakdown", "model-size", "figures", "iteration_breakdown"),
    ("switchml_breakdown", "model-size", "figures", "switchml_breakdown"),
    ("scalability", "scalability", "figures", "scalability"),
    ("network_100_vs_200", "network", "figures", "network_bandwidth"),
    ("headline_175b", "headline", "paper_figures", "headline_175b"),
    ("headline_175b_workers", "headline", "paper_figures", "headline_175b_workers"),
    ("sensitivity", "paper-sensitivity", "paper_figures", "sensitivity"),
    ("mfu_vs_model_size", "model-microbatch", "paper_figures", "mfu_vs_model_size"),
    ("throughput_vs_micro_batch", "model-microbatch", "paper_figures", "throughput_vs_micro_batch"),
    ("paper_breakdowns", "model-microbatch", "paper_figures", "paper_breakdowns"),
    ("sm_sharing_what_if", "ablations", "paper_figures", "sm_sharing_what_if"),
    ("ablations", "ablations", "paper_figures", "ablations"),
    ("max_model_size", "max-model-size", "paper_figures", "max_model_size"),
    ("oversubscription_knee", "fat-tree-oversubscription", "figures", "oversubscription_knee"),
    ("packet_spraying", "fat-tree-spraying", "figures", "packet_spraying"),
    ("streaming_diloco_wan", "streaming-diloco-wan", "figures", "streaming_diloco_wan"),
    ("all_reduce_bandwidth", "all-reduce-bandwidth", "paper_figures", "all_reduce_bandwidth"),
    ("reliable_transport", "reliable-transport", "paper_figures", "reliable_transport"),
    ("parameter_server_sizing", "parameter-server-sizing", "paper_figures", "parameter_server_sizing"),
    ("systems_dgx", "systems-dgx", "figures", "throughput_vs_model_size"),
    ("systems_offload_dgx", "systems-offload-dgx", "figures", "throughput_vs_model_size"),
    ("sharp_vs_luwu", "sharp-opt30b-4w", "paper_figures", "sharp_vs_luwu"),
    ("nvlink_zero_offload", ("luwu-opt13b-8w", "zero-offload-nvlink-opt13b"), "paper_figures", "nvlink_zero_offload"),
    ("cost_efficiency_32gpu", ("cost-32gpu-luwu", "cost-32gpu-zero-infinity", "cost-32gpu-dgx-a100"), "paper_figures",
     "cost_efficiency_32gpu"),
    ("scale_out", ("scale-out-luwu", "scale-out-zero-infinity"), "paper_figures", "scale_out"),
]
TIMELINE_FIGURE = "compute_communication_streams"
# The paper's microbenchmark: 2, 4 and 8 GPUs, NCCL vs push/pull (and the ablation's kernels); NCCL
# through host memory, as on the testbed's hosts (docs/paper-scenario.md).
ALL_REDUCE_ARGS = ["--workers", "2", "4", "8", "--bytes", "1GB", "--mechanism", "nccl", "--mechanism", "push-pull",
                   "--mechanism", "push-pull-gpu-kernel", "--gpu-direct-rdma", "off", "--json"]


def sweep_file(dirs, stem):
    kind_dir = next(d for s, d, _ in SWEEPS if s == stem)
    return os.path.join(dirs[kind_dir], stem + ".json")


def run(cmd, allow_failure=False):
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    result = subprocess.run(cmd)
    if result.returncode != 0 and not allow_failure:
        sys.exit(f"make_figures: {cmd[1]} failed with exit code {result.returncode}")
    return result.returncode


def run_sweeps(luwusim, dirs, results_dir, jobs, slow=False):
    for stem, _, kind in SWEEPS:
        if kind != "sweep" or (stem in SLOW_SWEEPS and not slow):
            continue
        cmd = [luwusim, "sweep", sweep_file(dirs, stem), "-o", os.path.join(results_dir, stem + ".jsonl"), "--resume"]
        if jobs:
            cmd += ["--jobs", str(jobs)]
        # Exit code 1 = some points failed; their lines say why and the figures note it.
        if run(cmd, allow_failure=True) not in (0, 1):
            sys.exit(f"make_figures: the {stem} sweep did not finish")


def _apply_setting(scenario, key, value):
    """A sweep point's setting into the scenario, as `luwusim sweep` applies it: a dotted path, a
    numeric part indexing a list; a single system for `systems` is a list of that one."""
    if key == "systems" and not isinstance(value, list):
        value = [value]
    parts = key.split(".")
    node = scenario
    for part in parts[:-1]:
        if isinstance(node, list):
            node = node[int(part)]
        else:
            node = node.setdefault(part, {})
    if isinstance(node, list):
        node[int(parts[-1])] = value
    else:
        node[parts[-1]] = value


def run_memory_sweep(luwusim, path, out_path):
    """Judges each point of a sweep file with `luwusim memory SCENARIO --json` (no simulation) and
    appends one line per point to out_path: {"id", "index", "point", "input", "memory": [...]} or
    {"id", "index", "point", "error"}.  Points already in the file are skipped (resume)."""
    print(f"+ {luwusim} memory (each point of {path})", file=sys.stderr, flush=True)
    listing = subprocess.run([luwusim, "sweep", path, "--list"], capture_output=True, text=True)
    if listing.returncode != 0:
        sys.exit(f"make_figures: luwusim sweep {path} --list failed: {listing.stderr.strip()}")
    with open(path, "r", encoding="utf-8") as f:
        definition = json.load(f)
    base = definition["base"]
    if isinstance(base, str):
        with open(os.path.join(os.path.dirname(path), base), "r", encoding="utf-8") as f:
            base = json.load(f)
    done = set()
    if os.path.exists(out_path):
        with open(out_path, "r", encoding="utf-8") as f:
            for line in f:
                try:
                    done.add(json.loads(line)["id"])
                except (json.JSONDecodeError, KeyError):
                    pass  # a partial last line: its point runs again
    with tempfile.TemporaryDirectory() as tmp, open(out_path, "a", encoding="utf-8") as out:
        for text in listing.stdout.splitlines():
            point = json.loads(text)
            if point["id"] in done:
                continue
            scenario = copy.deepcopy(base)
            for key, value in point["point"].items():
                _apply_setting(scenario, key, value)
            scenario_path = os.path.join(tmp, "point.json")
            with open(scenario_path, "w", encoding="utf-8") as f:
                json.dump(scenario, f)
            result = subprocess.run([luwusim, "memory", scenario_path, "--json"], capture_output=True, text=True)
            line = {"id": point["id"], "index": point["index"], "point": point["point"], "input": scenario}
            if result.returncode == 0:
                memory = json.loads(result.stdout)
                line["memory"] = memory if isinstance(memory, list) else [memory]
            else:
                err = result.stderr.strip().splitlines()
                line["error"] = err[-1] if err else f"exit {result.returncode}"
            out.write(json.dumps(line, sort_keys=True) + "\n")
            out.flush()


def run_all_reduce_bandwidth(luwusim, path, out_path):
    """`luwusim all-reduce-bandwidth` on the scenario at path, one JSON point per line."""
    cmd = [luwusim, "all-reduce-bandwidth", path] + ALL_REDUCE_ARGS
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"make_figures: luwusim all-reduce-bandwidth failed: {result.stderr.strip()}")
    with open(out_path + ".tmp", "w") as f:
        for point in json.loads(result.stdout):
            f.write(json.dumps(point) + "\n")
    os.replace(out_path + ".tmp", out_path)


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


def draw(results_dir, out_dir, dirs, timeline_notes=()):
    """Draws every figure; returns [(figure name, sweep stem or None, [paths])]."""
    import figures
    import paper_figures  # noqa: F401  (looked up by name below)
    from sweep_results import read_lines

    modules = {"figures": figures, "paper_figures": paper_figures}
    drawn = []
    for figure, stem, module, function in FIGURES:
        if isinstance(stem, tuple):
            # Several scenarios' results drawn together: each file read on its own (every file's
            # point index starts at 0), the sweeps without results named under the figure.
            present = [s for s in stem if os.path.exists(os.path.join(results_dir, s + ".jsonl"))]
            absent = [s for s in stem if s not in present]
            if not present:
                # The slow sweeps run only with --scale-out; the others with any run without --skip-runs.
                paths = figures.missing_results(
                    out_dir, figure, ", ".join(os.path.relpath(sweep_file(dirs, s), REPO) for s in stem),
                    ", ".join(s + ".jsonl" for s in stem),
                    "/usr/bin/python3 plots/make_figures.py --scale-out (about half an hour on 2 cores)"
                    if set(stem) <= SLOW_SWEEPS else "/usr/bin/python3 plots/make_figures.py (without --skip-runs)",
                    files=len(stem))
            else:
                lines = [line for s in present for line in read_lines(os.path.join(results_dir, s + ".jsonl"))]
                missing = [f"no results from {os.path.relpath(sweep_file(dirs, s), REPO)} ({s}.jsonl is missing)"
                           for s in absent]
                paths = getattr(modules[module], function)(lines, out_dir, name=figure, missing=missing)
            drawn.append((figure, stem, paths))
            continue
        results = os.path.join(results_dir, stem + ".jsonl")
        if not os.path.exists(results):
            path = os.path.relpath(sweep_file(dirs, stem), REPO)
            kind = next(k for s, _, k in SWEEPS if s == stem)
            command = {"sweep": f"luwusim sweep {path} -o {stem}.jsonl, or plots/make_figures.py without --skip-runs",
                       "memory": f"make_figures.py (luwusim memory on each point of {path})",
                       "all-reduce-bandwidth": f"luwusim all-reduce-bandwidth {path} {' '.join(ALL_REDUCE_ARGS)}"}[kind]
            paths = figures.missing_results(out_dir, figure, path, os.path.relpath(results, out_dir), command)
        else:
            kind = next(k for s, _, k in SWEEPS if s == stem)
            if kind == "all-reduce-bandwidth":  # points, not sweep records
                with open(results) as f:
                    lines = [json.loads(line) for line in f if line.strip()]
            else:
                lines = read_lines(results)
            paths = getattr(modules[module], function)(lines, out_dir, name=figure)
        drawn.append((figure, stem, paths))
    timelines = sorted(glob.glob(os.path.join(results_dir, "timeline", "*.json")))
    drawn.append((TIMELINE_FIGURE, None,
                  figures.compute_communication_streams(timelines, out_dir, notes=timeline_notes)))
    return drawn


def main():
    started = time.monotonic()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(REPO, "figures"), help="output folder (default: figures/)")
    parser.add_argument("--results", help="sweep results folder (default: OUT/results)")
    parser.add_argument("--luwusim", default=os.path.join(REPO, "build", "luwusim"), help="the luwusim binary")
    parser.add_argument("--sweeps", default=os.path.join(REPO, "scenarios", "sweeps"), help="sweep definitions")
    parser.add_argument("--paper", default=os.path.join(REPO, "scenarios", "paper"),
                        help="the paper's experiments (sweep files; default: scenarios/paper)")
    parser.add_argument("--jobs", type=int, default=0, help="processes per sweep (default: the number of CPUs)")
    parser.add_argument("--skip-runs", action="store_true", help="only draw from the results already there")
    parser.add_argument("--scale-out", action="store_true",
                        help="also run the scale-out sweeps (scenarios/paper/scale-out/, about half an hour on 2 cores)")
    parser.add_argument("--report", action="store_true",
                        help="also write OUT/report.html: figures, their tables and the scenarios' assumptions")
    args = parser.parse_args()

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        sys.exit("make_figures: matplotlib is missing (Debian: apt-get install python3-matplotlib)")

    dirs = {"sweeps": args.sweeps, "paper": args.paper, "scale-out": os.path.join(args.paper, "scale-out")}
    results_dir = args.results or os.path.join(args.out, "results")
    os.makedirs(results_dir, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    timeline_notes = []
    if not args.skip_runs:
        if not os.access(args.luwusim, os.X_OK):
            sys.exit(f"make_figures: no luwusim binary at {args.luwusim} (build it, or pass --luwusim)")
        run_sweeps(args.luwusim, dirs, results_dir, args.jobs, slow=args.scale_out)
        for stem, _, kind in SWEEPS:
            if kind == "memory":
                run_memory_sweep(args.luwusim, sweep_file(dirs, stem), os.path.join(results_dir, stem + ".jsonl"))
            elif kind == "all-reduce-bandwidth":
                run_all_reduce_bandwidth(args.luwusim, sweep_file(dirs, stem), os.path.join(results_dir, stem + ".jsonl"))
        timeline_notes = run_timelines(args.luwusim, os.path.join(args.sweeps, "timeline.json"), results_dir)
    drawn = draw(results_dir, args.out, dirs, timeline_notes)
    for _, _, paths in drawn:
        for path in paths:
            print(path)
    if args.report:
        import report
        path = report.write_report(os.path.join(args.out, "report.html"), drawn, results_dir,
                                   {stem: sweep_file(dirs, stem) for stem, _, _ in SWEEPS},
                                   luwusim=args.luwusim,
                                   elapsed_s=time.monotonic() - started)
        print(path)
    print(f"make_figures: {time.monotonic() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
