// Ns3Backend: the drill backend of simulated labs (harness/drill/drill_backend.h). The lab is
// built as a SimFabric (links, uSID/ECMP switches, queues) on ns-3's scheduler; jobs are the
// same Workload as in emulated labs, driven by SimJob; faults are model means (a link's ports
// down, a receiving ingress that drops, a rate change, a switch's links down); time is
// simulated and starts at 0 when the backend is made.
//
// ns-3's simulator is a process-wide singleton: one Ns3Backend at a time per process (the
// constructor throws std::logic_error otherwise); Release (or the destructor) destroys it.
#pragma once

#include <memory>
#include <string>

#include "emulator/fault.h"
#include "harness/drill/drill_backend.h"
#include "harness/job/workload.h"

namespace mrclab::emulator::sim {

struct Ns3BackendOptions {
  uint64_t seed = 1;  // ns-3's RNG seed and the fabric's ECMP seed
  harness::QpConfigFn qp_config;  // the QP timers for this world (mrc/core/qp_presets.h)
  // Asked every BucketScheduler::kEventsPerStopCheck events: true (Ctrl-C) ends the slice of
  // simulated time being run at once, even when simulated time stands still, so that RunUntil
  // asks its predicate (the drill's throws when interrupted).
  bool (*stop_requested)() = nullptr;
};

std::unique_ptr<harness::DrillBackend> MakeNs3Backend(const ResolvedLab& lab, const Ns3BackendOptions& options);

// Throws FaultError when the simulation does not model a fault kind (bgp_reset,
// config_change): "KIND: not modelled by the ns3 backend (...)".
void CheckNs3Supports(FaultKind kind);

}  // namespace mrclab::emulator::sim
