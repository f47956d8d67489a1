"""The report's and the comparison's charts, as PNG bytes (style.png). Each function takes
loaded runs (rundir.Run) and returns None when there is nothing to draw."""
import textwrap

import numpy as np
from matplotlib.colors import PowerNorm
from matplotlib.lines import Line2D
from matplotlib.cm import ScalarMappable
from matplotlib.patches import Patch, Rectangle

from mrclab_reports import analysis
from mrclab_reports.rundir import EV_STATES
from mrclab_reports.style import PLANE_COLOURS, STATE_COLOURMAPS, fault_colour, figure, png, transport_colours


def _short(text, width=95):
    return textwrap.shorten(text, width=width, placeholder=" …")


def _shade_faults(ax, spans, xmax=None, label_rows=True):
    """Shades every window of every fault; labels each fault once, staggered so labels of faults
    that start together stay readable (and right-aligned near the right edge xmax)."""
    for row, (fault, windows) in enumerate(spans):
        colour = fault_colour(fault.kind)
        for x0, x1 in windows:
            ax.axvspan(x0, max(x1, x0 + 0.05), color=colour, alpha=0.16, lw=0)
            ax.axvline(x0, color=colour, lw=0.8, alpha=0.7)
        if label_rows and windows:
            right = xmax is not None and windows[0][0] > 0.85 * xmax
            ax.text(windows[0][1] if right else windows[0][0], 1.0 - 0.11 * (row % 4),
                    f"#{fault.index} {fault.kind} " if right else f" #{fault.index} {fault.kind}",
                    transform=ax.get_xaxis_transform(), va="top", ha="right" if right else "left", fontsize=8,
                    color=colour, fontweight="bold",
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.8))


def _fault_handles(faults):
    seen, handles = set(), []
    for f in faults:
        if f.index in seen:
            continue
        seen.add(f.index)
        handles.append(Patch(facecolor=fault_colour(f.kind), alpha=0.35,
                             label=_short(f"#{f.index} {f.description or f.kind}")))
    return handles


def step_timeline(run):
    """Step time per transport over its own time, faults shaded and labelled, baseline p50 and bound."""
    transports = [t for t in run.transports if t.steps]
    if not transports:
        return None
    colours = transport_colours([t.name for t in run.transports])
    fig, axes = figure(12, 2.9 * len(transports) + 0.9, nrows=len(transports), squeeze=False, sharex=True)
    xmax = max(t.end - t.start for t in transports)
    for ax, t in zip(axes[:, 0], transports):
        t0 = t.start
        _shade_faults(ax, analysis.fault_spans(t, t0), xmax)
        x = np.array([s.end - t0 for s in t.steps])
        y = np.array([s.seconds for s in t.steps])
        warm = np.array([s.phase == "warmup" for s in t.steps])
        ax.plot(x, y, color=colours[t.name], lw=1.2, zorder=3)
        ax.scatter(x[~warm], y[~warm], s=14, color=colours[t.name], zorder=4)
        ax.scatter(x[warm], y[warm], s=14, facecolor="white", edgecolor=colours[t.name], zorder=4)
        p50 = t.step_time.get("baseline_p50")
        top = max([y.max(), t.step_time_bound or 0, p50 or 0])
        ax.set_ylim(0, top * 1.35)
        marks = []
        if p50:
            ax.axhline(p50, color="#555555", ls="--", lw=1)
            marks.append((p50, f"baseline p50\n{p50:.3f} s", "#555555"))
        if t.step_time_bound:
            ax.axhline(t.step_time_bound, color="#c0392b", ls=":", lw=1.3)
            marks.append((t.step_time_bound, f"bound\n{t.step_time_bound:.3f} s", "#c0392b"))
        last = None
        for value, text, colour in sorted(marks):  # right of the axes, kept apart
            pos = value if last is None else max(value, last + 0.16 * top * 1.35)
            ax.text(1.005, pos, text, transform=ax.get_yaxis_transform(), ha="left", va="center",
                    fontsize=7.5, color=colour, clip_on=False)
            last = pos
        if t.job.get("state") not in ("completed", None):
            ax.axvline(t.end - t0, color="#c0392b", lw=2)
            left = (t.end - t0) > 0.6 * xmax  # keep the note inside the axes
            ax.text(t.end - t0 + (-0.01 if left else 0.01) * xmax, 0.5,
                    f"{t.job.get('state')}:\n{_short(t.job.get('reason', ''), 60)}", transform=ax.get_xaxis_transform(),
                    color="#c0392b", fontsize=8, fontweight="bold", va="center", ha="right" if left else "left",
                    bbox=dict(boxstyle="round,pad=0.3", fc="white", ec="#c0392b", lw=0.8))
        ax.set_xlim(0, xmax * 1.01)
        verdict = "rode through" if t.rode_through else "did NOT ride through"
        ax.set_title(f"{t.name} ({t.kind}): {len(t.steps)} steps, {verdict}",
                     loc="left", color=colours[t.name])
        ax.set_ylabel("step time (s)")
    axes[-1, 0].set_xlabel("seconds since the transport's first step")
    handles = [Line2D([], [], color="#555555", marker="o", ms=4, label="step (hollow: warm-up)"),
               Line2D([], [], color="#555555", ls="--", label="baseline p50"),
               Line2D([], [], color="#c0392b", ls=":", label="step-time bound")]
    handles += _fault_handles([f for t in transports for f in t.faults])
    fig.legend(handles=handles, loc="lower center", ncol=2, frameon=False, bbox_to_anchor=(0.5, -0.01))
    fig.tight_layout(rect=(0, 0.035 * (len(handles) + 1) / 2 / max(len(transports), 1), 1, 1))
    return png(fig)


