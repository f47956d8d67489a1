"""Study 3, ECMP collisions (Meta, "RDMA over Ethernet for Distributed AI Training at Meta Scale",
SIGCOMM 2024: a few large flows collide under ECMP and slow collectives; more QPs per peer and
spraying help). Fault-free: one row per collective, one column per transport (RC with 1, 2, 4, 8
QPs per peer over ECMP; MRC spraying over udp EVs through ECMP and over srv6 EVs). A cell: the
collective's time (p50 over the measured steps), its bus bandwidth, and how much more the
hottest leaf-spine link carried than the mean fabric link (1.0: perfectly even)."""
import csv
import statistics
from collections import defaultdict
from pathlib import Path

from mrclab_reports import style
from mrclab_reports.studies import fabric
from mrclab_reports.studies.runner import BadArguments, Drills, write_outputs

NAME = "collisions"
TITLE = "ECMP collisions: RC with more QPs per peer and MRC spraying, fault-free"


def add_arguments(p):
    fabric.add_arguments(p, failures=False)
    fabric.add_split_arguments(p)


def smoke(a):
    fabric.smoke(a)
    a.qps_list, a.evs = "1,4", 16


def columns(a):
    cols = fabric.rc_columns(a)
    cols["mrc-udp"] = f"{{name: mrc-udp, transport: mrc, ev_mode: udp, evs: {a.evs}}}"
    cols["mrc-srv6"] = f"{{name: mrc-srv6, transport: mrc, ev_mode: srv6, evs: {a.evs}}}"
    return cols


def measure(result):
    """(collective seconds p50, busbw p50, hottest fabric link / mean) of a one-transport drill."""
    run = Path(result["run_dir"])
    seconds, busbw = [], []
    with open(run / "steps.csv") as f:
        for row in csv.DictReader(f):
            if row["phase"] != "warmup":
                seconds.append(float(row["c0_seconds"]))
                busbw.append(float(row["c0_busbw_gbps"]))
    hottest_over_mean, _ = fabric.fabric_links(run)
    return {"collective_seconds": statistics.median(seconds) if seconds else None,
            "busbw_gbps": statistics.median(busbw) if busbw else None,
            "hottest_over_mean": hottest_over_mean,
            "state": next(t["job"]["state"] for t in result["transports"])}


def cell_text(c, reference):
    if c["state"] != "completed" or c["collective_seconds"] is None:
        return f"**{c['state']}**"
    faster = reference / c["collective_seconds"] - 1 if reference else 0
    return (f"{c['collective_seconds'] * 1e3:.2f} ms ({faster:+.0%}), {c['busbw_gbps']:.0f} Gbit/s, "
            f"hottest link {c['hottest_over_mean']:.1f}x mean")


def plot(rows, cols, cells):
    fig, axes = style.figure(11, 3.6, ncols=2)
    colours = style.transport_colours(cols)
    for ax, (field, scale, label) in zip(axes, (("collective_seconds", 1e3, "collective time p50 (ms)"),
                                               ("hottest_over_mean", 1, "hottest fabric link / mean"))):
        style.grouped_bars(ax, rows, cols, lambda row, col: None if cells[row][col][field] is None
                           else cells[row][col][field] * scale, colours)
        ax.set_xticks(range(len(rows)), rows)
        ax.set_ylabel(label)
    axes[1].axhline(1, color="#999999", linewidth=0.8, linestyle="--")
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle("Fault-free collectives: RC with k QPs per peer against MRC spraying", fontsize=10, fontweight="bold")
    return style.png(fig)


def run(a, work, out, jobs, quiet):
    fabric.check(a)
    if a.seeds != 1:
        raise BadArguments("--seeds: this study has no failures to draw; it runs one seed (--seed)")
    cols = columns(a)
    rows = fabric.collectives(a.collectives)
    lab = work / "fabric.yaml"
    lab.write_text(fabric.lab_text(a))
    scenarios = {}
    for row in rows:
        for col, line in cols.items():
            scenarios[f"{row}-{col}"] = fabric.scenario(a, lab, a.seed, [], [line], collective=row)
    drills = Drills(work, jobs, len(scenarios), quiet)
    results = drills.run_all(scenarios)
    cells = defaultdict(dict)
    for row in rows:
        for col in cols:
            cells[row][col] = measure(results[f"{row}-{col}"])
    first = next(iter(cols))
    table = ["| collective | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for row in rows:
        reference = cells[row][first]["collective_seconds"]
        table.append(f"| {row.replace('_', '-')} {a.size} | " +
                     " | ".join(cell_text(cells[row][c], reference) for c in cols) + " |")
    findings = []
    for row in rows:
        done = {c: v for c, v in cells[row].items() if v["collective_seconds"]}
        if done:
            best = min(done, key=lambda c: done[c]["collective_seconds"])
            ref = cells[row][first]["collective_seconds"]
            findings.append(f"{row}: fastest {best} ({ref / done[best]['collective_seconds'] - 1:+.0%} against {first}); "
                            f"hottest link over mean from {done[first]['hottest_over_mean']:.1f}x ({first}) to "
                            f"{done[best]['hottest_over_mean']:.1f}x ({best})" if first in done else f"{row}: fastest {best}")
    setup = dict(fabric.setup(a), seeds=[a.seed], drills=len(scenarios), evs=a.evs, qps_list=a.qps_list,
                 collectives=rows)
    intro = ("Fault-free simulated drills, one per collective and transport (so that each run's link counters "
             "are its own). A cell: the collective's time (p50 over the 10 measured steps; in brackets, faster "
             f"or slower than {first}), its bus bandwidth (nccl-tests' definition), and the packets the hottest "
             "leaf-spine link end sent over the mean of all of them. RC sends each chunk over its QPs per peer "
             "(each QP one NIC port and one ECMP path); MRC sprays every QP over its EVs.")
    return write_outputs(out, NAME, TITLE, intro, "\n".join(table), findings, plot(rows, list(cols), cells),
                         dict(cells), setup, drills.elapsed())
