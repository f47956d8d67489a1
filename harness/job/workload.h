// The synthetic training workload as a sans-I/O state machine: ranks, steps, collectives over
// MRC (or RC) QPs, data checks. It owns no thread, clock, socket or timer; a driver owns the
// hosts' mrc::Contexts, moves their datagrams, and calls in with the time:
//
//   driver                                        Workload
//   ------                                        --------
//   (construction) HostBinding per host  ───────► CQs, memory, QPs created in each Context;
//                                                 EV routes handed back via set_routes
//   BeginStep(host, step, now)            ───────► the host's ranks start the step (compute)
//   NextTimeout(host) / OnTimeout(host, now) ───► compute phases end, sends are posted
//   OnProgress(host, now)                 ───────► after the Context took input or timers:
//                                                 completions and events drained, ranks advance
//   Poll(host)                            ◄─────── RankReport (a rank finished its step),
//                                                 WorkloadEvent (EV/QP state, checksum, verify),
//                                                 WorkloadFailure (QP error, bad completion)
//   AssembleStep(step, reports)           ◄─────── StepRecord, once every rank has reported
//
// Calls for one host touch only that host's ranks, Context and memory (unless the driver shares a
// virtual landing buffer between hosts: HostBinding), so a driver may run different hosts on
// different threads. The step barrier and the watchdog are the driver's: it starts
// every rank's step, waits for all RankReports (or its step timeout) and assembles the record.
//
// Ranks are laid out host-major (ranks_per_host each); every rank uses every NIC port (plane)
// of its host. Every pair of ranks a collective connects gets one QP per side, with the EV
// plan of ev_plan.h. Every chunk carries a checksum in its immediate value and is checked
// where it lands; with real payload (the default) every collective's result is also checked
// against its closed form (collective_data.h), so "rode through" also means "nothing lost or
// corrupted". Virtual payload (job_types.h) keeps memory flat at scale.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/resolved_lab.h"
#include "harness/job/job_types.h"
#include "mrc/core/context.h"

namespace mrclab::harness {

// What the driver gives the workload for host i (of JobConfig::hosts).
struct HostBinding {
  mrc::Context* context = nullptr;
  // Installs the EV routes of QP `qpn` (routes[i] serves EV i) in the host's driver.
  std::function<void(uint32_t qpn, const std::vector<mrc::EvRoute>& routes)> set_routes;
  // Virtual payload only, optional: where the host's ranks land what they receive (the
  // workload sizes it before registering it). A driver that runs hosts on one thread may give
  // them all the same buffer, so that landings stay in cache; without one, each rank lands in
  // its own. The bytes are never read.
  std::vector<uint8_t>* virtual_landing = nullptr;
};

// The QP configuration for a transport, EV planes (plane of EV i) and MTU: the driver's time
// scale decides it (mrc/core/qp_presets.h).
// Piece `index` of a chunk of `chunk_words` 4-byte words split over `pieces` QPs: its byte
// offset in the chunk and its length (the first chunk_words % pieces pieces have one word more).
struct Piece {
  size_t offset = 0, bytes = 0;
};
Piece PieceOf(size_t chunk_words, int pieces, int index);

using QpConfigFn = std::function<mrc::QpConfig(mrc::TransportMode, const std::vector<int>& ev_planes, uint32_t mtu)>;

struct RankReport {
  int rank = 0;
  uint64_t step = 0;
  std::vector<mrc::Timestamp> started, finished;  // per collective
  uint64_t bytes_ok = 0, bytes_bad = 0, retransmissions = 0;
};
struct WorkloadEvent {
  mrc::Timestamp at;
  nlohmann::json body;  // {"type": "ev_state", ...}; the driver adds "t" and "job"
};
struct WorkloadFailure {
  mrc::Timestamp at;
  std::string reason;
};
using WorkloadOutput = std::variant<RankReport, WorkloadEvent, WorkloadFailure>;

// A watchdog's report from what every host's Workload::DescribeUnfinished gave: the "watchdog"
// event of job `job` at time `t_seconds` (the driver's clock), and the summary the job's reason
// ends with: how many ranks still compute, the first rank that waits, for whom, and that peer's
// QP to it.
struct WatchdogReport {
  nlohmann::json event;
  std::string summary;
};
WatchdogReport MakeWatchdogReport(const std::string& job, double t_seconds, uint64_t step, int ranks_done,
                                  std::vector<nlohmann::json> unfinished);

class Workload {
 public:
  // Throws std::invalid_argument for a config the lab cannot run (unknown or repeated host,
  // fewer than 2 ranks, too many landing slots, too many udp source ports, ...).
  Workload(const emulator::ResolvedLab& lab, const JobConfig& config, const QpConfigFn& qp_config,
           const std::function<HostBinding(int host)>& bind);
  ~Workload();
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  int ranks() const { return static_cast<int>(ranks_.size()); }
  int hosts() const { return static_cast<int>(hosts_.size()); }
  const JobConfig& config() const { return config_; }

