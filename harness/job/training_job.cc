#include "harness/job/training_job.h"

#include <chrono>
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
#include "harness/job/step_barrier.h"
#include "harness/job/vm_endpoint.h"
#include "harness/job/workload.h"
#include "mrc/asio/asio_endpoint.h"
#include "mrc/core/qp_presets.h"

namespace mrclab::harness {

struct TrainingJob::Impl {
  struct Host {
    int index = 0, io = 0;
    std::optional<emulator::netns::GuestSession> relay;  // a VM host's: vm_endpoint.h
    std::unique_ptr<mrc::Endpoint> endpoint;            // AsioEndpoint, or a VM host's RelayEndpoint
    std::unique_ptr<boost::asio::steady_timer> timer;  // the workload's compute phases
  };

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

  std::unique_ptr<StepBarrier> barrier;
  std::vector<RankReport> reports;  // this step's, under barrier->mutex()
  JobResult result;

  Impl(JobConfig c, EventFn e, StepFn s) : config(std::move(c)), on_event(std::move(e)), on_step(std::move(s)) {}

  double Unix(mrc::Timestamp t) const { return unix_epoch + t.nanoseconds() * 1e-9; }

  void Build(const emulator::ResolvedLab& lab) {
    if (config.io_threads < 1) throw std::invalid_argument("io_threads must be at least 1");
    result.payload = config.payload;
    const int io_count = std::min<int>(config.io_threads, config.hosts.size());
    for (int i = 0; i < io_count; ++i) ios.push_back(std::make_unique<boost::asio::io_context>(1));
    bool any_vm = false;
    for (const std::string& name : config.hosts) any_vm |= LabHost(lab, name).vm.has_value();
    for (size_t h = 0; h < config.hosts.size(); ++h) {
      auto host = std::make_unique<Host>();
      host->index = static_cast<int>(h);
      host->io = static_cast<int>(h % io_count);
      const emulator::ResolvedNode& node = LabHost(lab, config.hosts[h]);
      mrc::AsioEndpointConfig ec;
      ec.ports = HostPorts(node, config.ev_mode);
      ec.ev_mode = config.ev_mode;
      if (any_vm) ec.udp_port = kMrcPortBesideRxe;
      if (config.key_seed) ec.key_seed = *config.key_seed * 1000 + h + 1;
      if (node.vm) {
        VmEndpoint vm = OpenVmEndpoint(lab, node, *ios[host->io], ec.ports, ec.ev_mode, ec.udp_port, ec.key_seed);
        host->relay.emplace(std::move(vm.session));
        host->endpoint = std::move(vm.endpoint);
      } else {
        host->endpoint = std::make_unique<mrc::AsioEndpoint>(*ios[host->io], ec);
      }
      host->timer = std::make_unique<boost::asio::steady_timer>(*ios[host->io]);
      hosts.push_back(std::move(host));
    }
    workload = std::make_unique<Workload>(lab, config, mrc::RealtimeQpConfig, [this](int h) {
      mrc::Endpoint* ep = hosts[h]->endpoint.get();
      return HostBinding{&ep->context(), [ep](uint32_t qpn, const std::vector<mrc::EvRoute>& routes) {
                           ep->SetRoutes(qpn, routes);
                         }};
    });
    for (auto& host : hosts) {
      Host* h = host.get();
      h->endpoint->SetOnProgress([this, h] { Progress(*h); });
    }
    barrier = std::make_unique<StepBarrier>(workload->ranks(), config.step_timeout_seconds, config.max_steps);
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
        {
          std::lock_guard lock(barrier->mutex());
          reports[rep->rank] = std::move(*rep);
        }
        barrier->RankDone();
      } else if (auto* ev = std::get_if<WorkloadEvent>(&*out)) {
        ev->body["t"] = Unix(ev->at);
        ev->body["job"] = config.label;
        if (on_event) on_event(ev->body);
      } else {
        barrier->Fail(std::get<WorkloadFailure>(*out).reason);
      }
    }
  }

  // --- coordinator ---------------------------------------------------------------------------
  void Run() {
    StepBarrier::Hooks hooks;
    hooks.begin = [this](uint64_t step) {
      {
        std::lock_guard lock(barrier->mutex());
        reports.assign(workload->ranks(), {});
      }
      for (auto& host : hosts) {
        Host* h = host.get();
        boost::asio::post(*ios[h->io], [this, h, step] {
          workload->BeginStep(h->index, step, mrc::AsioEndpoint::Now());
          Drain(*h);
          ArmTimer(*h);
          h->endpoint->Kick();
        });
      }
    };
    hooks.assemble = [this](uint64_t step) { return workload->AssembleStep(step, reports); };
    hooks.unfinished = [this](uint64_t step, int done) { return ReportUnfinished(step, done); };
    result = barrier->Run(hooks, on_step);
    result.payload = config.payload;
    StopIo();
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
  template <typename Result>
  Result Control(Host& h, const std::function<Result(mrc::Timestamp)>& action) {
    std::lock_guard lock(io_mu);
    if (io_threads.empty()) return action(mrc::AsioEndpoint::Now());
    auto task = std::make_shared<std::packaged_task<Result()>>([&h, &action] {
      Result touched = action(mrc::AsioEndpoint::Now());
      h.endpoint->Kick();
      return touched;
    });
    std::future<Result> touched = task->get_future();
    boost::asio::post(*ios[h.io], [task] { (*task)(); });
    if (touched.wait_for(std::chrono::seconds(5)) != std::future_status::ready)
      throw std::runtime_error("job endpoint did not answer within 5 s");
    return touched.get();
  }
};

