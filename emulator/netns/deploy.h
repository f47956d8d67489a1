// Deploy and destroy a lab on this machine (the netns backend).
//
// Deploy returns only when the lab is verified ready (see verify.h) or throws DeployError after
// rolling back everything it made. Every namespace and process is written to the lab's journal
// before it exists, so Destroy removes exactly what a deploy made, even after the deploying
// process was killed with SIGKILL.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/errors.h"
#include "emulator/resolved_lab.h"

namespace mrclab::emulator::netns {

// A deploy that was tried and failed (not ready before the deadline, a daemon died); what
// deploy refuses before it changes anything is an InputError.
class DeployError : public Error {
 public:
  explicit DeployError(const std::string& what) : Error(ErrorKind::kOperation, what) {}
};

struct DeployOptions {
  std::chrono::seconds timeout{120};  // for convergence and verification
  bool progress = true;
  bool keep_failed = false;  // leave a failed lab in place for inspection (destroy it later)
  std::string lab_text;  // the lab file as given, saved with the state (LoadDeployedLab)
};

struct DeployReport {
  double namespaces_s = 0, links_s = 0, daemons_s = 0, convergence_s = 0, verification_s = 0;
  double total_s = 0;
  int bgp_sessions = 0, host_pairs = 0, spine_paths = 0;
  nlohmann::json ToJson() const;
};

// Memory a lab needs, in bytes (FRR daemons dominate), and what the machine has available.
struct MemoryEstimate {
  uint64_t needed = 0, available = 0;
  size_t static_next_hops = 0;  // of the switches' static routes (one staticd line each), counted in `needed`
};
MemoryEstimate EstimateMemory(const ResolvedLab& lab);

// Checks that need no changes: root, FRR installed, lab not deployed, names free, memory.
void Preflight(const ResolvedLab& lab);
// Throws InputError when this kernel cannot forward SRv6 uSIDs (kernel_srv6.h): checked after
// everything about the lab file and its images, before anything is made.
void RefuseIfKernelCannotForwardSrv6();
// Throws InputError (with a pointer to the simulator) when the lab has what only a simulation
// has (link_delay) or needs more memory than this machine has available (EstimateMemory, 1 GiB
// kept in reserve).
void RefuseIfNotEmulatable(const ResolvedLab& lab);
// The plan of a lab file for an emulated lab. One that cannot be emulated is refused before
// its routes are planned: they grow as switches x links, past any machine's memory at 131,072
// hosts (`mrclab deploy labs/clos8-128k.yaml` was killed for memory after 100 s).
ResolvedLab ResolveForEmulation(const LabSpec& spec);

DeployReport Deploy(const ResolvedLab& lab, const DeployOptions& options);

struct DestroyReport {
  int processes = 0, killed = 0, namespaces = 0, containers = 0;
  double seconds = 0;
  std::vector<std::string> problems;  // what could not be removed
};
// Throws std::runtime_error if the lab has no state directory.
DestroyReport Destroy(const std::string& lab_name);

}  // namespace mrclab::emulator::netns
