#include "harness/job/training_job.h"

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "emulator/host_machine.h"
#include "emulator/wall_clock.h"
#include "harness/job/ev_plan.h"
#include "harness/job/workload.h"
#include "mrc/asio/asio_endpoint.h"
#include "mrc/core/qp_presets.h"

namespace mrclab::harness {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

struct TrainingJob::Impl {
  struct Host {
    int index = 0, io = 0;
    std::unique_ptr<mrc::AsioEndpoint> endpoint;
    std::unique_ptr<boost::asio::steady_timer> timer;  // the workload's compute phases
  };

  TrainingJob* owner;
  JobConfig config;
  EventFn on_event;
  StepFn on_step;
  // Steady-clock Timestamps (AsioEndpoint::Now) to unix seconds.
  const double unix_epoch = emulator::UnixNow() - mrc::AsioEndpoint::Now().nanoseconds() * 1e-9;
  std::vector<std::unique_ptr<boost::asio::io_context>> ios;
  std::vector<std::unique_ptr<Host>> hosts;
  std::unique_ptr<Workload> workload;
  std::mutex io_mu;  // guards io_threads: snapshots run on the io threads while they exist
  std::vector<std::thread> io_threads;
  std::thread coordinator;

  std::mutex mu;
  std::condition_variable cv;
  std::vector<RankReport> reports;
  int done_ranks = 0;
  std::string failure;
  bool stop_requested = false;
  JobResult result;

  Impl(TrainingJob* o, JobConfig c, EventFn e, StepFn s)
      : owner(o), config(std::move(c)), on_event(std::move(e)), on_step(std::move(s)) {}

  double Unix(mrc::Timestamp t) const { return unix_epoch + t.nanoseconds() * 1e-9; }

  void Build(const emulator::ResolvedLab& lab) {
    if (config.io_threads < 1) throw std::invalid_argument("io_threads must be at least 1");
    result.payload = config.payload;
    const int io_count = std::min<int>(config.io_threads, config.hosts.size());
    for (int i = 0; i < io_count; ++i) ios.push_back(std::make_unique<boost::asio::io_context>(1));
    for (size_t h = 0; h < config.hosts.size(); ++h) {
      auto host = std::make_unique<Host>();
      host->index = static_cast<int>(h);
      host->io = static_cast<int>(h % io_count);
      mrc::AsioEndpointConfig ec;
      ec.ports = HostPorts(LabHost(lab, config.hosts[h]), config.ev_mode);
      ec.ev_mode = config.ev_mode;
      if (config.key_seed) ec.key_seed = *config.key_seed * 1000 + h + 1;
      host->endpoint = std::make_unique<mrc::AsioEndpoint>(*ios[host->io], ec);
      host->timer = std::make_unique<boost::asio::steady_timer>(*ios[host->io]);
      hosts.push_back(std::move(host));
    }
    workload = std::make_unique<Workload>(lab, config, mrc::RealtimeQpConfig, [this](int h) {
      mrc::AsioEndpoint* ep = hosts[h]->endpoint.get();
      return HostBinding{&ep->context(), [ep](uint32_t qpn, const std::vector<mrc::EvRoute>& routes) {
                           ep->SetRoutes(qpn, routes);
                         }};
    });
    for (auto& host : hosts) {
      Host* h = host.get();
      h->endpoint->SetOnProgress([this, h] { Progress(*h); });
    }
  }

  // --- io threads ----------------------------------------------------------------------------
  void Progress(Host& h) {
    const mrc::Timestamp now = mrc::AsioEndpoint::Now();
    if (workload->NextTimeout(h.index) <= now) workload->OnTimeout(h.index, now);
    workload->OnProgress(h.index, now);
    Drain(h);
    ArmTimer(h);
  }

  void ArmTimer(Host& h) {
    const mrc::Timestamp next = workload->NextTimeout(h.index);
    if (next.IsInfinite()) return;
    h.timer->expires_after(std::chrono::nanoseconds((next - mrc::AsioEndpoint::Now()).nanoseconds()));
    h.timer->async_wait([this, &h](const boost::system::error_code& ec) {
      if (ec) return;
      Progress(h);
      h.endpoint->Kick();
    });
  }

