"""Derived series and facts from a loaded run (rundir.Run): rates from cumulative counters, EV
state fractions from ev_state events, fault targets from fault descriptions. Pure functions of
plain data; no plotting here."""
import re
from dataclasses import dataclass

import numpy as np

from mrclab_reports.rundir import EV_STATES

_LINK = re.compile(r"(\S+):(\S+) <-> (\S+):(\S+)")
_NODE_FAULT = re.compile(r"^(switch_down|bgp_reset|config_change) (\S+)")
_PLANE_DOWN = re.compile(r"^plane_down (\d+)")
_PORT_DISABLE = re.compile(r"^port_disable (\S+) plane (\d+)")


@dataclass
class FaultTargets:
    links: set      # link indexes in lab.json
    nodes: set      # switch names


def fault_targets(fault, lab):
    """What a fault hits in the lab, from its description (the drill's FaultAction::Describe)."""
    links, nodes = set(), set()
    if not lab:
        return FaultTargets(links, nodes)
    by_end = {}
    for link in lab.get("links", []):
        for side in ("a", "b"):
            by_end[(link[side]["node"], link[side]["interface"])] = link
    for part in fault.description.split("; "):
        part = part.split(": ", 1)[1] if part.startswith("flap") and ": " in part else part
        m = _LINK.search(part)
        if m and (m.group(1), m.group(2)) in by_end:
            links.add(by_end[(m.group(1), m.group(2))]["index"])
            continue
        m = _NODE_FAULT.match(part)
        if m:
            nodes.add(m.group(2))
            if m.group(1) == "switch_down":
                links |= {l["index"] for l in lab.get("links", []) if m.group(2) in (l["a"]["node"], l["b"]["node"])}
            continue
        m = _PLANE_DOWN.match(part)
        if m:
            links |= {l["index"] for l in lab.get("links", []) if not l.get("fabric") and l["plane"] == int(m.group(1))}
            continue
        m = _PORT_DISABLE.match(part)
        if m:
            links |= {l["index"] for l in lab.get("links", []) if not l.get("fabric")
                      and l["plane"] == int(m.group(2)) and m.group(1) in (l["a"]["node"], l["b"]["node"])}
    return FaultTargets(links, nodes)


def measured_steps(transport):
    """Step times after warm-up (baseline, faults and tail phases)."""
    return np.array([s.seconds for s in transport.steps if s.phase != "warmup"])


def fault_spans(transport, t0):
    """[(fault, [(x0, x1)])] relative to t0; a window still open ends at the transport's end."""
    end = transport.end if transport.end is not None else t0
    spans = []
    for f in transport.faults:
        spans.append((f, [(a - t0, (r if r is not None else max(end, a)) - t0) for a, r in f.windows]))
    return spans


def _rates(t, cumulative):
    """Per-interval rates of cumulative counters (rows) sampled at t; midpoints and rates."""
    if len(t) < 2:
        return np.array([]), np.zeros((cumulative.shape[0], 0))
    dt = np.diff(t)
    dt[dt <= 0] = np.nan
    with np.errstate(invalid="ignore"):
        rates = np.diff(cumulative, axis=1) / dt
    rates[~np.isfinite(rates) | (rates < 0)] = 0.0
    return (t[:-1] + t[1:]) / 2, rates


def goodput(series, mtu):
    """(x midpoints unix, {plane: Mbit/s}, {ev: Mbit/s summed over QPs}, evs sorted) of first
    transmissions (tx_data), from the per-second cumulative samples."""
    mid, rates = _rates(series.t, series.tx_data)
    mbps = rates * mtu * 8 / 1e6
    planes, evs = {}, {}
    for row, (_qp, ev, plane) in enumerate(series.keys):
        planes[plane] = planes.get(plane, 0) + mbps[row]
        evs[ev] = evs.get(ev, 0) + mbps[row]
    return mid, planes, evs


def ev_planes(series, events, job, plane_count):
    """{(qp, ev): plane} for a transport: from evs.csv, else ev % plane_count for EVs only seen in events."""
    planes = {(qp, ev): plane for qp, ev, plane in series.keys} if series else {}
    for e in events:
        if e["type"] == "ev_state" and e.get("job") == job and (e["qp"], e["ev"]) not in planes:
            planes[(e["qp"], e["ev"])] = e["ev"] % max(plane_count, 1)
    return planes


