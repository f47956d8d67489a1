"""`mrclab report RUN_DIR`: the report of one drill run as RUN_DIR/report.html (one
self-contained file) and RUN_DIR/report.md (figures in RUN_DIR/report-files/)."""
import argparse
import sys

from mrclab_reports import analysis, diagram, plots, render_html, render_md, rundir
from mrclab_reports.document import (Cell, Code, Document, Figure, Table, Text, fmt_bytes, fmt_number, fmt_rate,
                                     fmt_seconds, fmt_time, pass_fail)

HELP = """\
Writes the report of one drill run (a directory made by `mrclab drill`, e.g.
runs/20261121T210213Z-default/) into that directory:

  report.html       one self-contained file (plots embedded; no scripts, no external links)
  report.md         Markdown, with its plots in report-files/*.png

What it shows, top to bottom: the verdict and every SLO (pass/fail); whether this machine kept
up (emulation fidelity: an INCONCLUSIVE verdict says why); per transport whether the
job rode through (and why not), steps, steps/min, step-time p50/p99, bytes verified and lost,
CPU; the faults and their recovery times; step time over time with every fault window shaded
and labelled, the baseline p50 and the step-time bound; goodput per plane and per EV; the
fraction of EVs ASSUMED_BAD / DENIED per plane; link drops and packets on the faulted links;
BGP/BFD state changes; the lab drawn by plane with the faulted links and switches marked.

Needs result.json; every other file of the run directory may be missing (its section says so).
Exit status: 0 written, 2 missing or malformed run directory (the message names the file).
"""

JOB_PHASES = "warm-up, baseline, faults, tail"


def backend_text(result):
    """'netns (emulated lab, real time)' or 'ns3 (simulated: 27.7 s simulated in 51.2 s of wall time)'."""
    backend = result.get("backend", "netns")
    if result.get("time_base") == "simulated":
        return (f"{backend} (simulation: {fmt_seconds(result.get('seconds'), 1)} simulated in "
                f"{fmt_seconds(result.get('wall_seconds'), 1)} of wall time)")
    return f"{backend} (emulated lab, real time)"


def _mtu(run):
    if isinstance(run.result.get("mtu"), int):  # the job's payload per packet, as the drill ran it
        return run.result["mtu"]
    try:
        import yaml
        doc = yaml.safe_load(run.scenario_text) or {}
        return int((doc.get("job") or {}).get("mtu", 1024))
    except Exception:  # the scenario is informative only; the drill validated it
        return 1024


def _ride_through(t):
    if t.rode_through:
        return Cell("yes", "pass")
    why = t.job.get("reason") or (f"{t.job.get('bytes_lost')} bytes lost" if t.job.get("bytes_lost") else
                                  f"job {t.job.get('state')}")
    return Cell(f"no: {why}", "fail")


def slo_table(run):
    rows = []
    for s in run.slos:
        rows.append([s.get("slo", ""), s.get("transport") or "all", pass_fail(bool(s.get("pass"))),
                     fmt_number(s.get("value"), 3), fmt_number(s.get("max"), 3), s.get("detail", ""),
                     s.get("field", "")])
    return Table(["SLO", "transport", "result", "value", "max", "detail", "scenario field"], rows)


def transport_table(run):
    rows = []
    for t in run.transports:
        st = t.step_time
        rows.append([f"{t.name} ({t.kind})", _ride_through(t), t.job.get("state", ""),
                     fmt_number(t.job.get("steps")), fmt_number(t.steps_per_minute),
                     fmt_seconds(st.get("baseline_p50")), fmt_seconds(st.get("p50")), fmt_seconds(st.get("p99")),
                     fmt_seconds(st.get("max")), fmt_bytes(t.job.get("bytes_verified")),
                     Cell(fmt_bytes(t.job.get("bytes_lost")), "fail" if t.job.get("bytes_lost") else ""),
                     fmt_number(t.job.get("retransmissions")), fmt_seconds(t.cpu_seconds, 1)])
    return Table(["transport", "rode through", "job", "steps", "steps/min", "baseline p50", "p50",
                  "p99", "max", "bytes verified", "bytes lost", "retransmits", "CPU"], rows,
                 caption="p50/p99/max are over the steps after the baseline; 'rode through' = never interrupted "
                         "and no bytes lost.")