  void Drain(Host& h) {
    while (auto out = workload->Poll(h.index)) {
      if (auto* rep = std::get_if<RankReport>(&*out)) {
        std::lock_guard lock(mu);
        reports[rep->rank] = std::move(*rep);
        ++done_ranks;
        cv.notify_all();
      } else if (auto* ev = std::get_if<WorkloadEvent>(&*out)) {
        ev->body["t"] = Unix(ev->at);
        ev->body["job"] = config.label;
        if (on_event) on_event(ev->body);
      } else {
        Fail(std::get<WorkloadFailure>(*out).reason);
      }
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
    const int n = workload->ranks();
    for (uint64_t step = 0;; ++step) {
      std::unique_lock lock(mu);
      if (stop_requested || (config.max_steps && step >= config.max_steps)) {
        result.state = JobState::kCompleted;
        break;
      }
      done_ranks = 0;
      reports.assign(n, {});
      lock.unlock();
      const mrc::Timestamp start = mrc::AsioEndpoint::Now();
      for (auto& host : hosts) {
        Host* h = host.get();
        boost::asio::post(*ios[h->io], [this, h, step] {
          workload->BeginStep(h->index, step, mrc::AsioEndpoint::Now());
          Drain(*h);
          ArmTimer(*h);
          h->endpoint->Kick();
        });
      }
      lock.lock();
      const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double>(config.step_timeout_seconds));
      const bool finished = cv.wait_until(lock, deadline, [&] { return done_ranks == n || !failure.empty(); });
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
                        std::to_string(n) + " ranks done)" + where;
        break;
      }
      StepRecord rec = workload->AssembleStep(step, reports);
      const mrc::Timestamp end = mrc::AsioEndpoint::Now();
      rec.start = Unix(start);
      rec.end = Unix(end);
      rec.seconds = (end - start).seconds();
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
    StopIo();
    {
      std::lock_guard lock(mu);
      owner->state_.store(result.state);
    }
    cv.notify_all();
  }

  // The watchdog's evidence: a "watchdog" event with where every unfinished rank is (and its
  // QPs with work outstanding), and a summary for the job's reason: the first waiting rank,
  // whom it waits for and that peer's QP to it. An io thread that does not answer is named.
  std::string ReportUnfinished(uint64_t step, int done) {
    std::vector<nlohmann::json> unfinished;
    std::mutex m;
    std::string stuck;
    try {
      OnEachHost([&](Host& h) {
        std::vector<nlohmann::json> d = workload->DescribeUnfinished(h.index);
        std::lock_guard l(m);
        for (auto& rank : d) unfinished.push_back(std::move(rank));
      });
    } catch (const std::exception& e) {
      stuck = std::string("; ") + e.what() + ": an io thread is stuck, the emulator is at fault";
    }
    std::lock_guard l(m);
    const WatchdogReport report =
        MakeWatchdogReport(config.label, Unix(mrc::AsioEndpoint::Now()), step, done, std::move(unfinished));
    if (on_event) on_event(report.event);
    return stuck.empty() ? report.summary : stuck;
  }

  void StopIo() {
    std::lock_guard lock(io_mu);
    for (auto& host : hosts) {
      Host* h = host.get();
      boost::asio::post(*ios[h->io], [h] {
        h->timer->cancel();
        h->endpoint->Stop();
      });
    }
    for (auto& io : ios) io->stop();
    for (auto& t : io_threads)
      if (t.joinable()) t.join();
    io_threads.clear();
  }

  // Runs fn(host) on each host's io thread (or here, once the threads have stopped).
  void OnEachHost(const std::function<void(Host&)>& fn) {
    std::lock_guard lock(io_mu);
    if (io_threads.empty()) {
      for (auto& h : hosts) fn(*h);
      return;
    }
    std::vector<std::future<void>> done;
    for (auto& host : hosts) {
      auto task = std::make_shared<std::packaged_task<void()>>([&fn, h = host.get()] { fn(*h); });
      done.push_back(task->get_future());
      boost::asio::post(*ios[host->io], [task] { (*task)(); });
    }
    for (auto& f : done)
      if (f.wait_for(std::chrono::seconds(5)) != std::future_status::ready)
        throw std::runtime_error("job endpoints did not answer within 5 s");
  }

