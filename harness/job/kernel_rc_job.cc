#include "harness/job/kernel_rc_job.h"

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
    double step_sent = 0;  // unix time of this step's request
    std::optional<json> unfinished;  // the answer to "describe"
  };

  KernelRcJob* owner;
  JobConfig config;
  EventFn on_event;
  StepFn on_step;
  std::vector<std::unique_ptr<Host>> hosts;
  int rank_count = 0;
  std::thread coordinator;

  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::optional<RankTimes>> reports;
  int done_ranks = 0;
  std::string failure;
  bool stop_requested = false, closing = false;
  JobResult result;

  Impl(KernelRcJob* o, JobConfig c, EventFn e, StepFn s)
      : owner(o), config(std::move(c)), on_event(std::move(e)), on_step(std::move(s)) {}

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
    const nx::LabPaths paths(lab.name);
    for (size_t h = 0; h < plans.size(); ++h) {
      auto host = std::make_unique<Host>();
      host->name = config.hosts[h];
      host->vm_dir = paths.NodeDir(host->name);
      host->open = std::move(plans[h]);
      hosts.push_back(std::move(host));
    }
    result.payload = PayloadMode::kReal;
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
      while (!Closing())
        if (std::optional<json> line = h.session->Receive(Clock::now() + std::chrono::milliseconds(200)))
          Handle(h, *line);
    } catch (const std::exception& e) {
      if (!Closing()) Fail(h.name + ": " + e.what());
    }
  }

  bool Closing() {
    std::lock_guard lock(mu);
    return closing;
  }

  void Handle(Host& h, const json& line) {
    const std::string type = line.value("type", "");
    if (type == "rank_done") {
      RankTimes t;
      for (double s : line.at("started")) t.started.push_back(h.step_sent + s);
      for (double s : line.at("finished")) t.finished.push_back(h.step_sent + s);
      t.bytes_ok = line.value("bytes_ok", uint64_t{0});
      t.bytes_bad = line.value("bytes_bad", uint64_t{0});
      t.retries = line.value("retries", uint64_t{0});
      const int rank = line.at("rank");
      if (t.started.size() != config.collectives.size() || t.finished.size() != config.collectives.size())
        return Fail(h.name + ": a rank_done without a time per collective: " + line.dump());
      std::lock_guard lock(mu);
      if (rank < 0 || rank >= rank_count || reports[rank]) return;
      reports[rank] = std::move(t);
      ++done_ranks;
      cv.notify_all();
    } else if (type == "qp_error") {
      const std::string qp = line.value("qp", ""), status = line.value("status", "");
      if (on_event)
        on_event({{"type", "qp_state"}, {"qp", qp}, {"to", "error"}, {"reason", status}, {"stack", "kernel"},
                  {"t", emulator::UnixNow()}, {"job", config.label}});
      Fail("QP " + qp + " entered the error state (" + status + ", rdma_rxe)");
    } else if (type == "unfinished") {
      std::lock_guard lock(mu);
      h.unfinished = line.value("ranks", json::array());
      cv.notify_all();
    } else if (type == "error") {
      Fail(h.name + ": " + line.value("message", std::string()));
    }
  }

  void Fail(const std::string& reason) {
    std::lock_guard lock(mu);
    if (failure.empty()) failure = reason;
    cv.notify_all();
  }

  // --- coordinator ---------------------------------------------------------------------------
  void Run() {
    const auto t0 = Clock::now();
    for (uint64_t step = 0;; ++step) {
      std::unique_lock lock(mu);
      if (stop_requested || (config.max_steps && step >= config.max_steps)) {
        result.state = JobState::kCompleted;
        break;
      }
      done_ranks = 0;
      reports.assign(rank_count, std::nullopt);
      lock.unlock();
      const double start = emulator::UnixNow();
      try {
        for (auto& h : hosts) {
          h->step_sent = emulator::UnixNow();
          h->session->Send({{"op", "step"}, {"step", step}});
        }
      } catch (const std::exception& e) {
        Fail(e.what());
      }
      lock.lock();
      const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double>(config.step_timeout_seconds));
      const bool finished = cv.wait_until(lock, deadline, [&] { return done_ranks == rank_count || !failure.empty(); });
      if (!failure.empty()) {
        result.state = JobState::kInterrupted;
        result.reason = "step " + std::to_string(step) + ": " + failure;
        break;
      }
      if (!finished) {
        const int done = done_ranks;
        lock.unlock();
        const std::string where = ReportUnfinished(step, done);
        lock.lock();
        result.state = JobState::kInterrupted;
        result.reason = "watchdog: step " + std::to_string(step) + " did not finish within " +
                        std::to_string(config.step_timeout_seconds) + " s (" + std::to_string(done) + " of " +
                        std::to_string(rank_count) + " ranks done)" + where;
        break;
      }
      StepRecord rec = Assemble(step);
      rec.start = start;
      rec.end = emulator::UnixNow();
      rec.seconds = rec.end - rec.start;
      result.steps = step + 1;
      result.bytes_verified += rec.bytes_verified;
      result.bytes_bad += rec.bytes_bad;
      result.retransmissions += rec.retransmissions;
      lock.unlock();
      if (on_step) on_step(rec);
      lock.lock();
      owner->steps_done_.store(step + 1);
      cv.notify_all();
    }
    result.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    {
      std::lock_guard lock(mu);
      owner->state_.store(result.state);
    }
    cv.notify_all();
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
    std::unique_lock lock(mu);
    for (auto& h : hosts) h->unfinished.reset();
    lock.unlock();
    for (auto& h : hosts) {
      try {
        h->session->Send({{"op", "describe"}});
      } catch (const std::exception&) {
      }
    }
    lock.lock();
    cv.wait_for(lock, std::chrono::seconds(2), [&] {
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
    {
      std::lock_guard lock(mu);
      closing = true;
      stop_requested = true;
      if (failure.empty()) failure = "job destroyed";
      cv.notify_all();
    }
    if (coordinator.joinable()) coordinator.join();
    for (auto& h : hosts)
      if (h->reader.joinable()) h->reader.join();
    for (auto& h : hosts) h->session.reset();  // the guests read end of file and exit
  }
};

KernelRcJob::KernelRcJob(const emulator::ResolvedLab& lab, JobConfig config, EventFn on_event, StepFn on_step)
    : impl_(std::make_unique<Impl>(this, std::move(config), std::move(on_event), std::move(on_step))) {
  impl_->Build(lab);
}

KernelRcJob::~KernelRcJob() { impl_->Close(); }

int KernelRcJob::ranks() const { return impl_->rank_count; }

void KernelRcJob::Start() {
  impl_->Setup();
  state_.store(JobState::kRunning);
  for (auto& host : impl_->hosts) {
    Impl::Host* h = host.get();
    h->reader = std::thread([this, h] { impl_->Read(*h); });
  }
  impl_->coordinator = std::thread([this] { impl_->Run(); });
}

bool KernelRcJob::WaitForSteps(uint64_t steps, double timeout_seconds) {
  std::unique_lock lock(impl_->mu);
  impl_->cv.wait_for(lock, std::chrono::duration<double>(timeout_seconds), [&] {
    return steps_done_.load() >= steps || state_.load() != JobState::kRunning;
  });
  return steps_done_.load() >= steps;
}

void KernelRcJob::RequestStop() {
  std::lock_guard lock(impl_->mu);
  impl_->stop_requested = true;
}

JobResult KernelRcJob::Wait() {
  if (impl_->coordinator.joinable()) impl_->coordinator.join();
  return impl_->result;
}

}  // namespace mrclab::harness
