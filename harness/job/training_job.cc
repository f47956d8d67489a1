#include "harness/job/training_job.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <set>
#include <stdexcept>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "emulator/wall_clock.h"
#include "harness/job/collective_data.h"
#include "harness/job/ev_plan.h"
#include "mrc/perf.h"

namespace mrclab::harness {
namespace {

using Clock = std::chrono::steady_clock;
using emulator::ResolvedLab;

using emulator::UnixNow;
double SteadyNow() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

constexpr int kMaxSlots = 255;  // the slot travels in the immediate's top 8 bits

}  // namespace

std::string_view ToString(JobState s) {
  switch (s) {
    case JobState::kIdle: return "idle";
    case JobState::kRunning: return "running";
    case JobState::kCompleted: return "completed";
    case JobState::kInterrupted: return "interrupted";
  }
  return "?";
}

struct TrainingJob::Impl {
  struct Rank;
  struct Host {
    std::string name;
    int io = 0;
    std::unique_ptr<mrc::AsioEndpoint> endpoint;
    std::vector<Rank*> ranks;
    std::map<uint32_t, std::pair<Rank*, int>> qp_owner;  // qpn -> (rank, peer rank)
  };
  struct Rank {
    int id = 0;
    Host* host = nullptr;
    mrc::CompletionQueue* cq = nullptr;
    std::map<int, mrc::Qp*> qp_to;  // peer rank -> our QP to it
    std::vector<std::vector<uint32_t>> data, output;  // per collective
    std::vector<mrc::MemoryRegion> data_mr;
    std::vector<uint8_t> landing;
    mrc::MemoryRegion landing_mr;
    std::vector<uint8_t> landed;  // per slot: 0 empty, 1 checksum ok, 2 checksum bad
    std::unique_ptr<boost::asio::steady_timer> compute_timer;
    // Step state (io thread only).
    bool active = false;
    uint64_t step = 0;
    size_t collective = 0, phase = 0;
    bool phase_sent = false;
    int sends_pending = 0;
    std::vector<double> started, finished;
    uint64_t bytes_ok = 0, bytes_bad = 0, retx_at_start = 0;
  };
  struct Report {
    std::vector<double> started, finished;
    uint64_t bytes_ok = 0, bytes_bad = 0, retransmissions = 0;
  };

  TrainingJob* owner;
  const ResolvedLab& lab;
  JobConfig config;
  EventFn on_event;
  StepFn on_step;
  int n = 0;
  StepPlan plan;
  std::vector<size_t> words;  // per collective: uint32 words per chunk
  size_t slot_bytes = 0;
  std::vector<std::unique_ptr<boost::asio::io_context>> ios;
  std::vector<std::unique_ptr<Host>> hosts;
  std::vector<std::unique_ptr<Rank>> ranks;
  std::mutex io_mu;  // guards io_threads: snapshots run on the io threads while they exist
  std::vector<std::thread> io_threads;
  std::thread coordinator;

  std::mutex mu;
  std::condition_variable cv;
  int done_ranks = 0;
  std::vector<Report> reports;
  std::string failure;
  bool stop_requested = false;
  JobResult result;

  Impl(TrainingJob* o, const ResolvedLab& l, JobConfig c, EventFn e, StepFn s)
      : owner(o), lab(l), config(std::move(c)), on_event(std::move(e)), on_step(std::move(s)) {}

  std::string QpName(const Rank& r, int peer) const {
    return r.host->name + "/" + std::to_string(r.id) + "->" + ranks[peer]->host->name + "/" +
           std::to_string(peer);
  }

  void Emit(nlohmann::json event) {
    event["t"] = UnixNow();
    event["job"] = config.label;
    if (on_event) on_event(event);
  }

  void Fail(const std::string& reason) {
    std::lock_guard lock(mu);
    if (failure.empty()) failure = reason;
    cv.notify_all();
  }

