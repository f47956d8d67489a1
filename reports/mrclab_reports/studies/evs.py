"""Study 4, how many EVs does MRC need? EVs per QP (8 ... 256) and `min_active` (the fewest EVs
a QP keeps GOOD) against ride-through, step time and recovery, per failure class, on the same
8-plane fabric and job as the ride-through study. One row per (EVs, min_active), one column per
failure."""
import math

from mrclab_reports import style
from mrclab_reports.studies import fabric
from mrclab_reports.studies.runner import BadArguments, Drills, write_outputs

NAME = "evs"
TITLE = "How many EVs does MRC need? EVs per QP and min_active against each failure"
FAILURES = ("flap", "blackhole", "spine", "plane")


def add_arguments(p):
    fabric.add_arguments(p)
    p.add_argument("--evs-list", default="8,16,32,64,128,256", help="EVs per QP, one row each (8,16,32,64,128,256)")
    p.add_argument("--min-active", default="1,90%",
                   help="min_active values, each a number or a percentage of the row's EVs (1,90%%)")


def smoke(a):
    fabric.smoke(a)
    a.evs_list = "8,32"


def min_active_values(spec, evs):
    """'1,90%' at 64 EVs -> [1, 57]: each a number or a percentage of the EVs, at most evs."""
    out = []
    for item in spec.split(","):
        item = item.strip()
        try:
            value = math.floor(float(item[:-1]) / 100 * evs) if item.endswith("%") else int(item)
        except ValueError:
            raise BadArguments(f"--min-active {spec}: '{item}' is neither a number nor a percentage") from None
        if not 0 <= value <= evs:
            raise BadArguments(f"--min-active {spec}: {item} is {value}, outside 0..{evs} EVs")
        if value not in out:
            out.append(value)
    return out


def transport(evs, m):
    return f"e{evs}-m{m}", f"{{name: e{evs}-m{m}, transport: mrc, ev_mode: srv6, evs: {evs}, min_active: {m}}}"


def plot(evs_list, floors, failures, cells):
    fig, axes = style.figure(11, 3.6, ncols=2)
    colours = dict(zip(FAILURES, ["#e7298a", "#404040", "#a6761d", "#1b9e77"]))
    for ax, (field, scale, label) in zip(axes, (("p99_over_p50", 1, "step time p99 / fault-free p50"),
                                               ("recovery_seconds", 1e3, "recovery time (ms)"))):
        for key, _, _ in failures:
            for k, style_ in (("first", "-"), ("last", "--")):
                xs, ys, lost = [], [], []
                for e in evs_list:
                    m = floors[e][0] if k == "first" else floors[e][-1]
                    c = cells[f"{e}-{m}"][key]
                    if c["rode_through"] == c["runs"] and c[field] is not None:
                        xs.append(e)
                        ys.append(c[field] * scale)
                    else:
                        lost.append(e)
                ax.plot(xs, ys, style_, marker="o", color=colours[key],
                        label=f"{key}, min_active {'1st' if k == 'first' else 'last'} value" if ax is axes[0] else None)
                if lost:
                    ax.plot(lost, [ax.get_ylim()[1]] * len(lost), "x", color=colours[key], markersize=9)
        ax.set_xscale("log", base=2)
        ax.set_xticks(evs_list, [str(e) for e in evs_list])
        ax.set_xlabel("EVs per QP")
        ax.set_ylabel(label)
    axes[0].legend(fontsize=7)
    fig.suptitle("MRC under each failure by EVs per QP (solid: first min_active, dashed: last; x: interrupted)",
                 fontsize=10, fontweight="bold")
    return style.png(fig)


def run(a, work, out, jobs, quiet):
    fabric.check(a)
    evs_list = fabric.int_list(a.evs_list, "--evs-list", 256)
    floors = {e: min_active_values(a.min_active, e) for e in evs_list}
    lab = work / "fabric.yaml"
    lab.write_text(fabric.lab_text(a))
    failures = [f for f in fabric.failures(a) if f[0] in FAILURES]
    seeds = [a.seed + k for k in range(a.seeds)]
    scenarios = {}
    for e in evs_list:
        columns = [transport(e, m)[1] for m in floors[e]]
        for key, _, fault in failures:
            for s in seeds:
                scenarios[f"e{e}-{key}-seed{s}"] = fabric.scenario(a, lab, s, [fault], columns)
    drills = Drills(work, jobs, len(scenarios), quiet)
    results = drills.run_all(scenarios)
    cells = {}
    for e in evs_list:
        for m in floors[e]:
            name = transport(e, m)[0]
            cells[f"{e}-{m}"] = {key: fabric.cell([results[f"e{e}-{key}-seed{s}"] for s in seeds], name)
                                 for key, _, _ in failures}
    table = ["| EVs per QP | min_active | fault-free step p50 | " + " | ".join(t for _, t, _ in failures) + " |",
             "|---:|---:|---:" + "|---" * len(failures) + "|"]
    for e in evs_list:
        for m in floors[e]:
            row = cells[f"{e}-{m}"]
            table.append(f"| {e} | {m} | {row[failures[0][0]]['baseline_p50'] * 1e3:.2f} ms | " +
                         " | ".join(fabric.cell_text(row[key]) for key, _, _ in failures) + " |")
    setup = dict(fabric.setup(a), seeds=seeds, drills=len(scenarios), evs_list=evs_list,
                 min_active={str(e): floors[e] for e in evs_list})
    intro = ("MRC on srv6 EVs (EV i: plane i mod 8, then the plane's spines in turn from a spine the host "
             "pair hashes to), one drill per EV count and failure (and seed), each running one transport per "
             "min_active value through the failure in turn. `min_active` is the fewest EVs a QP keeps GOOD: "
             "with a floor near the EV count, a QP cannot set aside the EVs a failure took. Cells as in the "
             "ride-through study.")
    findings = []
    for e in evs_list:
        for m in floors[e]:
            lost = [key for key, _, _ in failures if cells[f"{e}-{m}"][key]["rode_through"] < cells[f"{e}-{m}"][key]["runs"]]
            if lost:
                findings.append(f"{e} EVs, min_active {m}: interrupted by {', '.join(lost)}")
    if not findings:
        findings.append("every EV count and min_active rode through every failure")
    return write_outputs(out, NAME, TITLE, intro, "\n".join(table), findings,
                         plot(evs_list, floors, failures, cells), cells, setup, drills.elapsed())
