// Fault injection into a deployed lab (netns backend), with kernel and FRR means only. The
// vocabulary (FaultKind, FaultAction, validation) is emulator/fault.h.
//
//   link_down      both veth ends of a link administratively down (netlink)
//   blackhole      the link keeps its carrier but its receiving end(s) drop everything
//                  (nftables netdev ingress chain, table mrclab_fault_<id>)
//   loss           the same chain drops a random fraction (numgen random mod 10000)
//   rate           tbf on both ends replaced with another rate
//   switch_down    every link of a switch down (both ends) and its FRR daemons stopped
//   plane_down     every host port of a plane down (both ends of each host-leaf link)
//   bgp_reset      `clear bgp *` (clear), or bgpd stopped and started again (restart)
//   config_change  lines entered in `configure terminal` of one FRR daemon of a switch
//                  (its running configuration saved first; the revert reloads it with
//                  frr-reload.py and checks the switch's links and BGP sessions are back)
//
// Contract: Apply validates the action (FaultError naming the field and the reason), writes
// it to the lab's fault journal (/run/mrclab/<lab>/faults.jsonl) BEFORE changing anything,
// and is atomic: when a step fails, what was done is undone before FaultError is thrown.
// Revert undoes exactly one fault and is idempotent; a link (daemon) that another active fault
// still holds down (stopped) stays so, and a link's rate goes back to the newest other active
// rate fault on it, else to the lab's link_rate. The journal is shared by every process that
// injects faults into the lab: ids are unique across them, any process may revert any fault,
// and RevertLeftoverFaults cleans up after a crashed one. Destroying the lab removes all faults
// with it (namespaces take their qdiscs and nftables tables along; restarted daemons are in
// the deploy journal).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/fault.h"
#include "emulator/resolved_lab.h"

namespace mrclab::emulator::netns {

struct ActiveFault {
  int id = 0;
  FaultAction action;
  double applied_at = 0;  // unix seconds
};

// One injector serves one thread at a time (Apply and Revert block while they restart daemons
// and wait for BGP, up to ~60 s); several injectors, in one process or many, may share a lab.
class FaultInjector {
 public:
  // The lab must be deployed (its state directory exists); throws FaultError otherwise.
  // Apply and Revert hold the journal's lock, so they are serialised across processes.
  explicit FaultInjector(const ResolvedLab& lab);
  // Validates, journals, applies; returns the fault's id (unique in the lab).
  int Apply(const FaultAction& action);
  // Undoes fault `id` (applied by any process); a fault already reverted is a no-op. Throws
  // FaultError for an id the journal does not know, or when the undo failed (the fault then
  // stays active, so that it can be reverted again).
  void Revert(int id);
  // Reverts the faults THIS injector applied that are still active, newest first; keeps going
  // on errors and throws one FaultError listing them at the end. (RevertLeftoverFaults reverts
  // every active fault of the lab, whoever applied it.)
  void RevertAll();
  // Every active fault of the lab (from the journal, whichever process applied it), by id.
  std::vector<ActiveFault> Active() const;

 private:
  ResolvedLab lab_;           // a copy: the injector does not depend on the caller's
  std::vector<int> applied_;  // ids this injector applied and has not reverted, in order
};

// Reverts every fault of the lab's journal not marked reverted, newest first (after a crash,
// or `mrclab fault revert LAB --all`). Returns how many were reverted; keeps going on errors
// and throws one FaultError listing them at the end.
int RevertLeftoverFaults(const ResolvedLab& lab);

}  // namespace mrclab::emulator::netns