  // --- setup -------------------------------------------------------------------------------
  void Build() {
    if (config.hosts.empty()) throw std::invalid_argument("job has no hosts");
    if (config.ranks_per_host < 1) throw std::invalid_argument("ranks_per_host must be at least 1");
    if (config.collectives.empty()) throw std::invalid_argument("job has no collectives");
    if (config.io_threads < 1) throw std::invalid_argument("io_threads must be at least 1");
    std::set<std::string> seen;
    for (const auto& h : config.hosts) {
      LabHost(lab, h);
      if (!seen.insert(h).second) throw std::invalid_argument("host '" + h + "' is listed twice");
    }
    n = static_cast<int>(config.hosts.size()) * config.ranks_per_host;
    std::vector<CollectiveKind> kinds;
    for (const auto& c : config.collectives) kinds.push_back(c.kind);
    plan = BuildStepPlan(kinds, n);
    for (int s : plan.slots)
      if (s > kMaxSlots)
        throw std::invalid_argument("a step needs " + std::to_string(s) + " landing slots per rank (at most " +
                                    std::to_string(kMaxSlots) + "): fewer ranks or collectives");
    for (const auto& c : config.collectives) {
      const uint64_t per_chunk = std::max<uint64_t>(4, (c.bytes + 4 * n - 1) / (4 * n) * 4);
      if (per_chunk > (1u << 30)) throw std::invalid_argument("collective size too large");
      words.push_back(per_chunk / 4);
      slot_bytes = std::max<size_t>(slot_bytes, per_chunk);
    }

    const int io_count = std::min<int>(config.io_threads, config.hosts.size());
    for (int i = 0; i < io_count; ++i) ios.push_back(std::make_unique<boost::asio::io_context>(1));
    for (size_t h = 0; h < config.hosts.size(); ++h) {
      auto host = std::make_unique<Host>();
      host->name = config.hosts[h];
      host->io = static_cast<int>(h % io_count);
      mrc::AsioEndpointConfig ec;
      ec.ports = HostPorts(LabHost(lab, host->name), config.ev_mode);
      ec.ev_mode = config.ev_mode;
      ec.context.seed = config.seed * 1000 + h + 1;
      host->endpoint = std::make_unique<mrc::AsioEndpoint>(*ios[host->io], ec);
      hosts.push_back(std::move(host));
    }
    for (int r = 0; r < n; ++r) {
      auto rank = std::make_unique<Rank>();
      rank->id = r;
      rank->host = hosts[r / config.ranks_per_host].get();
      rank->host->ranks.push_back(rank.get());
      mrc::Context& ctx = rank->host->endpoint->context();
      rank->cq = &ctx.CreateCq();
      for (size_t c = 0; c < config.collectives.size(); ++c) {
        rank->data.emplace_back(words[c] * n);
        rank->output.emplace_back(kinds[c] == CollectiveKind::kAllToAll ? words[c] * n : 0);
        auto& d = rank->data.back();
        rank->data_mr.push_back(ctx.RegisterMemory(
            {reinterpret_cast<uint8_t*>(d.data()), d.size() * sizeof(uint32_t)}, mrc::kAccessLocal));
      }
      rank->landing.resize(std::max(1, plan.slots[r]) * slot_bytes);
      rank->landing_mr = ctx.RegisterMemory(rank->landing, mrc::kAccessRemoteWrite);
      rank->landed.assign(plan.slots[r], 0);
      rank->compute_timer = std::make_unique<boost::asio::steady_timer>(*ios[rank->host->io]);
      ranks.push_back(std::move(rank));
    }
    Connect();
    for (auto& host : hosts) {
      Host* h = host.get();
      h->endpoint->SetOnProgress([this, h] { OnProgress(*h); });
    }
  }

  void Connect() {
    // Pairs a collective connects, with how many messages each side receives per step.
    std::map<std::pair<int, int>, int> receives;  // (receiver, sender) -> per step
    for (int r = 0; r < n; ++r)
      for (const auto& coll : plan.plans[r])
        for (const auto& phase : coll.phases)
          for (const auto& recv : phase.recvs) ++receives[{r, recv.peer}];
    std::set<std::pair<int, int>> pairs;
    for (const auto& [key, count] : receives) pairs.insert(std::minmax(key.first, key.second));
    // udp mode: each pair gets its own source-port range, since a host's UDP socket per
    // (port, source port) is bound to that address and port.
    const size_t ports_needed = pairs.size() * config.evs_per_qp;
    if (config.ev_mode == mrc::EvMode::kUdp && ports_needed > 65535 - 49152)
      throw std::invalid_argument("udp EVs need " + std::to_string(ports_needed) +
                                  " source ports (QP pairs x EVs per QP); at most 16383");
    uint16_t first_port = 49152;
    for (auto [a, b] : pairs) {
      Rank& ra = *ranks[a];
      Rank& rb = *ranks[b];
      const HostPairPlan p = PlanEvs(lab, ra.host->name, rb.host->name, config.ev_mode, config.evs_per_qp, first_port);
      first_port += config.evs_per_qp;
      std::vector<mrc::PerfEv> evs;
      for (const auto& e : p.a_to_b) evs.push_back({e.plane, e.destination, e.udp_source_port});
      mrc::QpConfig qc = mrc::DefaultRealtimeQpConfig(config.transport, evs, config.mtu);
      mrc::Qp& qa = ra.host->endpoint->context().CreateQp(qc, *ra.cq, *ra.cq);
      mrc::Qp& qb = rb.host->endpoint->context().CreateQp(qc, *rb.cq, *rb.cq);
      qa.Connect(qb.qpn(), qb.config().initial_psn);
      qb.Connect(qa.qpn(), qa.config().initial_psn);
      ra.host->endpoint->SetRoutes(qa.qpn(), p.a_to_b);
      rb.host->endpoint->SetRoutes(qb.qpn(), p.b_to_a);
      ra.qp_to[b] = &qa;
      rb.qp_to[a] = &qb;
      ra.host->qp_owner[qa.qpn()] = {&ra, b};
      rb.host->qp_owner[qb.qpn()] = {&rb, a};
      // Receive credits: two steps' worth, so a fast neighbour's next step never waits.
      for (int i = 0; i < 2 * receives[{a, b}] + 4; ++i) qa.PostRecv(0);
      for (int i = 0; i < 2 * receives[{b, a}] + 4; ++i) qb.PostRecv(0);
    }
  }