  // A controller action on one host's QPs, run on its io thread (or here, once the threads have
  // stopped), then transmit what it changed; returns what the action returned.
  int Control(Host& h, const std::function<int(mrc::Timestamp)>& action) {
    std::lock_guard lock(io_mu);
    if (io_threads.empty()) return action(mrc::AsioEndpoint::Now());
    auto task = std::make_shared<std::packaged_task<int()>>([&h, &action] {
      const int touched = action(mrc::AsioEndpoint::Now());
      h.endpoint->Kick();
      return touched;
    });
    std::future<int> touched = task->get_future();
    boost::asio::post(*ios[h.io], [task] { (*task)(); });
    if (touched.wait_for(std::chrono::seconds(5)) != std::future_status::ready)
      throw std::runtime_error("job endpoint did not answer within 5 s");
    return touched.get();
  }
};

TrainingJob::TrainingJob(const emulator::ResolvedLab& lab, JobConfig config, EventFn on_event, StepFn on_step)
    : impl_(std::make_unique<Impl>(this, std::move(config), std::move(on_event), std::move(on_step))) {
  emulator::RaiseOpenFilesLimit();  // udp EVs: one socket per EV route
  impl_->Build(lab);
}

TrainingJob::~TrainingJob() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stop_requested = true;
    if (impl_->failure.empty()) impl_->failure = "job destroyed";
    impl_->cv.notify_all();
  }
  if (impl_->coordinator.joinable()) impl_->coordinator.join();
  impl_->StopIo();
}

int TrainingJob::ranks() const { return impl_->workload->ranks(); }

void TrainingJob::Start() {
  std::lock_guard lock(impl_->io_mu);
  state_.store(JobState::kRunning);
  for (auto& host : impl_->hosts) host->endpoint->Start();
  for (auto& io : impl_->ios) {
    boost::asio::io_context* ctx = io.get();
    impl_->io_threads.emplace_back([ctx] {
      auto guard = boost::asio::make_work_guard(*ctx);
      ctx->run();
    });
  }
  impl_->coordinator = std::thread([this] { impl_->Run(); });
}

bool TrainingJob::WaitForSteps(uint64_t steps, double timeout_seconds) {
  std::unique_lock lock(impl_->mu);
  impl_->cv.wait_for(lock, std::chrono::duration<double>(timeout_seconds), [&] {
    return steps_done_.load() >= steps || state_.load() != JobState::kRunning;
  });
  return steps_done_.load() >= steps;
}

void TrainingJob::RequestStop() {
  std::lock_guard lock(impl_->mu);
  impl_->stop_requested = true;
}

JobResult TrainingJob::Wait() {
  if (impl_->coordinator.joinable()) impl_->coordinator.join();
  return impl_->result;
}

int TrainingJob::SetEvDenied(const std::string& host_a, const std::string& host_b, int ev, bool denied) {
  const int h = impl_->workload->HostIndex(host_a);
  if (h < 0) return 0;
  return impl_->Control(*impl_->hosts[h], [&](mrc::Timestamp now) {
    return impl_->workload->SetEvDenied(h, host_b, ev, denied, now);
  });
}

int TrainingJob::SetPortEnabled(const std::string& host, int plane, bool enabled) {
  const int h = impl_->workload->HostIndex(host);
  if (h < 0) return 0;
  return impl_->Control(*impl_->hosts[h], [&](mrc::Timestamp now) {
    return impl_->workload->SetPortEnabled(h, plane, enabled, now);
  });
}

std::vector<EvSnapshot> TrainingJob::SnapshotEvs() {
  std::mutex out_mu;
  std::vector<EvSnapshot> out;
  Workload* wl = impl_->workload.get();
  impl_->OnEachHost([&](Impl::Host& host) {
    std::vector<EvSnapshot> mine = wl->SnapshotEvs(host.index);
    std::lock_guard lock(out_mu);
    out.insert(out.end(), mine.begin(), mine.end());
  });
  return out;
}

}  // namespace mrclab::harness
