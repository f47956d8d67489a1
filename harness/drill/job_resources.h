// The job each of a scenario's transports runs (its JobConfig), and what it will hold on this
// machine, checked before any transport runs: udp source ports, open files (the real-time driver
// holds one socket per udp EV route) and buffer memory. `mrclab drill --check` prints the
// figures; the drill refuses a scenario that does not fit before it changes anything.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "emulator/resolved_lab.h"
#include "harness/drill/scenario.h"
#include "harness/job/job_footprint.h"

namespace mrclab::harness {

JobConfig MakeJobConfig(const Scenario& s, const emulator::ResolvedLab& lab, const TransportSpec& t);

struct TransportFootprint {
  std::string transport;
  JobFootprint job;
};

// Throws ScenarioError naming the transport (transports[i].evs / .ev_mode) or the job's
// collectives when a job does not fit; `backend` decides which limits apply (open files only
// in netns: the simulator opens no sockets).
std::vector<TransportFootprint> CheckJobResources(const Scenario& s, const emulator::ResolvedLab& lab,
                                                  emulator::BackendKind backend);

nlohmann::json ToJson(const std::vector<TransportFootprint>& footprints);

}  // namespace mrclab::harness
