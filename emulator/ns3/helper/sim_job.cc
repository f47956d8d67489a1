#include "emulator/ns3/helper/sim_job.h"


#include <stdexcept>

#include "emulator/ns3/model/bucket_scheduler.h"
#include "harness/job/ev_plan.h"
#include "ns3/simulator.h"

namespace mrclab::emulator::sim {
namespace {

double Seconds(mrc::Timestamp t) { return t.nanoseconds() * 1e-9; }

}  // namespace

SimJob::SimJob(const ResolvedLab& lab, ns3::Ptr<SimFabric> fabric, const harness::JobConfig& config,
               const harness::QpConfigFn& qp_config, RunUntilFn run_until, EventFn on_event, StepFn on_step)
    : config_(config), run_until_(std::move(run_until)), on_event_(std::move(on_event)), on_step_(std::move(on_step)) {
  for (size_t h = 0; h < config_.hosts.size(); ++h) {
    mrc::ContextConfig cc;
    cc.seed = config_.key_seed.value_or(config_.seed) * 1000 + h + 1;  // a simulation replays exactly
    endpoints_.push_back(std::make_unique<SimEndpoint>(
        fabric, config_.hosts[h], harness::HostPorts(harness::LabHost(lab, config_.hosts[h]), config_.ev_mode),
        config_.ev_mode, cc));
  }
  compute_timers_.resize(endpoints_.size());
  compute_armed_at_.assign(endpoints_.size(), mrc::Timestamp::Infinite());
  workload_ = std::make_unique<harness::Workload>(lab, config_, qp_config, [this](int h) {
    SimEndpoint* ep = endpoints_[h].get();
    return harness::HostBinding{&ep->context(),
                                [ep](uint32_t qpn, const std::vector<mrc::EvRoute>& routes) {
                                  ep->SetRoutes(qpn, routes);
                                },
                                &virtual_landing_};
  });
  static_assert(harness::Workload::kPrefetchStages <= PacketSink::kPrefetchStages - 1);
  for (size_t h = 0; h < endpoints_.size(); ++h)
    host_prefetch_.push_back({workload_.get(), static_cast<int>(h)});
  for (size_t h = 0; h < endpoints_.size(); ++h)
    endpoints_[h]->SetOnProgress([this, h] { Progress(static_cast<int>(h)); }, {&HostPrefetch::Run, &host_prefetch_[h]});
}

void SimJob::HostPrefetch::Run(const void* self, int stage) {
  const auto* p = static_cast<const HostPrefetch*>(self);
  if (stage < harness::Workload::kPrefetchStages) p->workload->Prefetch(p->host, stage);
}

SimJob::~SimJob() {
  ns3::Simulator::Cancel(watchdog_);
  for (auto& t : compute_timers_) ns3::Simulator::Cancel(t);
}

void SimJob::Start() {
  result_.state = harness::JobState::kRunning;
  result_.payload = config_.payload;
  started_ = SimNowSeconds();
  ns3::Simulator::ScheduleNow(&SimJob::BeginStep, this);
}

void SimJob::BeginStep() {
  if (result_.state != harness::JobState::kRunning) return;
  if (stop_requested_ || (config_.max_steps && step_ >= config_.max_steps)) return Finish(harness::JobState::kCompleted);
  reports_.assign(workload_->ranks(), {});
  done_ranks_ = 0;
  step_start_ = SimNow();
  watchdog_ = ns3::Simulator::Schedule(ns3::Seconds(config_.step_timeout_seconds), &SimJob::Watchdog, this, step_);
  for (size_t h = 0; h < endpoints_.size(); ++h) {
    workload_->BeginStep(static_cast<int>(h), step_, step_start_);
    Drain(static_cast<int>(h));
    ArmCompute(static_cast<int>(h));
    endpoints_[h]->Kick();
  }
}

void SimJob::Progress(int host) {
  const mrc::Timestamp now = SimNow();
  if (workload_->NextTimeout(host) <= now) workload_->OnTimeout(host, now);
  workload_->OnProgress(host, now);
  Drain(host);
  ArmCompute(host);
}

void SimJob::ArmCompute(int host) {
  const mrc::Timestamp next = workload_->NextTimeout(host);
  if (next == compute_armed_at_[host]) return;  // most progress leaves the deadline as it was
  ns3::Simulator::Cancel(compute_timers_[host]);
  compute_armed_at_[host] = next;
  if (next.IsInfinite()) return;
  compute_timers_[host] = ns3::Simulator::Schedule(SimDelayUntil(SimStepsAt(next)), [this, host] {
    compute_armed_at_[host] = mrc::Timestamp::Infinite();
    Progress(host);
    endpoints_[host]->Kick();
  });
}

void SimJob::Drain(int host) {
  while (auto out = workload_->Poll(host)) {
    if (result_.state != harness::JobState::kRunning) continue;
    if (auto* rep = std::get_if<harness::RankReport>(&*out)) {
      if (rep->step != step_) continue;
      reports_[rep->rank] = std::move(*rep);
      if (++done_ranks_ == workload_->ranks())
        ns3::Simulator::Schedule(SimDelayUntil(SimNowSteps()), &SimJob::EndStep, this);
    } else if (auto* ev = std::get_if<harness::WorkloadEvent>(&*out)) {
      ev->body["t"] = Seconds(ev->at);
      ev->body["job"] = config_.label;
      if (on_event_) on_event_(ev->body);
    } else {
      Interrupt("step " + std::to_string(step_) + ": " + std::get<harness::WorkloadFailure>(*out).reason);
    }
  }
}

void SimJob::Watchdog(uint64_t step) {
  if (step != step_ || result_.state != harness::JobState::kRunning) return;
  std::vector<nlohmann::json> unfinished;
  for (int h = 0; h < workload_->hosts(); ++h)
    for (auto& rank : workload_->DescribeUnfinished(h)) unfinished.push_back(std::move(rank));
  const harness::WatchdogReport report =
      harness::MakeWatchdogReport(config_.label, Seconds(SimNow()), step, done_ranks_, std::move(unfinished));
  if (on_event_) on_event_(report.event);
  Interrupt("watchdog: step " + std::to_string(step) + " did not finish within " +
            std::to_string(config_.step_timeout_seconds) + " s (" + std::to_string(done_ranks_) + " of " +
            std::to_string(workload_->ranks()) + " ranks done)" + report.summary);
}

void SimJob::EndStep() {
  if (result_.state != harness::JobState::kRunning || done_ranks_ != workload_->ranks()) return;
  ns3::Simulator::Cancel(watchdog_);
  harness::StepRecord rec = workload_->AssembleStep(step_, reports_);
  const mrc::Timestamp end = SimNow();
  rec.start = Seconds(step_start_);
  rec.end = Seconds(end);
  rec.seconds = (end - step_start_).seconds();
  result_.steps = step_ + 1;
  result_.bytes_verified += rec.bytes_verified;
  result_.bytes_bad += rec.bytes_bad;
  result_.retransmissions += rec.retransmissions;
  ++step_;
  if (on_step_) on_step_(rec);
  BeginStep();
}

void SimJob::Interrupt(const std::string& reason) {
  if (result_.state != harness::JobState::kRunning) return;
  result_.reason = reason;
  Finish(harness::JobState::kInterrupted);
}

void SimJob::Finish(harness::JobState state) {
  result_.state = state;
  result_.seconds = SimNowSeconds() - started_;
  ns3::Simulator::Cancel(watchdog_);
  for (auto& t : compute_timers_) ns3::Simulator::Cancel(t);
  compute_armed_at_.assign(compute_armed_at_.size(), mrc::Timestamp::Infinite());
}

bool SimJob::WaitForSteps(uint64_t steps, double timeout_seconds) {
  run_until_(SimNowSeconds() + timeout_seconds,
             [&] { return result_.steps >= steps || result_.state != harness::JobState::kRunning; });
  return result_.steps >= steps;
}

harness::JobResult SimJob::Wait() {
  // A stop takes effect after the current step; the watchdog bounds a hung one.
  while (result_.state == harness::JobState::kRunning)
    run_until_(SimNowSeconds() + config_.step_timeout_seconds + 1,
               [&] { return result_.state != harness::JobState::kRunning; });
  return result_;
}

harness::EvControlResult SimJob::SetEvDenied(const std::string& host_a, const std::string& host_b, int ev,
                                             bool denied) {
  const int h = workload_->HostIndex(host_a);
  if (h < 0) return {};
  const harness::EvControlResult done = workload_->SetEvDenied(h, host_b, ev, denied, SimNow());
  endpoints_[h]->Kick();
  return done;
}

int SimJob::SetPortEnabled(const std::string& host, int plane, bool enabled) {
  const int h = workload_->HostIndex(host);
  if (h < 0) return 0;
  const int touched = workload_->SetPortEnabled(h, plane, enabled, SimNow());
  endpoints_[h]->Kick();
  return touched;
}

void SimJob::VisitEvs(const std::function<void(const harness::EvSnapshot&)>& visit) {
  for (int h = 0; h < workload_->hosts(); ++h) workload_->VisitEvs(h, visit);
}

}  // namespace mrclab::emulator::sim
