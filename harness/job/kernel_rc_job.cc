#include "harness/job/kernel_rc_job.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "emulator/netns/lab_state.h"
#include "emulator/netns/vm_guest_agent.h"
#include "emulator/wall_clock.h"
#include "harness/job/kernel_rc_plan.h"
#include "harness/job/step_barrier.h"
#include "harness/job/workload.h"

namespace mrclab::harness {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
namespace nx = emulator::netns;

constexpr const char* kRanksTool = "/opt/mrclab-rc-ranks";

struct RankTimes {
  std::vector<double> started, finished;  // unix seconds, per collective
  uint64_t bytes_ok = 0, bytes_bad = 0, retries = 0;
};

}  // namespace

struct KernelRcJob::Impl {
  struct Host {
    std::string name, vm_dir;
    json open;
    std::optional<nx::GuestSession> session;
    std::thread reader;
    std::atomic<double> step_sent{0};  // unix time of this step's request (read by the reader)
    std::optional<json> unfinished;  // the answer to "describe"
  };

  JobConfig config;
  EventFn on_event;
  StepFn on_step;
  std::vector<std::unique_ptr<Host>> hosts;
  int rank_count = 0;
  std::thread coordinator;
  std::unique_ptr<StepBarrier> barrier;
  std::vector<std::optional<RankTimes>> reports;  // this step's, under barrier->mutex()
  std::condition_variable described;              // every host answered "describe"
  std::atomic<bool> closing{false};
  JobResult result;

  Impl(JobConfig c, EventFn e, StepFn s) : config(std::move(c)), on_event(std::move(e)), on_step(std::move(s)) {}

  void Build(const emulator::ResolvedLab& lab) {
    if (config.transport != mrc::TransportMode::kRc)
      throw std::invalid_argument("the kernel's RC is RC only (transport: rc)");
    for (const std::string& h : config.hosts) {
      const emulator::ResolvedNode* node = lab.FindNode(h);
      if (!node || node->kind != emulator::NodeKind::kHost) throw std::invalid_argument("unknown host '" + h + "'");
      if (!node->vm)
        throw std::invalid_argument("host " + h + " is not a VM host: the kernel's RC runs on VM hosts (runtimes: vm)");
    }
    std::vector<json> plans = PlanKernelRc(lab, config);
    rank_count = static_cast<int>(config.hosts.size()) * config.ranks_per_host;
    barrier = std::make_unique<StepBarrier>(rank_count, config.step_timeout_seconds, config.max_steps);
    const nx::LabPaths paths(lab.name);
    for (size_t h = 0; h < plans.size(); ++h) {
      auto host = std::make_unique<Host>();
      host->name = config.hosts[h];
      host->vm_dir = paths.NodeDir(host->name);
      host->open = std::move(plans[h]);
      hosts.push_back(std::move(host));
    }
  }

  // Sends `request` to every host and waits for each one's line of `type` by the deadline.
  void Exchange(const json& request, const std::string& type, Clock::time_point deadline) {
    for (auto& h : hosts) h->session->Send(request.is_null() ? h->open : request);
    for (auto& h : hosts) {
      for (;;) {
        std::optional<json> line;
        try {
          line = h->session->Receive(deadline);
        } catch (const std::exception& e) {
          throw std::runtime_error("kernel RC job: " + h->name + ": " + e.what());
        }
        if (!line)
          throw std::runtime_error("kernel RC job: " + h->name + ": no '" + type + "' from " + kRanksTool +
                                   " before the deadline");
        if (!line->is_object()) continue;
        if (line->value("type", "") == "error")
          throw std::runtime_error("kernel RC job: " + h->name + ": " + line->value("message", std::string()));
        if (line->value("type", "") == type) break;
      }
    }
  }

