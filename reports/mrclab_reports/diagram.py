"""The lab drawn by plane from lab.json: spines on top, leaves below, hosts at the bottom; the
links and switches that faults hit in the fault kind's colour, labelled with the fault."""
import math

from matplotlib.lines import Line2D

from mrclab_reports import analysis
from mrclab_reports.document import fmt_rate
from mrclab_reports.style import fault_colour, figure, png


def _positions(names, y, width):
    n = max(len(names), 1)
    return {name: ((i + 0.5) / n * width, y) for i, name in enumerate(names)}


MAX_NODES_PER_PLANE = 256  # beyond it the boxes overlap and matplotlib takes minutes


def too_large_to_draw(lab):
    """Why the lab is not drawn (its nodes per plane, or its lists left out of lab.json), or ''."""
    if not lab:
        return ""
    if "not_listed" in lab:
        n = lab["not_listed"]
        return f"lab.json does not list its {n.get('nodes', 0):,} nodes and {n.get('links', 0):,} links ({n.get('why', '')})"
    most = max((len(p.get("spines", [])) + len(p.get("leaves", [])) + len(p.get("hosts", []))
                for p in lab.get("planes", [])), default=0)
    return f"{most} nodes in a plane, more than {MAX_NODES_PER_PLANE} can be drawn" if most > MAX_NODES_PER_PLANE else ""


def lab_diagram(lab, faults):
    """PNG of the lab; faults: the run's faults (one per index) whose targets are marked. None
    without a plan or for a lab too large to draw (too_large_to_draw)."""
    if not lab or not lab.get("planes") or too_large_to_draw(lab):
        return None
    planes = lab["planes"]
    hit_links, hit_nodes = {}, {}
    for f in faults:
        targets = analysis.fault_targets(f, lab)
        for link in targets.links:
            hit_links.setdefault(link, []).append(f)
        for node in targets.nodes:
            hit_nodes.setdefault(node, []).append(f)
    links = {l["index"]: l for l in lab.get("links", [])}
    ncols = min(len(planes), 2)
    nrows = math.ceil(len(planes) / ncols)
    fig, axes = figure(13, 3.6 * nrows + 0.5, nrows=nrows, ncols=ncols, squeeze=False)
    width = 10.0
    for ax in axes.flat:
        ax.axis("off")
    for ax, plane in zip(axes.flat, planes):
        pos = {}
        pos.update(_positions(plane.get("spines", []), 2.0, width))
        pos.update(_positions(plane.get("leaves", []), 1.0, width))
        hosts = plane.get("hosts", [])
        pos.update({h: (x, y) for h, (x, y) in _positions(hosts, 0.0, width).items()})
        small = len(hosts) > 16
        for link in (l for l in links.values() if l.get("plane") == plane["plane"]):
            a, b = link["a"]["node"], link["b"]["node"]
            if a not in pos or b not in pos:
                continue
            (xa, ya), (xb, yb) = pos[a], pos[b]
            hit = hit_links.get(link["index"])
            if hit:
                colour = fault_colour(hit[0].kind)
                ax.plot([xa, xb], [ya, yb], color=colour, lw=3.2, zorder=2, solid_capstyle="round")
                label = ", ".join(f"#{f.index} {f.kind}" for f in hit)
                ax.text((xa + xb) / 2, (ya + yb) / 2, label, fontsize=7.5, color=colour, ha="center", va="center",
                        fontweight="bold", zorder=5,
                        bbox=dict(boxstyle="round,pad=0.15", fc="white", ec=colour, lw=0.6))
            else:
                ax.plot([xa, xb], [ya, yb], color="#b8c2cc", lw=0.9, zorder=1)
        for name, (x, y) in pos.items():
            role = "host" if y == 0.0 else ("spine" if y == 2.0 else "leaf")
            hit = hit_nodes.get(name)
            face = {"spine": "#dbe9f6", "leaf": "#e3f1e1", "host": "#f2f2f2"}[role]
            edge = fault_colour(hit[0].kind) if hit else "#5a6a7a"
            text = name.split("-", 1)[-1] if role != "host" else name
            if small and role == "host":
                text = name.replace("host", "h")
            ax.text(x, y, text, ha="center", va="center", fontsize=6.5 if small else 8, zorder=4,
                    bbox=dict(boxstyle="round,pad=0.3", fc=face, ec=edge, lw=2.4 if hit else 0.8))
            if hit:
                ax.text(x, y + 0.22, ", ".join(f"#{f.index} {f.kind}" for f in hit), ha="center", va="bottom",
                        fontsize=7.5, color=edge, fontweight="bold", zorder=5)
        ax.set_xlim(-0.2, width + 0.2)
        ax.set_ylim(-0.35, 2.45)
        ax.set_title(f"plane {plane['plane']}: {len(plane.get('spines', []))} spines, "
                     f"{len(plane.get('leaves', []))} leaves, {len(hosts)} hosts", loc="left")
    handles = [Line2D([], [], color="#b8c2cc", lw=1, label="link")]
    seen = set()
    for f in faults:
        if f.index not in seen and (any(f in v for v in hit_links.values()) or any(f in v for v in hit_nodes.values())):
            seen.add(f.index)
            handles.append(Line2D([], [], color=fault_colour(f.kind), lw=3, label=f"#{f.index} {f.kind}"))
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 6), frameon=False)
    fig.suptitle(f"Lab {lab.get('name', '')}: {lab.get('plane_count', len(planes))} planes, "
                 f"{'BGP' if lab.get('routing') == 'bgp' else lab.get('routing', '')} routing, "
                 f"links {fmt_rate(lab.get('link_rate_bps'))}", x=0.01, ha="left", fontsize=10, fontweight="bold")
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    return png(fig)


