#include "harness/job/workload.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "harness/job/collective_data.h"
#include "harness/job/ev_plan.h"
#include "mrc/core/rng.h"

namespace mrclab::harness {
namespace {

constexpr int kMaxReceiveCredits = 256;  // per QP

// A chunk's immediate: the low 8 bits of its landing slot (a check: the receiver knows the slot
// from the message's order on its QP) and a 24-bit checksum of its bytes.
uint32_t Immediate(int slot, uint32_t checksum24) { return static_cast<uint32_t>(slot & 0xff) << 24 | checksum24; }

// Every route becomes the one EV `used`, on `source_port` (udp EVs: one socket, not one per EV).
void OnlyRoute(std::vector<mrc::EvRoute>& routes, size_t used, uint16_t source_port) {
  mrc::EvRoute only = routes.at(used);
  only.udp_source_port = source_port;
  std::fill(routes.begin(), routes.end(), only);
}

// The flow key of rank `from`'s QP to rank `to`.
uint64_t FlowKey(uint64_t seed, int from, int to) {
  return mrc::SplitMix64(seed * 0x9E3779B97F4A7C15ULL + (static_cast<uint64_t>(from) << 32 | static_cast<uint32_t>(to)));
}

}  // namespace

size_t SourcePortsNeeded(const JobConfig& c, size_t qp_pairs) {
  if (c.ev_mode != mrc::EvMode::kUdp) return 0;
  return qp_pairs * (c.transport == mrc::TransportMode::kRc ? 1 : c.evs_per_qp);
}

std::string_view ToString(PayloadMode m) { return m == PayloadMode::kVirtual ? "virtual" : "real"; }

std::string_view ToString(JobState s) {
  switch (s) {
    case JobState::kIdle: return "idle";
    case JobState::kRunning: return "running";
    case JobState::kCompleted: return "completed";
    case JobState::kInterrupted: return "interrupted";
  }
  return "?";
}

struct Workload::Host {
  std::string name;
  HostBinding binding;
  std::vector<Rank*> ranks;
  std::map<uint32_t, std::pair<Rank*, int>> qp_owner;  // qpn -> (rank, peer rank)
  std::deque<WorkloadOutput> outbox;
};

struct Workload::Rank {
  int id = 0;
  Host* host = nullptr;
  mrc::CompletionQueue* cq = nullptr;
  std::map<int, mrc::Qp*> qp_to;  // peer rank -> our QP to it
  std::vector<std::vector<uint32_t>> data, output;  // per collective
  std::vector<mrc::MemoryRegion> data_mr;
  std::vector<uint8_t> landing;
  mrc::MemoryRegion landing_mr;
  // Slots that landed and were not consumed yet: true if the checksum matched. (A map, not a
  // vector per slot: a ring step has 2(N-1) slots per rank.)
  std::unordered_map<int, bool> landed;
  // Per peer: the (collective, phase) to look for its next message from. QPs complete
  // messages in order, so a message's place in that order names its slot.
  std::map<int, std::pair<size_t, size_t>> next_from;
  // Step state.
  bool active = false;
  mrc::Timestamp compute_end = mrc::Timestamp::Infinite();
  uint64_t step = 0;
  size_t collective = 0, phase = 0;
  bool phase_sent = false;
  int sends_pending = 0;
  std::vector<mrc::Timestamp> started, finished;
  uint64_t bytes_ok = 0, bytes_bad = 0, retx_at_start = 0;
};

Workload::Workload(const emulator::ResolvedLab& lab, const JobConfig& config, const QpConfigFn& qp_config,
                   const std::function<HostBinding(int)>& bind)
    : config_(config) {
  if (config_.hosts.empty()) throw std::invalid_argument("job has no hosts");
  if (config_.ranks_per_host < 1) throw std::invalid_argument("ranks_per_host must be at least 1");
  if (config_.collectives.empty()) throw std::invalid_argument("job has no collectives");
  std::set<std::string> seen;
  for (const auto& h : config_.hosts) {
    LabHost(lab, h);
    if (!seen.insert(h).second) throw std::invalid_argument("host '" + h + "' is listed twice");
  }
  const int n = static_cast<int>(config_.hosts.size()) * config_.ranks_per_host;
  for (const auto& c : config_.collectives) kinds_.push_back(c.kind);
  plan_ = StepPlan(kinds_, n);
  const bool virtual_payload = config_.payload == PayloadMode::kVirtual;
  for (const auto& c : config_.collectives) {
    const uint64_t per_chunk = ChunkBytes(c.bytes, n);
    if (per_chunk > (1u << 30)) throw std::invalid_argument("collective size too large");
    words_.push_back(per_chunk / 4);
    slot_bytes_ = std::max<size_t>(slot_bytes_, per_chunk);
    if (virtual_payload) shared_input_.emplace_back(words_.back());  // one chunk: every send reads it
  }
  for (size_t h = 0; h < config_.hosts.size(); ++h) {
    auto host = std::make_unique<Host>();
    host->name = config_.hosts[h];
    host->binding = bind(static_cast<int>(h));
    hosts_.push_back(std::move(host));
  }
  for (int r = 0; r < n; ++r) {
    auto rank = std::make_unique<Rank>();
    rank->id = r;
    rank->host = hosts_[r / config_.ranks_per_host].get();
    rank->host->ranks.push_back(rank.get());
    mrc::Context& ctx = *rank->host->binding.context;
    rank->cq = &ctx.CreateCq();
    for (size_t c = 0; c < config_.collectives.size(); ++c) {
      rank->data.emplace_back(virtual_payload ? 0 : words_[c] * n);
      rank->output.emplace_back(!virtual_payload && kinds_[c] == CollectiveKind::kAllToAll ? words_[c] * n : 0);
      auto& d = virtual_payload ? shared_input_[c] : rank->data.back();
      rank->data_mr.push_back(
          ctx.RegisterMemory({reinterpret_cast<uint8_t*>(d.data()), d.size() * sizeof(uint32_t)}, mrc::kAccessLocal));
    }
    // Virtual payload: every slot lands on the same (zero) bytes; real: one region per slot.
    rank->landing.resize((virtual_payload ? 1 : std::max(1, plan_.slots())) * slot_bytes_);
    rank->landing_mr = ctx.RegisterMemory(rank->landing, mrc::kAccessRemoteWrite);
    ranks_.push_back(std::move(rank));
  }
  Connect(lab, qp_config);
}

Workload::~Workload() = default;

void Workload::Connect(const emulator::ResolvedLab& lab, const QpConfigFn& qp_config) {
  // Pairs a collective connects, with how many messages each side receives per step.
  std::map<std::pair<int, int>, int> receives;  // (receiver, sender) -> per step
  for (int r = 0; r < ranks(); ++r)
    for (const auto& [peer, count] : plan_.ReceivesPerStep(r)) receives[{r, peer}] = count;
  std::set<std::pair<int, int>> pairs;
  for (const auto& [key, count] : receives) pairs.insert(std::minmax(key.first, key.second));
  const size_t ports_needed = SourcePortsNeeded(config_, pairs.size());
  if (ports_needed > kMaxSourcePorts)
    throw std::invalid_argument("udp EVs need " + std::to_string(ports_needed) +
                                " source ports (QP pairs x EVs per QP); at most " + std::to_string(kMaxSourcePorts));
  uint16_t first_port = kFirstSourcePort;
  const bool rc = config_.transport == mrc::TransportMode::kRc;
  for (auto [a, b] : pairs) {
    Rank& ra = *ranks_[a];
    Rank& rb = *ranks_[b];
    const uint16_t pair_port = first_port;
    HostPairPlan p = PlanEvs(lab, ra.host->name, rb.host->name, config_.ev_mode, config_.evs_per_qp, pair_port);
    first_port += static_cast<uint16_t>(ports_needed / pairs.size());
    std::vector<int> planes;
    for (const auto& e : p.a_to_b) planes.push_back(e.plane);
    // RC's path per direction from the job's seed and the rank pair, not from the QP numbers
    // (random per run): a run's paths replay with its seed, the same in a lab and in ns-3.
    mrc::QpConfig qca = qp_config(config_.transport, planes, config_.mtu), qcb = qca;
    qca.flow_key = FlowKey(config_.seed, a, b);
    qcb.flow_key = FlowKey(config_.seed, b, a);
    mrc::Qp& qa = ra.host->binding.context->CreateQp(qca, *ra.cq, *ra.cq);
    mrc::Qp& qb = rb.host->binding.context->CreateQp(qcb, *rb.cq, *rb.cq);
    qa.Connect(qb.qpn(), qb.config().initial_psn);
    qb.Connect(qa.qpn(), qa.config().initial_psn);
    if (rc) {  // an RC QP sends on one EV only: every route is that EV's, on one source port
      OnlyRoute(p.a_to_b, qa.rc_ev_index(), pair_port);
      OnlyRoute(p.b_to_a, qb.rc_ev_index(), pair_port);
    }
    ra.host->binding.set_routes(qa.qpn(), p.a_to_b);
    rb.host->binding.set_routes(qb.qpn(), p.b_to_a);
    ra.qp_to[b] = &qa;
    rb.qp_to[a] = &qb;
    ra.host->qp_owner[qa.qpn()] = {&ra, b};
    rb.host->qp_owner[qb.qpn()] = {&rb, a};
    // Receive credits: two steps' worth, so a fast neighbour's next step never waits, up to
    // kMaxReceiveCredits (a long ring's sender then waits for credit, as verbs' RNR would).
    for (int i = 0; i < std::min(2 * receives[{a, b}] + 4, kMaxReceiveCredits); ++i) qa.PostRecv(0);
    for (int i = 0; i < std::min(2 * receives[{b, a}] + 4, kMaxReceiveCredits); ++i) qb.PostRecv(0);
  }
}

std::string Workload::QpName(const Rank& r, int peer) const {
  return r.host->name + "/" + std::to_string(r.id) + "->" + ranks_[peer]->host->name + "/" + std::to_string(peer);
}

void Workload::Output(Host& h, WorkloadOutput out) { h.outbox.push_back(std::move(out)); }

std::optional<WorkloadOutput> Workload::Poll(int host) {
  auto& box = hosts_[host]->outbox;
  if (box.empty()) return std::nullopt;
  WorkloadOutput out = std::move(box.front());
  box.pop_front();
  return out;
}

void Workload::BeginStep(int host, uint64_t step, mrc::Timestamp now) {
  for (Rank* rp : hosts_[host]->ranks) {
    Rank& r = *rp;
    r.active = true;
    r.step = step;
    r.collective = r.phase = 0;
    r.phase_sent = false;
    r.bytes_ok = r.bytes_bad = 0;
    r.retx_at_start = Retransmissions(r);
    r.started.assign(config_.collectives.size(), mrc::Timestamp());
    r.finished.assign(config_.collectives.size(), mrc::Timestamp());
    if (config_.payload == PayloadMode::kReal)
      for (size_t c = 0; c < config_.collectives.size(); ++c)
        FillInput(kinds_[c], PatternBase(config_.seed, step, int(c)), r.id, ranks(), words_[c], r.data[c].data());
    if (config_.compute_seconds > 0) {
      r.compute_end = now + mrc::Duration::Seconds(config_.compute_seconds);
    } else {
      r.compute_end = mrc::Timestamp::Infinite();
      Advance(r, now);
    }
  }
}

mrc::Timestamp Workload::NextTimeout(int host) const {
  mrc::Timestamp next = mrc::Timestamp::Infinite();
  for (const Rank* r : hosts_[host]->ranks) next = mrc::Min(next, r->compute_end);
  return next;
}

void Workload::OnTimeout(int host, mrc::Timestamp now) {
  for (Rank* r : hosts_[host]->ranks)
    if (r->compute_end <= now) {
      r->compute_end = mrc::Timestamp::Infinite();
      Advance(*r, now);
    }
}

void Workload::OnProgress(int host, mrc::Timestamp now) {
  Host& h = *hosts_[host];
  for (Rank* r : h.ranks)
    while (auto wc = r->cq->Poll()) OnCompletion(*r, *wc, now);
  mrc::Context& ctx = *h.binding.context;
  while (auto e = ctx.PollEvent()) {
    if (auto* s = std::get_if<mrc::EvStateChanged>(&*e)) {
      auto it = h.qp_owner.find(s->qpn);
      if (it == h.qp_owner.end()) continue;
      Output(h, WorkloadEvent{s->at, {{"type", "ev_state"}, {"qp", QpName(*it->second.first, it->second.second)},
                                      {"ev", s->ev}, {"from", mrc::ToString(s->from)}, {"to", mrc::ToString(s->to)},
                                      {"reason", mrc::ToString(s->reason)}}});
    } else if (auto* q = std::get_if<mrc::QpStateChanged>(&*e)) {
      auto it = h.qp_owner.find(q->qpn);
      const std::string name =
          it == h.qp_owner.end() ? std::to_string(q->qpn) : QpName(*it->second.first, it->second.second);
      Output(h, WorkloadEvent{q->at, {{"type", "qp_state"}, {"qp", name}, {"to", mrc::ToString(q->to)},
                                      {"reason", std::string(q->reason)}}});
      if (q->to == mrc::QpState::kError)
        Output(h, WorkloadFailure{q->at, "QP " + name + " entered the error state (" + std::string(q->reason) + ")"});
    }
  }
}

void Workload::OnCompletion(Rank& r, const mrc::Completion& wc, mrc::Timestamp now) {
  if (wc.status != mrc::WcStatus::kSuccess) {
    Output(*r.host, WorkloadFailure{now, "rank " + std::to_string(r.id) + ": work completion " +
                                             std::string(mrc::ToString(wc.status))});
    return;
  }
  if (wc.opcode == mrc::WcOpcode::kRecvWriteWithImm) {
    const uint32_t imm = wc.immediate.value_or(0);
    auto owner = r.host->qp_owner.find(wc.qpn);
    const int peer = owner == r.host->qp_owner.end() ? -1 : owner->second.second;
    const int slot = peer < 0 ? -1 : NextSlotFrom(r, peer);
    if (slot >= 0 && Immediate(slot, imm & 0xffffff) == imm && wc.byte_len <= slot_bytes_) {
      // Virtual payload is zeros on both sides: there is nothing for a checksum to see.
      const bool ok = config_.payload == PayloadMode::kVirtual ||
                      Checksum24(r.landing.data() + LandingOffset(slot), wc.byte_len) == (imm & 0xffffff);
      r.landed[slot] = ok;
      if (!ok)
        Output(*r.host, WorkloadEvent{now, {{"type", "checksum_mismatch"}, {"rank", r.id}, {"slot", slot},
                                            {"bytes", wc.byte_len}}});
    } else {
      r.bytes_bad += wc.byte_len;
    }
    if (peer >= 0) r.qp_to[peer]->PostRecv(0);
  } else {
    --r.sends_pending;
  }
  Advance(r, now);
}

// The slot of the next message from `peer`: the next phase (wrapping into the next step) in
// which r receives from it. -1 if r never does.
int Workload::NextSlotFrom(Rank& r, int peer) const {
  auto& [c, k] = r.next_from[peer];
  for (size_t tries = 0; tries < plan_.phases_per_step(); ++tries) {
    const int slot = plan_.SlotFrom(r.id, c, k, peer);
    if (++k == plan_.phases(c)) {
      k = 0;
      c = (c + 1) % plan_.collectives();
    }
    if (slot >= 0) return slot;
  }
  return -1;
}

size_t Workload::LandingOffset(int slot) const {
  return config_.payload == PayloadMode::kVirtual ? 0 : static_cast<size_t>(slot) * slot_bytes_;
}

size_t Workload::InputOffset(size_t c, int chunk) const {
  return config_.payload == PayloadMode::kVirtual ? 0 : static_cast<size_t>(chunk) * words_[c] * sizeof(uint32_t);
}

uint64_t Workload::Retransmissions(const Rank& r) const {
  uint64_t total = 0;
  for (const auto& [peer, qp] : r.qp_to) total += qp->stats().retransmissions;
  return total;
}

void Workload::PostSends(Rank& r, size_t phase_index, mrc::Timestamp now) {
  const size_t c = r.collective;
  const Phase phase = plan_.At(r.id, c, phase_index);
  const uint64_t chunk_bytes = words_[c] * sizeof(uint32_t);
  for (const SendOp& s : phase.sends) {
    const Rank& peer = *ranks_[s.peer];
    const auto& input = config_.payload == PayloadMode::kVirtual ? shared_input_[c] : r.data[c];
    const auto* chunk = reinterpret_cast<const uint8_t*>(input.data()) + InputOffset(c, s.chunk);
    mrc::WriteRequest wr;
    wr.wr_id = r.step;
    wr.lkey = r.data_mr[c].lkey;
    wr.local_addr = r.data_mr[c].va + InputOffset(c, s.chunk);
    wr.length = static_cast<uint32_t>(chunk_bytes);
    wr.remote_addr = peer.landing_mr.va + LandingOffset(s.remote_slot);
    wr.rkey = peer.landing_mr.rkey;
    wr.immediate =
        Immediate(s.remote_slot, config_.payload == PayloadMode::kVirtual ? 0 : Checksum24(chunk, chunk_bytes));
    if (r.qp_to.at(s.peer)->PostWrite(wr) != mrc::PostResult::kOk) {
      Output(*r.host, WorkloadFailure{now, "rank " + std::to_string(r.id) + ": cannot post a write to rank " +
                                               std::to_string(s.peer)});
      return;
    }
    ++r.sends_pending;
  }
}

// Runs rank r's step as far as the data that has arrived allows.
void Workload::Advance(Rank& r, mrc::Timestamp now) {
  while (r.active && r.compute_end.IsInfinite()) {
    if (r.collective == config_.collectives.size()) {
      if (r.sends_pending == 0) {
        r.active = false;
        Output(*r.host, RankReport{r.id, r.step, r.started, r.finished, r.bytes_ok, r.bytes_bad,
                                   Retransmissions(r) - r.retx_at_start});
      }
      return;
    }
    const size_t c = r.collective;
    const Phase phase = plan_.At(r.id, c, r.phase);
    if (!r.phase_sent) {
      if (r.phase == 0) r.started[c] = now;
      r.phase_sent = true;
      PostSends(r, r.phase, now);
    }
    for (const RecvOp& recv : phase.recvs)
      if (!r.landed.count(recv.slot)) return;
    const uint64_t chunk_bytes = words_[c] * sizeof(uint32_t);
    const bool all_to_all = kinds_[c] == CollectiveKind::kAllToAll;
    const bool virtual_payload = config_.payload == PayloadMode::kVirtual;
    for (const RecvOp& recv : phase.recvs) {
      if (virtual_payload) {  // the chunk's checksum is all there is to check
        (r.landed[recv.slot] ? r.bytes_ok : r.bytes_bad) += chunk_bytes;
      } else {
        const auto* src = reinterpret_cast<const uint32_t*>(r.landing.data() + LandingOffset(recv.slot));
        uint32_t* dst = (all_to_all ? r.output[c] : r.data[c]).data() + recv.chunk * words_[c];
        ApplyReceive(recv.reduce, src, dst, words_[c]);
      }
      r.landed.erase(recv.slot);
    }
    if (++r.phase < plan_.phases(c)) {
      r.phase_sent = false;
      continue;
    }
    if (!virtual_payload) VerifyResult(r, c, now);
    r.finished[c] = now;
    ++r.collective;
    r.phase = 0;
    r.phase_sent = false;
  }
}

// The collective's result against its closed form (real payload only).
void Workload::VerifyResult(Rank& r, size_t c, mrc::Timestamp now) {
  const uint64_t chunk_bytes = words_[c] * sizeof(uint32_t);
  const int bad = CountBadChunks(kinds_[c], PatternBase(config_.seed, r.step, int(c)), r.id, ranks(), words_[c],
                                 r.data[c].data(), r.output[c].data());
  const int checked = kinds_[c] == CollectiveKind::kReduceScatter ? 1 : ranks();
  r.bytes_bad += bad * chunk_bytes;
  r.bytes_ok += (checked - bad) * chunk_bytes;
  if (bad)
    Output(*r.host, WorkloadEvent{now, {{"type", "verify_failed"}, {"rank", r.id}, {"step", r.step},
                                        {"collective", c}, {"bad_chunks", bad}}});
}

StepRecord Workload::AssembleStep(uint64_t step, const std::vector<RankReport>& reports) const {
  StepRecord rec;
  rec.step = step;
  const int n = ranks();
  for (size_t c = 0; c < config_.collectives.size(); ++c) {
    mrc::Timestamp first = mrc::Timestamp::Infinite(), last;
    for (const RankReport& rep : reports) {
      first = mrc::Min(first, rep.started[c]);
      last = mrc::Max(last, rep.finished[c]);
    }
    CollectiveTiming t{kinds_[c], words_[c] * 4 * n, (last - first).seconds(), 0};
    if (t.seconds > 0) t.busbw_gbps = t.bytes * 8 / t.seconds / 1e9 * BusBandwidthFactor(t.kind, n);
    rec.collectives.push_back(t);
  }
  for (const RankReport& rep : reports) {
    rec.bytes_verified += rep.bytes_ok;
    rec.bytes_bad += rep.bytes_bad;
    rec.retransmissions += rep.retransmissions;
  }
  return rec;
}

int Workload::HostIndex(const std::string& name) const {
  for (size_t i = 0; i < hosts_.size(); ++i)
    if (hosts_[i]->name == name) return static_cast<int>(i);
  return -1;
}

int Workload::SetEvDenied(int host, const std::string& peer_host, int ev, bool denied, mrc::Timestamp now) {
  int touched = 0;
  for (Rank* r : hosts_[host]->ranks)
    for (auto [peer, qp] : r->qp_to) {
      if (ranks_[peer]->host->name != peer_host) continue;
      ++touched;
      denied ? qp->DenyEv(static_cast<uint16_t>(ev), now) : qp->AllowEv(static_cast<uint16_t>(ev), now);
    }
  return touched;
}

int Workload::SetPortEnabled(int host, int plane, bool enabled, mrc::Timestamp now) {
  int touched = 0;
  for (Rank* r : hosts_[host]->ranks)
    for (auto [peer, qp] : r->qp_to) {
      ++touched;
      enabled ? qp->EnablePlane(plane, now) : qp->DisablePlane(plane, now);
    }
  return touched;
}

std::vector<EvSnapshot> Workload::SnapshotEvs(int host) const {
  std::vector<EvSnapshot> out;
  for (const Rank* r : hosts_[host]->ranks)
    for (auto [peer, qp] : r->qp_to)
      for (const auto& s : qp->ListEvs())
        out.push_back({QpName(*r, peer), s.id, s.plane, std::string(mrc::ToString(s.state)), s.counters.tx_data,
                       s.counters.tx_retransmits, s.counters.losses});
  return out;
}

}  // namespace mrclab::harness
