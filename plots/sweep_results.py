"""Reading `luwusim sweep` results (JSON Lines) into flat rows, one per point and system."""
import json
import os


def read_lines(path):
    """The complete result lines of a file, one per point index, sorted by it.  A partial last line
    (an interrupted sweep) is ignored, as the sweep itself does.  When a sweep definition changed
    and was resumed, the file holds lines of old points too (other ids at the same index): the
    last line of an index, written by the newest run, is the one that counts."""
    if not os.path.exists(path):
        return []
    with open(path, "r", encoding="utf-8") as f:
        text = f.read()
    complete = text[: text.rfind("\n") + 1] if "\n" in text else ""
    by_index = {}
    for number, line in enumerate(complete.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: line {number}: not valid JSON: {e}") from None
        by_index[record["index"]] = record
    return [by_index[i] for i in sorted(by_index)]


def rows(lines):
    """One dict per point and system: the point's settings under "point", the scenario summary
    fields, and the system's result (or its "error").  A point that failed as a whole gives one
    row with system None; a point with results and an "error" (a system's simulation crashed)
    gives its systems' rows, the crashed one with its error."""
    out = []
    for line in lines:
        scenario = line.get("scenario", {})
        base = {
            "id": line["id"],
            "scenario_name": scenario.get("name", line.get("input", {}).get("name")),
            "index": line["index"],
            "point": line.get("point", {}),
            "input": line.get("input", {}),
            "model": scenario.get("model"),
            "params": scenario.get("params"),
            "workers": scenario.get("workers"),
            "network": scenario.get("cluster", {}).get("network", line.get("input", {}).get("cluster", {}).get("network")),
            "micro_batch": scenario.get("micro_batch", line.get("input", {}).get("training", {}).get("micro_batch")),
        }
        if "results" not in line:
            out.append(dict(base, system=None, error=line.get("error", "no results")))
            continue
        for result in line["results"]:
            row = dict(base, system=result["system"], error=result.get("error"))
            row["feasible"] = result.get("feasible", False) and "error" not in result
            row["reason"] = result.get("reason")
            for key in ("iteration_time_s", "tokens_per_s", "tflops_per_gpu", "mfu"):
                row[key] = result.get(key)
            row["breakdown_s"] = result.get("breakdown_s", {})
            row["network_bytes_per_worker"] = result.get("network_bytes_per_worker", {})
            row["cost"] = result.get("cost")  # {"usd", "tokens_per_s_per_1000_usd", "parts", ...} or None
            row["details"] = result.get("details")  # what a system reports of itself (Streaming DiLoCo's WAN needs)
            out.append(row)
    return out


def requested_systems(lines):
    """The system labels the sweep's scenarios asked for, in first-seen order."""
    seen = []
    for line in lines:
        for s in line.get("input", {}).get("systems", []):
            label = s if isinstance(s, str) else s.get("label", s.get("name"))
            if label not in seen:
                seen.append(label)
    return seen
