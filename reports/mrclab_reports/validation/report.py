"""What a validation found, in the formats people read it in: validation.json (everything),
junit.xml (one case per scenario and figure), and a Document for validation.html/.md (verdicts,
every figure's samples, change and confidence, a picture of the spread, and the first pair of runs
side by side as `mrclab compare` shows them)."""
import math
import re
import xml.etree.ElementTree as ET

import numpy as np

from mrclab_reports import compare, style
from mrclab_reports.document import Cell, Document, Figure, Table, Text, fmt_number, fmt_seconds

ORDER = {"worse": 0, "better": 1, "same": 2}
TONE = {"worse": "fail", "better": "better", "same": ""}
MAX_PLOTTED = 14


def fmt_value(value, unit):
    if isinstance(value, bool):
        return "pass" if value else "FAIL"
    if value is None:
        return "–"
    if math.isinf(value):
        return "never"
    if unit == "s":
        return fmt_seconds(value)
    return fmt_number(float(value), 0 if unit == "count" else 2)


def fmt_samples(values, unit):
    if unit == "pass":
        return f"{sum(values)}/{len(values)} passed"
    if not values:
        return "–"
    med = float(np.median(values))
    return f"{fmt_value(med, unit)} [{fmt_value(min(values), unit)} … {fmt_value(max(values), unit)}]"


def fmt_change(j):
    if j.key.unit == "pass":
        return f"{j.shift * 100:+.0f} pp pass rate" if j.shift else "±0"
    if not math.isfinite(j.shift):
        return "never recovers" if j.shift > 0 else "now recovers"
    text = fmt_value(abs(j.shift), j.key.unit)
    text = ("+" if j.shift >= 0 else "−") + text
    return text + (f" ({j.change_percent:+.0f}%)" if j.change_percent is not None else "")


def fmt_percent_confidence(p_value):
    """1 − p as a percentage with as many digits as it takes never to round up to 100%."""
    if p_value >= 0.001:
        return f"{(1 - p_value) * 100:.1f}%"
    if p_value <= 1e-8:
        return "> 99.999999%"
    digits = min(6, int(-math.log10(p_value)) - 1)
    return f"{math.floor((1 - p_value) * 100 * 10 ** digits) / 10 ** digits:.{digits}f}%"


def by_fault_group(judgements):
    """Judgements grouped where they differ only in the fault (`recovery #3 blackhole` and
    `recovery #4 blackhole` of one transport and verdict), in report order."""
    groups = {}
    for j in sorted(judgements, key=lambda j: (ORDER[j.verdict], j.key.label)):
        key = (j.verdict, j.key.transport, re.sub(r"#\d+ ", "#", j.key.name))
        groups.setdefault(key, []).append(j)
    return list(groups.values())


def describe(group):
    """One line for a group of judgements: the figure, both labs' medians, change, confidence."""
    j = group[0]
    if len(group) == 1:
        return (f"{j.key.label}: {fmt_samples(j.baseline, j.key.unit)} → {fmt_samples(j.candidate, j.key.unit)}, "
                f"{fmt_change(j)}, confidence {fmt_percent_confidence(j.p_value)}")
    faults = "#" + ",".join(re.search(r"#(\d+)", g.key.name).group(1) for g in group)
    name = re.sub(r"#\d+", faults, j.key.name)
    unit = j.key.unit

    def span(values):
        lo, hi = min(values), max(values)
        return fmt_value(lo, unit) if lo == hi else f"{fmt_value(lo, unit)} … {fmt_value(hi, unit)}"

    medians = lambda side: [float(np.median(getattr(g, side))) for g in group]  # noqa: E731
    return (f"{j.key.transport + ': ' if j.key.transport else ''}{name}: medians "
            f"{span(medians('baseline'))} → {span(medians('candidate'))}, confidence at least "
            f"{fmt_percent_confidence(max(g.p_value for g in group))}")


def label_list(judgements, most=3):
    """'mrc: step time p99, rc: worst recovery and 2 more'."""
    labels = [j.key.label for j in judgements]
    more = len(labels) - most
    return ", ".join(labels[:most]) + (f" and {more} more" if more > 0 else "")


def fmt_level(s):
    if not any(j.looks_worse(s["alpha"]) for j in s["judgements"]):
        return (f"judged on {s['runs_judged']} runs per lab; no figure looks worse even before the correction for "
                f"the number of figures (p ≤ {s['alpha']:g})")
    level, reachable = s["levels"]["worse"]
    return (f"judged on {s['runs_judged']} runs per lab; worse takes p ≤ {level:.2g} (alpha {s['alpha']:g} with "
            f"Tarone's correction), which {reachable} of {len(s['judgements'])} figures can reach")


def fmt_confidence(j):
    return "–" if j.verdict == "same" and not j.shift else fmt_percent_confidence(j.p_value)


