// What a synthetic training job is asked to do and what it reports, independent of the world
// it runs in (real time on a netns lab, virtual time in ns-3). Plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/job/collective_plan.h"
#include "mrc/core/ev_route.h"
#include "mrc/core/qp.h"

namespace mrclab::harness {

// The one default for every front end (scenario files, the Python module, the job itself).
inline constexpr double kDefaultStepTimeoutSeconds = 5;
inline constexpr double kDefaultComputeSeconds = 0.05;
inline constexpr int kMaxQpsPerPeer = 64;  // JobConfig::qps_per_peer

struct CollectiveSpec {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  uint64_t bytes = 1 << 20;  // whole buffer per rank (rounded up to 4 * ranks)
};

// What the collectives' buffers hold. kReal: every rank has its own buffers with known patterns
// and every result is checked against its closed form. kVirtual (for simulations at scale):
// the ranks share one chunk of zeros per collective (registered mrc::kZeroFilled: the core
// sends zeros without reading it) and one landing region each, so memory does not grow with
// ranks x size. Packets still carry the zeros (a simulation's as a run the ICRC covers, not as
// bytes; the transport still checks every packet's ICRC), every chunk must arrive, whole and in
// its slot, but there are no chunk checksums or results to check: bytes_verified counts the
// bytes delivered.
enum class PayloadMode { kReal, kVirtual };
std::string_view ToString(PayloadMode m);

// What a controller's EV deny or allow did: the QPs from host_a to host_b it reached, and how
// many of them refused a deny of an EV they send on because it would leave them fewer GOOD EVs
// than min_active (they keep the EV GOOD; mrc::EvTable::Deny).
struct EvControlResult {
  int qps = 0;
  int refused = 0;
};

// Whose transport carries the job: our MRC core's (MRC or its RC model, on namespace hosts) or
// the kernel's RC (libibverbs on rdma_rxe, on VM hosts: harness/job/kernel_rc_job.h).
enum class TransportStack { kModel, kKernel };
std::string_view ToString(TransportStack s);

struct JobConfig {
  std::string label = "mrc";          // names this job in events and metrics
  std::vector<std::string> hosts;     // at least one; ranks = hosts * ranks_per_host >= 2
  int ranks_per_host = 1;
  mrc::TransportMode transport = mrc::TransportMode::kMrc;
  TransportStack stack = TransportStack::kModel;  // kKernel: RC only
  mrc::EvMode ev_mode = mrc::EvMode::kSrv6;
  int evs_per_qp = 32;
  // QPs per pair of ranks that talk (flow splitting, as NCCL_IB_QPS_PER_CONNECTION): each chunk
  // goes out in this many pieces, one per QP, each QP on its own flow (RC: its own path).
  int qps_per_peer = 1;
  // MRC: the fewest EVs a QP keeps GOOD (mrc::EvPolicyConfig::min_active); none: the core's
  // default. At most evs_per_qp.
  std::optional<int> min_active;
  // RC: the local ACK timeout and consecutive timeouts before a QP errors; none: the preset's.
  std::optional<mrc::Duration> rc_ack_timeout;
  std::optional<uint32_t> rc_retry_count;
  std::vector<CollectiveSpec> collectives = {CollectiveSpec{}};
  double compute_seconds = kDefaultComputeSeconds;
  double step_timeout_seconds = kDefaultStepTimeoutSeconds;
  uint32_t mtu = 1024;
  PayloadMode payload = PayloadMode::kReal;
  uint64_t seed = 1;       // data patterns; in a simulation also the endpoints' keys
  // QPNs, rkeys and initial PSNs. None: real-time endpoints draw them from the kernel's
  // entropy; a simulation derives them from `seed`.
  std::optional<uint64_t> key_seed;
  int io_threads = 2;      // real-time driver only
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
  double start = 0, end = 0;  // seconds on the drill's clock (unix time; simulated time in ns-3)
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
  uint64_t bytes_verified = 0, bytes_bad = 0, retransmissions = 0;  // virtual payload: delivered
  double seconds = 0;
  PayloadMode payload = PayloadMode::kReal;
};

struct EvSnapshot {
  std::string qp;  // "host0/0->host1/1" (host/rank -> host/rank)
  uint16_t ev = 0;
  int plane = 0;
  std::string state;
  uint64_t tx_data = 0, tx_retransmits = 0, losses = 0;
};

}  // namespace mrclab::harness