  // --- io threads ----------------------------------------------------------------------------
  void OnProgress(Host& host) {
    for (Rank* r : host.ranks)
      while (auto wc = r->cq->Poll()) OnCompletion(*r, *wc);
    mrc::Context& ctx = host.endpoint->context();
    while (auto e = ctx.PollEvent()) {
      if (auto* s = std::get_if<mrc::EvStateChanged>(&*e)) {
        auto it = host.qp_owner.find(s->qpn);
        if (it == host.qp_owner.end()) continue;
        Emit({{"type", "ev_state"}, {"qp", QpName(*it->second.first, it->second.second)}, {"ev", s->ev},
              {"from", mrc::ToString(s->from)}, {"to", mrc::ToString(s->to)},
              {"reason", mrc::ToString(s->reason)}});
      } else if (auto* q = std::get_if<mrc::QpStateChanged>(&*e)) {
        auto it = host.qp_owner.find(q->qpn);
        const std::string name = it == host.qp_owner.end() ? std::to_string(q->qpn)
                                                            : QpName(*it->second.first, it->second.second);
        Emit({{"type", "qp_state"}, {"qp", name}, {"to", mrc::ToString(q->to)}, {"reason", std::string(q->reason)}});
        if (q->to == mrc::QpState::kError) Fail("QP " + name + " entered the error state (" + std::string(q->reason) + ")");
      }
    }
  }

  void OnCompletion(Rank& r, const mrc::Completion& wc) {
    if (wc.status != mrc::WcStatus::kSuccess) {
      Fail("rank " + std::to_string(r.id) + ": work completion " + std::string(mrc::ToString(wc.status)));
      return;
    }
    if (wc.opcode == mrc::WcOpcode::kRecvWriteWithImm) {
      const uint32_t imm = wc.immediate.value_or(0);
      const size_t slot = imm >> 24;
      if (slot < r.landed.size() && wc.byte_len <= slot_bytes) {
        const bool ok = Checksum24(r.landing.data() + slot * slot_bytes, wc.byte_len) == (imm & 0xffffff);
        r.landed[slot] = ok ? 1 : 2;
        if (!ok) Emit({{"type", "checksum_mismatch"}, {"rank", r.id}, {"slot", slot}, {"bytes", wc.byte_len}});
      } else {
        r.bytes_bad += wc.byte_len;
      }
      if (auto it = r.host->qp_owner.find(wc.qpn); it != r.host->qp_owner.end())
        r.qp_to[it->second.second]->PostRecv(0);
    } else {
      --r.sends_pending;
    }
    Advance(r);
  }

  void BeginStep(Rank& r, uint64_t step) {
    r.active = true;
    r.step = step;
    r.collective = r.phase = 0;
    r.phase_sent = false;
    r.bytes_ok = r.bytes_bad = 0;
    r.retx_at_start = Retransmissions(r);
    r.started.assign(config.collectives.size(), 0);
    r.finished.assign(config.collectives.size(), 0);
    for (size_t c = 0; c < config.collectives.size(); ++c)
      FillInput(config.collectives[c].kind, PatternBase(config.seed, step, int(c)), r.id, n, words[c],
                r.data[c].data());
    auto go = [this, &r] {
      Advance(r);
      r.host->endpoint->Kick();
    };
    if (config.compute_seconds <= 0) return go();
    r.compute_timer->expires_after(std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(config.compute_seconds)));
    r.compute_timer->async_wait([go](const boost::system::error_code& ec) {
      if (!ec) go();
    });
  }

