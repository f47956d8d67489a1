"""`mrclab validate --baseline LAB_A --candidate LAB_B SCENARIO... [--runs N]`: does a change (a
lab file with another configuration, another router version) make training ride through worse?"""
import argparse
import json
import math
import signal
import sys
import time
from pathlib import Path

from mrclab_reports import render_html, render_md
from mrclab_reports.validation import figures, judge, report, runner

HELP = """\
Runs each scenario on the baseline lab and on the candidate lab, --runs times each (more when in
doubt, up to --max-runs), with the same seeds (the scenario's seed, +1, +2, ...) and the two
labs' runs interleaved, then compares every figure of the runs: step time (baseline p50, p50, p99
after the baseline), steps/min, retransmissions, EV state changes, bytes lost, each fault's
recovery time and the routing convergence it caused (first BGP/BFD session down after the fault,
last one back up after its revert), whether each transport rode through, and every SLO's value
and pass.

For each figure it says better, same or worse, by how much (the Hodges–Lehmann shift: the median
of all candidate − baseline differences) and with what confidence. Worse means both:
  - a one-sided Mann–Whitney U test (pass/fail figures: Fisher's exact test) gives a p-value at
    most alpha / K: a scenario has dozens of figures, and at p <= alpha each, noise alone would
    make one of them "worse" in about one validation in ten. K counts the figures that could
    reach that level at all (Tarone's correction), and --alpha is shared by the scenarios, so
    the chance of any false alarm in a validation stays at most --alpha;
  - and the shift is at least --min-change of the baseline's median.
After --runs runs per lab, a scenario where no figure looks worse even before that correction
is done (a change that makes no difference usually costs only --runs runs); otherwise it runs up
to --max-runs and is judged on all of them. With 5 then 10 runs a regression must show in
(nearly) every candidate run against every baseline run; at 5 runs alone nothing can pass the
correction.

Labs: a lab file is deployed by validate and destroyed at the end (also on error or Ctrl-C); two
files with the same lab name take turns. A deployed lab's name is used as it is. A drill whose
verdict is inconclusive (this machine was the bottleneck) runs once more with the same seed.

Writes into --out DIR: validation.html, validation.md, validation.json, junit.xml (one test case
per scenario and figure) and every drill's run directory under SCENARIO/baseline|candidate/.
Exit status: 0 no regression, 1 a regression (the figures are named; also when other figures
look worse with too few runs to show it), 2 bad input or environment, 3 inconclusive (no figure
shown worse, and this machine was the bottleneck in too many runs: fewer than 3 conclusive runs
of a lab, or a figure that looks worse with too few conclusive runs to show it), 130 interrupted.
"""

EXAMPLE = """\
Example: BFD relaxed to 1 s (labs/clos2-slow-bfd.yaml) against the default lab
  mrclab validate --baseline labs/clos2.yaml --candidate labs/clos2-slow-bfd.yaml \\
      scenarios/validate-silent-spine.yaml --out /tmp/validation
"""


