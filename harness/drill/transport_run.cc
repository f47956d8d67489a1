#include "harness/drill/transport_run.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <mutex>

#include "emulator/netns/interrupt.h"
#include "harness/drill/job_resources.h"
#include "harness/telemetry/metrics_exporter.h"
#include "mrc/asio/perf.h"

namespace mrclab::harness {
namespace {

constexpr double kSampleEverySeconds = 1;
// evs.csv gets at most about this many rows per second: a job of more EVs (QPs x EVs per QP) is
// sampled every EVs / kEvRowsPerSecond seconds instead of every second, so that recording the
// job does not take the CPU the job needs (an all-to-all over 32 hosts with 64 EVs: 63,488 EVs).
constexpr double kEvRowsPerSecond = 8192;

struct TimedAction {
  double at = 0;
  bool apply = true;
  size_t fault = 0, window = 0;
};

// Applies and reverts the planned faults of one transport run; the destructor reverts whatever
// is still applied.
class FaultExecutor {
 public:
  FaultExecutor(const TransportRunContext& ctx, Job& job, TransportRun& run) : ctx_(ctx), job_(job), run_(run) {}
  ~FaultExecutor() {
    try {
      RevertAll();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "mrclab: drill: reverting faults: %s\n", e.what());
    }
  }

  int active() const { return active_count_.load(); }

  void Apply(size_t f, size_t w) {
    const PlannedFault& pf = ctx_.plan.faults[f];
    if (held_.count(f)) return;
    std::vector<int> ids;
    try {
      for (const auto& action : pf.actions) ids.push_back(ctx_.backend.ApplyFault(action));
    } catch (...) {
      for (int id : ids) ctx_.backend.RevertFault(id);
      throw;
    }
    EvControlResult denied;
    if (pf.ev_deny)
      for (int ev : pf.ev_deny->evs) {
        const EvControlResult done = job_.SetEvDenied(pf.ev_deny->from, pf.ev_deny->to, ev, true);
        denied.qps += done.qps;
        denied.refused += done.refused;
      }
    if (pf.port_disable) job_.SetPortEnabled(pf.port_disable->host, pf.port_disable->plane, false);
    held_[f] = {ids, w};
    FaultRecord& record = run_.faults[f];
    record.windows.push_back({ctx_.backend.Now(), 0});
    record.ev_denies += denied.qps;
    record.ev_denies_refused += denied.refused;
    Changed(pf, w, "fault_applied");
    if (denied.refused > 0)
      ctx_.recorder.Event({{"type", "ev_deny_refused"}, {"job", run_.transport.name}, {"fault", pf.index},
                           {"window", w}, {"denies", denied.qps}, {"refused", denied.refused},
                           {"description", "QPs kept " + std::to_string(denied.refused) + " of " +
                                               std::to_string(denied.qps) +
                                               " denied EVs GOOD so as not to fall below min_active"}});
    if (ctx_.metrics) ctx_.metrics->FaultApplied(std::string(ToString(pf.kind)));
  }

  void Revert(size_t f, size_t w) {
    auto it = held_.find(f);
    if (it == held_.end()) return;
    const PlannedFault& pf = ctx_.plan.faults[f];
    // Each part is tried once: one that cannot be reverted stays active in the lab's fault
    // journal (mrclab fault revert, or destroy) instead of being waited for again here.
    std::exception_ptr failed;
    for (auto id = it->second.ids.rbegin(); id != it->second.ids.rend(); ++id) try {
        ctx_.backend.RevertFault(*id);
      } catch (...) {
        if (!failed) failed = std::current_exception();
      }
    if (pf.ev_deny)
      for (int ev : pf.ev_deny->evs) job_.SetEvDenied(pf.ev_deny->from, pf.ev_deny->to, ev, false);
    if (pf.port_disable) job_.SetPortEnabled(pf.port_disable->host, pf.port_disable->plane, true);
    held_.erase(it);
    run_.faults[f].windows.back().second = ctx_.backend.Now();
    Changed(pf, w, failed ? "fault_revert_failed" : "fault_reverted");
    if (failed) std::rethrow_exception(failed);
  }

  // At the end: what lasts until the end, and (max_duration reached) windows cut short.
  void RevertAll() {
    while (!held_.empty()) {
      const auto& [f, held] = *held_.rbegin();
      if (ctx_.plan.faults[f].windows[held.window].revert != kUntilEnd) ++run_.faults[f].windows_cut_short;
      Revert(f, held.window);
    }
  }

 private:
  void Changed(const PlannedFault& pf, size_t window, const char* type) {
    active_count_.store(static_cast<int>(held_.size()));
    ctx_.recorder.Event({{"type", type}, {"job", run_.transport.name}, {"fault", pf.index}, {"kind", ToString(pf.kind)},
                         {"window", window}, {"description", pf.description}});
    if (ctx_.metrics) ctx_.metrics->FaultsActive(active_count_.load());
    if (ctx_.progress)
      std::fprintf(stderr, "  %s %s\n", std::string(type) == "fault_applied" ? "+" : "-", pf.description.c_str());
  }