def scenario_verdict(s):
    # A figure shown worse is a regression, whatever other figures the runs cannot tell about.
    if any(j.verdict == "worse" for j in s["judgements"]):
        return "regression"
    return "inconclusive" if s["inconclusive"] else "pass"


def _json_value(v):
    if isinstance(v, float) and math.isinf(v):
        return "never"
    return v


def to_json(v):
    """validation.json: the whole validation; infinite values (never) as the string 'never'."""
    return {
        "verdict": v["verdict"], "exit_status": v["exit_status"],
        "baseline": v["baseline"], "candidate": v["candidate"], "runs": v["runs"], "max_runs": v["max_runs"],
        "alpha": v["alpha"],
        "min_change_percent": v["min_change"] * 100, "backend": v["backend"] or "netns",
        "scenarios": [{
            "scenario": s["runs"].name, "file": s["runs"].scenario, "verdict": scenario_verdict(s),
            "inconclusive": s["inconclusive"], "runs_per_lab": s["runs_judged"], "alpha": s["alpha"],
            "levels": {d: {"p": level, "reachable_figures": n} for d, (level, n) in s["levels"].items()},
            "runs": [{"side": r.side, "index": r.index, "seed": r.seed, "verdict": r.verdict,
                      "run_dir": r.run_dir, "seconds": round(r.seconds, 2), "attempts": r.attempts}
                     for r in s["runs"].records],
            "figures": [{"transport": j.key.transport, "figure": j.key.name, "unit": j.key.unit,
                         "higher_is_worse": j.key.direction > 0 if j.key.direction else None,
                         "baseline": [_json_value(x) for x in j.baseline],
                         "candidate": [_json_value(x) for x in j.candidate], "verdict": j.verdict,
                         "shift": _json_value(j.shift), "change_percent": j.change_percent,
                         "p_value": j.p_value, "confidence": j.confidence, "p_worse": j.p_worse,
                         "p_better": j.p_better, "level": j.level, "notes": j.notes}
                        for j in s["judgements"]],
        } for s in v["scenarios"]],
    }


def junit(v):
    root = ET.Element("testsuites", name="mrclab validate")
    for s in v["scenarios"]:
        name = s["runs"].name
        cases = sorted(s["judgements"], key=lambda j: j.key.label)
        suite = ET.SubElement(root, "testsuite", name=f"validate.{name}", tests=str(len(cases)),
                              failures=str(sum(j.verdict == "worse" for j in cases)),
                              skipped=str(len(cases) if s["inconclusive"] else 0))
        for j in cases:
            case = ET.SubElement(suite, "testcase", classname=f"validate.{name}", name=j.key.label)
            line = (f"{j.key.label}: baseline {fmt_samples(j.baseline, j.key.unit)}, candidate "
                    f"{fmt_samples(j.candidate, j.key.unit)}, change {fmt_change(j)}, confidence "
                    f"{fmt_percent_confidence(j.p_value)}")
            if s["inconclusive"]:
                ET.SubElement(case, "skipped", message=s["inconclusive"])
            elif j.verdict == "worse":
                ET.SubElement(case, "failure", message=f"worse: {line}")
            ET.SubElement(case, "system-out").text = line
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def _spread_plot(judgements, title):
    """Each numeric figure a row: baseline and candidate runs as dots, divided by the baseline median."""
    plottable = [j for j in judgements if j.key.direction != 0 and j.baseline and j.candidate
                 and not j.key.name.startswith("SLO")
                 and all(math.isfinite(x) for x in j.baseline) and float(np.median(j.baseline)) > 0]
    # One row per group of faults judged alike (its first fault), worse figures first.
    groups = by_fault_group(plottable)
    rows = [g[0] for g in groups][:MAX_PLOTTED]
    more = {id(g[0]): len(g) - 1 for g in groups}
    if not rows:
        return None
    fig, ax = style.figure(8, 0.9 + 0.32 * len(rows))
    colours = {"worse": "#d62728", "better": "#1f77b4", "same": "#2ca02c"}
    cap = 10.0
    for y, j in enumerate(reversed(rows)):
        med = float(np.median(j.baseline))
        ax.scatter([min(x / med, cap) for x in j.baseline], [y + 0.12] * len(j.baseline), s=14, color="#888888",
                   label="baseline runs" if y == 0 else None)
        ax.scatter([min(x / med, cap) if math.isfinite(x) else cap for x in j.candidate], [y - 0.12] * len(j.candidate),
                   s=14, color=colours[j.verdict], marker="D")
    ax.axvline(1.0, color="#bbbbbb", lw=0.8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{j.key.label} ({j.verdict}{f'; {more[id(j)]} more faults alike' if more[id(j)] else ''})"
                        for j in reversed(rows)])
    ax.set_xlim(left=0, right=max(2.0, ax.get_xlim()[1]))
    ax.set_xlabel(f"value / the baseline's median (capped at {cap:.0f}); diamonds: the candidate's runs")
    ax.set_title(title)
    ax.legend(loc="upper right", fontsize=7)
    return style.png(fig)