def parse(argv):
    p = argparse.ArgumentParser(prog="mrclab validate", description=HELP, epilog=EXAMPLE,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--baseline", required=True, metavar="LAB", help="lab file (or deployed lab) as it is today")
    p.add_argument("--candidate", required=True, metavar="LAB", help="lab file (or deployed lab) with the change")
    p.add_argument("scenarios", nargs="+", metavar="SCENARIO", help="scenario files to run on both")
    p.add_argument("--runs", type=int, default=5, help="drills per lab and scenario before the first judgement "
                                                       "(default 5; at least 2)")
    p.add_argument("--max-runs", type=int, metavar="N", help="drills per lab and scenario when a figure looks "
                                                              "worse after --runs (default twice --runs; "
                                                              "--runs: never more)")
    p.add_argument("--alpha", type=float, default=0.01, help="the chance of a false alarm anywhere in the "
                                                             "validation, at most (default 0.01)")
    p.add_argument("--min-change", type=float, default=20.0, metavar="PERCENT",
                   help="smallest shift, in percent of the baseline median, that counts (default 20)")
    p.add_argument("--backend", choices=["netns", "ns3"], help="netns (emulated labs) or ns3 (simulated; "
                                                               "deterministic per seed). Default: the scenarios' "
                                                               "backend key, else netns")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="output directory (default runs/<time>-validate)")
    p.add_argument("--json", action="store_true", help="print validation.json instead of the summary")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    a = p.parse_args(argv)
    if a.runs < 2 or a.runs > 100:
        p.error(f"--runs {a.runs}: must be 2 to 100")
    a.max_runs = 2 * a.runs if a.max_runs is None else a.max_runs
    if a.max_runs < a.runs or a.max_runs > 200:
        p.error(f"--max-runs {a.max_runs}: must be --runs ({a.runs}) to 200")
    if not 0 < a.alpha < 1:
        p.error(f"--alpha {a.alpha}: must be between 0 and 1")
    if not 0 <= a.min_change < 1000:
        p.error(f"--min-change {a.min_change}: must be 0 to 1000 percent")
    for s in a.scenarios:
        if not Path(s).is_file():
            p.error(f"{s}: no such scenario file")
    return a


def _summary(v):
    lines = []
    for s in v["scenarios"]:
        js = s["judgements"]
        counts = {k: sum(j.verdict == k for j in js) for k in ("worse", "better", "same")}
        lines.append(f"{s['runs'].name}: {report.scenario_verdict(s).upper()}: {counts['worse']} worse, "
                     f"{counts['better']} better, {counts['same']} same "
                     f"({len(s['runs'].conclusive('baseline'))} + {len(s['runs'].conclusive('candidate'))} "
                     f"conclusive runs; {report.fmt_level(s)})")
        if s["inconclusive"]:
            lines.append(f"  {s['inconclusive']}")
        for group in report.by_fault_group([j for j in js if j.verdict != "same"]):
            lines.append(f"  {group[0].verdict}: {report.describe(group)}")
    return lines


def _inconclusive(runs, judgements, first_runs, alpha):
    """Why a scenario's runs cannot tell ("" when they can)."""
    needed = min(3, first_runs)
    short = [role for role in ("baseline", "candidate") if len(runs.conclusive(role)) < needed]
    if short:
        return (f"fewer than {needed} conclusive runs on the {' and '.join(short)} lab: this machine was the "
                f"bottleneck twice in a row (see those runs' result.json)")
    doubtful = judge.unprovable(judgements, alpha)
    if doubtful:
        counts = " + ".join(str(len(runs.conclusive(role))) for role in ("baseline", "candidate"))
        level = doubtful[0].level
        said = (f"{report.label_list(doubtful)} look{'s' if len(doubtful) == 1 else ''} worse, but {counts} "
                f"conclusive runs cannot show it at p ≤ {level:.2g}")
        if any(r.run is None for r in runs.records):
            return (f"{said} (this machine was the bottleneck in the others: see their result.json); run again on "
                    f"a quieter machine or with a larger --max-runs")
        # Every run counted: only more runs can reach the level (at best p = 1 / C(2n, n) with n per lab).
        n = next(n for n in range(2, 1000) if 1 / math.comb(2 * n, n) <= level)
        return f"{said} (the least p of so few runs is {doubtful[0].least_p_worse:.2g}); run with --max-runs {n} or more"
    return ""


