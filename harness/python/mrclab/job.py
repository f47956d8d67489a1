"""Job: a synthetic training job on a lab's hosts over MRC or RoCEv2 RC, with the MRC
controller calls (EV states, deny/allow, port disable)."""
from __future__ import annotations


from . import _mrclab


class Job:
    """A synthetic training job (see harness/README.md). Options (all optional):

    hosts            list of hosts (default: every host); ranks_per_host (default 1)
    transport        'mrc' (default) or 'rc';  ev_mode 'srv6' (default) or 'udp';  evs per QP (32)
    stack            'model' (default: our MRC core, on namespace hosts) or 'kernel' (transport
                     'rc' on VM hosts: the kernel's RC, rdma_rxe; no EVs, no controller calls)
    qps_per_peer     QPs per pair of ranks, each chunk split over them (1)
    min_active       MRC: the fewest EVs a QP keeps GOOD (default: the core's, 1)
    ack_timeout      RC: local ACK timeout in seconds (0.008);  retry_count RC: consecutive
                     timeouts before the QP errors (7)
    collectives      list of (kind, size): kind all_reduce | all_gather | reduce_scatter |
                     all_to_all, size in bytes or '1MiB' (default [('all_reduce', '1MiB')])
    compute_seconds  compute phase per step (0.05);  step_timeout_seconds watchdog (5)
    steps            stop after this many steps (default: run until stop())
    mtu, seed (data patterns), io_threads, label
    key_seed         QPNs, rkeys and initial PSNs; default: random per run (set it only to replay)

    Usage: job.start(); job.wait_for_steps(20); job.stop() -> result dict. job.steps is the list
    of completed steps (seconds, per-collective time and bus bandwidth, bytes verified); a step
    over the watchdog timeout or a QP error interrupts the job (result['state'] ==
    'interrupted', with the reason). Also a context manager that stops the job on exit."""

    def __init__(self, lab, **config):
        if "collectives" in config:
            config["collectives"] = [list(c) for c in config["collectives"]]
        self.lab = lab
        self.config = config
        self._job = _mrclab.TrainingJob(lab.name, config)
        self.result: dict | None = None

    def start(self) -> "Job":
        """Opens the endpoints in the hosts' namespaces and starts stepping."""
        self._job.start()
        return self

    def wait_for_steps(self, n: int, timeout: float = 120) -> bool:
        """Blocks until n steps are done (True) or the job ended or timed out (False)."""
        return self._job.wait_for_steps(n, timeout)

    def wait(self) -> dict:
        """Blocks until the job ends (its step count, an interruption, or stop()); the result."""
        self.result = self._job.wait()
        return self.result

    def stop(self) -> dict:
        """Finishes the current step, stops, and returns the result."""
        self._job.request_stop()
        return self.wait()

    @property
    def state(self) -> str:
        """idle | running | completed | interrupted"""
        return self._job.state()

    @property
    def steps(self) -> list[dict]:
        return self._job.steps()

    @property
    def events(self) -> list[dict]:
        """EV and QP state changes seen so far (dicts with t, type, qp, ev, from, to, reason)."""
        return self._job.events()

    @property
    def ranks(self) -> int:
        return self._job.ranks()

    # -- controller ------------------------------------------------------------------------
    def ev_states(self) -> list[dict]:
        """Every EV of every QP: qp, ev, plane, state (GOOD | ASSUMED_BAD | DENIED), counters."""
        return self._job.evs()

    def deny_ev(self, from_host: str, to_host: str, ev: int) -> int:
        """Denies EV `ev` on the QPs from from_host to to_host; returns on how many QPs it is now
        denied. A QP refuses (keeps the EV GOOD) when that would leave it fewer GOOD EVs than its
        transport's min_active: ev_states() shows which."""
        return self._job.set_ev_denied(from_host, to_host, ev, True)

    def allow_ev(self, from_host: str, to_host: str, ev: int) -> int:
        """Allows EV `ev` again on the QPs from from_host to to_host; returns how many QPs."""
        return self._job.set_ev_denied(from_host, to_host, ev, False)

    def disable_port(self, host: str, plane: int) -> int:
        """The host's QPs stop using its NIC port on `plane`; returns how many QPs."""
        return self._job.set_port_enabled(host, plane, False)

    def enable_port(self, host: str, plane: int) -> int:
        return self._job.set_port_enabled(host, plane, True)

    def __enter__(self) -> "Job":
        return self

    def __exit__(self, *exc) -> None:
        if self.state == "running":
            self.stop()
        self._job.close()
