"""`mrclab compare RUN_A RUN_B ... [--out DIR]`: drill runs side by side, one column per
transport of each run ("default/mrc"), against the first run: compare.html, compare.md and
compare-files/ in DIR."""
import argparse
import sys
from pathlib import Path

import numpy as np

from mrclab_reports import analysis, plots, render_html, render_md, rundir
from mrclab_reports.document import (Cell, Document, Figure, Table, Text, fmt_bytes, fmt_number, fmt_seconds,
                                     fmt_time, verdict_cell)
from mrclab_reports.style import transport_colours

HELP = """\
Compares drill runs (directories made by `mrclab drill`) side by side. Every transport of every
run is a column, named RUN/TRANSPORT (the scenario name, or the directory name when two runs
share it). The first run is the reference: each column is compared with the same transport of
RUN_A, and a change is flagged when

  - the verdict, an SLO's result or "rode through" changed;
  - step time (baseline p50, p50, p99, max), CPU, retransmissions or a fault's recovery time
    is more than 20% worse (or better), or steps/min more than 20% lower (higher);
  - bytes were lost where the reference lost none.

Writes DIR/compare.html (one self-contained file), DIR/compare.md and DIR/compare-files/*.png
(DIR: --out, default the current directory) and prints their paths. Exit status: 0 written,
2 a missing or malformed run directory (the message names the file).
"""

THRESHOLD = 20.0  # percent


class Column:
    def __init__(self, label, run, transport):
        self.label, self.run, self.t = label, run, transport


def _labels(runs):
    names = [r.label for r in runs]
    out = []
    for r in runs:
        label = r.label if names.count(r.label) == 1 else r.path.name
        while label in out:
            label += "'"
        out.append(label)
    return out


def columns(runs):
    cols = []
    for label, run in zip(_labels(runs), runs):
        cols += [Column(f"{label}/{t.name}", run, t) for t in run.transports]
    return cols


def reference(col, cols, runs):
    """The column of the first run with the same transport name (None for the first run's own)."""
    if col.run is runs[0]:
        return None
    return next((c for c in cols if c.run is runs[0] and c.t.name == col.t.name), None)


def _recoveries(t):
    return {(f.index, f.kind): f.recovery_seconds for f in t.faults if f.windows}


def _max_recovery(t):
    values = [v for v in _recoveries(t).values() if v is not None]
    return max(values) if values else None


# (row title, getter, formatter, direction): direction +1 = higher is worse, -1 = lower is worse, 0 = no flag
METRICS = [
    ("steps", lambda t: t.job.get("steps"), fmt_number, 0),
    ("steps/min", lambda t: t.steps_per_minute, fmt_number, -1),
    ("baseline p50", lambda t: t.step_time.get("baseline_p50"), fmt_seconds, +1),
    ("p50 after baseline", lambda t: t.step_time.get("p50"), fmt_seconds, +1),
    ("p99 after baseline", lambda t: t.step_time.get("p99"), fmt_seconds, +1),
    ("max after baseline", lambda t: t.step_time.get("max"), fmt_seconds, +1),
    ("bytes verified", lambda t: t.job.get("bytes_verified"), fmt_bytes, 0),
    ("retransmissions", lambda t: t.job.get("retransmissions"), fmt_number, +1),
    ("CPU seconds", lambda t: t.cpu_seconds, lambda v: fmt_seconds(v, 1), +1),
    ("max recovery", _max_recovery, fmt_seconds, +1),
]


def _flag(new, old, direction):
    """('worse'|'better'|'', percent) of new against old."""
    change = analysis.percent_change(new, old)
    if change is None or direction == 0 or abs(change) <= THRESHOLD:
        return "", change
    return ("worse" if change * direction > 0 else "better"), change