def validate(a, progress):
    """Runs everything; returns the validation (a dict) with its verdict and exit status."""
    a.backend = a.backend or runner.declared_backend(a.scenarios)
    sides = [runner.Side("baseline", a.baseline), runner.Side("candidate", a.candidate)]
    deployed = set() if a.backend == "ns3" else runner.deployed_labs()
    for side in sides:
        runner.resolve(side, a.backend, deployed)
    if sides[0].file is None and sides[0].name == sides[1].name:
        raise runner.ValidateError(f"--baseline and --candidate are the same deployed lab {sides[0].name}")
    checked = [runner.check_scenario(s, sides, a.backend) for s in a.scenarios]
    names = [c.name for c in checked]
    for c in checked:
        if names.count(c.name) > 1:
            raise runner.ValidateError(f"{c.scenario}: another scenario given is also named {c.name} (their runs "
                                       f"and report sections would mix)")
    out = Path(a.out or f"runs/{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-validate")
    if out.exists() and not out.is_dir():
        raise runner.ValidateError(f"--out {out}: not a directory")
    out.mkdir(parents=True, exist_ok=True)
    labs = runner.Labs(progress)
    scenarios = []
    alpha = a.alpha / len(checked)  # each scenario's share: a false alarm in any of them is one
    try:
        for runs in checked:
            def figures_after(n, runs=runs):
                runner.run_scenario(runs, sides, n, a.max_runs if n > a.runs else a.runs, out, labs, a.backend,
                                    progress)
                return ([figures.of_run(r.run) for r in runs.conclusive(role) if r.index < n]
                        for role in ("baseline", "candidate"))

            def more(looks_worse, runs=runs):
                progress(f"{runs.name}: {report.label_list(looks_worse)} look{'s' if len(looks_worse) == 1 else ''} "
                         f"worse before correcting for the number of figures: {a.max_runs - a.runs} more runs per lab "
                         f"to tell")

            judgements, levels, judged = judge.sequential(figures_after, a.runs, a.max_runs, alpha,
                                                          a.min_change / 100, more)
            scenarios.append({"runs": runs, "judgements": judgements, "levels": levels, "alpha": alpha,
                              "runs_judged": judged,
                              "inconclusive": _inconclusive(runs, judgements, a.runs, alpha)})
    finally:
        labs.close()
    verdicts = [report.scenario_verdict(s) for s in scenarios]
    verdict = "regression" if "regression" in verdicts else "inconclusive" if "inconclusive" in verdicts else "pass"
    v = {"verdict": verdict, "exit_status": {"pass": 0, "regression": 1, "inconclusive": 3}[verdict],
         "baseline": {"spec": a.baseline, "name": sides[0].name, "file": str(sides[0].file or "")},
         "candidate": {"spec": a.candidate, "name": sides[1].name, "file": str(sides[1].file or "")},
         "runs": a.runs, "max_runs": a.max_runs, "alpha": a.alpha, "min_change": a.min_change / 100, "backend": a.backend,
         "scenarios": scenarios, "out": out}
    doc = report.document(v)
    footer = "Generated by mrclab validate"
    (out / "validation.html").write_text(render_html.render(doc, footer))
    (out / "validation.md").write_text(render_md.render(doc, out, "validation-files", footer))
    v["json"] = report.to_json(v)
    (out / "validation.json").write_text(json.dumps(v["json"], indent=2) + "\n")
    (out / "junit.xml").write_text(report.junit(v))
    return v


def main(argv=None):
    a = parse(argv)
    progress = (lambda line: None) if a.quiet else (lambda line: print(f"validate: {line}", file=sys.stderr,
                                                                        flush=True))
    # SIGTERM unwinds like Ctrl-C: the running drill reverts its faults, the labs are destroyed.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        v = validate(a, progress)
    except runner.ValidateError as e:
        print(f"mrclab validate: error: {e}", file=sys.stderr)
        return 2
    except (runner.Interrupted, KeyboardInterrupt):
        print("mrclab validate: interrupted; the labs it deployed were destroyed", file=sys.stderr)
        return 130
    except OSError as e:
        print(f"mrclab validate: error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps(v["json"], indent=2))
    else:
        for line in _summary(v):
            print(line)
        print(f"verdict: {v['verdict'].upper()}; report: {v['out'] / 'validation.html'}")
    return v["exit_status"]
