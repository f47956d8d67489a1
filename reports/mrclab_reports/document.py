"""The content of a report or a comparison, independent of its format: a title, a verdict banner,
sections of paragraphs, tables and figures. render_html and render_md turn it into files."""
import datetime
from dataclasses import dataclass, field


@dataclass
class Cell:
    text: str
    tone: str = ""        # "", "pass", "fail", "worse", "better", "muted"


@dataclass
class Table:
    header: list
    rows: list            # lists of Cell or str
    caption: str = ""
    note: str = ""        # e.g. "first 200 of 1300 rows"


@dataclass
class Figure:
    name: str             # file stem, unique within the document
    png: bytes
    caption: str


@dataclass
class Text:
    text: str
    tone: str = ""        # "", "note", "fail", "pass"


@dataclass
class Code:
    text: str
    caption: str = ""


@dataclass
class Section:
    title: str
    blocks: list = field(default_factory=list)

    @property
    def anchor(self):
        return "".join(c if c.isalnum() else "-" for c in self.title.lower()).strip("-")

    def add(self, block):
        if block is not None:
            self.blocks.append(block)
        return block


@dataclass
class Document:
    title: str
    banner: str                      # one line, e.g. "Verdict: PASS"
    banner_tone: str                 # "pass" | "fail" | "inconclusive" | ""
    meta: list                       # [(key, value)]
    sections: list = field(default_factory=list)

    def section(self, title):
        s = Section(title)
        self.sections.append(s)
        return s


def cell(value, tone=""):
    return value if isinstance(value, Cell) else Cell(str(value), tone)


def fmt_seconds(v, digits=3):
    return "–" if v is None else f"{v:.{digits}f} s"


def fmt_bytes(n):
    if n is None:
        return "–"
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def fmt_rate(bps):
    """A link rate: "100 Gbit/s", "81 Mbit/s"; "unshaped" for none."""
    if not bps:
        return "unshaped"
    return f"{bps / 1e9:g} Gbit/s" if bps >= 1e9 else f"{bps / 1e6:g} Mbit/s"


def fmt_number(v, digits=1):
    if v is None:
        return "–"
    return f"{v:,.{digits}f}" if isinstance(v, float) else f"{v:,}"


def pass_fail(ok):
    return Cell("PASS", "pass") if ok else Cell("FAIL", "fail")


def verdict_cell(verdict, suffix=""):
    """A drill's verdict: pass, fail, or inconclusive (the machine was the bottleneck)."""
    tone = {"pass": "pass", "inconclusive": "worse"}.get(verdict, "fail")
    return Cell(verdict.upper() + suffix, tone)


def fmt_time(t, time_base="unix"):
    """A drill's clock reading: a UTC date for emulated runs, seconds for simulated ones."""
    if t is None:
        return "–"
    if time_base == "simulated":
        return f"{t:.3f} s simulated"
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
