// Scenario files (scenarios/*.yaml): a lab, a synthetic training job, the transports to run it
// over, a fault schedule and the SLOs that decide the verdict. See scenarios/README.md for the
// format. Parsing validates everything that does not need the lab; fault targets are resolved
// against the lab by fault_plan.h. Errors name the file, the field and the reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "emulator/fault.h"
#include "emulator/lab_spec.h"
#include "harness/job/job_types.h"

namespace mrclab::emulator {
struct ResolvedLab;
}

namespace mrclab::harness {

using ScenarioError = emulator::LabError;  // file: field: reason

struct TransportSpec {
  std::string name;   // label in results ("mrc", "rc", ...)
  std::string field;  // "transports[1]", for messages
  // The hosts this transport's job runs on, when not job.hosts (VM hosts for the kernel's RC
  // beside namespace hosts for our core, on the same leaves).
  std::vector<std::string> hosts;
  mrc::TransportMode transport = mrc::TransportMode::kMrc;
  // model: our MRC core (namespace hosts, ns-3); kernel: the kernel's RC on VM hosts (rdma_rxe).
  TransportStack stack = TransportStack::kModel;
  mrc::EvMode ev_mode = mrc::EvMode::kSrv6;
  int evs = 32;
  int qps_per_peer = 1;  // JobConfig::qps_per_peer
  std::optional<int> min_active;  // JobConfig::min_active
  // RC only: the local ACK timeout and the consecutive timeouts before the QP errors (a NIC's
  // timeout and retry_cnt); none: mrc::RealtimeQpConfig's 8 ms and the core's 7.
  std::optional<double> ack_timeout_seconds;
  std::optional<int> retry_count;
};

// The time scale of the transport's timers (mrc/core/qp_presets.h): realtime (ms, what a
// shared CPU in real time needs; the default) or fabric (µs; simulation only).
enum class TimerScale { kRealtime, kFabric };

struct JobSpec {
  std::vector<std::string> hosts;  // empty: every host of the lab (or host_count of them)
  int host_count = 0;              // `hosts: N`: N hosts spread evenly over the lab's hosts
  int ranks_per_host = 1;
  std::vector<CollectiveSpec> collectives;
  double compute_seconds = kDefaultComputeSeconds;
  double step_timeout_seconds = kDefaultStepTimeoutSeconds;
  int warmup_steps = 3;     // first steps, not measured (windows and caches warm up)
  int baseline_steps = 10;  // then fault-free steps whose p50 is the baseline; the schedule starts after them (t = 0)
  int tail_steps = 10;      // steps after the last fault was reverted
  std::optional<uint32_t> mtu;  // payload bytes per packet; none: what the lab's links carry (JobMtu)
  int io_threads = 2;
  TimerScale timers = TimerScale::kRealtime;
  PayloadMode payload = PayloadMode::kReal;  // job_types.h
  std::optional<uint64_t> key_seed;  // JobConfig::key_seed: none draws QPNs, rkeys, PSNs per run
};

// A fault target as written: a plain name ("p0-leaf0:spine0", "p0-spine1", "1") or a selector
// ({select: leaf_spine_link|spine|leaf|switch|plane, plane: N, count: K}).
struct TargetSpec {
  std::string name;            // plain form
  std::string select;          // selector form
  std::optional<int> plane;
  int count = 1;
  // Controller faults: ev_deny {from, to, evs}, port_disable {host, plane}.
  std::string from, to, host;
  std::vector<int> evs;
};

struct FaultSpec {
  std::string field;  // "faults[2]", for messages
  double at = 0;      // seconds after the baseline steps
  emulator::FaultKind kind = emulator::FaultKind::kLinkDown;  // emulator/fault.h
  TargetSpec target;
  std::optional<double> duration;  // none: until the end of the schedule
  int count = 1;                   // flap
  double down_seconds = 0.2, up_seconds = 0.8;
  bool random = false;             // flap: times drawn from 0.5x..1.5x with the drill's seed
  emulator::Direction direction = emulator::Direction::kBoth;  // blackhole, loss
  double loss_rate = 0;            // loss
  uint64_t rate_bps = 0;           // rate
  std::string bgp_mode = "clear";  // bgp_reset
  std::vector<std::string> config, revert_config;  // config_change
};

struct SloSpec {
  std::string field;
  std::string slo;  // no_interruption | step_time_p99_ratio | step_time_max | bytes_lost | recovery_time_max
  double max = 0;
  std::string transport;  // "": every transport
};
// A scenario without `slos:` is judged by the defaults: no_interruption for every MRC transport
// and bytes_lost max 0 (Scenario::default_slos).

struct Scenario {
  std::string file, name, description;
  std::string lab;   // lab file path (resolved) or a deployed lab's name
  std::string lab_file_looked_for;  // lab is a bare name: the file it was looked up as (not found)
  std::optional<emulator::BackendKind> backend;  // `backend:` for scenarios meant for one world
  uint64_t seed = 1;
  JobSpec job;
  std::vector<TransportSpec> transports;
  std::vector<FaultSpec> faults;
  std::vector<SloSpec> slos;
  bool default_slos = false;  // no `slos:` in the file: the defaults above
  double max_duration_seconds = 600;  // per transport
  std::string text;  // as read, for the run directory and its hash
};

Scenario ParseScenarioFile(const std::string& path);
// `source` names the text in errors; relative lab paths resolve against `base_dir`.
Scenario ParseScenarioText(const std::string& text, const std::string& source, const std::string& base_dir);

// The job's hosts on a lab whose hosts are `lab_hosts` (in lab order): the listed ones, every
// one, or `hosts: N` spread evenly (host floor(i * H / N) for i < N). Throws ScenarioError
// (field job.hosts) when N is more than the lab has.
// A transport with hosts of its own (TransportSpec::hosts) runs on those instead; errors then
// name its field (transports[i].hosts).
std::vector<std::string> JobHosts(const Scenario& s, const std::vector<std::string>& lab_hosts,
                                  const TransportSpec* transport = nullptr);
// The same on a resolved lab (its hosts in lab order).
std::vector<std::string> JobHosts(const Scenario& s, const emulator::ResolvedLab& lab,
                                  const TransportSpec* transport = nullptr);

// For an error about a lab reference that is neither file nor deployed lab: where the
// scenario's bare lab name was looked up ("; no DIR/../labs/NAME.yaml ..."); "" when the
// reference came from --lab (`from_scenario` false) or was a path.
std::string LabLookupNote(const Scenario& s, bool from_scenario);

extern const char* const kSloNames[];

}  // namespace mrclab::harness