def switch_software(v, role):
    """What FRR the lab's switches ran, as its first conclusive run recorded it ("" if none did)."""
    for s in v["scenarios"]:
        for r in s["runs"].conclusive(role):
            frr = (r.run.result.get("versions") or {}).get("frr")
            if frr:
                return f"; FRR {frr}"
    return ""


def document(v):
    b, c = v["baseline"], v["candidate"]
    worse = [(s, j) for s in v["scenarios"] for j in s["judgements"] if j.verdict == "worse"]
    banner = {"pass": f"No regression: nothing is worse on {c['name']} than on {b['name']}",
              "regression": f"Regression: {len(worse)} figure{'s' if len(worse) != 1 else ''} worse on {c['name']}",
              "inconclusive": "Inconclusive: this machine was the bottleneck in too many runs"}[v["verdict"]]
    doc = Document(title=f"Validation: {c['name']} against {b['name']}", banner=banner,
                   banner_tone={"pass": "pass", "regression": "fail"}.get(v["verdict"], "inconclusive"),
                   meta=[("Baseline", f"{b['name']} ({b['spec']}{switch_software(v, 'baseline')})"),
                         ("Candidate", f"{c['name']} ({c['spec']}{switch_software(v, 'candidate')})"),
                         ("Runs", f"{v['runs']} per lab and scenario, {v['max_runs']} where a figure looked worse "
                                  f"after those; interleaved, seeds from the scenario's"),
                         ("Test", f"one-sided Mann–Whitney U / Fisher exact at p ≤ alpha / K (alpha {v['alpha']} for "
                                  f"the whole validation; K by Tarone's correction: figures that cannot reach the "
                                  f"level do not count), and a shift of at least {v['min_change'] * 100:.0f}% of the "
                                  f"baseline median"),
                         ("Backend", v["backend"] or "netns")])
    s_all = doc.section("Verdict per scenario")
    s_all.add(Table(["scenario", "verdict", "worse", "better", "same", "conclusive runs (baseline + candidate)",
                     "worse takes p ≤"],
                    [[s["runs"].name, Cell(scenario_verdict(s).upper(), {"pass": "pass", "regression": "fail"}
                                           .get(scenario_verdict(s), "worse")),
                      sum(j.verdict == "worse" for j in s["judgements"]),
                      sum(j.verdict == "better" for j in s["judgements"]),
                      sum(j.verdict == "same" for j in s["judgements"]),
                      f"{len(s['runs'].conclusive('baseline'))} + {len(s['runs'].conclusive('candidate'))}",
                      f"{s['levels']['worse'][0]:.2g}"]
                     for s in v["scenarios"]]))
    for s in v["scenarios"]:
        for group in by_fault_group([j for j in s["judgements"] if j.verdict == "worse"]):
            s_all.add(Text(f"{s['runs'].name}: worse: {describe(group)}", "fail"))
    for s in v["scenarios"]:
        name = s["runs"].name
        sec = doc.section(f"Scenario {name}")
        if s["inconclusive"]:
            sec.add(Text(s["inconclusive"], "note"))
        sec.add(Text(fmt_level(s)[0].upper() + fmt_level(s)[1:] + "."))
        png = _spread_plot(s["judgements"], f"{name}: every run of both labs")
        if png:
            sec.add(Figure(f"spread-{name}", png, "Each figure's runs divided by the baseline's median: grey dots "
                                                  "the baseline, diamonds the candidate."))
        rows = []
        for j in sorted(s["judgements"], key=lambda j: (ORDER[j.verdict], j.key.label)):
            rows.append([j.key.label, fmt_samples(j.baseline, j.key.unit), fmt_samples(j.candidate, j.key.unit),
                         fmt_change(j), fmt_confidence(j), Cell(j.verdict, TONE[j.verdict]),
                         "; ".join(j.notes)])
        sec.add(Table(["figure", "baseline median [min … max]", "candidate median [min … max]",
                       "change (Hodges–Lehmann)", "confidence", "verdict", "notes"], rows,
                      caption="Confidence: 1 − the one-sided p-value of the change's direction, before the "
                              "correction for the number of figures."))
        pair = [s["runs"].conclusive("baseline")[:1], s["runs"].conclusive("candidate")[:1]]
        if all(pair):
            cmp = compare.build([pair[0][0].run, pair[1][0].run])
            for part in cmp.sections:
                if part.title in ("Transports side by side", "SLOs"):
                    sub = doc.section(f"{name}: first pair of runs, {part.title.lower()} (mrclab compare)")
                    sub.blocks = part.blocks
        sec_runs = doc.section(f"{name}: runs")
        sec_runs.add(Table(["lab", "run", "seed", "verdict", "seconds", "run directory"],
                           [[r.side, r.index + 1, r.seed, r.verdict + (" (second attempt)" if r.attempts > 1 else ""),
                             f"{r.seconds:.1f}", Cell(r.run_dir, "muted")] for r in s["runs"].records]))
    return doc
