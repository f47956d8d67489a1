#include "emulator/ns3/helper/ns3_backend.h"

#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

#include "emulator/ns3/helper/sim_job.h"
#include "emulator/ns3/helper/sim_scheduler.h"
#include "emulator/ns3/model/bucket_scheduler.h"
#include "emulator/ns3/model/sim_fabric.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace mrclab::emulator::sim {
namespace {

using nlohmann::json;

// How finely RunUntil checks its predicate, in simulated time.
constexpr int64_t kSliceNanoseconds = 1'000'000;

bool live_backend = false;

// Rounded up, so that the clock has reached `seconds` (as a double) when the simulation stops.
int64_t ToNanoseconds(double seconds) { return static_cast<int64_t>(std::ceil(seconds * 1e9)); }

class Ns3Backend : public harness::DrillBackend {
 public:
  Ns3Backend(ResolvedLab lab, Ns3BackendOptions options) : lab_(std::move(lab)), options_(std::move(options)) {
    if (live_backend) throw std::logic_error("one ns-3 simulation at a time per process");
    live_backend = true;
    // Before anything asks ns-3 the time (a drill reads Now() before Prepare): the first ask
    // makes the simulator, on the scheduler bound then. One left by an earlier run goes.
    ns3::Simulator::Destroy();
    UseSimScheduler();
  }
  ~Ns3Backend() override {
    Release();
    live_backend = false;
  }

  BackendKind kind() const override { return BackendKind::kNs3; }
  const ResolvedLab& lab() const override { return lab_; }
  bool reused() const override { return false; }
  std::string TimeBase() const override { return "simulated"; }

  void Prepare(bool progress) override {
    ns3::Simulator::Now();  // makes the simulator if nothing has yet
    if (BucketScheduler::Instances() == 0)  // its clock and Ctrl-C hook would be missing
      throw std::logic_error("ns-3's simulator was made before the ns3 backend chose its scheduler");
    BucketScheduler::stop_requested = options_.stop_requested;
    released_at_.reset();
    ns3::RngSeedManager::SetSeed(static_cast<uint32_t>(options_.seed % 0xFFFFFFFEu) + 1);
    ns3::RngSeedManager::SetRun(1);
    fabric_ = ns3::CreateObject<SimFabric>();
    fabric_->SetAttribute("Seed", ns3::UintegerValue(static_cast<uint32_t>(options_.seed)));
    fabric_->Build(lab_);
    if (progress)
      std::fprintf(stderr, "ns3: lab %s built: %zu switches, %zu hosts, %zu links\n", lab_.name.c_str(),
                   lab_.Switches().size(), lab_.Hosts().size(), lab_.links.size());
  }

  void Release() override {
    if (!fabric_) return;
    active_.clear();
    fabric_->Dispose();
    fabric_ = nullptr;
    released_at_ = Now();
    BucketScheduler::stop_requested = nullptr;
    ns3::Simulator::Destroy();  // its clock starts again at 0
  }

  // After Release, the time the simulation ended: the drill's last events come after it.
  double Now() override { return released_at_ ? *released_at_ : SimNowSeconds(); }

  bool RunUntil(double deadline, const std::function<bool()>& done) override {
    const int64_t end = ToNanoseconds(deadline);
    for (;;) {
      if (done()) return true;
      const int64_t now = ns3::Simulator::Now().GetNanoSeconds();
      if (now >= end) return false;
      ns3::Simulator::Stop(ns3::NanoSeconds(std::min(kSliceNanoseconds, end - now)));
      ns3::Simulator::Run();  // also ends early on options_.stop_requested (then done() says why)
    }
  }

  // Routing reacts RoutingReactionTime after a change (bgp labs): after faults, wait that long
  // so that every transport starts on the fabric as built.
  void WaitUntilConverged(const EventFn& on_event, bool progress) override {
    const double start = Now();
    if (changed_since_converged_ && lab_.routing == Routing::kBgp) {
      ns3::TimeValue reaction;
      fabric_->GetAttribute("RoutingReactionTime", reaction);
      RunUntil(start + reaction.Get().GetSeconds() + 1e-3, [] { return false; });
    }
    changed_since_converged_ = false;
    on_event({{"type", "drill"}, {"phase", "lab converged"}, {"waited_seconds", Now() - start}, {"differing", ""}});
  }

  int ApplyFault(const FaultAction& a) override {
    CheckNs3Supports(a.kind);
    ValidateFault(lab_, a);
    active_[++last_id_] = a;
    switch (a.kind) {
      case FaultKind::kLinkDown: fabric_->SetLinkUp(a.link, false); break;
      case FaultKind::kBlackhole:
      case FaultKind::kLoss:
      case FaultKind::kRate: ApplyLinkFaults(a.link, a.kind); break;
      case FaultKind::kSwitchDown: fabric_->SetSwitchUp(a.node, false); break;
      case FaultKind::kPlaneDown: fabric_->SetPlaneHostLinksUp(a.plane, false); break;
      default: break;  // refused by CheckNs3Supports / ValidateFault
    }
    changed_since_converged_ = true;
    return last_id_;
  }

