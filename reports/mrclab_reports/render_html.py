"""A Document as ONE self-contained HTML file: inline CSS, figures as base64 PNG data URIs, no
scripts, no external fonts or links."""
import base64
import html

from mrclab_reports.document import Code, Figure, Table, Text, cell

CSS = """
:root { --pass:#1e7e34; --pass-bg:#e6f4ea; --fail:#b3261e; --fail-bg:#fce8e6; --muted:#6b7280;
        --line:#e5e7eb; --ink:#1f2937; --accent:#1f4e79; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 -apple-system, "Segoe UI", "DejaVu Sans", Helvetica, Arial, sans-serif;
       color:var(--ink); background:#f6f7f9; }
main { max-width:1320px; margin:0 auto; padding:24px 28px 48px; background:#fff; min-height:100vh; }
h1 { font-size:24px; margin:0 0 6px; color:var(--accent); }
h2 { font-size:18px; margin:34px 0 10px; padding-bottom:5px; border-bottom:2px solid var(--line); color:var(--accent); }
.banner { font-size:20px; font-weight:700; padding:12px 16px; border-radius:8px; margin:14px 0; }
.banner.pass { background:var(--pass-bg); color:var(--pass); border:1px solid #a8d5b5; }
.banner.fail { background:var(--fail-bg); color:var(--fail); border:1px solid #f1b0aa; }
.banner.inconclusive { background:#fff4d6; color:#8a5a00; border:1px solid #f0d58a; }
.meta { display:grid; grid-template-columns:max-content 1fr; gap:2px 14px; font-size:13px; color:var(--muted); }
.meta b { color:var(--ink); font-weight:600; }
nav { margin:14px 0 4px; font-size:13px; }
nav a { color:var(--accent); text-decoration:none; margin-right:14px; white-space:nowrap; }
table { border-collapse:collapse; margin:8px 0 4px; font-size:13px; }
th, td { border:1px solid var(--line); padding:4px 8px; text-align:left; vertical-align:top; white-space:nowrap; }
td.wrap { white-space:normal; min-width:180px; max-width:420px; }
th { background:#f0f3f7; font-weight:600; white-space:normal; }
tbody tr:nth-child(even) td { background:#fafbfc; }
td.pass { background:var(--pass-bg) !important; color:var(--pass); font-weight:600; }
td.fail { background:var(--fail-bg) !important; color:var(--fail); font-weight:600; }
td.worse { background:#fff1d6 !important; color:#8a4b00; font-weight:600; }
td.better { background:#e8f1fb !important; color:#1f4e79; }
td.muted { color:var(--muted); }
.caption { font-size:12.5px; color:var(--muted); margin:2px 0 12px; max-width:1100px; }
p.note { color:var(--muted); font-style:italic; }
p.fail { color:var(--fail); font-weight:600; }
p.pass { color:var(--pass); font-weight:600; }
figure { margin:10px 0 18px; }
figure img { max-width:100%; height:auto; border:1px solid var(--line); border-radius:4px; }
figcaption { font-size:12.5px; color:var(--muted); margin-top:4px; max-width:1100px; }
div.table { overflow-x:auto; max-width:100%; }
.scroll { max-height:520px; overflow:auto; }
pre { background:#f6f8fa; border:1px solid var(--line); border-radius:4px; padding:10px 12px; font-size:12px;
      overflow:auto; max-height:480px; }
footer { margin-top:40px; font-size:12px; color:var(--muted); }
"""


def _e(text):
    return html.escape(str(text), quote=True)


def _td(c):
    classes = " ".join(x for x in (c.tone, "wrap" if len(c.text) > 40 else "") if x)
    return f'<td class="{classes}">{_e(c.text)}</td>' if classes else f"<td>{_e(c.text)}</td>"


def _table(t):
    out = []
    if t.caption:
        out.append(f'<div class="caption">{_e(t.caption)}</div>')
    scroll = len(t.rows) > 25
    out.append('<div class="table scroll">' if scroll else '<div class="table">')
    out.append("<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in t.header) + "</tr></thead><tbody>")
    for row in t.rows:
        cells = [cell(c) for c in row]
        out.append("<tr>" + "".join(_td(c) for c in cells) + "</tr>")
    out.append("</tbody></table></div>")
    if t.note:
        out.append(f'<p class="note">{_e(t.note)}</p>')
    return "\n".join(out)


def _figure(f):
    data = base64.b64encode(f.png).decode("ascii")
    return (f'<figure><img alt="{_e(f.caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{_e(f.caption)}</figcaption></figure>")


def _block(b):
    if isinstance(b, Table):
        return _table(b)
    if isinstance(b, Figure):
        return _figure(b)
    if isinstance(b, Text):
        return f'<p class="{b.tone}">{_e(b.text)}</p>' if b.tone else f"<p>{_e(b.text)}</p>"
    if isinstance(b, Code):
        caption = f'<div class="caption">{_e(b.caption)}</div>' if b.caption else ""
        return f"{caption}<pre>{_e(b.text)}</pre>"
    raise TypeError(b)


def render(doc, footer=""):
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{_e(doc.title)}</title><style>{CSS}</style></head><body><main>",
             f"<h1>{_e(doc.title)}</h1>"]
    if doc.banner:
        parts.append(f'<div class="banner {doc.banner_tone}">{_e(doc.banner)}</div>')
    if doc.meta:
        parts.append('<div class="meta">' + "".join(f"<span>{_e(k)}</span><b>{_e(v)}</b>" for k, v in doc.meta)
                     + "</div>")
    parts.append("<nav>" + "".join(f'<a href="#{s.anchor}">{_e(s.title)}</a>' for s in doc.sections) + "</nav>")
    for s in doc.sections:
        parts.append(f'<section><h2 id="{s.anchor}">{_e(s.title)}</h2>')
        parts.extend(_block(b) for b in s.blocks)
        parts.append("</section>")
    if footer:
        parts.append(f"<footer>{_e(footer)}</footer>")
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"
