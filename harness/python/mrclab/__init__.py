"""mrclab from Python: boot multi-plane Clos labs, inject faults, run training jobs over MRC
(or RoCEv2 RC) and whole drills — the same capabilities as the `mrclab` command line.

    import mrclab

    with mrclab.Lab.deploy("labs/clos2.yaml", name="mylab") as lab:   # destroyed on exit
        print([n.name for n in lab.hosts])
        print(lab.vtysh("p0-leaf0", "show bgp summary json")["ipv6Unicast"]["peerCount"])
        job = lab.job(transport="mrc", collectives=[("all_reduce", "1MiB")])
        job.start()
        with lab.fault.blackhole("p0-leaf0:spine0"):      # reverted when the block ends
            job.wait_for_steps(20)
        job.stop()
        print(job.result["state"], max(s["seconds"] for s in job.steps))

    result = mrclab.run_drill("scenarios/default.yaml")   # result.json as a dict
    v = mrclab.validate("labs/clos2.yaml", "labs/clos2-slow-bfd.yaml",
                        ["scenarios/validate-silent-spine.yaml"])  # validation.json as a dict
    print(v["verdict"], mrclab.worse_figures(v))

Classes: Lab (deploy / attach / destroy, nodes, links, exec, vtysh), Faults (lab.fault: one
method per fault kind, each returning a Fault usable as a context manager), Job (lab.job: a
synthetic training job with the MRC controller calls). Long calls release the GIL and honour
Ctrl-C (KeyboardInterrupt after cleaning up). Errors in lab files, scenarios and fault targets
are ValueError naming the file or target, the field and the reason. Everything needs root
except simulated drills (run_drill(..., backend="ns3"), or a scenario with `backend: ns3`).
The pytest plugin (fixtures `lab`, `run_drill` and `validate`, marker `drill`) is mrclab.pytest_plugin.
"""
from .drill import run_drill
from .faults import Fault, Faults
from .job import Job
from .lab import Lab, Link, Node
from .validate import ValidateError, validate, worse_figures

__all__ = ["Lab", "Node", "Link", "Faults", "Fault", "Job", "run_drill", "validate", "worse_figures", "ValidateError"]