  void RevertFault(int id) override {
    auto it = active_.find(id);
    if (it == active_.end()) return;
    const FaultAction a = it->second;
    active_.erase(it);
    switch (a.kind) {
      case FaultKind::kLinkDown: fabric_->SetLinkUp(a.link, true); break;
      case FaultKind::kBlackhole:
      case FaultKind::kLoss:
      case FaultKind::kRate: ApplyLinkFaults(a.link, a.kind); break;
      case FaultKind::kSwitchDown: fabric_->SetSwitchUp(a.node, true); break;
      case FaultKind::kPlaneDown: fabric_->SetPlaneHostLinksUp(a.plane, true); break;
      default: break;
    }
  }

  int RevertLeftoverFaults() override { return 0; }  // a simulation starts from nothing

  void StartObserving(const EventFn&, harness::DrillMetrics*) override {}  // counters: SampleLinks
  void StopObserving() override {}

  // Per link end "node:interface": tx = packets it serialised, rx = packets that reached it,
  // tx_dropped = its queue's tail drops, rx_dropped = packets dropped on their way to it by a
  // fault (down, blackhole, loss), queue_peak_bytes = the most its queue held. Ends that have
  // counted nothing yet are left out (the run directory lists only the others: RunRecorder).
  std::vector<harness::LinkSample> SampleLinks() override {
    std::vector<harness::LinkSample> out;
    if (!fabric_) return out;
    for (const ResolvedLink& l : lab_.links)
      for (bool a_end : {true, false}) {
        const PortCounters mine = fabric_->Counters(l.index, a_end), theirs = fabric_->Counters(l.index, !a_end);
        harness::LinkSample sample{l.index, "", theirs.rx_packets, mine.tx_packets, theirs.fault_drops,
                                   mine.queue_drops, mine.max_queue_bytes};
        if (!sample.Counted()) continue;  // named only when listed: a big lab has millions of ends
        const EndpointSpec& end = a_end ? l.a : l.b;
        sample.end = end.node + ":" + end.interface;
        out.push_back(std::move(sample));
      }
    return out;
  }

  std::unique_ptr<harness::Job> CreateJob(const harness::JobConfig& config, harness::Job::EventFn on_event,
                                          harness::Job::StepFn on_step) override {
    return std::make_unique<SimJob>(
        lab_, fabric_, config, options_.qp_config,
        [this](double deadline, const std::function<bool()>& done) { return RunUntil(deadline, done); },
        std::move(on_event), std::move(on_step));
  }

  json Versions() override {
    return {{"mrclab", MRCLAB_VERSION}, {"ns3", "3.37"}, {"model", "mrclab SimFabric (lean links and uSID switches)"}};
  }

  void CollectLogs(harness::RunRecorder&) override {}  // the run directory holds everything

 private:
  // Sets a link's state of one kind from the faults of that kind in force on it, so that they
  // overlap as in the netns backend (where each has its own nft table or the newest shaping
  // stays): a direction drops all while any blackhole on it is in force, loses 1 - prod(1 - r)
  // with losses r in force, and the link runs at the newest rate fault's rate (none: its own).
  void ApplyLinkFaults(int link, FaultKind kind) {
    bool blackhole[2] = {false, false};
    double kept[2] = {1, 1};
    uint64_t rate_bps = 0;
    for (const auto& [id, f] : active_) {  // by id: the newest rate is the last
      if (f.kind != kind || f.link != link) continue;
      const bool on[2] = {f.direction != Direction::kBToA, f.direction != Direction::kAToB};
      for (int d : {0, 1}) {
        if (on[d] && kind == FaultKind::kBlackhole) blackhole[d] = true;
        if (on[d] && kind == FaultKind::kLoss) kept[d] *= 1 - f.loss_rate;
      }
      if (kind == FaultKind::kRate) rate_bps = f.rate_bps;
    }
    if (kind == FaultKind::kBlackhole) fabric_->SetBlackhole(link, blackhole[0], blackhole[1]);
    if (kind == FaultKind::kLoss) fabric_->SetLoss(link, 1 - kept[0], 1 - kept[1]);
    if (kind == FaultKind::kRate) fabric_->SetLinkRate(link, rate_bps);
  }

  ResolvedLab lab_;
  Ns3BackendOptions options_;
  ns3::Ptr<SimFabric> fabric_;
  std::map<int, FaultAction> active_;
  int last_id_ = 0;
  bool changed_since_converged_ = false;
  std::optional<double> released_at_;
};

}  // namespace

void CheckNs3Supports(FaultKind kind) {
  if (!Supports(BackendKind::kNs3, kind))
    throw FaultError(std::string(ToString(kind)) + ": not modelled by the ns3 backend (" +
                     std::string(Info(kind).summary) + " needs the emulated lab: --backend netns)");
}

std::unique_ptr<harness::DrillBackend> MakeNs3Backend(const ResolvedLab& lab, const Ns3BackendOptions& options) {
  return std::make_unique<Ns3Backend>(lab, options);
}

}  // namespace mrclab::emulator::sim
