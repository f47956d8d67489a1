// A synthetic training job over MRC (or the RC baseline) between the hosts of a deployed lab.
//
// Ranks live on hosts (ranks_per_host each, laid out host-major); every rank uses every NIC
// port (plane) of its host through its host's endpoint (one AsioEndpoint per host; endpoints
// are spread over `io_threads` io_contexts). Every pair of ranks that a collective connects
// gets one QP per side, with the EV plan of ev_plan.h.
//
// A step is: compute phase (a timer), then the configured collectives in order (see
// collective_plan.h). A coordinator thread releases all ranks into a step together (as the
// synchronous collectives of data-parallel training do), waits for all of them, and records
// the step. Data is real: every chunk carries a checksum in its immediate value and is checked
// where it lands, and every collective's result is checked against its closed form
// (collective_data.h), so "rode through" also means "nothing lost or corrupted".
//
// Like NCCL's watchdog, a step that exceeds `step_timeout_seconds` interrupts the job; so does a
// QP error (RC's retry exhaustion), as it would abort a real job.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/resolved_lab.h"
#include "harness/job/collective_plan.h"
#include "mrc/asio_endpoint.h"
#include "mrc/qp.h"

namespace mrclab::harness {

struct CollectiveSpec {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  uint64_t bytes = 1 << 20;  // whole buffer per rank (rounded up to 4 * ranks)
};

struct JobConfig {
  std::string label = "mrc";          // names this job in events and metrics
  std::vector<std::string> hosts;     // at least one; ranks = hosts * ranks_per_host >= 2
  int ranks_per_host = 1;
  mrc::TransportMode transport = mrc::TransportMode::kMrc;
  mrc::EvMode ev_mode = mrc::EvMode::kSrv6;
  int evs_per_qp = 32;
  std::vector<CollectiveSpec> collectives = {CollectiveSpec{}};
  double compute_seconds = 0.05;
  double step_timeout_seconds = 10;
  uint32_t mtu = 1024;
  uint64_t seed = 1;
  int io_threads = 2;
  uint64_t max_steps = 0;  // 0: until RequestStop
};

struct CollectiveTiming {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  uint64_t bytes = 0;
  double seconds = 0;     // first rank starting it to last rank finishing it
  double busbw_gbps = 0;  // nccl-tests' bus bandwidth
};

struct StepRecord {
  uint64_t step = 0;
  double start = 0, end = 0;  // unix seconds
  double seconds = 0;         // compute + collectives
  std::vector<CollectiveTiming> collectives;
  uint64_t bytes_verified = 0, bytes_bad = 0;
  uint64_t retransmissions = 0;  // during this step, all QPs
};

enum class JobState { kIdle, kRunning, kCompleted, kInterrupted };
std::string_view ToString(JobState s);

struct JobResult {
  JobState state = JobState::kIdle;
  std::string reason;  // why it was interrupted
  uint64_t steps = 0;
  uint64_t bytes_verified = 0, bytes_bad = 0, retransmissions = 0;
  double seconds = 0;
};

struct EvSnapshot {
  std::string qp;  // "host0/0->host1/1" (host/rank -> host/rank)
  uint16_t ev = 0;
  int plane = 0;
  std::string state;
  uint64_t tx_data = 0, tx_retransmits = 0, losses = 0;
};

class TrainingJob {
 public:
  using EventFn = std::function<void(const nlohmann::json&)>;  // called from io threads
  using StepFn = std::function<void(const StepRecord&)>;       // called from the coordinator

  // Throws std::invalid_argument for a config the lab cannot run (unknown host, < 2 ranks...).
  TrainingJob(const emulator::ResolvedLab& lab, JobConfig config, EventFn on_event, StepFn on_step);
  ~TrainingJob();
  TrainingJob(const TrainingJob&) = delete;
  TrainingJob& operator=(const TrainingJob&) = delete;

  void Start();  // opens sockets in the hosts' namespaces and starts stepping
  // True once `steps` steps are done; false if the job ended first or the timeout passed.
  bool WaitForSteps(uint64_t steps, double timeout_seconds);
  void RequestStop();  // finish the current step, then stop
  JobResult Wait();    // blocks until the job has ended
  JobState state() const { return state_.load(); }
  uint64_t steps_done() const { return steps_done_.load(); }
  int ranks() const;

  // Controller actions, applied on the endpoints' threads; return how many QPs they touched.
  // The EV is denied (or allowed again) on every QP from a rank of host_a to a rank of host_b.
  int SetEvDenied(const std::string& host_a, const std::string& host_b, int ev, bool denied);
  // Every QP of the host's ranks stops (or resumes) using the host's port on `plane`.
  int SetPortEnabled(const std::string& host, int plane, bool enabled);
  std::vector<EvSnapshot> SnapshotEvs();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<JobState> state_{JobState::kIdle};
  std::atomic<uint64_t> steps_done_{0};
};

}  // namespace mrclab::harness
