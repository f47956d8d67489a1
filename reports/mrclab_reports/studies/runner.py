"""What every study shares: the simulated drills it runs (`mrclab drill --backend ns3`, several at
once, stopped together on an error or Ctrl-C), progress on stderr, and the files it writes
(NAME.md with the table and the exact command, seed and wall time; NAME.png; NAME.json with every
cell). The fabric, job and failures are in fabric.py."""
import json
import os
import shlex
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


class StudyError(Exception):
    """A study that cannot go on (a drill that could not run); the message says which and why."""


class BadArguments(StudyError):
    """Options that make no fabric or job (exit 2, nothing run)."""


def check_writable(option, path):
    """BadArguments unless a folder can be made at `path` (or is there): the nearest existing
    folder on its path must be a directory this process may write in. Checked before any drill
    runs, so that hours of drills are not lost to where their table cannot go."""
    existing = Path(path).absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise BadArguments(f"{option} {path}: {existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise BadArguments(f"{option} {path}: cannot write in {existing}")


def mrclab_binary():
    path = os.environ.get("MRCLAB") or str(ROOT / "build" / "mrclab")
    if not os.access(path, os.X_OK):
        raise StudyError(f"{path}: not found; build mrclab first (bash .ci/setup) or set MRCLAB")
    return path


class Drills:
    """Runs simulated drills, `jobs` at a time, and prints one progress line per finished drill.
    When one cannot run, or on Ctrl-C / SIGTERM, the others are stopped (SIGTERM, then waited for)."""

    def __init__(self, work, jobs, total, quiet=False):
        if jobs < 1:
            raise BadArguments(f"--jobs {jobs}: must be at least 1")
        self.work, self.jobs, self.total, self.quiet = Path(work), jobs, total, quiet
        self.done, self.started = 0, time.monotonic()
        self.lock = threading.Lock()
        self.procs = set()  # drills running now
        self.stopping = False
        self.binary = mrclab_binary()

    def elapsed(self):
        return time.monotonic() - self.started

    def check(self, name, scenario_text):
        """Writes WORK/NAME.yaml and has `mrclab drill --check` validate it (before any drill runs,
        so that options the fabric or job cannot take fail at once: BadArguments)."""
        path = self.work / f"{name}.yaml"
        path.write_text(scenario_text)
        proc = subprocess.run([self.binary, "drill", str(path), "--backend", "ns3", "--check"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            error = proc.stderr.strip().splitlines()
            raise BadArguments(f"{error[-1] if error else 'drill --check failed'} (a scenario this study made "
                               "from its options)")

    def run(self, name, scenario_text):
        """Drills WORK/NAME.yaml, returns result.json as a dict (a drill whose SLOs failed is a
        result too: exit 1 with JSON); raises StudyError when the drill could not run."""
        path = self.work / f"{name}.yaml"
        path.write_text(scenario_text)
        started = time.monotonic()
        with self.lock:
            if self.stopping:
                raise StudyError("stopped")
            proc = subprocess.Popen([self.binary, "drill", str(path), "--backend", "ns3", "--out",
                                     str(self.work / "runs"), "--metrics", "off", "--json", "--quiet"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.procs.add(proc)
        try:
            stdout, stderr = proc.communicate()
        finally:
            with self.lock:
                self.procs.discard(proc)
        if proc.returncode not in (0, 1, 3) or not stdout.strip():
            error = stderr.strip().splitlines()
            raise StudyError(f"drill {path} exited {proc.returncode}: {error[-1] if error else 'no output'}")
        result = json.loads(stdout)
        with self.lock:
            self.done += 1
            if not self.quiet:
                print(f"  [{self.done}/{self.total}] {name}: {time.monotonic() - started:.0f} s "
                      f"({time.monotonic() - self.started:.0f} s so far)", file=sys.stderr, flush=True)
        return result

    def run_all(self, named_scenarios):
        """{name: scenario text} -> {name: result}, `jobs` drills at a time, after every
        scenario passed --check."""
        for name, text in named_scenarios.items():
            self.check(name, text)
        pool = ThreadPoolExecutor(max_workers=self.jobs)
        try:
            futures = {name: pool.submit(self.run, name, text) for name, text in named_scenarios.items()}
            return {name: f.result() for name, f in futures.items()}
        except BaseException:
            self.stop()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def stop(self):
        with self.lock:
            self.stopping = True
            running = list(self.procs)
        for proc in running:
            proc.terminate()  # the drill stops at its next check and exits 130
        for proc in running:
            proc.wait()


def command_line():
    """The command as it was typed: `mrclab study ...` (the CLI sets MRCLAB_COMMAND) or
    `python3 reports/study.py ...`."""
    head = os.environ.get("MRCLAB_COMMAND") or f"python3 reports/{Path(sys.argv[0]).name}"
    return " ".join([head, *(shlex.quote(w) for w in sys.argv[1:])])


def write_outputs(out, name, title, intro, table_md, findings, figure_png, cells, setup, wall_seconds):
    """OUT/NAME.md (title, what was run, the table, the findings, the plot), OUT/NAME.png and
    OUT/NAME.json (setup and every cell). Returns the paths written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    png = out / f"{name}.png"
    png.write_bytes(figure_png)
    setup = dict(setup, command=command_line(), wall_seconds=round(wall_seconds, 1), date=time.strftime("%Y-%m-%d"))
    (out / f"{name}.json").write_text(json.dumps({"study": name, "setup": setup, "cells": cells}, indent=1) + "\n")
    lines = [f"# {title}", "", intro, "",
             f"Regenerate: `{setup['command']}` (seed {setup['seed']}; {wall_seconds / 60:.1f} min wall on "
             f"{os.cpu_count()} cores, {setup['drills']} simulated drills, {setup['date']}).", "",
             f"Scale: {setup['scale']}.", "", table_md, ""]
    if findings:
        lines += ["Findings:", ""] + [f"- {f}" for f in findings] + [""]
    lines += [f"![{title}]({png.name})", ""]
    md = out / f"{name}.md"
    md.write_text("\n".join(lines))
    return [md, png, out / f"{name}.json"]
