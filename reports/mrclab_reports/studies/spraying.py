"""Study 2, spraying against single path with flow splitting (Addanki, Goyal, Marinos,
"Challenging the Need for Packet Spraying in Large-Scale Distributed Training", 2024: on a
leaf-spine fabric, single-path transport with a little flow splitting at the application layer
matches ideal packet spraying in maximum congestion, for collectives). Columns: RC over ECMP with
each chunk split over k QPs per peer (k = 1 is plain single path; each QP its own path), and MRC
spraying every QP over srv6 EVs. Rows: each collective fault-free, then with some leaf-spine
links degraded and with some down, where the claim may stop holding. A cell: the collective's
time while the row's condition held, the load of the busiest fabric link over the mean, and the
peak queue of any fabric port."""
import csv
import statistics
from collections import defaultdict
from pathlib import Path

from mrclab_reports import style
from mrclab_reports.studies import fabric
from mrclab_reports.studies.runner import BadArguments, Drills, write_outputs

NAME = "spraying"
TITLE = "Spraying against single path with k-way flow splitting: congestion, and where the claim stops holding"


def add_arguments(p):
    fabric.add_arguments(p, failures=False)
    fabric.add_split_arguments(p)  # as the collisions study: one job host per leaf
    p.add_argument("--links", type=int, default=None,
                   help="leaf-spine links of plane 0 the failed row takes down, drawn with the seed "
                        "(32, or all of a plane that has fewer)")
    p.add_argument("--degraded-rate", default="25Gbit",
                   help="the rate of every leaf-spine link of plane 0 in the degraded row (25Gbit of 100)")


def smoke(a):
    fabric.smoke(a)
    a.qps_list, a.evs, a.links, a.collectives = "1,4", 16, 4, "all_to_all"


def conditions(a):
    """(title, plot label, fault lines): fault-free; an asymmetric fabric (every leaf-spine link
    of plane 0 slower); some of those links down. The faults start 20 ms after the baseline steps
    and last 100 ms (about 50 steps), then the tail steps run without."""
    return [
        ("fault-free", "fault-free", []),
        (f"plane 0 at {a.degraded_rate}", f"plane 0 at\n{a.degraded_rate}",
         [f"{{at: 20ms, kind: rate, target: {{select: leaf_spine_link, plane: 0, count: {fabric.plane_links(a)}}}, "
          f"rate: {a.degraded_rate}, duration: 100ms}}"]),
        (f"{a.links} links of plane 0 down", f"{a.links} links\ndown",
         [f"{{at: 20ms, kind: link_down, target: {{select: leaf_spine_link, plane: 0, count: {a.links}}}, "
          "duration: 100ms}"]),
    ]


def columns(a):
    cols = fabric.rc_columns(a)
    cols["mrc-srv6"] = f"{{name: mrc-srv6, transport: mrc, ev_mode: srv6, evs: {a.evs}}}"
    return cols


def measure(result, faulted):
    """The collective's p50 over the steps under the condition (every measured step when
    fault-free), the busiest fabric link end's packets over the mean, and the peak queue of any
    fabric port, of a one-transport drill."""
    run = Path(result["run_dir"])
    seconds = []
    with open(run / "steps.csv") as f:
        for row in csv.DictReader(f):
            if row["phase"] != "warmup" and (not faulted or int(row["faults_active"]) > 0):
                seconds.append(float(row["c0_seconds"]))
    busiest_over_mean, peak = fabric.fabric_links(run)
    job = next(t for t in result["transports"])["job"]
    return {"collective_seconds": statistics.median(seconds) if seconds else None,
            "busiest_over_mean": busiest_over_mean, "queue_peak_bytes": peak,
            "state": job["state"], "reason": job.get("reason", "")}


def cell_text(c, reference):
    if c["state"] != "completed" or c["collective_seconds"] is None:
        return f"**{c['state']}**"
    slower = c["collective_seconds"] / reference - 1 if reference else 0
    return (f"{c['collective_seconds'] * 1e3:.2f} ms ({slower:+.0%}), busiest link "
            f"{c['busiest_over_mean']:.1f}x mean, peak queue {c['queue_peak_bytes'] / 1024:.0f} KiB")


def plot(rows, labels, cols, cells):
    fig, axes = style.figure(12, 3.8, ncols=3)
    colours = style.transport_colours(cols)
    for ax, (field, scale, label) in zip(axes, (("collective_seconds", 1e3, "collective time p50 (ms)"),
                                               ("busiest_over_mean", 1, "busiest fabric link / mean"),
                                               ("queue_peak_bytes", 1 / 1024, "peak fabric queue (KiB)"))):
        def value(row, col):
            c = cells[row][col]
            return c[field] * scale if c["state"] == "completed" and c[field] is not None else None

        style.grouped_bars(ax, rows, cols, value, colours)
        ax.set_xticks(range(len(rows)), labels, fontsize=7)
        ax.set_ylabel(label)
    axes[1].axhline(1, color="#999999", linewidth=0.8, linestyle="--")
    axes[2].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle("Single path split k ways against spraying (x: the job was interrupted)", fontsize=10,
                 fontweight="bold")
    return style.png(fig)


