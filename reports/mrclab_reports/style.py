"""One place for the look of every figure: colours per transport, EV state and fault kind, the
matplotlib style, and the PNG encoding."""
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TRANSPORT_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"]
KNOWN_TRANSPORTS = {"mrc": "#1f77b4", "rc": "#ff7f0e"}
STATE_COLOURMAPS = {"ASSUMED_BAD": "Reds", "DENIED": "Purples"}  # white = GOOD
FAULT_COLOURS = {
    "flap": "#e7298a", "link_down": "#d95f02", "blackhole": "#404040", "loss": "#e6ab02",
    "rate": "#7570b3", "switch_down": "#a6761d", "plane_down": "#1b9e77", "bgp_reset": "#66a61e",
    "config_change": "#377eb8", "ev_deny": "#984ea3", "port_disable": "#a65628",
}
PLANE_COLOURS = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"]
DPI = 100


def fault_colour(kind):
    return FAULT_COLOURS.get(kind, "#999999")


def transport_colours(names):
    """Stable colours: mrc blue and rc orange wherever they appear, others from the palette."""
    out, spare = {}, [c for c in TRANSPORT_COLOURS if c not in KNOWN_TRANSPORTS.values()]
    for name in names:
        base = name.rsplit("/", 1)[-1]
        colour = KNOWN_TRANSPORTS.get(base)
        if colour is None or colour in out.values():
            colour = spare.pop(0) if spare else "#333333"
        out[name] = colour
    return out


def figure(width, height, **kwargs):
    plt.rcParams.update({
        "font.size": 9, "axes.titlesize": 10, "axes.titleweight": "bold", "axes.labelsize": 9,
        "legend.fontsize": 8, "axes.spines.top": False, "axes.spines.right": False,
        "axes.grid": True, "grid.color": "#e5e5e5", "grid.linewidth": 0.6, "axes.axisbelow": True,
        "font.family": "DejaVu Sans",
    })
    return plt.subplots(figsize=(width, height), dpi=DPI, **kwargs)


def png(fig):
    """PNG bytes of a figure, which is closed."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight", facecolor="white")
    plt.close(fig)
    return buf.getvalue()


def grouped_bars(ax, groups, series, value, colours):
    """One group of bars per name in `groups`, one bar per name in `series` (coloured by
    `colours`, labelled in the first group); value(group, series) is the height, or None for
    none (drawn as an x on the axis)."""
    width = 0.8 / len(series)
    for j, name in enumerate(series):
        for i, group in enumerate(groups):
            x = i + (j - (len(series) - 1) / 2) * width
            height = value(group, name)
            if height is None:
                ax.plot(x, 0, "x", color=colours[name], markersize=7)
            else:
                ax.bar(x, height, width, color=colours[name], label=name if i == 0 else None)