  uint64_t Retransmissions(const Rank& r) const {
    uint64_t total = 0;
    for (const auto& [peer, qp] : r.qp_to) total += qp->stats().retransmissions;
    return total;
  }

  void PostSends(Rank& r, const Phase& phase) {
    const size_t c = r.collective;
    const uint64_t chunk_bytes = words[c] * sizeof(uint32_t);
    for (const SendOp& s : phase.sends) {
      const Rank& peer = *ranks[s.peer];
      const auto* chunk = reinterpret_cast<const uint8_t*>(r.data[c].data() + s.chunk * words[c]);
      mrc::WriteRequest wr;
      wr.wr_id = r.step;
      wr.lkey = r.data_mr[c].lkey;
      wr.local_addr = r.data_mr[c].va + s.chunk * chunk_bytes;
      wr.length = static_cast<uint32_t>(chunk_bytes);
      wr.remote_addr = peer.landing_mr.va + s.remote_slot * slot_bytes;
      wr.rkey = peer.landing_mr.rkey;
      wr.immediate = static_cast<uint32_t>(s.remote_slot) << 24 | Checksum24(chunk, chunk_bytes);
      const mrc::PostResult res = r.qp_to.at(s.peer)->PostWrite(wr);
      if (res != mrc::PostResult::kOk) {
        Fail("rank " + std::to_string(r.id) + ": cannot post a write to rank " + std::to_string(s.peer));
        return;
      }
      ++r.sends_pending;
    }
  }

  // Runs rank r's step as far as the data that has arrived allows.
  void Advance(Rank& r) {
    while (r.active) {
      if (r.collective == config.collectives.size()) {
        if (r.sends_pending == 0) FinishStep(r);
        return;
      }
      const size_t c = r.collective;
      const Phase& phase = plan.plans[r.id][c].phases[r.phase];
      if (!r.phase_sent) {
        if (r.phase == 0) r.started[c] = SteadyNow();
        r.phase_sent = true;
        PostSends(r, phase);
      }
      for (const RecvOp& recv : phase.recvs)
        if (r.landed[recv.slot] == 0) return;
      const uint64_t chunk_bytes = words[c] * sizeof(uint32_t);
      const bool all_to_all = config.collectives[c].kind == CollectiveKind::kAllToAll;
      for (const RecvOp& recv : phase.recvs) {
        const auto* src = reinterpret_cast<const uint32_t*>(r.landing.data() + recv.slot * slot_bytes);
        uint32_t* dst = (all_to_all ? r.output[c] : r.data[c]).data() + recv.chunk * words[c];
        ApplyReceive(recv.reduce, src, dst, words[c]);
        r.landed[recv.slot] = 0;
      }
      if (++r.phase < plan.plans[r.id][c].phases.size()) {
        r.phase_sent = false;
        continue;
      }
      const int bad = CountBadChunks(config.collectives[c].kind, PatternBase(config.seed, r.step, int(c)),
                                     r.id, n, words[c], r.data[c].data(), r.output[c].data());
      const int checked = config.collectives[c].kind == CollectiveKind::kReduceScatter ? 1 : n;
      r.bytes_bad += bad * chunk_bytes;
      r.bytes_ok += (checked - bad) * chunk_bytes;
      if (bad) Emit({{"type", "verify_failed"}, {"rank", r.id}, {"step", r.step}, {"collective", c}, {"bad_chunks", bad}});
      r.finished[c] = SteadyNow();
      ++r.collective;
      r.phase = 0;
      r.phase_sent = false;
    }
  }

  void FinishStep(Rank& r) {
    r.active = false;
    Report rep{r.started, r.finished, r.bytes_ok, r.bytes_bad, Retransmissions(r) - r.retx_at_start};
    std::lock_guard lock(mu);
    reports[r.id] = std::move(rep);
    ++done_ranks;
    cv.notify_all();
  }