def ev_state_fractions(transport, events, plane_count, t0, t1, bins):
    """Time-weighted fraction of each plane's EVs in each state over bins of [t0, t1].
    Returns (edges relative to t0, {plane: array[len(EV_STATES), bins]}), or None without EVs."""
    planes = ev_planes(transport.ev_series, events, transport.name, plane_count)
    if not planes or t1 <= t0:
        return None
    first_state = {}
    if transport.ev_series is not None:
        s = transport.ev_series
        for row, (qp, ev, _plane) in enumerate(s.keys):
            sampled = s.state[row][s.state[row] >= 0]
            if len(sampled):
                first_state[(qp, ev)] = int(sampled[0])
    changes = {p: [] for p in set(planes.values())}   # plane -> [(t, state, delta)]
    initial = {p: np.zeros(len(EV_STATES)) for p in changes}
    seen = set()
    for e in events:
        if e["type"] != "ev_state" or e.get("job") != transport.name or e.get("to") not in EV_STATES:
            continue
        key = (e["qp"], e["ev"])
        plane = planes[key]
        if key not in seen:
            seen.add(key)
            first_state[key] = EV_STATES.index(e["from"]) if e.get("from") in EV_STATES else 0
        # Each EV enters through its "from" state; later transitions move one unit.
        changes[plane].append((e["t"], EV_STATES.index(e["from"]) if e.get("from") in EV_STATES else 0, -1))
        changes[plane].append((e["t"], EV_STATES.index(e["to"]), +1))
    for key, plane in planes.items():
        initial[plane][first_state.get(key, 0)] += 1
    edges = np.linspace(t0, t1, bins + 1)
    out = {}
    for plane in sorted(changes):
        n = sum(1 for p in planes.values() if p == plane)
        frac = np.zeros((len(EV_STATES), bins))
        for state in range(len(EV_STATES)):
            pts = sorted((t, d) for t, s, d in changes[plane] if s == state)
            times = np.array([t0] + [min(max(t, t0), t1) for t, _ in pts] + [t1])
            counts = initial[plane][state] + np.concatenate([[0], np.cumsum([d for _, d in pts])])
            # integral of the step function count(t) at every change point, then at the bin edges
            integral = np.concatenate([[0], np.cumsum(counts * np.diff(times))])
            at_edges = np.interp(edges, times, integral)
            frac[state] = np.diff(at_edges) / np.diff(edges) / n
        out[plane] = np.clip(frac, 0, 1)
    return edges - t0, out


def link_rates(link):
    """(midpoints unix, tx packets/s, rx packets/s, drops/s) of one link end's samples."""
    t = link["t"]
    cumulative = np.vstack([link["tx_packets"], link["rx_packets"], link["rx_dropped"] + link["tx_dropped"]])
    mid, rates = _rates(t, cumulative)
    return mid, rates[0], rates[1], rates[2]


def link_drops(links):
    """[(end, link, rx_dropped, tx_dropped, rx_packets, tx_packets)] over the run, most drops first."""
    rows = []
    for end, l in links.items():
        grow = lambda a: float(a[-1] - a[0]) if len(a) > 1 else 0.0  # noqa: E731
        rows.append((end, l["link"], grow(l["rx_dropped"]), grow(l["tx_dropped"]),
                     grow(l["rx_packets"]), grow(l["tx_packets"])))
    return sorted(rows, key=lambda r: (-(r[2] + r[3]), r[0]))


def routing_events(events):
    return [e for e in events if e["type"] in ("bgp", "bfd")]


def transport_at(run, t):
    """Name of the transport whose job ran at unix time t, or ''."""
    for tr in run.transports:
        if tr.start is not None and tr.end is not None and tr.start - 1 <= t <= tr.end + 0.5:
            return tr.name
    return ""


def percent_change(new, old):
    if new is None or old is None or old == 0:
        return None
    return (new - old) / old * 100
