"""`mrclab report` and `mrclab compare` on a real drill: a short drill (MRC and RC through a flap,
a blackhole and a lossy link) on a lab of its own, then the report's content (verdict, SLO table,
every fault labelled, nothing external), the report rendered by headless Chromium (a real,
non-blank screenshot, no console errors), a comparison, runs with one transport, no faults or an
interrupted job after few steps, and bad run directories (exit 2 naming the file)."""
import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import STATE, assert_nothing_left, judged_drill, lab_file, mrclab, short_scenario

LAB = f"t-rep-{os.getpid()}"  # a lab of its own, even beside another run of these tests
CHROMIUM = "/usr/bin/chromium"

SCENARIO_FAULTS = """
faults:
  - {at: 0.5s, kind: flap, target: p0-leaf0:spine0, count: 2, down: 300ms, up: 700ms}
  - {at: 2.5s, kind: blackhole, target: p1-leaf1:spine1, duration: 2s}
  - {at: 5s, kind: loss, target: p0-leaf2:spine1, rate: 2%, duration: 1.5s}
slos: [{slo: no_interruption, transport: mrc}, {slo: bytes_lost, max: 0}]
max_duration: 60s
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One real drill run directory (the lab is destroyed before any report is made)."""
    tmp = tmp_path_factory.mktemp("report")
    mrclab("deploy", lab_file(tmp, LAB), "--quiet")
    try:
        scenario = tmp / "report.yaml"
        scenario.write_text(short_scenario("report", lab=LAB, transports=("mrc", "rc")) + SCENARIO_FAULTS)
        def attempt(n):
            proc = mrclab("drill", scenario, "--lab", LAB, "--out", tmp / f"runs{n}", "--metrics", "off", "--quiet",
                          "--json", check=False, timeout=240)
            return proc, json.loads(proc.stdout) if proc.stdout else {}
        out, result = judged_drill(attempt)
        assert out.returncode in (0, 1), (out.stderr, result.get("emulation_fidelity"))
    finally:
        mrclab("destroy", LAB, check=False)
    assert_nothing_left(LAB)
    directory = Path(result["run_dir"])
    return directory


def report(directory):
    out = mrclab("report", directory)
    html_path, md_path = directory / "report.html", directory / "report.md"
    assert out.stdout.split() == [str(html_path), str(md_path)], out.stdout
    return html_path.read_text(), md_path.read_text()