def findings_of(rows, cols, cells):
    out = []
    first, best_k = next(iter(cols)), [c for c in cols if c.startswith("rc-")][-1]
    for row in rows:
        c = cells[row]
        if c["mrc-srv6"]["state"] != "completed":
            out.append(f"{row}: MRC was interrupted")
            continue
        if c[best_k]["state"] != "completed":
            stopped = [k for k in cols if k.startswith("rc-") and c[k]["state"] != "completed"]
            out.append(f"{row}: RC with {', '.join(stopped)} was interrupted; MRC completed in "
                       f"{c['mrc-srv6']['collective_seconds'] * 1e3:.2f} ms")
            continue
        gap = c[best_k]["collective_seconds"] / c["mrc-srv6"]["collective_seconds"] - 1
        text = f"{row}: {best_k} {abs(gap):.0%} {'slower' if gap > 0 else 'faster'} than spraying"
        if c[first]["state"] == "completed":
            text += (f" (busiest link {c[best_k]['busiest_over_mean']:.1f}x mean against spraying's "
                     f"{c['mrc-srv6']['busiest_over_mean']:.1f}x and {first}'s {c[first]['busiest_over_mean']:.1f}x; "
                     f"peak queue {c[best_k]['queue_peak_bytes'] / 1024:.0f} against "
                     f"{c['mrc-srv6']['queue_peak_bytes'] / 1024:.0f} KiB)")
        out.append(text)
    return out


def run(a, work, out, jobs, quiet):
    fabric.check(a)
    if a.seeds != 1:
        raise BadArguments("--seeds: this study draws its links with one seed (--seed)")
    a.links = fabric.counted(a.links, 32, "--links", fabric.plane_links(a), "leaf-spine links")
    fabric.slower_rate(a.degraded_rate, "--degraded-rate")
    cols = columns(a)
    collectives = fabric.collectives(a.collectives)
    lab = work / "fabric.yaml"
    lab.write_text(fabric.lab_text(a))
    scenarios, rows, labels, faulted, fault_free_row = {}, [], [], {}, {}
    for collective in collectives:
        for i, (title, label, faults) in enumerate(conditions(a)):
            row = f"{collective.replace('_', '-')} {a.size}, {title}"
            rows.append(row)
            labels.append(f"{collective.replace('_', '-')}\n{label}")
            faulted[row] = bool(faults)
            fault_free_row[row] = rows[-1 - i]  # conditions() starts with the fault-free one
            for col, line in cols.items():
                scenarios[(row, col)] = fabric.scenario(a, lab, a.seed, faults, [line], collective=collective)
    names = {key: f"{i:02d}-{key[1]}" for i, key in enumerate(scenarios)}
    drills = Drills(work, jobs, len(scenarios), quiet)
    results = drills.run_all({names[k]: text for k, text in scenarios.items()})
    cells = defaultdict(dict)
    for (row, col) in scenarios:
        cells[row][col] = measure(results[names[(row, col)]], faulted[row])
    table = ["| collective, condition | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for row in rows:
        reference = cells[fault_free_row[row]]["mrc-srv6"]["collective_seconds"]
        table.append(f"| {row} | " + " | ".join(cell_text(cells[row][c], reference) for c in cols) + " |")
    setup = dict(fabric.setup(a), seeds=[a.seed], drills=len(scenarios), evs=a.evs, qps_list=a.qps_list,
                 collectives=collectives, links=a.links, degraded_rate=a.degraded_rate)
    intro = ("Simulated drills, one per collective, condition and transport (so that each run's link counters "
             "are its own). RC sends each chunk over k QPs per peer, each QP on its own NIC port and ECMP path "
             "(k = 1: single path); MRC sprays every QP over srv6 EVs. The degraded and failed rows apply their "
             "fault 20 ms after the baseline steps for 100 ms; their times are the p50 of the steps that ran "
             "under it. A cell: collective time (in brackets, against MRC's fault-free time for that collective), "
             "the packets of the busiest leaf-spine link end over the mean of all of them, and the most bytes any "
             "leaf-spine port queued (the simulated ports' high-water mark, `queue_peak_bytes` of links.csv).")
    return write_outputs(out, NAME, TITLE, intro, "\n".join(table), findings_of(rows, cols, cells),
                         plot(rows, labels, list(cols), cells), dict(cells), setup, drills.elapsed())