TrainingJob::TrainingJob(const emulator::ResolvedLab& lab, JobConfig config, EventFn on_event, StepFn on_step)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(on_event), std::move(on_step))) {
  emulator::RaiseOpenFilesLimit();  // udp EVs: one socket per EV route
  impl_->Build(lab);
}

TrainingJob::~TrainingJob() {
  impl_->barrier->Destroy();
  if (impl_->coordinator.joinable()) impl_->coordinator.join();
  impl_->StopIo();
}

int TrainingJob::ranks() const { return impl_->workload->ranks(); }

void TrainingJob::Start() {
  std::lock_guard lock(impl_->io_mu);
  impl_->barrier->MarkRunning();
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
  return impl_->barrier->WaitForSteps(steps, timeout_seconds);
}
void TrainingJob::RequestStop() { impl_->barrier->RequestStop(); }
JobState TrainingJob::state() const { return impl_->barrier->state(); }
uint64_t TrainingJob::steps_done() const { return impl_->barrier->steps_done(); }

JobResult TrainingJob::Wait() {
  if (impl_->coordinator.joinable()) impl_->coordinator.join();
  return impl_->result;
}

EvControlResult TrainingJob::SetEvDenied(const std::string& host_a, const std::string& host_b, int ev, bool denied) {
  const int h = impl_->workload->HostIndex(host_a);
  if (h < 0) return {};
  return impl_->Control<EvControlResult>(*impl_->hosts[h], [&](mrc::Timestamp now) {
    return impl_->workload->SetEvDenied(h, host_b, ev, denied, now);
  });
}

int TrainingJob::SetPortEnabled(const std::string& host, int plane, bool enabled) {
  const int h = impl_->workload->HostIndex(host);
  if (h < 0) return 0;
  return impl_->Control<int>(*impl_->hosts[h], [&](mrc::Timestamp now) {
    return impl_->workload->SetPortEnabled(h, plane, enabled, now);
  });
}

void TrainingJob::VisitEvs(const std::function<void(const EvSnapshot&)>& visit) {
  // Each host's EVs are read on its own thread; `visit` sees them one host at a time.
  std::mutex visit_mu;
  Workload* wl = impl_->workload.get();
  impl_->OnEachHost([&](Impl::Host& host) {
    std::vector<EvSnapshot> mine;
    wl->VisitEvs(host.index, [&mine](const EvSnapshot& e) { mine.push_back(e); });
    std::lock_guard lock(visit_mu);
    for (const EvSnapshot& e : mine) visit(e);
  });
}

}  // namespace mrclab::harness
