// The job each of a scenario's transports runs (its JobConfig), and what it will hold on this
// machine, checked before any transport runs: udp source ports, open files (the real-time driver
// holds one socket per udp EV route) and buffer memory. `mrclab drill --check` prints the
// figures; the drill refuses a scenario that does not fit before it changes anything.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/resolved_lab.h"
#include "harness/drill/capacity_model.h"
#include "harness/drill/scenario.h"
#include "harness/job/job_footprint.h"

namespace mrclab::harness {

// Payload bytes per packet: job.mtu if the scenario sets it, else the largest power of two
// (256..8192) whose packets fit the lab's link mtu: 1024 on 1500-byte links, 8192 on jumbo.
uint32_t JobMtu(const Scenario& s, const emulator::ResolvedLab& lab);

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

// `--check --json`'s jobs; sockets only for a real-time lab (simulated hosts open none).
nlohmann::json ToJson(const std::vector<TransportFootprint>& footprints, emulator::BackendKind backend);

struct TransportDemand {
  std::string transport;
  JobDemand demand;
};

// Each transport's demand on this machine (capacity_model.h); throws ScenarioError naming
// job.collectives when a step could not finish within job.step_timeout here.
std::vector<TransportDemand> CheckCapacity(const Scenario& s, const emulator::ResolvedLab& lab,
                                           const MachineCapacity& capacity);

// The capacity section of result.json and `--check --json`.
nlohmann::json CapacityJson(const MachineCapacity& capacity, const std::vector<TransportDemand>& demands);
// One line per transport for the summary and --check.
std::string DescribeDemand(const TransportDemand& d);

struct MachineCheck {
  nlohmann::json json;             // result.json's "capacity" (null: not a real-time lab)
  std::vector<std::string> lines;  // for --check and the summary
};
// Real-time labs: this machine's capacity (capacity_probe.h: cached, else measured) against
// every transport's job. Throws ScenarioError when a job does not fit, Interrupted on Ctrl-C;
// a machine that cannot be measured (not root, ...) is noted in the result, not refused.
MachineCheck CheckMachineCapacity(const Scenario& s, const emulator::ResolvedLab& lab, bool progress);

}  // namespace mrclab::harness
