"""A Document as Markdown; figures are written as PNG files into a folder beside it and
referenced relatively (e.g. report-files/step-time.png)."""
from pathlib import Path

from mrclab_reports.document import Code, Figure, Table, Text, cell

_TONE_MARK = {"pass": "✅ ", "fail": "❌ ", "worse": "⚠️ ", "inconclusive": "⚠️ ", "better": ""}


def _md(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(t):
    lines = []
    if t.caption:
        lines += [f"*{_md(t.caption)}*", ""]
    lines.append("| " + " | ".join(_md(h) for h in t.header) + " |")
    lines.append("|" + "---|" * len(t.header))
    for row in t.rows:
        cells = [cell(c) for c in row]
        lines.append("| " + " | ".join(
            f"**{_TONE_MARK.get(c.tone, '')}{_md(c.text)}**" if c.tone in ("pass", "fail", "worse")
            else _md(c.text) for c in cells) + " |")
    if t.note:
        lines += ["", f"*{_md(t.note)}*"]
    return "\n".join(lines)


def render(doc, out_dir, files_dir_name, footer=""):
    """Writes the figures into out_dir/files_dir_name/ and returns the Markdown text."""
    files = Path(out_dir) / files_dir_name
    files.mkdir(parents=True, exist_ok=True)
    for old in files.glob("*.png"):
        old.unlink()
    lines = [f"# {doc.title}", ""]
    if doc.banner:
        mark = _TONE_MARK.get(doc.banner_tone, "")
        lines += [f"**{mark}{doc.banner}**", ""]
    for k, v in doc.meta:
        lines.append(f"- {k}: `{v}`" if k.lower() in ("run directory", "scenario sha256", "lab digest")
                     else f"- {k}: {v}")
    lines.append("")
    lines.append(" · ".join(f"[{s.title}](#{s.anchor})" for s in doc.sections))
    for s in doc.sections:
        lines += ["", f"## {s.title}", ""]
        for b in s.blocks:
            if isinstance(b, Table):
                lines += [_table(b), ""]
            elif isinstance(b, Figure):
                (files / f"{b.name}.png").write_bytes(b.png)
                lines += [f"![{_md(b.caption)}]({files_dir_name}/{b.name}.png)", "", f"*{_md(b.caption)}*", ""]
            elif isinstance(b, Code):
                lines += ([f"*{_md(b.caption)}*", ""] if b.caption else []) + ["```yaml", b.text.rstrip(), "```", ""]
            elif isinstance(b, Text):
                lines += [f"*{b.text}*" if b.tone == "note" else (f"**{b.text}**" if b.tone else b.text), ""]
    if footer:
        lines += ["", "---", f"*{footer}*"]
    return "\n".join(lines).rstrip() + "\n"