  // --- coordinator ---------------------------------------------------------------------------
  void Run() {
    const double t0 = SteadyNow();
    for (uint64_t step = 0;; ++step) {
      std::unique_lock lock(mu);
      if (stop_requested || (config.max_steps && step >= config.max_steps)) {
        result.state = JobState::kCompleted;
        break;
      }
      done_ranks = 0;
      reports.assign(n, {});
      lock.unlock();
      const double start_wall = UnixNow(), start = SteadyNow();
      for (auto& rank : ranks) {
        Rank* r = rank.get();
        boost::asio::post(*ios[r->host->io], [this, r, step] { BeginStep(*r, step); });
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
        result.state = JobState::kInterrupted;
        result.reason = "watchdog: step " + std::to_string(step) + " did not finish within " +
                        std::to_string(config.step_timeout_seconds) + " s (" + std::to_string(done_ranks) +
                        " of " + std::to_string(n) + " ranks done)";
        break;
      }
      StepRecord rec;
      rec.step = step;
      rec.start = start_wall;
      const double end = SteadyNow();
      rec.seconds = end - start;
      rec.end = start_wall + rec.seconds;
      for (size_t c = 0; c < config.collectives.size(); ++c) {
        double first = 1e300, last = 0;
        for (const Report& rep : reports) {
          first = std::min(first, rep.started[c]);
          last = std::max(last, rep.finished[c]);
        }
        CollectiveTiming t{config.collectives[c].kind, words[c] * 4 * n, last - first, 0};
        if (t.seconds > 0)
          t.busbw_gbps = t.bytes * 8 / t.seconds / 1e9 * BusBandwidthFactor(t.kind, n);
        rec.collectives.push_back(t);
      }
      for (const Report& rep : reports) {
        rec.bytes_verified += rep.bytes_ok;
        rec.bytes_bad += rep.bytes_bad;
        rec.retransmissions += rep.retransmissions;
      }
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
    result.seconds = SteadyNow() - t0;
    StopIo();
    {
      std::lock_guard lock(mu);
      owner->state_.store(result.state);
    }
    cv.notify_all();
  }

  void StopIo() {
    std::lock_guard lock(io_mu);
    for (auto& host : hosts) {
      mrc::AsioEndpoint* ep = host->endpoint.get();
      boost::asio::post(*ios[host->io], [ep] { ep->Stop(); });
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
};

TrainingJob::TrainingJob(const ResolvedLab& lab, JobConfig config, EventFn on_event, StepFn on_step)
    : impl_(std::make_unique<Impl>(this, lab, std::move(config), std::move(on_event), std::move(on_step))) {
  impl_->Build();
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

int TrainingJob::ranks() const { return impl_->n; }

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
  int touched = 0;
  for (auto& r : impl_->ranks) {
    if (r->host->name != host_a) continue;
    for (auto [peer, qp] : r->qp_to) {
      if (impl_->ranks[peer]->host->name != host_b) continue;
      ++touched;
      mrc::Qp* q = qp;
      mrc::AsioEndpoint* ep = r->host->endpoint.get();
      boost::asio::post(*impl_->ios[r->host->io], [q, ep, ev, denied] {
        const auto now = mrc::AsioEndpoint::Now();
        denied ? q->DenyEv(static_cast<uint16_t>(ev), now) : q->AllowEv(static_cast<uint16_t>(ev), now);
        ep->Kick();
      });
    }
  }
  return touched;
}

int TrainingJob::SetPortEnabled(const std::string& host, int plane, bool enabled) {
  int touched = 0;
  for (auto& r : impl_->ranks) {
    if (r->host->name != host) continue;
    for (auto [peer, qp] : r->qp_to) {
      ++touched;
      mrc::Qp* q = qp;
      mrc::AsioEndpoint* ep = r->host->endpoint.get();
      boost::asio::post(*impl_->ios[r->host->io], [q, ep, plane, enabled] {
        const auto now = mrc::AsioEndpoint::Now();
        enabled ? q->EnablePlane(plane, now) : q->DisablePlane(plane, now);
        ep->Kick();
      });
    }
  }
  return touched;
}

std::vector<EvSnapshot> TrainingJob::SnapshotEvs() {
  std::mutex out_mu;
  std::vector<EvSnapshot> out;
  impl_->OnEachHost([&](Impl::Host& host) {
    std::vector<EvSnapshot> mine;
    for (Impl::Rank* r : host.ranks)
      for (auto [peer, qp] : r->qp_to)
        for (const auto& s : qp->ListEvs())
          mine.push_back({impl_->QpName(*r, peer), s.id, s.plane, std::string(mrc::ToString(s.state)),
                          s.counters.tx_data, s.counters.tx_retransmits, s.counters.losses});
    std::lock_guard lock(out_mu);
    out.insert(out.end(), mine.begin(), mine.end());
  });
  return out;
}

}  // namespace mrclab::harness
