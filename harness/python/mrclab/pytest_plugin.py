"""pytest plugin for mrclab suites: `pytest -p mrclab.pytest_plugin` (or, in a conftest.py,
`pytest_plugins = ["mrclab.pytest_plugin"]`).

Fixtures
  lab           module-scoped: a deployed mrclab.Lab, destroyed after the module. Parametrised
                by lab file: the module's MRCLAB_LABS list, else --mrclab-lab FILE (repeatable),
                else labs/clos2.yaml. Deployed as '<prefix><file stem>' (--mrclab-prefix, 'pt-').
  run_drill     function: run_drill(scenario) runs a drill on `lab` and returns result.json as
                a dict; the verdict (pass, fail, inconclusive), the emulation fidelity, the
                run directory and every SLO are recorded as JUnit properties
                (pytest --junitxml=FILE).
  validate      function: validate(baseline, candidate, scenarios, runs=5, max_runs=None, ...) runs
                `mrclab validate` (lab files are deployed and destroyed by it) into the test's
                tmp_path and returns validation.json as a dict; the verdict and every figure
                judged worse are recorded as JUnit properties. A test of a change is
                `assert not mrclab.worse_figures(validate(...))`.
Marker
  @pytest.mark.drill   marks a test that runs a drill or a long fault sequence
                       (select with -m drill, skip with -m "not drill").
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from . import _build
from .drill import run_drill as _run_drill
from .lab import Lab
from .validate import validate as _validate
from .validate import worse_figures


def pytest_addoption(parser):
    group = parser.getgroup("mrclab")
    group.addoption("--mrclab-lab", action="append", default=[], metavar="FILE",
                    help="lab file for the `lab` fixture (repeatable; default labs/clos2.yaml)")
    group.addoption("--mrclab-prefix", default="pt-", help="prefix of the deployed labs' names (default pt-)")


def pytest_configure(config):
    config.addinivalue_line("markers", "drill: runs an mrclab drill or a long fault sequence")


def _lab_files(metafunc) -> list[str]:
    module_labs = getattr(metafunc.module, "MRCLAB_LABS", None)
    if module_labs:
        return [str(Path(_build.SOURCE_DIR) / f) if not os.path.isabs(f) else f for f in module_labs]
    return metafunc.config.getoption("--mrclab-lab") or [str(Path(_build.SOURCE_DIR) / "labs" / "clos2.yaml")]


def pytest_generate_tests(metafunc):
    if "lab" in metafunc.fixturenames:
        files = _lab_files(metafunc)
        metafunc.parametrize("lab", files, indirect=True, scope="module", ids=[Path(f).stem for f in files])


@pytest.fixture(scope="module")
def lab(request):
    path = request.param
    name = request.config.getoption("--mrclab-prefix") + Path(path).stem
    deployed = Lab.deploy(path, name=name)
    try:
        yield deployed
    finally:
        deployed.revert_faults()
        deployed.destroy()


@pytest.fixture
def run_drill(lab, record_property, tmp_path):
    def run(scenario, **options):
        options.setdefault("out", tmp_path / "runs")
        result = _run_drill(scenario, lab=lab.name, **options)
        record_property("mrclab_verdict", result["verdict"])
        record_property("mrclab_run_dir", result["run_dir"])
        fidelity = result.get("emulation_fidelity", {})
        record_property("mrclab_emulation_fidelity",
                        "; ".join([fidelity.get("status", "")] + fidelity.get("reasons", [])))
        if result.get("not_tested"):
            record_property("mrclab_not_tested", "; ".join(result["not_tested"]))
        for slo in result["slos"]:
            record_property(f"slo_{slo['transport']}_{slo['slo']}", f"{'pass' if slo['pass'] else 'FAIL'} {slo['value']}")
        return result
    return run


@pytest.fixture
def validate(record_property, tmp_path):
    def run(baseline, candidate, scenarios, **options):
        options.setdefault("out", tmp_path / "validation")
        result = _validate(baseline, candidate, scenarios, **options)
        record_property("mrclab_validation", result["verdict"])
        for name in worse_figures(result):
            record_property("mrclab_worse", name)
        return result
    return run