def fault_table(run):
    faults = {}
    for t in run.transports:
        for f in t.faults:
            faults.setdefault(f.index, f)
    plan = {f.get("index"): f for f in run.result.get("faults", []) if isinstance(f, dict)}
    rows = []
    for index in sorted(set(faults) | set(plan)):
        f = faults.get(index)
        p = plan.get(index, {})
        windows = p.get("windows") or []
        when = ", ".join(f"{w.get('apply', 0):g}–{w['revert']:g} s" if w.get("revert") is not None
                         else f"{w.get('apply', 0):g} s–end" for w in windows[:6])
        if len(windows) > 6:
            when += f" (+{len(windows) - 6})"
        row = [f"#{index}", f.kind if f else p.get("kind", ""), f.description if f else p.get("description", ""),
               when]
        for t in run.transports:
            tf = next((x for x in t.faults if x.index == index), None)
            if tf is None or not tf.windows:
                row.append(Cell("not applied", "muted"))
            elif tf.recovery_seconds is None:
                row.append(Cell("no recovery", "fail"))
            else:
                row.append(fmt_seconds(tf.recovery_seconds))
        rows.append(row)
    return Table(["fault", "kind", "description", "schedule (after the baseline)"] +
                 [f"recovery {t.name}" for t in run.transports], rows,
                 caption="Recovery = from the fault being applied to the first step that ends within the step-time "
                         "bound; 'not applied' = the transport's job ended before the fault's time.") if rows else None


def routing_table(run, limit=200):
    events = analysis.routing_events(run.events)
    if not events:
        return Text("No BGP or BFD state changes were observed.", "note")
    rows = [[f"{e['t'] - run.started:.2f}", analysis.transport_at(run, e["t"]) or "–", e["type"].upper(),
             e.get("node", ""), e.get("peer", ""), f"{e.get('from', '')} → {e.get('to', '')}"]
            for e in events[:limit]]
    return Table(["t (s since start)", "during", "type", "node", "peer", "change"], rows,
                 note=f"First {limit} of {len(events)} changes." if len(events) > limit else "")


def capacity_table(run):
    """Each transport's demand on this machine (result.json capacity): is link_rate or the machine
    what sets the step time?"""
    cap = run.result.get("capacity")
    if not cap:
        return None
    if "not_measured" in cap:
        return Text(f"This machine's capacity was not measured: {cap['not_measured']}.", "note")
    machine = cap.get("machine", {})
    rows = []
    for name, d in (cap.get("transports") or {}).items():
        factor = d.get("scale_factor", 0)
        rows.append([name, fmt_number(d.get("packets_per_step", 0)),
                     fmt_seconds(d["fabric_seconds"]) if d.get("fabric_seconds") else "not shaped",
                     fmt_seconds(d.get("machine_seconds", 0)),
                     Cell(f"{factor:.1f}", "worse" if factor > 1 else "") if factor else "–",
                     fmt_rate(d["faithful_link_rate_bps"]) if d.get("faithful_link_rate_bps") else "–"])
    return Table(["transport", "data packets per step", "at link_rate", "on this machine (at least)", "scale factor",
                  "link_rate the machine keeps up with"], rows,
                 caption=f"This machine forwards {machine.get('packet_hops_per_second', 0) / 1e6:.2f}M packet-hops/s "
                         f"at mtu {machine.get('mtu', '–')} (`mrclab capacity`). Scale factor = time on this machine "
                         "/ time at link_rate: above 1, this machine, not link_rate, sets the step time, so absolute "
                         "step times are that much slower than the emulated fabric's (at the last column's link_rate or "
                         "less, the links would set it). The machine time counts packets, "
                         "not what each message, QP and EV costs the endpoints: a lower bound.")


def fidelity_section(s, run):
    """Whether this machine kept up (result.json emulation_fidelity, fidelity.csv) and what the
    job asked of it (capacity)."""
    if (table := capacity_table(run)) is not None:
        s.add(table)
    f = run.result.get("emulation_fidelity")
    if not f:
        s.add(Text("Not recorded (a run directory of an older mrclab).", "note"))
        return
    if f.get("status") == "not measured":
        s.add(Text(f"Not measured: {f.get('why', '')}.", "note"))
        return
    ok = f.get("status") == "ok"
    th = f.get("thresholds", {})
    s.add(Text("OK: the machine kept up with the lab during the baseline and every fault window." if ok else
               "INCONCLUSIVE: " + "; ".join(f.get("reasons", [])) + ".", "pass" if ok else "fail"))
    caption = (f"A second is saturated when the CPUs were at least {100 * th['cpu_busy']:.0f}% busy and the "
               f"drill's threads waited for a CPU at least {100 * th['run_wait']:.0f}% of the time they wanted one "
               f"(or its 2 ms timer's p99 lateness reached {th['timer_late_p99_ms']:g} ms); when the hypervisor took "
               f"at least {100 * th.get('steal', 0):.0f}% of the CPUs; or when the timer's p99 lateness reached "
               f"{th.get('very_late_p99_ms', 0):g} ms however idle the CPUs were.") if th else ""
    s.add(Table(["figure", "value"], [
        ["CPUs busy, max over the seconds", f"{100 * f.get('cpu_busy_max', 0):.0f}%"],
        ["CPUs taken by the hypervisor (steal), max", f"{100 * f.get('steal_max', 0):.0f}%"],
        ["drill threads waiting for a CPU, max", f"{100 * f.get('run_wait_max', 0):.0f}%"],
        ["timer wake-up delay p99, max", f"{f.get('timer_late_p99_ms_max', 0):.2f} ms"],
        ["saturated seconds", f"{f.get('saturated_seconds', 0)} of {f.get('samples', 0)}"],
        ["routing sessions down with no fault to explain it", str(f.get("unexplained_routing_downs", 0))]],
        caption=caption))
    rows = [[i["what"], f"{i['from'] - run.started:.1f}–{i['to'] - run.started:.1f}",
             f"{i['saturated_seconds']} of {i['seconds']}",
             Cell("emulator-bound", "fail") if i["emulator_bound"] else Cell("ok", "pass")]
            for i in f.get("intervals", [])]
    if rows:
        s.add(Table(["interval", "t (s since start)", "saturated seconds", "judged"], rows,
                    caption="Judged intervals: each transport's baseline and every fault window (until 2 s after its "
                            "revert)." + (f" Emulator-bound: at least {th['min_saturated_seconds']} saturated seconds "
                                          f"and at least {100 * th['min_saturated_share']:.0f}% of them." if th else "")))