def _time_heatmap(ax, x_edges, rows, values, cmap, norm, labels):
    mesh = ax.pcolormesh(x_edges, np.arange(len(rows) + 1), values, cmap=cmap, norm=norm, shading="flat")
    step = max(1, -(-len(rows) // 16))
    ax.set_yticks(np.arange(0, len(rows), step) + 0.5)
    ax.set_yticklabels(labels[::step], fontsize=6.5)
    ax.invert_yaxis()
    ax.grid(False)
    return mesh


def goodput(run, mtu):
    """Per transport: goodput per plane (lines) and per EV over all QPs (heat map), in Mbit/s."""
    transports = [t for t in run.transports if t.ev_series is not None and len(t.ev_series.t) >= 2]
    if not transports:
        return None
    fig, axes = figure(13, 3.1 * len(transports), nrows=len(transports), ncols=2, squeeze=False,
                       gridspec_kw={"width_ratios": [1, 1.25]})
    for (ax_line, ax_map), t in zip(axes, transports):
        t0 = t.start if t.start is not None else t.ev_series.t[0]
        mid, planes, evs = analysis.goodput(t.ev_series, mtu)
        x = mid - t0
        _shade_faults(ax_line, analysis.fault_spans(t, t0), (t.end or t.ev_series.t[-1]) - t0)
        for plane in sorted(planes):
            ax_line.plot(x, planes[plane], color=PLANE_COLOURS[plane % len(PLANE_COLOURS)], lw=1.6,
                         marker="o", ms=3, label=f"plane {plane}")
        ax_line.plot(x, sum(planes.values()), color="#222222", lw=1, ls="--", label="all planes")
        ax_line.set_ylim(bottom=0)
        ax_line.set_title(f"{t.name}: goodput per plane", loc="left")
        ax_line.set_ylabel("Mbit/s (first transmissions)")
        ax_line.set_xlabel("seconds since the transport's first step")
        ax_line.legend(loc="lower left", ncol=3, frameon=True)
        plane_of = {ev: plane for _qp, ev, plane in t.ev_series.keys}
        ev_ids = sorted(evs, key=lambda e: (plane_of[e], e))
        values = np.vstack([evs[e] for e in ev_ids])
        edges = t.ev_series.t - t0  # rate j is over [t_j, t_j+1]
        mesh = _time_heatmap(ax_map, edges, ev_ids, values, "viridis", None,
                             [f"EV {e} (p{plane_of[e]})" for e in ev_ids])
        for row in range(1, len(ev_ids)):
            if plane_of[ev_ids[row]] != plane_of[ev_ids[row - 1]]:
                ax_map.axhline(row, color="white", lw=1.5)
        xmax = (t.end if t.end is not None else t.ev_series.t[-1]) - t0
        ax_line.set_xlim(0, xmax)
        ax_map.set_xlim(0, max(xmax, edges[-1]))
        for _fault, windows in analysis.fault_spans(t, t0):
            for x0, x1 in windows:
                ax_map.axvline(x0, color="white", lw=0.8, ls="--")
        cb = fig.colorbar(mesh, ax=ax_map, pad=0.01)
        cb.set_label("Mbit/s, summed over QPs")
        qps = len({k[0] for k in t.ev_series.keys})
        ax_map.set_title(f"{t.name}: goodput per EV ({qps} QPs; dashed: fault applied)", loc="left")
        ax_map.set_xlabel("seconds since the transport's first step")
    fig.tight_layout()
    return png(fig)


def ev_states(run, plane_count):
    """Per transport: heat map of the time-weighted fraction of each plane's EVs ASSUMED_BAD (and
    DENIED, when any EV was), the rest being GOOD, under a strip of the fault windows."""
    rows = []
    for t in run.transports:
        if t.start is None or t.end is None:
            continue
        bins = int(np.clip((t.end - t.start) / 0.25, 20, 400))
        fr = analysis.ev_state_fractions(t, run.events, plane_count, t.start, t.end, bins)
        if fr:
            rows.append((t, fr))
    if not rows:
        return None
    denied = any(e["type"] == "ev_state" and e.get("to") == "DENIED" for e in run.events)
    shown = ("ASSUMED_BAD", "DENIED") if denied else ("ASSUMED_BAD",)
    heights = [1 + len(fr[1]) * len(shown) for _t, fr in rows]
    fig, axes = figure(13, 1.0 + 0.42 * sum(heights) + 0.5 * len(rows), nrows=len(rows), squeeze=False,
                       layout="constrained", gridspec_kw={"height_ratios": heights})
    cmaps = STATE_COLOURMAPS
    norm = PowerNorm(gamma=0.5, vmin=0, vmax=1)
    for ax, (t, (edges, fractions)) in zip(axes[:, 0], rows):
        spans = analysis.fault_spans(t, t.start)
        for fault, windows in spans:  # the fault strip, row 0
            for x0, x1 in windows:
                ax.add_patch(Rectangle((x0, 0.1), max(x1 - x0, 0.05), 0.8, facecolor=fault_colour(fault.kind),
                                       edgecolor="none", alpha=0.85))
            if windows:
                ax.text(windows[0][0], 0.5, f" #{fault.index} {fault.kind}", va="center", ha="left", fontsize=7,
                        color="white" if fault.kind == "blackhole" else "#111111", clip_on=True)
        labels, y = ["faults"], 1
        for plane in sorted(fractions):
            for state in shown:
                ax.pcolormesh(edges, [y, y + 1], fractions[plane][EV_STATES.index(state)][None, :],
                              cmap=cmaps[state], norm=norm, shading="flat")
                labels.append(f"plane {plane} {state}")
                y += 1
        ax.set_ylim(y, 0)
        ax.set_xlim(edges[0], edges[-1])
        ax.set_yticks(np.arange(y) + 0.5)
        ax.set_yticklabels(labels)
        ax.hlines(range(1, y), edges[0], edges[-1], color="#cccccc", lw=0.6)
        ax.grid(False)
        changes = sum(1 for e in run.events if e["type"] == "ev_state" and e.get("job") == t.name)
        ax.set_title(f"{t.name}: fraction of each plane's EVs in a state other than GOOD "
                     f"({changes} state changes; {edges[1] - edges[0]:.2f} s bins)", loc="left")
        ax.set_xlabel("seconds since the transport's first step")
    for state in shown:
        cb = fig.colorbar(ScalarMappable(norm=norm, cmap=cmaps[state]), ax=axes[:, 0].tolist(), pad=0.01,
                          fraction=0.02, aspect=25)
        cb.set_label(f"fraction {state} (time-weighted)")
        cb.set_ticks([0, 0.01, 0.05, 0.25, 0.5, 1])
        cb.set_ticklabels(["0", "1%", "5%", "25%", "50%", "100%"])
    return png(fig)


def link_drops(run, top=10):
    """Top link ends by packets dropped (rx and tx), or None when nothing was dropped."""
    rows = [r for r in analysis.link_drops(run.links) if r[2] + r[3] > 0][:top]
    if not rows:
        return None
    fig, ax = figure(10, 0.9 + 0.3 * len(rows))
    names = [f"{end} (link {link})" for end, link, *_ in rows]
    rx = np.array([r[2] for r in rows])
    tx = np.array([r[3] for r in rows])
    ax.barh(names, rx, color="#4c72b0", label="rx dropped")
    ax.barh(names, tx, left=rx, color="#dd8452", label="tx dropped")
    ax.invert_yaxis()
    ax.set_xlabel("packets dropped over the run")
    ax.set_title(f"Top {len(rows)} link ends by drops", loc="left")
    ax.legend(loc="lower right")
    fig.tight_layout()
    return png(fig)


def drill_timeline(run, faulted_links):
    """The whole drill on one clock: transports' jobs and fault windows, packets/s on the faulted
    links, BGP/BFD events per second."""
    t0 = run.started
    if t0 is None or not any(t.start is not None for t in run.transports):
        return None
    by_link = {}
    for end, l in sorted(run.links.items()):
        if l["link"] in faulted_links:
            by_link.setdefault(l["link"], []).append((end, l))
    links = sorted(by_link.items())[:6]
    routing = analysis.routing_events(run.events)
    nrows = 2 + (1 if links else 0)
    ratios = [0.35 + 0.25 * len(run.transports)] + [2] * (nrows - 1)
    fig, axes = figure(12, 1.2 + 0.5 * len(run.transports) + 2.3 * (nrows - 1), nrows=nrows, sharex=True,
                       squeeze=False, gridspec_kw={"height_ratios": ratios})
    axes = axes[:, 0]
    colours = transport_colours([t.name for t in run.transports])
    ax = axes[0]
    for i, t in enumerate(run.transports):
        if t.start is None:
            continue
        ax.broken_barh([(t.start - t0, t.end - t.start)], (i - 0.4, 0.8), color=colours[t.name], alpha=0.25)
        for fault, windows in analysis.fault_spans(t, t0):
            ax.broken_barh([(a, max(b - a, 0.05)) for a, b in windows], (i - 0.3, 0.6), color=fault_colour(fault.kind))
        ax.text(t.end - t0, i, f" {t.job.get('state')}", va="center", fontsize=8)
    ax.set_yticks(range(len(run.transports)))
    ax.set_yticklabels([t.name for t in run.transports])
    ax.set_ylim(len(run.transports) - 0.5, -0.5)
    ax.grid(False)
    ax.set_title("Each transport's job (band) and its fault windows", loc="left")
    handles = _fault_handles([f for t in run.transports for f in t.faults])
    if handles:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.1), frameon=False, fontsize=7)
    for lower in axes[1:]:
        for t in run.transports:
            for fault, windows in analysis.fault_spans(t, t0):
                for a, b in windows:
                    lower.axvspan(a, max(b, a + 0.05), color=fault_colour(fault.kind), alpha=0.12, lw=0)
    if links:
        ax = axes[1]
        for i, (link, ends) in enumerate(links):
            for j, (end, l) in enumerate(ends):
                mid, txr, _rxr, _drops = analysis.link_rates(l)
                ax.plot(mid - t0, txr, lw=1.3, ls="-" if j == 0 else "--", label=f"link {link}: {end} sends",
                        color=PLANE_COLOURS[i % len(PLANE_COLOURS)])
        ax.set_ylabel("packets/s")
        ax.set_ylim(bottom=0)
        ax.set_title("Packets sent on the faulted links, each end (solid: a-end, dashed: b-end)", loc="left")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=7)
    ax = axes[-1]
    if routing:
        span = max(e["t"] for e in run.events) - t0
        bins = np.arange(0, span + 1.0, 1.0)
        data = [[e["t"] - t0 for e in routing if e["type"] == kind] for kind in ("bgp", "bfd")]
        ax.hist(data, bins=bins, stacked=True, color=["#4c72b0", "#dd8452"],
                label=[f"BGP session changes ({len(data[0])})", f"BFD peer changes ({len(data[1])})"])
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=7)
    else:
        ax.text(0.5, 0.5, "no BGP or BFD state changes", transform=ax.transAxes, ha="center", color="#777777")
    ax.set_ylabel("changes per second")
    ax.set_title("BGP and BFD state changes (all switches)", loc="left")
    ax.set_xlabel("seconds since the drill started")
    ax.set_xlim(left=0)
    fig.tight_layout()
    return png(fig)