  void Setup() {
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    std::vector<std::thread> attach;
    std::vector<std::string> errors(hosts.size());
    for (size_t i = 0; i < hosts.size(); ++i)
      attach.emplace_back([&, i] {
        try {
          // Killed by the agent only if this side vanished without closing (a day is "never").
          auto [session, first] = nx::GuestAgent(hosts[i]->vm_dir).Attach({kRanksTool}, std::chrono::hours(24), deadline);
          hosts[i]->session.emplace(std::move(session));
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
      });
    for (auto& t : attach) t.join();
    for (size_t i = 0; i < hosts.size(); ++i)
      if (!errors[i].empty()) throw std::runtime_error("kernel RC job: " + hosts[i]->name + ": " + errors[i]);
    Exchange(nullptr, "listening", deadline);
    Exchange({{"op", "connect"}}, "connected", deadline);
  }

  // --- readers -------------------------------------------------------------------------------
  void Read(Host& h) {
    try {
      while (!closing)
        if (std::optional<json> line = h.session->Receive(Clock::now() + std::chrono::milliseconds(200)))
          Handle(h, *line);
    } catch (const std::exception& e) {
      if (!closing) barrier->Fail(h.name + ": " + e.what());
    }
  }

  void Handle(Host& h, const json& line) {
    const std::string type = line.is_object() ? line.value("type", "") : "";
    if (type == "rank_done") {
      RankTimes t;
      const double sent = h.step_sent;
      for (double s : line.at("started")) t.started.push_back(sent + s);
      for (double s : line.at("finished")) t.finished.push_back(sent + s);
      t.bytes_ok = line.value("bytes_ok", uint64_t{0});
      t.bytes_bad = line.value("bytes_bad", uint64_t{0});
      t.retries = line.value("retries", uint64_t{0});
      const int rank = line.at("rank");
      if (t.started.size() != config.collectives.size() || t.finished.size() != config.collectives.size())
        return barrier->Fail(h.name + ": a rank_done without a time per collective: " + line.dump());
      {
        std::lock_guard lock(barrier->mutex());
        if (rank < 0 || rank >= rank_count || reports[rank]) return;
        reports[rank] = std::move(t);
      }
      barrier->RankDone();
    } else if (type == "qp_error") {
      const std::string qp = line.value("qp", ""), status = line.value("status", "");
      if (on_event)
        on_event({{"type", "qp_state"}, {"qp", qp}, {"to", "error"}, {"reason", status}, {"stack", "kernel"},
                  {"t", emulator::UnixNow()}, {"job", config.label}});
      barrier->Fail("QP " + qp + " entered the error state (" + status + ", rdma_rxe)");
    } else if (type == "unfinished") {
      std::lock_guard lock(barrier->mutex());
      h.unfinished = line.value("ranks", json::array());
      described.notify_all();
    } else if (type == "error") {
      barrier->Fail(h.name + ": " + line.value("message", std::string()));
    }
  }

  // --- coordinator ---------------------------------------------------------------------------
  void Run() {
    StepBarrier::Hooks hooks;
    hooks.begin = [this](uint64_t step) {
      {
        std::lock_guard lock(barrier->mutex());
        reports.assign(rank_count, std::nullopt);
      }
      try {
        for (auto& h : hosts) {
          h->step_sent = emulator::UnixNow();
          h->session->Send({{"op", "step"}, {"step", step}});
        }
      } catch (const std::exception& e) {
        barrier->Fail(e.what());
      }
    };
    hooks.assemble = [this](uint64_t step) { return Assemble(step); };
    hooks.unfinished = [this](uint64_t step, int done) { return ReportUnfinished(step, done); };
    result = barrier->Run(hooks, on_step);
  }

  StepRecord Assemble(uint64_t step) const {
    StepRecord rec;
    rec.step = step;
    for (size_t c = 0; c < config.collectives.size(); ++c) {
      double first = 1e300, last = 0;
      for (const auto& r : reports) {
        first = std::min(first, r->started[c]);
        last = std::max(last, r->finished[c]);
      }
      const CollectiveKind kind = config.collectives[c].kind;
      CollectiveTiming t{kind, ChunkBytes(config.collectives[c].bytes, rank_count) * rank_count, last - first, 0};
      if (t.seconds > 0) t.busbw_gbps = t.bytes * 8 / t.seconds / 1e9 * BusBandwidthFactor(kind, rank_count);
      rec.collectives.push_back(t);
    }
    for (const auto& r : reports) {
      rec.bytes_verified += r->bytes_ok;
      rec.bytes_bad += r->bytes_bad;
      rec.retransmissions += r->retries;
    }
    return rec;
  }

  // The watchdog's evidence, as TrainingJob gives it: where every unfinished rank is, from
  // each VM's answer to "describe" (a VM that does not answer within 2 s is named).
  std::string ReportUnfinished(uint64_t step, int done) {
    std::unique_lock lock(barrier->mutex());
    for (auto& h : hosts) h->unfinished.reset();
    lock.unlock();
    for (auto& h : hosts) {
      try {
        h->session->Send({{"op", "describe"}});
      } catch (const std::exception&) {
      }
    }
    lock.lock();
    described.wait_for(lock, std::chrono::seconds(2), [&] {
      for (auto& h : hosts)
        if (!h->unfinished) return false;
      return true;
    });
    std::vector<json> unfinished;
    std::string silent;
    for (auto& h : hosts) {
      if (!h->unfinished) silent += (silent.empty() ? "" : ", ") + h->name;
      for (json r : h->unfinished.value_or(json::array())) {
        r["host"] = h->name;
        unfinished.push_back(std::move(r));
      }
    }
    lock.unlock();
    const WatchdogReport report = MakeWatchdogReport(config.label, emulator::UnixNow(), step, done, std::move(unfinished));
    if (on_event) on_event(report.event);
    return report.summary + (silent.empty() ? "" : "; no answer from " + silent + "'s " + kRanksTool);
  }

  void Close() {
    closing = true;
    barrier->Destroy();
    if (coordinator.joinable()) coordinator.join();
    for (auto& h : hosts)
      if (h->reader.joinable()) h->reader.join();
    for (auto& h : hosts) h->session.reset();  // the guests read end of file and exit
  }
};

KernelRcJob::KernelRcJob(const emulator::ResolvedLab& lab, JobConfig config, EventFn on_event, StepFn on_step)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(on_event), std::move(on_step))) {
  impl_->Build(lab);
}

KernelRcJob::~KernelRcJob() { impl_->Close(); }

int KernelRcJob::ranks() const { return impl_->rank_count; }

void KernelRcJob::Start() {
  impl_->Setup();
  impl_->barrier->MarkRunning();
  for (auto& host : impl_->hosts) {
    Impl::Host* h = host.get();
    h->reader = std::thread([this, h] { impl_->Read(*h); });
  }
  impl_->coordinator = std::thread([this] { impl_->Run(); });
}

bool KernelRcJob::WaitForSteps(uint64_t steps, double timeout_seconds) {
  return impl_->barrier->WaitForSteps(steps, timeout_seconds);
}
void KernelRcJob::RequestStop() { impl_->barrier->RequestStop(); }
JobState KernelRcJob::state() const { return impl_->barrier->state(); }
uint64_t KernelRcJob::steps_done() const { return impl_->barrier->steps_done(); }

JobResult KernelRcJob::Wait() {
  if (impl_->coordinator.joinable()) impl_->coordinator.join();
  return impl_->result;
}

}  // namespace mrclab::harness