def side_by_side(cols, runs, labels, diffs):
    rows = []

    def add(title, values):
        rows.append([Cell(title)] + values)

    add("run directory", [Cell(c.run.path.name, "muted") for c in cols])
    add("transport", [Cell(c.t.kind) for c in cols])
    add("run verdict", [verdict_cell(c.run.verdict, " (changed)" if c.run.verdict != runs[0].verdict else "")
                        for c in cols])
    ride = []
    for c in cols:
        ref = reference(c, cols, runs)
        text = "yes" if c.t.rode_through else f"no: {c.t.job.get('reason') or c.t.job.get('state')}"
        tone = "pass" if c.t.rode_through else "fail"
        if ref is not None and ref.t.rode_through != c.t.rode_through:
            diffs.append(f"{c.label}: rode through {'yes' if ref.t.rode_through else 'no'} → "
                         f"{'yes' if c.t.rode_through else 'no'} (vs {ref.label})")
            text += " (changed)"
        ride.append(Cell(text, tone))
    add("rode through", ride)
    add("job", [Cell(c.t.job.get("state", "")) for c in cols])
    for title, get, fmt, direction in METRICS:
        values = []
        for c in cols:
            v, ref = get(c.t), reference(c, cols, runs)
            text, tone = fmt(v), ""
            if ref is not None:
                tone, change = _flag(v, get(ref.t), direction)
                if change is not None and change != 0:
                    text += f" ({change:+.0f}%)"
                if tone == "worse":
                    diffs.append(f"{c.label}: {title} {fmt(get(ref.t))} → {fmt(v)} ({change:+.0f}%, vs {ref.label})")
            values.append(Cell(text, tone))
        add(title, values)
    lost = []
    for c in cols:
        ref, v = reference(c, cols, runs), c.t.job.get("bytes_lost") or 0
        tone = "fail" if v else ""
        if ref is not None and v and not ref.t.job.get("bytes_lost"):
            diffs.append(f"{c.label}: lost {fmt_bytes(v)} where {ref.label} lost none")
        lost.append(Cell(fmt_bytes(v), tone))
    add("bytes lost", lost)
    faults = sorted({k for c in cols for k in _recoveries(c.t)})
    for index, kind in faults:
        values = []
        for c in cols:
            rec = _recoveries(c.t)
            if (index, kind) not in rec:
                values.append(Cell("not applied", "muted"))
                continue
            v, ref = rec[(index, kind)], reference(c, cols, runs)
            text, tone = ("no recovery", "fail") if v is None else (fmt_seconds(v), "")
            if ref is not None and v is not None:
                old = _recoveries(ref.t).get((index, kind))
                tone, change = _flag(v, old, +1)
                if tone == "worse":
                    diffs.append(f"{c.label}: recovery from #{index} {kind} {fmt_seconds(old)} → {fmt_seconds(v)}")
            values.append(Cell(text, tone))
        add(f"recovery #{index} {kind}", values)
    return Table([""] + [c.label for c in cols], rows,
                 caption=f"Each column against the same transport of {labels[0]} (the first run); flagged: more "
                         f"than {THRESHOLD:.0f}% worse (amber) or better (blue), failures in red.")


def slo_table(runs, labels, diffs):
    keys = []
    for r in runs:
        for s in r.slos:
            key = (s.get("slo"), s.get("transport") or "all")
            if key not in keys:
                keys.append(key)
    rows = []
    for slo, transport in keys:
        row, first = [slo, transport], None
        for i, r in enumerate(runs):
            s = next((x for x in r.slos if (x.get("slo"), x.get("transport") or "all") == (slo, transport)), None)
            if s is None:
                row.append(Cell("–", "muted"))
                continue
            ok = bool(s.get("pass"))
            text = f"{'PASS' if ok else 'FAIL'} {fmt_number(s.get('value'), 3)} (max {fmt_number(s.get('max'), 3)})"
            if i == 0:
                first = ok
            elif first is not None and first != ok:
                text += " (changed)"
                diffs.append(f"{labels[i]}: SLO {slo} ({transport}) {'PASS' if first else 'FAIL'} → "
                             f"{'PASS' if ok else 'FAIL'}")
            row.append(Cell(text, "pass" if ok else "fail"))
        rows.append(row)
    return Table(["SLO", "transport"] + labels, rows) if rows else Text("No run has SLOs.", "note")