def step_distributions(columns, colours):
    """Comparison: [(label, step seconds)] as box plots and CDFs on one axis each."""
    columns = [(label, s) for label, s in columns if len(s)]
    if not columns:
        return None
    fig, (ax_box, ax_cdf) = figure(13, 0.8 + max(3.2, 0.42 * len(columns)), ncols=2,
                                   gridspec_kw={"width_ratios": [1, 1.2]})
    bp = ax_box.boxplot([s for _l, s in columns], vert=False, labels=[l for l, _s in columns],
                        patch_artist=True, showfliers=True, whis=(1, 99))
    for patch, (label, _s) in zip(bp["boxes"], columns):
        patch.set_facecolor(colours[label])
        patch.set_alpha(0.55)
    for median in bp["medians"]:
        median.set_color("#111111")
    ax_box.invert_yaxis()
    ax_box.set_xlabel("step time (s)")
    ax_box.set_title("Step time after warm-up (box: p25–p75, whiskers: p1–p99)", loc="left")
    for label, s in columns:
        xs = np.sort(s)
        ax_cdf.step(xs, np.arange(1, len(xs) + 1) / len(xs), where="post", color=colours[label], lw=1.6,
                    label=f"{label} (n={len(xs)})")
    ax_cdf.set_xlabel("step time (s)")
    ax_cdf.set_ylabel("fraction of steps ≤ x")
    ax_cdf.set_ylim(0, 1.02)
    ax_cdf.set_title("Step time CDF", loc="left")
    ax_cdf.legend(loc="lower right")
    fig.tight_layout()
    return png(fig)