  const TransportRunContext& ctx_;
  Job& job_;
  TransportRun& run_;
  struct Held {
    std::vector<int> ids;  // the backend's fault ids
    size_t window;
  };
  std::map<size_t, Held> held_;  // by fault, while applied
  std::atomic<int> active_count_{0};
};

}  // namespace

TransportRun RunTransport(const TransportRunContext& ctx, const TransportSpec& transport) {
  const Scenario& s = ctx.scenario;
  DrillBackend& backend = ctx.backend;
  TransportRun run;
  run.transport = transport;
  for (const auto& pf : ctx.plan.faults)
    run.faults.push_back({pf.index, std::string(ToString(pf.kind)), pf.description, {}, {}, {}});
  DrillMetrics* metrics = ctx.metrics;
  const std::string& name = transport.name;

  const uint64_t warmup = s.job.warmup_steps, before_faults = warmup + s.job.baseline_steps;
  std::mutex steps_mu;
  std::atomic<bool> tail{false};
  std::atomic<int> faults_active{0};
  auto on_event = [&](const nlohmann::json& e) { ctx.recorder.Event(e); };
  auto on_step = [&](const StepRecord& r) {
    RecordedStep step{r, r.step < warmup ? StepPhase::kWarmup : r.step < before_faults ? StepPhase::kBaseline
                         : tail.load() ? StepPhase::kTail : StepPhase::kFaults,
                      faults_active.load()};
    {
      std::lock_guard lock(steps_mu);
      run.steps.push_back(step);
    }
    ctx.recorder.Step(name, step);
    ctx.recorder.Event({{"type", "step"}, {"job", name}, {"step", r.step}, {"seconds", r.seconds},
                        {"phase", ToString(step.phase)}, {"bytes_verified", r.bytes_verified},
                        {"bytes_bad", r.bytes_bad}, {"retransmissions", r.retransmissions}});
    if (metrics) {
      metrics->ObserveStep(name, r.seconds);
      metrics->StepsCompleted(name, r.step + 1);
    }
    if (ctx.progress && r.step % 10 == 0)
      std::fprintf(stderr, "  %s step %llu (%s) %.3f s%s\n", name.c_str(), static_cast<unsigned long long>(r.step),
                   std::string(ToString(step.phase)).c_str(), r.seconds,
                   step.faults_active ? (", " + std::to_string(step.faults_active) + " fault(s) active").c_str() : "");
  };

  std::unique_ptr<Job> job = backend.CreateJob(MakeJobConfig(s, backend.lab(), transport), on_event, on_step);
  const double cpu0 = mrc::ProcessCpuSeconds();
  const double job_timeout = s.job.step_timeout_seconds + 5;

  // Every second of the backend's clock while the job runs: per-link samples to the run
  // directory and the live metrics; per-EV ones every second too, or less often for a job of
  // more than kEvRowsPerSecond EVs.
  double next_ev_sample = backend.Now();
  auto sample = [&] {
    const double t = backend.Now();
    ctx.recorder.LinkSamples(t, backend.SampleLinks());
    if (t >= next_ev_sample) {
      // Row by row, not gathered: an all-to-all on 1,024 hosts has 16 million EVs.
      size_t evs = 0;
      std::map<int, std::map<std::string, int>> per_plane;
      std::vector<EvSnapshot> series;  // per-EV metrics, for jobs of at most kMaxEvSeries EVs
      job->VisitEvs([&](const EvSnapshot& ev) {
        ctx.recorder.EvSample(name, t, ev);
        ++evs;
        if (!metrics) return;
        ++per_plane[ev.plane][ev.state];
        if (evs <= kMaxEvSeries) series.push_back(ev);
      });
      ctx.recorder.FlushEvs();
      // 1 ms early, so that it falls due on the once-a-second sample that is due then.
      next_ev_sample = t + std::max(kSampleEverySeconds, static_cast<double>(evs) / kEvRowsPerSecond) - 0.001;
      if (metrics) {
        metrics->EvCounts(name, per_plane);
        if (evs <= kMaxEvSeries)
          for (const EvSnapshot& ev : series) {
            metrics->EvState(name, ev.qp, ev.ev, ev.plane, ev.state);
            metrics->EvPackets(name, ev.qp, ev.ev, ev.tx_data, ev.tx_retransmits);
          }
      }
    }
    if (!metrics) return;
    std::lock_guard lock(steps_mu);
    uint64_t total = 0;
    for (const auto& st : run.steps) total += st.record.retransmissions;
    metrics->Retransmissions(name, total);
  };
  double next_sample = backend.Now();
  // A backend checks `done` often (a simulation every millisecond of simulated time, which at
  // scale can take seconds); Ctrl-C and SIGTERM stop it there.
  auto interruptible = [](const std::function<bool()>& done) {
    return [&done] {
      emulator::netns::ThrowIfInterrupted();
      return done();
    };
  };
  // Lets the backend's time pass until done() or `deadline`, sampling on the way.
  auto run_until = [&](double deadline, const std::function<bool()>& done) {
    for (;;) {
      if (backend.Now() >= next_sample) {
        try {
          sample();
        } catch (const std::exception&) {
          // The job is ending; its endpoints no longer answer.
        }
        next_sample = backend.Now() + kSampleEverySeconds;
      }
      const double until = std::min(deadline, next_sample);
      if (backend.RunUntil(until, interruptible(done))) return true;
      if (until >= deadline) return false;  // RunUntil returned false: the clock reached it
    }
  };

  ctx.recorder.Event({{"type", "job_state"}, {"job", name}, {"state", "running"}, {"ranks", job->ranks()}});
  if (metrics) metrics->JobState(name, "running");
  if (ctx.progress && transport.stack == TransportStack::kKernel)
    std::fprintf(stderr, "%s: %d ranks, the kernel's RC (rdma_rxe on VM hosts, %d QP(s) per peer); connecting\n",
                 name.c_str(), job->ranks(), transport.qps_per_peer);
  else if (ctx.progress)
    std::fprintf(stderr, "%s: %d ranks, %s over %s EVs (%d per QP, %d QP(s) per peer)\n", name.c_str(),
                 job->ranks(), std::string(mrc::ToString(transport.transport)).c_str(),
                 std::string(mrc::ToString(transport.ev_mode)).c_str(), transport.evs, transport.qps_per_peer);
  {
    FaultExecutor faults(ctx, *job, run);
    run.started = backend.Now();
    job->Start();
    auto running = [&] { return job->state() == JobState::kRunning; };
    const double drill_deadline = backend.Now() + s.max_duration_seconds;

    // Baseline.
    run_until(backend.Now() + before_faults * job_timeout,
              [&] { return job->steps_done() >= before_faults || !running(); });
    // Fault schedule, on time.
    if (running()) {
      std::vector<TimedAction> timeline;
      for (size_t f = 0; f < ctx.plan.faults.size(); ++f)
        for (size_t w = 0; w < ctx.plan.faults[f].windows.size(); ++w) {
          const Window& win = ctx.plan.faults[f].windows[w];
          timeline.push_back({win.apply, true, f, w});
          if (win.revert != kUntilEnd) timeline.push_back({win.revert, false, f, w});
        }
      std::stable_sort(timeline.begin(), timeline.end(), [](const TimedAction& a, const TimedAction& b) {
        return a.at < b.at || (a.at == b.at && !a.apply && b.apply);
      });
      const double t0 = backend.Now();
      ctx.recorder.Event({{"type", "drill"}, {"job", name}, {"phase", "faults"}});
      for (const TimedAction& a : timeline) {
        run_until(std::min(t0 + a.at, drill_deadline), [&] { return !running(); });
        if (!running() || backend.Now() >= drill_deadline) break;
        if (a.apply) faults.Apply(a.fault, a.window);
        else faults.Revert(a.fault, a.window);
        faults_active.store(faults.active());
      }
      // Tail steps, with the faults that last until the end still applied.
      tail.store(true);
      ctx.recorder.Event({{"type", "drill"}, {"job", name}, {"phase", "tail"}});
      const uint64_t target = job->steps_done() + s.job.tail_steps;
      run_until(std::min(backend.Now() + s.job.tail_steps * job_timeout, drill_deadline),
                [&] { return job->steps_done() >= target || !running(); });
      if (backend.Now() >= drill_deadline)
        ctx.recorder.Event({{"type", "drill"}, {"job", name}, {"phase", "max_duration reached"}});
    }
    faults.RevertAll();
    faults_active.store(0);
    // The run's last per-EV counters (a simulated drill is often over within a second).
    next_ev_sample = next_sample = backend.Now();
    run_until(backend.Now(), [] { return true; });
    job->RequestStop();
    // The stop takes effect after the current step; an interrupted or hung job ends on its own
    // watchdog within step_timeout.
    backend.RunUntil(backend.Now() + job_timeout + 5, interruptible([&] { return !running(); }));
    run.job = job->Wait();
  }
  run.ended = backend.Now();
  run.cpu_seconds = mrc::ProcessCpuSeconds() - cpu0;
  ctx.recorder.Event({{"type", "job_state"}, {"job", name}, {"state", ToString(run.job.state)},
                      {"reason", run.job.reason}, {"steps", run.job.steps}});
  if (metrics) metrics->JobState(name, std::string(ToString(run.job.state)));
  return run;
}

}  // namespace mrclab::harness
