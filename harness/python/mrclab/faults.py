"""Faults: lab.fault.<kind>(target, ...) applies a fault at once and returns a Fault, which
reverts it on revert() or at the end of a `with` block. Kernel and FRR faults go through the
lab's fault journal (shared with `mrclab fault` and drills), so `mrclab fault list LAB` shows
them and `lab.revert_faults()` cleans up after a crash. A flap runs its down/up pattern on a
background thread until reverted or done."""
from __future__ import annotations

import threading
from typing import Sequence

from . import _mrclab


class Fault:
    """One applied fault; a context manager that reverts it on exit (also on exceptions)."""

    def __init__(self, faults: "Faults", action: dict, description: str):
        self._faults = faults
        self.action = action
        self.description = description
        self.ids: list[int] = []
        self.active = False

    def _apply(self) -> "Fault":
        self.ids.append(self._faults._call("apply", self.action))
        self.active = True
        return self

    def revert(self) -> None:
        """Undoes the fault (idempotent)."""
        while self.ids:
            self._faults._call("revert", self.ids.pop())
        self.active = False

    def __enter__(self) -> "Fault":
        return self

    def __exit__(self, *exc) -> None:
        self.revert()

    def __repr__(self) -> str:
        return f"<Fault {self.description} ({'active' if self.active else 'reverted'})>"


class Flap(Fault):
    """A link going down and up `count` times (down_s, up_s) on a background thread."""

    def __init__(self, faults: "Faults", action: dict, description: str, count: int, down_s: float, up_s: float):
        super().__init__(faults, action, description)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.error: Exception | None = None
        self.cycles_done = 0
        self._thread = threading.Thread(target=self._run, args=(count, down_s, up_s), daemon=True)

    def _run(self, count: int, down_s: float, up_s: float) -> None:
        try:
            for _ in range(count):
                with self._lock:
                    if self._stop.is_set():
                        return
                    Fault._apply(self)
                if self._stop.wait(down_s):
                    return
                with self._lock:
                    Fault.revert(self)
                self.cycles_done += 1
                if self._stop.wait(up_s):
                    return
        except Exception as e:  # reported by revert()/wait()
            self.error = e

    def _apply(self) -> "Flap":
        self.active = True
        self._thread.start()
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Waits for the pattern to finish; True if it did."""
        self._thread.join(timeout)
        if self.error:
            raise self.error
        return not self._thread.is_alive()

    def revert(self) -> None:
        self._stop.set()
        self._thread.join()
        with self._lock:
            Fault.revert(self)
        if self.error:
            raise self.error


class Faults:
    """The fault vocabulary of a lab (see emulator/README.md for what each does in the kernel).
    Link targets: 'node:interface' (either end), 'nodeA--nodeB' or a link index."""

    def __init__(self, lab):
        self._lab = lab
        self._injector = _mrclab.FaultInjector(lab.name)
        self._injector_lock = threading.Lock()  # flaps use it from their threads

    def _call(self, method: str, *args):
        with self._injector_lock:
            return getattr(self._injector, method)(*args)

    def _make(self, action: dict) -> Fault:
        return Fault(self, action, self._injector.describe(action))._apply()

    def _link(self, target: str | int) -> int:
        return self._injector.link_index(str(target))

    def link_down(self, target: str | int) -> Fault:
        """Both ends of a link administratively down (carrier lost): routing sees it."""
        return self._make({"kind": "link_down", "link": self._link(target)})

    def flap(self, target: str | int, count: int = 3, down: float = 0.2, up: float = 0.8) -> Flap:
        """An optic flapping: `count` times down for `down` s then up for `up` s."""
        action = {"kind": "link_down", "link": self._link(target)}
        return Flap(self, action, f"flap x{count}: " + self._injector.describe(action), count, down, up)._apply()

    def blackhole(self, target: str | int, direction: str = "both") -> Fault:
        """A dead optic that keeps its carrier: everything dropped (nftables); routing cannot see it.
        direction: 'both', 'a-b' or 'b-a' (ends as in lab.links)."""
        return self._make({"kind": "blackhole", "link": self._link(target), "direction": direction})

    def loss(self, target: str | int, rate: float, direction: str = "both") -> Fault:
        """A degraded optic: random loss with probability `rate` (0..1)."""
        return self._make({"kind": "loss", "link": self._link(target), "direction": direction, "loss_rate": rate})

    def rate(self, target: str | int, bps: int) -> Fault:
        """The link runs at `bps` bit/s (tbf on both ends)."""
        return self._make({"kind": "rate", "link": self._link(target), "rate_bps": int(bps)})

    def switch_down(self, switch: str) -> Fault:
        """Every link of the switch down and its FRR daemons stopped; revert restarts them and
        waits until all its BGP sessions are Established again."""
        return self._make({"kind": "switch_down", "node": switch})

    def plane_down(self, plane: int) -> Fault:
        """Every host port of one plane down."""
        return self._make({"kind": "plane_down", "plane": int(plane)})

    def bgp_reset(self, switch: str, mode: str = "clear") -> Fault:
        """'clear': clear all BGP sessions of the switch; 'restart': bgpd stopped until revert."""
        return self._make({"kind": "bgp_reset", "node": switch, "bgp_mode": mode})

    def config_change(self, switch: str, lines: Sequence[str], revert_lines: Sequence[str] = ()) -> Fault:
        """FRR configuration lines entered on a switch; revert enters revert_lines, or restarts
        the daemon from its deployed configuration when there are none."""
        return self._make({"kind": "config_change", "node": switch, "config_lines": list(lines),
                           "revert_lines": list(revert_lines)})

    def active(self) -> list[dict]:
        """Every active fault of the lab (from its journal), with id, action and description."""
        return self._injector.active()