def started_text(result, started):
    """When the drill started and how long it lasted; a simulation's in simulated and wall time."""
    time_base = result.get("time_base", "unix")
    text = f"{fmt_time(started, time_base)}, lasted {fmt_seconds(result.get('seconds'), 3 if time_base == 'simulated' else 1)}"
    if time_base == "simulated":
        text += f" simulated ({fmt_seconds(result.get('wall_seconds'), 1)} of wall time)"
    return text


def build(run):
    failed = [s for s in run.slos if not s.get("pass")]
    banner = f"Verdict: {run.verdict.upper()}" + (
        f" — {len(run.slos) - len(failed)} of {len(run.slos)} SLOs passed" if run.slos else " — no SLOs")
    lab = run.result.get("lab") or {}
    doc = Document(
        title=f"Drill report: {run.label}", banner=banner,
        banner_tone=run.verdict if run.verdict in ("pass", "inconclusive") else "fail",
        meta=[("Run directory", str(run.path)), ("Scenario", f"{run.result.get('scenario_file', '')} "
                                                              f"(seed {run.result.get('seed', '–')})"),
              ("Scenario sha256", run.result.get("scenario_sha256", "–")),
              ("Lab", f"{lab.get('name', '–')} (digest {str(lab.get('digest', '–'))[:16]})"),
              ("Backend", backend_text(run.result)),
              ("Started", started_text(run.result, run.started)),
              ("Versions", ", ".join(f"{k} {v}" for k, v in (run.result.get("versions") or {}).items()
                                     if not isinstance(v, dict)))])
    s = doc.section("Verdict and SLOs")
    s.add(slo_table(run) if run.slos else Text("The scenario has no SLOs.", "note"))
    for f in failed:
        s.add(Text(f"FAILED {f.get('slo')} ({f.get('transport') or 'all'}): value {f.get('value')}, "
                   f"max {f.get('max')}. {f.get('detail', '')}", "fail"))
    for line in run.result.get("not_tested") or []:
        s.add(Text(f"NOT TESTED: {line}. The drill did not do what its scenario says; it cannot pass.", "fail"))
    s = doc.section("Emulation fidelity")
    fidelity_section(s, run)
    s = doc.section("Transports")
    s.add(transport_table(run))
    s = doc.section("Faults")
    if s.add(fault_table(run)) is None:
        s.add(Text("The scenario injects no faults.", "note"))

    s = doc.section("Step time")
    png = plots.step_timeline(run)
    s.add(Figure("step-time", png, f"Step time of every step ({JOB_PHASES}) against the time since the transport's "
                                   "first step. Shaded: fault windows, labelled #index kind (full descriptions in "
                                   "the legend); dashed: baseline p50; dotted: the step-time bound used for recovery.")
          if png else Text("No steps were recorded (steps.csv is missing or empty).", "note"))

    s = doc.section("Goodput")
    mtu = _mtu(run)
    png = plots.goodput(run, mtu)
    s.add(Figure("goodput", png, f"First transmissions (tx_data) per second x {mtu} B payload, from the per-second "
                                 "EV counters of evs.csv: left per plane (all QPs), right per EV summed over all "
                                 "QPs (pN: the EV's plane).")
          if png else Text("No EV samples (evs.csv is missing or has fewer than two samples).", "note"))

    s = doc.section("EV states")
    png = plots.ev_states(run, (run.lab or {}).get("plane_count", 1))
    s.add(Figure("ev-states", png, "From the ev_state events: for each plane, the fraction of its EVs (over all QPs) "
                                   "that were ASSUMED_BAD or DENIED, averaged over each bin; the rest are GOOD. "
                                   "Square-root colour scale, so brief excursions stay visible. Top row: faults.")
          if png else Text("No EV state data.", "note"))
    counts = {}
    for e in run.events:
        if e["type"] == "ev_state":
            counts[(e.get("job"), e.get("to"))] = counts.get((e.get("job"), e.get("to")), 0) + 1
    if counts:
        s.add(Table(["transport", "to GOOD", "to ASSUMED_BAD", "to DENIED"],
                    [[t.name] + [fmt_number(counts.get((t.name, st), 0)) for st in rundir.EV_STATES]
                     for t in run.transports], caption="EV state changes (count of ev_state events)."))
    names = {t.name for t in run.transports}
    qp_errors = [e for e in run.events if e["type"] == "qp_state" and e.get("job") in names]
    if qp_errors:
        s.add(Table(["t (s since start)", "transport", "QP", "state", "reason"],
                    [[f"{e['t'] - run.started:.2f}", e.get("job", ""), e.get("qp", ""), Cell(e.get("to", ""), "fail"),
                      e.get("reason", "")] for e in qp_errors[:50]], caption="QP state changes."))

    s = doc.section("Links")
    all_faults = {f.index: f for t in run.transports for f in t.faults}
    faulted = set()
    for f in all_faults.values():
        faulted |= analysis.fault_targets(f, run.lab).links
    if not run.links:
        s.add(Text("No link samples (links.csv is missing or empty).", "note"))
    else:
        png = plots.link_drops(run)
        s.add(Figure("link-drops", png, "Packets dropped per link end (node:interface) over the whole run, from the "
                                        "kernel's interface counters in links.csv (the faults' own "
                                        "drops, by nftables rules, are not in these counters).")
              if png else Text("No link end dropped a packet (kernel counters).", "note"))
        by_link = {}
        for f in all_faults.values():
            for link in analysis.fault_targets(f, run.lab).links:
                by_link.setdefault(link, []).append(f"#{f.index} {f.kind}")
        rows = [[end, link, ", ".join(by_link.get(link, [])) or "–", fmt_number(int(rp)), fmt_number(int(tp)),
                 Cell(fmt_number(int(rx)), "worse" if rx else ""), Cell(fmt_number(int(tx)), "worse" if tx else "")]
                for end, link, rx, tx, rp, tp in analysis.link_drops(run.links) if rx + tx > 0 or link in by_link]
        if rows:
            s.add(Table(["link end", "link", "faulted by", "rx packets", "tx packets", "rx dropped", "tx dropped"],
                        rows[:40], caption="Link ends on faulted links or with drops, over the whole run.",
                        note=f"First 40 of {len(rows)}." if len(rows) > 40 else ""))
    png = plots.drill_timeline(run, faulted)
    if png:
        s.add(Figure("timeline", png, "The whole drill on one clock: each transport's job with its fault windows, "
                                      "packets sent per second on the faulted links (both ends), and BGP/BFD state "
                                      "changes per second."))

    s = doc.section("BGP and BFD")
    s.add(routing_table(run))

    s = doc.section("Lab")
    png = diagram.lab_diagram(run.lab, list(all_faults.values()))
    too_large = diagram.too_large_to_draw(run.lab)
    if png:
        s.add(Figure("lab", png, "The lab by plane (spines, leaves, hosts); links and switches hit by a fault are "
                                 "drawn in the fault kind's colour and labelled #index kind."))
    elif too_large:
        s.add(Text(f"The lab is not drawn: {too_large}; the faults' targets are listed under Faults and Links.", "note"))
    else:
        s.add(Text("No lab plan (lab.json is missing).", "note"))
    if run.scenario_text:
        s = doc.section("Scenario")
        s.add(Code(run.scenario_text, "scenario.yaml as given to the drill"))
    return doc


def write(run):
    doc = build(run)
    footer = f"Generated by mrclab report from {run.path}"
    html_path, md_path = run.path / "report.html", run.path / "report.md"
    html_path.write_text(render_html.render(doc, footer))
    md_path.write_text(render_md.render(doc, run.path, "report-files", footer))
    return html_path, md_path


def main(argv=None):
    parser = argparse.ArgumentParser(prog="mrclab report", description=HELP,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Example: mrclab report runs/20261121T210213Z-default && "
                                            "chromium runs/20261121T210213Z-default/report.html")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="run directory of `mrclab drill`")
    args = parser.parse_args(argv)
    try:
        run = rundir.load(args.run_dir)
        paths = write(run)
    except rundir.RunDirError as e:
        print(f"mrclab report: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # e.g. a read-only run directory
        print(f"mrclab report: error: {e.filename or args.run_dir}: cannot write the report: {e.strerror or e}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    for p in paths:
        print(p)
    return 0