def build(runs):
    cols = columns(runs)
    labels = _labels(runs)
    diffs = [f"{label}: verdict {runs[0].verdict.upper()} → {r.verdict.upper()}"
             for label, r in zip(labels[1:], runs[1:]) if r.verdict != runs[0].verdict]
    doc = Document(title=f"Drill comparison: {' vs '.join(labels)}", banner="", banner_tone="", meta=[])
    s_runs = doc.section("Runs")
    s_runs.add(Table(["run", "directory", "verdict", "scenario", "seed", "lab", "backend", "started", "mrclab"],
                     [[label, str(r.path), verdict_cell(r.verdict), r.result.get("scenario_file", ""),
                       r.result.get("seed", "–"), (r.result.get("lab") or {}).get("name", "–"),
                       r.result.get("backend", "netns"), fmt_time(r.started, r.result.get("time_base", "unix")),
                       (r.result.get("versions") or {}).get("mrclab", "–")]
                      for label, r in zip(labels, runs)]))
    s_diff = doc.section("Differences")
    s_side = doc.section("Transports side by side")
    s_side.add(side_by_side(cols, runs, labels, diffs))
    s_slo = doc.section("SLOs")
    s_slo.add(slo_table(runs, labels, diffs))
    s = doc.section("Step time distributions")
    colours = transport_colours([c.label for c in cols])
    data = [(c.label, analysis.measured_steps(c.t)) for c in cols]
    png = plots.step_distributions(data, colours)
    s.add(Figure("step-time-distributions", png, "Step times after warm-up (baseline, faults and tail) of every "
                                                 "column: box plots (p25–p75, whiskers p1–p99) and CDFs.")
          if png else Text("No run recorded steps.", "note"))
    s.add(Table(["column", "steps", "p50", "p90", "p99", "max"],
                [[label, len(v)] + ([fmt_seconds(float(np.percentile(v, q))) for q in (50, 90, 99)] +
                                    [fmt_seconds(float(v.max()))] if len(v) else ["–"] * 4) for label, v in data],
                caption="Percentiles over the same steps."))
    worse = len(diffs)
    doc.banner = (f"{worse} difference{'s' if worse != 1 else ''} flagged against {labels[0]}" if len(runs) > 1
                  else "One run: nothing to compare against; shown side by side")
    doc.banner_tone = "fail" if worse else "pass"
    doc.meta = [("Runs", str(len(runs))), ("Columns", ", ".join(c.label for c in cols)),
                ("Reference", f"{labels[0]} ({runs[0].path})")]
    if diffs:
        for d in diffs:
            s_diff.add(Text(d, "fail"))
    else:
        s_diff.add(Text(f"No verdict, SLO or ride-through changed and nothing is more than {THRESHOLD:.0f}% worse "
                        f"than {labels[0]}.", "pass"))
    return doc


def main(argv=None):
    parser = argparse.ArgumentParser(prog="mrclab compare", description=HELP,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Example: mrclab compare runs/*-default --out /tmp/cmp")
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories; the first is the reference")
    parser.add_argument("--out", default=".", metavar="DIR", help="where to write compare.html and compare.md "
                                                                  "(default: the current directory)")
    args = parser.parse_args(argv)
    try:
        runs = [rundir.load(d) for d in args.runs]
        out = Path(args.out)
        if out.exists() and not out.is_dir():
            raise rundir.RunDirError(f"{out}: --out must be a directory")
        out.mkdir(parents=True, exist_ok=True)
        doc = build(runs)
        footer = "Generated by mrclab compare from " + ", ".join(str(r.path) for r in runs)
        html_path, md_path = out / "compare.html", out / "compare.md"
        html_path.write_text(render_html.render(doc, footer))
        md_path.write_text(render_md.render(doc, out, "compare-files", footer))
    except rundir.RunDirError as e:
        print(f"mrclab compare: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"mrclab compare: error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    print(html_path)
    print(md_path)
    return 0