  void BeginStep(int host, uint64_t step, mrc::Timestamp now);
  mrc::Timestamp NextTimeout(int host) const;
  void OnTimeout(int host, mrc::Timestamp now);
  void OnProgress(int host, mrc::Timestamp now);
  // A hint for a driver that knows a datagram for `host` comes next (OnProgress follows it), so
  // that OnProgress finds in cache what it reads; each stage is called later than the one
  // before, when that one's lines are there: 0, the host's state and where its ranks are; 1, the
  // ranks; 2, what the ranks point at (their phase, their maps of peers, slots and cursors).
  // Changes nothing.
  static constexpr int kPrefetchStages = 3;
  void Prefetch(int host, int stage) const;
  std::optional<WorkloadOutput> Poll(int host);

  // A step's collectives and byte counts from every rank's report; the driver sets its start,
  // end and seconds on the drill's clock.
  StepRecord AssembleStep(uint64_t step, const std::vector<RankReport>& reports) const;

  // Controller actions on host `host`'s QPs (see Job).
  EvControlResult SetEvDenied(int host, const std::string& peer_host, int ev, bool denied, mrc::Timestamp now);
  int SetPortEnabled(int host, int plane, bool enabled, mrc::Timestamp now);
  // Every EV of host `host`'s QPs, one at a time (the snapshot is reused between calls).
  void VisitEvs(int host, const std::function<void(const EvSnapshot&)>& visit) const;
  // Where host `host`'s unfinished ranks are in the step, for a watchdog's report: per rank its
  // collective and phase, whether it still computes, the peers whose chunks it waits for, and
  // every QP with work outstanding (messages, bytes in flight, window, EV states, timeouts).
  std::vector<nlohmann::json> DescribeUnfinished(int host) const;
  int HostIndex(const std::string& name) const;  // -1 if the job has no such host

 private:
  struct Rank;
  struct Host;
  void Connect(const emulator::ResolvedLab& lab, const QpConfigFn& qp_config);
  void OnCompletion(Rank& r, const mrc::Completion& wc, mrc::Timestamp now);
  // The phase r is in (its collective and phase), from the plan.
  const Phase& CurrentPhase(Rank& r) const;
  void PostSends(Rank& r, const Phase& phase, mrc::Timestamp now);
  void Advance(Rank& r, mrc::Timestamp now);
  void UpdateComputeDue(int host);
  void VerifyResult(Rank& r, size_t collective, mrc::Timestamp now);
  uint64_t Retransmissions(const Rank& r) const;
  size_t LandingOffset(int slot) const;
  // Byte offset of chunk `chunk` of collective `c` in a rank's input (0 for virtual payload).
  size_t InputOffset(size_t c, int chunk) const;
  // Where the next message from `peer` on QP `lane` lands: slot (-1: r never receives from it)
  // and collective.
  struct Incoming {
    int slot = -1;
    size_t collective = 0;
  };
  Incoming NextSlotFrom(Rank& r, int peer, int lane) const;
  std::string QpName(const Rank& r, int peer, int lane) const;
  void Output(Host& h, WorkloadOutput out);

  JobConfig config_;
  std::vector<CollectiveKind> kinds_;
  StepPlan plan_;
  std::vector<size_t> words_;  // per collective: uint32 words per chunk
  // PayloadMode::kVirtual: per collective, one chunk of zeros (registered mrc::kZeroFilled).
  std::vector<std::vector<uint8_t>> shared_input_;
  size_t slot_bytes_ = 0;
  std::vector<std::unique_ptr<Host>> hosts_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  // OnProgress runs after every datagram a host receives: what it polls sits in flat arrays
  // (by rank id, the ranks of host h at h * ranks_per_host onward; by host) instead of behind
  // Host and Rank pointers, each a cache miss at thousands of hosts.
  struct RankQueue {
    Rank* rank;
    mrc::CompletionQueue* cq;
  };
  std::vector<RankQueue> rank_queues_;
  // By host, what a progress call reads of it besides its ranks: two hosts to a cache line,
  // and its Host (hosts_[h], then the object) not read unless outputs wait.
  struct HostState {
    mrc::Timestamp compute_due = mrc::Timestamp::Infinite();  // its ranks' earliest compute_end
    mrc::Context* context = nullptr;
    Host* host = nullptr;
    size_t outputs = 0;  // in host->outbox
  };
  std::vector<HostState> host_state_;
  // Every QP's owner (its rank, peer rank and lane), by the index its receives are posted with
  // as their wr_id: a receive completion finds it without a walk through the host's QP map.
  struct QpOwner;
  std::vector<QpOwner> qp_owners_;
};

}  // namespace mrclab::harness