def derive(src, dst, edit=None, steps=None):
    """A copy of a run directory with result.json edited and steps.csv filtered."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("report*", "frr-logs"))
    result = json.loads((dst / "result.json").read_text())
    if edit:
        edit(result)
    (dst / "result.json").write_text(json.dumps(result))
    if steps:
        lines = (dst / "steps.csv").read_text().splitlines()
        (dst / "steps.csv").write_text("\n".join(lines[:1] + [l for l in lines[1:] if steps(l.split(","))]) + "\n")
    return dst


def test_report_shows_verdict_slos_and_every_fault(run):
    result = json.loads((run / "result.json").read_text())
    page, md = report(run)
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    assert f"Verdict: {result['verdict'].upper()}" in text and f"Verdict: {result['verdict'].upper()}" in md
    assert "Verdict and SLOs" in text
    for slo in result["slos"]:
        outcome = "PASS" if slo["pass"] else "FAIL"
        assert re.search(rf"{slo['slo']}\s+{slo.get('transport') or 'all'}\s+{outcome}", text), slo
    faults = {f["index"]: f for t in result["transports"] for f in t["faults"]}
    assert {f["kind"] for f in faults.values()} == {"flap", "blackhole", "loss"}
    for f in faults.values():  # labelled in the fault table (the figures label them #index kind)
        assert re.search(rf"#{f['index']}\s+{f['kind']}\s+{re.escape(f['description'])}", text), f
        assert f"| #{f['index']} | {f['kind']} | {f['description']} |" in md, f
    for t in result["transports"]:
        assert f"{t['name']} ({t['transport']}, {t['ev_mode']}, {t['evs']} EVs)" in text
    for section in ("Step time", "Goodput", "EV states", "Links", "BGP and BFD", "Lab"):
        assert f'">{section}</h2>' in page and f"## {section}" in md
    # one self-contained file: no scripts, no stylesheets or images fetched from anywhere
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert not re.search(r"<script|<link|@import|url\(", page, re.I)
    assert page.count("data:image/png;base64,") >= 5
    # Markdown: the figures are files next to it, referenced relatively
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert len(images) >= 5 and all(not Path(i).is_absolute() and (run / i).stat().st_size > 1000 for i in images)


def chromium(page_url, shot, profile):
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--hide-scrollbars", f"--user-data-dir={profile}", f"--screenshot={shot}",
                           "--window-size=1400,4000", "--enable-logging=stderr", "--v=0", page_url],
                          capture_output=True, text=True, timeout=90)


def page_errors(log):
    return [line for line in log.splitlines()
            if "Uncaught" in line or "CONSOLE" in line or ("report.html" in line and "ERROR" in line)]


def test_report_renders_in_chromium(run, tmp_path):
    import matplotlib.image
    report(run)
    # the console check sees a page's errors: a broken page must be caught
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    probe = chromium(broken.as_uri(), tmp_path / "broken.png", tmp_path / "profile")
    assert any("Uncaught" in line for line in page_errors(probe.stderr)), probe.stderr[-3000:]

    shot = tmp_path / "report.png"
    out = chromium((run / "report.html").as_uri(), shot, tmp_path / "profile")
    assert out.returncode == 0, out.stderr[-3000:]
    assert not page_errors(out.stderr), page_errors(out.stderr)
    assert shot.stat().st_size > 50_000
    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[:2] == (4000, 1400)
    assert pixels.std() > 0.05, "blank screenshot"
    assert (pixels.mean(axis=2) < 0.9).mean() > 0.03, "almost nothing drawn"


def test_compare_lists_both_runs_and_flags_what_got_worse(run, tmp_path):
    def slower(result):
        mrc = next(t for t in result["transports"] if t["name"] == "mrc")
        mrc["step_time"]["p99"] *= 1.5
    other = derive(run, tmp_path / "slower", slower)
    out = mrclab("compare", run, other, "--out", tmp_path / "cmp")
    assert out.stdout.split() == [str(tmp_path / "cmp" / "compare.html"), str(tmp_path / "cmp" / "compare.md")]
    page = (tmp_path / "cmp" / "compare.html").read_text()
    md = (tmp_path / "cmp" / "compare.md").read_text()
    for label in (f"{run.name}/mrc", f"{run.name}/rc", "slower/mrc", "slower/rc"):
        assert label in page and label in md, label
    assert "Step time distributions" in page and (tmp_path / "cmp" / "compare-files" /
                                                  "step-time-distributions.png").stat().st_size > 10_000
    assert re.search(r"slower/mrc: p99 after baseline .*\(\+50%", html.unescape(page))
    assert '<td class="worse">' in page
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)


def test_one_transport_no_faults_and_an_interrupted_job(run, tmp_path):
    def only_mrc(result):
        result["transports"] = [t for t in result["transports"] if t["name"] == "mrc"]
        result["slos"] = [s for s in result["slos"] if s.get("transport") in (None, "mrc")]

    def no_faults(result):
        result["faults"] = []
        for t in result["transports"]:
            t["faults"] = []

    def interrupted(result):
        result["transports"] = [t for t in result["transports"] if t["name"] == "rc"]
        rc = result["transports"][0]
        rc["job"].update(state="interrupted", reason="step 2: rank 1: work completion retry_exceeded", steps=2)
        rc["rode_through"] = False

    one = derive(run, tmp_path / "one", only_mrc)
    page, _md = report(one)
    assert "<td>mrc (mrc, srv6, 16 EVs)</td>" in page and "<td>rc (rc, srv6" not in page
    page, md = report(derive(run, tmp_path / "calm", no_faults))
    assert "The scenario injects no faults." in page and "The scenario injects no faults." in md
    page, _md = report(derive(run, tmp_path / "cut", interrupted,
                              steps=lambda row: row[0] == "rc" and int(row[1]) < 2))
    assert "no: step 2: rank 1: work completion retry_exceeded" in html.unescape(page)


def test_bad_run_directories_exit_2_naming_the_file(run, tmp_path):
    out = mrclab("report", "/nonexistent", check=False)
    assert out.returncode == 2 and "/nonexistent: no such run directory" in out.stderr, out.stderr
    (tmp_path / "empty").mkdir()
    out = mrclab("report", tmp_path / "empty", check=False)
    assert out.returncode == 2 and f"{tmp_path / 'empty' / 'result.json'}: missing" in out.stderr, out.stderr
    bad = derive(run, tmp_path / "bad")
    (bad / "steps.csv").write_text("transport,step,phase,faults_active,start,end,seconds\nmrc,x,warmup,0,1,2,1\n")
    out = mrclab("report", bad, check=False)
    assert out.returncode == 2 and f"{bad / 'steps.csv'}: line 2: column 'step' is not a number" in out.stderr
    out = mrclab("compare", run, tmp_path / "missing", check=False)
    assert out.returncode == 2 and f"{tmp_path / 'missing'}: no such run directory" in out.stderr
    out = mrclab("report", "--help")
    assert "report.html" in out.stdout and "Exit status" in out.stdout
    assert not (STATE / LAB).exists()
