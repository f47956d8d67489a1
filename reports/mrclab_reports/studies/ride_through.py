"""Study 1, ride-through at scale (the MRC paper, "Resilient AI Supercomputer Networking using MRC
and SRv6"): on an 8-plane two-tier fabric with static SRv6, one failure per row (a link flap, a
blackholed optic, a gray 1% loss, a spine failure, a leaf failure, a whole plane down) under a
data-parallel job; one column per transport: MRC on srv6 EVs, MRC on udp EVs over ECMP, RC over
ECMP, RC with several QPs per peer. A cell: interrupted or not, step time p99 over the fault-free
p50, recovery time."""
from mrclab_reports import style
from mrclab_reports.studies import fabric
from mrclab_reports.studies.runner import BadArguments, Drills, write_outputs

NAME = "ride-through"
TITLE = "Ride-through at scale: MRC against RoCEv2 RC, one failure at a time"


def add_arguments(p):
    fabric.add_arguments(p)
    p.add_argument("--evs", type=int, default=64, help="EVs per MRC QP (64)")
    p.add_argument("--qps", type=int, default=4, help="QPs per peer of the split RC column (4)")


def smoke(a):
    """The smoke fabric (fabric.smoke), 16 EVs: every row and column in seconds."""
    fabric.smoke(a)
    a.evs = 16


def transports(a):
    return {
        "mrc-srv6": f"{{name: mrc-srv6, transport: mrc, ev_mode: srv6, evs: {a.evs}}}",
        "mrc-udp": f"{{name: mrc-udp, transport: mrc, ev_mode: udp, evs: {a.evs}}}",
        "rc": "{name: rc, transport: rc, ev_mode: udp}",
        f"rc-{a.qps}qp": f"{{name: rc-{a.qps}qp, transport: rc, ev_mode: udp, qps_per_peer: {a.qps}}}",
    }


COLUMN_TITLES = {"mrc-srv6": "MRC, srv6 EVs", "mrc-udp": "MRC, udp EVs (ECMP)", "rc": "RC over ECMP"}


def plot(rows, columns, cells):
    """Two panels per failure and transport: step time p99 / fault-free p50, and recovery time;
    a hatched empty bar where the job was interrupted."""
    from matplotlib.patches import Patch
    fig, axes = style.figure(11, 3.6, ncols=2)
    colours = style.transport_colours(columns)
    width = 0.8 / len(columns)
    panels = (("p99_over_p50", 1, "step time p99 / fault-free p50"), ("recovery_seconds", 1e3, "recovery time (ms)"))
    for ax, (field, scale, label) in zip(axes, panels):
        for j, col in enumerate(columns):
            for i, (key, _, _) in enumerate(rows):
                c = cells[key][col]
                x = i + (j - (len(columns) - 1) / 2) * width
                if c["rode_through"] == c["runs"] and c[field] is not None:
                    ax.bar(x, c[field] * scale, width, color=colours[col])
                else:
                    top = max(ax.get_ylim()[1] * 0.9, 1)
                    ax.bar(x, top, width, color="white", edgecolor=colours[col], hatch="xx")
        ax.set_xticks(range(len(rows)), [key for key, _, _ in rows])
        ax.set_ylabel(label)
    axes[0].axhline(1, color="#999999", linewidth=0.8, linestyle="--")
    handles = [Patch(color=colours[c], label=c) for c in columns]
    handles.append(Patch(facecolor="white", edgecolor="#555555", hatch="xx", label="interrupted"))
    axes[1].legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle("Each failure, each transport (hatched: the job was interrupted)", fontsize=10, fontweight="bold")
    return style.png(fig)


def run(a, work, out, jobs, quiet):
    fabric.check(a)
    if a.qps < 1 or a.evs < 1:
        raise BadArguments("--qps and --evs must be at least 1")
    lab = work / "fabric.yaml"
    lab.write_text(fabric.lab_text(a))
    cols = transports(a)
    rows = fabric.failures(a)
    seeds = [a.seed + k for k in range(a.seeds)]
    scenarios = {f"{key}-seed{s}": fabric.scenario(a, lab, s, [fault], cols.values())
                 for key, _, fault in rows for s in seeds}
    drills = Drills(work, jobs, len(scenarios), quiet)
    results = drills.run_all(scenarios)
    cells = {key: {col: fabric.cell([results[f"{key}-seed{s}"] for s in seeds], col) for col in cols}
             for key, _, _ in rows}
    header = "| failure | " + " | ".join(COLUMN_TITLES.get(c, f"RC, {a.qps} QPs per peer (ECMP)") for c in cols) + " |"
    table = [header, "|---" * (len(cols) + 1) + "|",
             "| fault-free step time (p50 of the baseline steps) | " +
             " | ".join(f"{cells[rows[0][0]][c]['baseline_p50'] * 1e3:.2f} ms" for c in cols) + " |"]
    for key, title, _ in rows:
        table.append(f"| {title} | " + " | ".join(fabric.cell_text(cells[key][c]) for c in cols) + " |")
    setup = dict(fabric.setup(a), seeds=seeds, drills=len(scenarios), evs=a.evs, qps=a.qps)
    intro = ("One simulated drill per failure (and seed) on the same fabric and job; each transport runs the "
             "job through the same failure in turn. A cell: whether the job rode through (every step within "
             "the 200 ms watchdog, every byte delivered), its step time p99 over the fault-free p50, and the "
             "failure's recovery time (from the failure to the end of the first step within 1.5x the "
             "fault-free p50; harness/drill/verdict.cc). RC runs one path per QP (ECMP on its UDP source "
             f"port); the split column sends each chunk as {a.qps} pieces over {a.qps} QPs per peer, each on "
             "its own path.")
    return write_outputs(out, NAME, TITLE, intro, "\n".join(table), summarise(rows, cols, cells),
                         plot(rows, list(cols), cells), cells, setup, drills.elapsed())


def summarise(rows, cols, cells):
    out = []
    for col in cols:
        rode = [key for key, _, _ in rows if cells[key][col]["rode_through"] == cells[key][col]["runs"]]
        lost = [key for key, _, _ in rows if cells[key][col]["rode_through"] < cells[key][col]["runs"]]
        out.append(f"{col}: rode through {len(rode)} of {len(rows)} failures"
                   + (f"; interrupted by {', '.join(lost)}" if lost else ""))
    return out
