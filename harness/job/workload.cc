#include "harness/job/workload.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <stdexcept>

#include "harness/job/collective_data.h"
#include "harness/job/ev_plan.h"
#include "harness/job/source_ports.h"
#include "mrc/core/flat_id_map.h"
#include "mrc/core/prefetch.h"
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

// The flow key of rank `from`'s QP `lane` to rank `to` (lane 0: the one QP of an unsplit job).
uint64_t FlowKey(uint64_t seed, int from, int to, int lane) {
  const uint64_t key =
      mrc::SplitMix64(seed * 0x9E3779B97F4A7C15ULL + (static_cast<uint64_t>(from) << 32 | static_cast<uint32_t>(to)));
  return lane == 0 ? key : mrc::SplitMix64(key + static_cast<uint64_t>(lane));
}

}  // namespace

Piece PieceOf(size_t chunk_words, int pieces, int index) {
  const size_t base = chunk_words / pieces, extra = chunk_words % pieces;
  const size_t i = static_cast<size_t>(index);
  return {4 * (i * base + std::min(i, extra)), 4 * (base + (i < extra ? 1 : 0))};
}

std::string_view ToString(PayloadMode m) { return m == PayloadMode::kVirtual ? "virtual" : "real"; }
std::string_view ToString(TransportStack s) { return s == TransportStack::kKernel ? "kernel" : "model"; }

std::string_view ToString(JobState s) {
  switch (s) {
    case JobState::kIdle: return "idle";
    case JobState::kRunning: return "running";
    case JobState::kCompleted: return "completed";
    case JobState::kInterrupted: return "interrupted";
  }
  return "?";
}

struct Workload::QpOwner {
  Rank* rank;
  int peer, lane;
  mrc::Qp* qp;
};

struct Workload::Host {
  int index = 0;  // in hosts_ and host_state_
  std::string name;
  HostBinding binding;
  std::vector<Rank*> ranks;
  mrc::FlatIdMap<uint32_t> qp_owner;  // qpn -> index in qp_owners_
  std::deque<WorkloadOutput> outbox;
};

struct Workload::Rank {
  // What a completion and a phase read, first (Prefetch asks for these lines, up to qp_to).
  int id = 0;
  Host* host = nullptr;
  mrc::CompletionQueue* cq = nullptr;
  // Where the last send and receive went (hints for Prefetch: the next are most likely the same).
  int send_peer_hint = 0;
  uint32_t send_lkey_hint = 0;
  uint64_t recv_owner_hint = 0;  // the last receive completion's wr_id (an index of qp_owners_)
  // What a send to a peer needs, found by the peer's rank without a walk over qp_to or a read
  // of the peer's Rank (cold lines at thousands of ranks).
  struct PeerLink {
    mrc::Qp* first_lane;                  // qp_to's lanes: the first, inline (most jobs have one)
    const std::vector<mrc::Qp*>* lanes;
    uint64_t landing_va;                  // the peer's landing region
    uint32_t landing_rkey;
    int lane_count;
    mrc::Qp* Lane(int lane) const { return lane == 0 ? first_lane : (*lanes)[static_cast<size_t>(lane)]; }
  };
  mrc::FlatIdMap<PeerLink> links;
  std::vector<mrc::MemoryRegion> data_mr;
  // Slots whose pieces landed (all of them: the chunk is there) and were not consumed yet, and
  // whether every piece's checksum matched. (A map, not a vector per slot: a ring step has
  // 2(N-1) slots per rank.)
  struct Landed {
    int pieces = 0;
    bool ok = true;
  };
  mrc::FlatIdMap<Landed> landed;  // by slot
  // Per (peer, lane), keyed by PeerLane: the (collective, phase) to look for its next message
  // from. A QP completes messages in order, so a message's place in that order names its slot.
  mrc::FlatIdMap<std::pair<size_t, size_t>> next_from;
  // Step state.
  bool active = false;
  mrc::Timestamp compute_end = mrc::Timestamp::Infinite();
  uint64_t step = 0;
  size_t collective = 0, phase = 0;
  bool phase_sent = false;
  int sends_pending = 0;
  // plan_.At(id, collective, phase), kept while the rank is in that phase: Advance runs after
  // every completion. Its arrays are reused from phase to phase (no allocation per phase).
  Phase current;
  size_t current_collective = SIZE_MAX, current_phase = SIZE_MAX;
  uint64_t bytes_ok = 0, bytes_bad = 0;
  std::vector<std::vector<uint32_t>> data, output;  // per collective (empty: virtual payload)
  std::vector<uint8_t> landing;
  // Read at setup, at a step's start and end, and for reports.
  std::map<int, std::vector<mrc::Qp*>> qp_to;  // peer rank -> our QPs to it (qps_per_peer lanes)
  mrc::MemoryRegion landing_mr;
  std::vector<mrc::Timestamp> started, finished;
  uint64_t retx_at_start = 0;
};

Workload::Workload(const emulator::ResolvedLab& lab, const JobConfig& config, const QpConfigFn& qp_config,
                   const std::function<HostBinding(int)>& bind)
    : config_(config) {
  if (config_.hosts.empty()) throw std::invalid_argument("job has no hosts");
  if (config_.ranks_per_host < 1) throw std::invalid_argument("ranks_per_host must be at least 1");
  if (config_.collectives.empty()) throw std::invalid_argument("job has no collectives");
  if (config_.qps_per_peer < 1 || config_.qps_per_peer > kMaxQpsPerPeer)
    throw std::invalid_argument("qps_per_peer must be 1.." + std::to_string(kMaxQpsPerPeer));
  if (config_.min_active && (*config_.min_active < 0 || *config_.min_active > config_.evs_per_qp))
    throw std::invalid_argument("min_active must be 0.." + std::to_string(config_.evs_per_qp) + " (the EVs per QP)");
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
    if (words_.back() < static_cast<size_t>(config_.qps_per_peer))
      throw std::invalid_argument("a " + std::to_string(c.bytes) + "-byte collective over " + std::to_string(n) +
                                  " ranks has chunks of " + std::to_string(per_chunk) + " bytes: too small for " +
                                  std::to_string(config_.qps_per_peer) + " QPs per peer (4 bytes each at least)");
    slot_bytes_ = std::max<size_t>(slot_bytes_, per_chunk);
    // Virtual payload: one chunk of zeros, registered kZeroFilled: the core sends its zeros
    // without reading it (and a simulation's datagrams carry them as a run, not as bytes).
    if (virtual_payload) shared_input_.emplace_back(words_.back() * sizeof(uint32_t), 0);
  }
  for (size_t h = 0; h < config_.hosts.size(); ++h) {
    auto host = std::make_unique<Host>();
    host->index = static_cast<int>(h);
    host->name = config_.hosts[h];
    host->binding = bind(static_cast<int>(h));
    // Sized before any rank registers it (hosts may share it).
    if (virtual_payload && host->binding.virtual_landing && host->binding.virtual_landing->size() < slot_bytes_)
      host->binding.virtual_landing->resize(slot_bytes_);
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
      auto& d = rank->data.back();
      const std::span<uint8_t> input =
          virtual_payload ? std::span<uint8_t>(shared_input_[c])
                          : std::span<uint8_t>(reinterpret_cast<uint8_t*>(d.data()), d.size() * sizeof(uint32_t));
      rank->data_mr.push_back(ctx.RegisterMemory(input, virtual_payload ? mrc::kZeroFilled : mrc::kAccessLocal));
    }
    // Virtual payload: every slot lands on the same bytes (the driver's buffer, if it lent
    // one); real: one region per slot.
    std::vector<uint8_t>* lent = virtual_payload ? rank->host->binding.virtual_landing : nullptr;
    std::vector<uint8_t>& landing = lent ? *lent : rank->landing;
    if (!lent) rank->landing.resize((virtual_payload ? 1 : std::max(1, plan_.slots())) * slot_bytes_);
    rank->landing_mr = ctx.RegisterMemory(landing, mrc::kAccessRemoteWrite);
    rank_queues_.push_back({rank.get(), rank->cq});
    ranks_.push_back(std::move(rank));
  }
  for (const auto& h : hosts_) host_state_.push_back({mrc::Timestamp::Infinite(), h->binding.context, h.get(), 0});
  Connect(lab, qp_config);
}

Workload::~Workload() = default;

void Workload::Connect(const emulator::ResolvedLab& lab, const QpConfigFn& qp_config) {
  // Pairs a collective connects, with how many messages each side receives per step.
  std::map<std::pair<int, int>, int> receives;  // (receiver, sender) -> per step
  for (int r = 0; r < ranks(); ++r)
    for (const auto& [peer, count] : plan_.ReceivesPerStep(r)) receives[{r, peer}] = count;
  const std::set<std::pair<int, int>> pairs = plan_.RankPairs();
  const int lanes = config_.qps_per_peer;
  const SourcePortPlan ports = PlanSourcePorts(config_, QpPairHosts(pairs, config_), hosts_.size());
  if (ports.ports() > kSourcePortCount)
    throw std::invalid_argument("udp EVs need " + std::to_string(ports.ports()) + " source ports; at most " +
                                std::to_string(kSourcePortCount));
  size_t qp_pair = 0;
  const bool rc = config_.transport == mrc::TransportMode::kRc;
  for (auto [a, b] : pairs)
    for (int lane = 0; lane < lanes; ++lane) {
      Rank& ra = *ranks_[a];
      Rank& rb = *ranks_[b];
      const uint16_t lane_port = ports.width ? ports.first_port(qp_pair++) : uint16_t{kFirstSourcePort};
      HostPairPlan p = PlanEvs(lab, ra.host->name, rb.host->name, config_.ev_mode, config_.evs_per_qp, lane_port);
      std::vector<int> planes;
      for (const auto& e : p.a_to_b) planes.push_back(e.plane);
      // RC's path per direction from the job's seed, the rank pair and the lane, not from the
      // QP numbers (random per run): a run's paths replay with its seed, in a lab and in ns-3.
      mrc::QpConfig qca = qp_config(config_.transport, planes, config_.mtu), qcb = qca;
      qca.flow_key = FlowKey(config_.seed, a, b, lane);
      qcb.flow_key = FlowKey(config_.seed, b, a, lane);
      if (config_.min_active) qca.ev_policy.min_active = qcb.ev_policy.min_active = *config_.min_active;
      if (config_.rc_ack_timeout) qca.rc_ack_timeout = qcb.rc_ack_timeout = *config_.rc_ack_timeout;
      if (config_.rc_retry_count) qca.rc_retry_count = qcb.rc_retry_count = *config_.rc_retry_count;
      mrc::Qp& qa = ra.host->binding.context->CreateQp(qca, *ra.cq, *ra.cq);
      mrc::Qp& qb = rb.host->binding.context->CreateQp(qcb, *rb.cq, *rb.cq);
      qa.Connect(qb.qpn(), qb.config().initial_psn);
      qb.Connect(qa.qpn(), qa.config().initial_psn);
      if (rc) {  // an RC QP sends on one EV only: every route is that EV's, on one source port
        OnlyRoute(p.a_to_b, qa.rc_ev_index(), lane_port);
        OnlyRoute(p.b_to_a, qb.rc_ev_index(), lane_port);
      }
      ra.host->binding.set_routes(qa.qpn(), p.a_to_b);
      rb.host->binding.set_routes(qb.qpn(), p.b_to_a);
      ra.qp_to[b].push_back(&qa);
      rb.qp_to[a].push_back(&qb);
      const auto owner_a = static_cast<uint32_t>(qp_owners_.size());
      qp_owners_.push_back({&ra, b, lane, &qa});
      qp_owners_.push_back({&rb, a, lane, &qb});
      ra.host->qp_owner.Put(qa.qpn(), owner_a);
      rb.host->qp_owner.Put(qb.qpn(), owner_a + 1);
      // Receive credits: two steps' worth, so a fast neighbour's next step never waits, up to
      // kMaxReceiveCredits (a long ring's sender then waits for credit, as verbs' RNR would).
      // Each receive's wr_id is its QP's owner.
      for (int i = 0; i < std::min(2 * receives[{a, b}] + 4, kMaxReceiveCredits); ++i) qa.PostRecv(owner_a);
      for (int i = 0; i < std::min(2 * receives[{b, a}] + 4, kMaxReceiveCredits); ++i) qb.PostRecv(owner_a + 1);
    }
  for (const auto& rank : ranks_)
    for (const auto& [peer, lanes] : rank->qp_to) {
      const Rank& to = *ranks_[peer];
      rank->links.Put(static_cast<uint32_t>(peer), {lanes.front(), &lanes, to.landing_mr.va, to.landing_mr.rkey,
                                                    static_cast<int>(lanes.size())});
    }
}

std::string Workload::QpName(const Rank& r, int peer, int lane) const {
  std::string name =
      r.host->name + "/" + std::to_string(r.id) + "->" + ranks_[peer]->host->name + "/" + std::to_string(peer);
  return config_.qps_per_peer == 1 ? name : name + "#" + std::to_string(lane);
}

void Workload::Output(Host& h, WorkloadOutput out) {
  h.outbox.push_back(std::move(out));
  ++host_state_[static_cast<size_t>(h.index)].outputs;
}

std::optional<WorkloadOutput> Workload::Poll(int host) {
  HostState& state = host_state_[static_cast<size_t>(host)];
  if (state.outputs == 0) return std::nullopt;
  --state.outputs;
  auto& box = state.host->outbox;
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
  UpdateComputeDue(host);
}

mrc::Timestamp Workload::NextTimeout(int host) const { return host_state_[static_cast<size_t>(host)].compute_due; }

void Workload::UpdateComputeDue(int host) {
  mrc::Timestamp next = mrc::Timestamp::Infinite();
  for (const Rank* r : hosts_[host]->ranks) next = mrc::Min(next, r->compute_end);
  host_state_[static_cast<size_t>(host)].compute_due = next;
}

void Workload::OnTimeout(int host, mrc::Timestamp now) {
  for (Rank* r : hosts_[host]->ranks)
    if (r->compute_end <= now) {
      r->compute_end = mrc::Timestamp::Infinite();
      Advance(*r, now);
    }
  UpdateComputeDue(host);
}

void Workload::OnProgress(int host, mrc::Timestamp now) {
  const size_t first = static_cast<size_t>(host) * config_.ranks_per_host;
  for (size_t i = first; i < first + config_.ranks_per_host; ++i) {
    const RankQueue q = rank_queues_[i];
    while (auto wc = q.cq->Poll()) OnCompletion(*q.rank, *wc, now);
  }
  mrc::Context& ctx = *host_state_[static_cast<size_t>(host)].context;
  while (auto e = ctx.PollEvent()) {
    Host& h = *hosts_[host];
    if (auto* s = std::get_if<mrc::EvStateChanged>(&*e)) {
      const uint32_t* owner = h.qp_owner.Find(s->qpn);
      if (!owner) continue;
      const QpOwner& o = qp_owners_[*owner];
      Output(h, WorkloadEvent{s->at, {{"type", "ev_state"}, {"qp", QpName(*o.rank, o.peer, o.lane)},
                                      {"ev", s->ev}, {"from", mrc::ToString(s->from)}, {"to", mrc::ToString(s->to)},
                                      {"reason", mrc::ToString(s->reason)}}});
    } else if (auto* q = std::get_if<mrc::QpStateChanged>(&*e)) {
      const uint32_t* i = h.qp_owner.Find(q->qpn);
      const QpOwner* o = i ? &qp_owners_[*i] : nullptr;
      const std::string name = o ? QpName(*o->rank, o->peer, o->lane) : std::to_string(q->qpn);
      Output(h, WorkloadEvent{q->at, {{"type", "qp_state"}, {"qp", name}, {"to", mrc::ToString(q->to)},
                                      {"reason", std::string(q->reason)}}});
      if (q->to == mrc::QpState::kError)
        Output(h, WorkloadFailure{q->at, "QP " + name + " entered the error state (" + std::string(q->reason) + ")"});
    }
  }
}

void Workload::Prefetch(int host, int stage) const {
  const size_t first = static_cast<size_t>(host) * config_.ranks_per_host;
  if (first >= rank_queues_.size()) return;
  const RankQueue* queues = &rank_queues_[first];
  if (stage == 0) {
    mrc::PrefetchLine(queues);
    mrc::PrefetchLine(&host_state_[static_cast<size_t>(host)]);
    return;
  }
  for (int i = 0; i < config_.ranks_per_host; ++i) {
    const Rank* r = queues[i].rank;
    if (stage == 1) {
      mrc::PrefetchSpan(r, &r->qp_to);
      continue;
    }
    // Their slots when they fit on a few lines (a ring's rank has two peers): a larger map's
    // whole array costs more lines than the one slot a completion reads. The slots the last
    // send and receive read, and the memory key the next send checks.
    r->landed.Prefetch(2);
    r->next_from.Prefetch(3);
    r->links.PrefetchSlot(static_cast<uint32_t>(r->send_peer_hint));
    if (r->recv_owner_hint < qp_owners_.size()) mrc::PrefetchBytes(&qp_owners_[r->recv_owner_hint], sizeof(QpOwner));
    host_state_[static_cast<size_t>(host)].context->PrefetchMemory(r->send_lkey_hint);
    mrc::PrefetchLine(r->current.sends.data());
    mrc::PrefetchLine(r->current.recvs.data());
    mrc::PrefetchLine(r->data_mr.data());
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
    // The receive's wr_id is its QP's owner (posted so in the constructor and below).
    const QpOwner* owner = wc.wr_id < qp_owners_.size() ? &qp_owners_[wc.wr_id] : nullptr;
    if (owner && owner->qp->qpn() != wc.qpn) owner = nullptr;
    const int peer = owner ? owner->peer : -1;
    const int lane = owner ? owner->lane : 0;
    const Incoming in = peer < 0 ? Incoming{} : NextSlotFrom(r, peer, lane);
    const int slot = in.slot;
    const Piece piece = slot < 0 ? Piece{} : PieceOf(words_[in.collective], config_.qps_per_peer, lane);
    if (slot >= 0 && Immediate(slot, imm & 0xffffff) == imm && wc.byte_len == piece.bytes) {
      // Virtual payload is zeros on both sides: there is nothing for a checksum to see.
      const bool ok = config_.payload == PayloadMode::kVirtual ||
                      Checksum24(r.landing.data() + LandingOffset(slot) + piece.offset, wc.byte_len) ==
                          (imm & 0xffffff);
      Rank::Landed* found = r.landed.Find(static_cast<uint32_t>(slot));
      Rank::Landed& l = found ? *found : r.landed.Put(static_cast<uint32_t>(slot), {});
      ++l.pieces;
      l.ok = l.ok && ok;
      if (!ok)
        Output(*r.host, WorkloadEvent{now, {{"type", "checksum_mismatch"}, {"rank", r.id}, {"slot", slot},
                                            {"bytes", wc.byte_len}}});
    } else {
      r.bytes_bad += wc.byte_len;
    }
    if (owner) owner->qp->PostRecv(wc.wr_id);
    r.recv_owner_hint = wc.wr_id;
  } else {
    --r.sends_pending;
  }
  Advance(r, now);
}

// The slot of the next message from `peer`: the next phase (wrapping into the next step) in
// which r receives from it. -1 if r never does.
Workload::Incoming Workload::NextSlotFrom(Rank& r, int peer, int lane) const {
  const uint32_t key = static_cast<uint32_t>(peer) * kMaxQpsPerPeer + static_cast<uint32_t>(lane);
  std::pair<size_t, size_t>* cursor = r.next_from.Find(key);
  auto& [c, k] = cursor ? *cursor : r.next_from.Put(key, {0, 0});
  for (size_t tries = 0; tries < plan_.phases_per_step(); ++tries) {
    const Incoming in{plan_.SlotFrom(r.id, c, k, peer), c};
    if (++k == plan_.phases(c)) {
      k = 0;
      c = (c + 1) % plan_.collectives();
    }
    if (in.slot >= 0) return in;
  }
  return {};
}

size_t Workload::LandingOffset(int slot) const {
  return config_.payload == PayloadMode::kVirtual ? 0 : static_cast<size_t>(slot) * slot_bytes_;
}

size_t Workload::InputOffset(size_t c, int chunk) const {
  return config_.payload == PayloadMode::kVirtual ? 0 : static_cast<size_t>(chunk) * words_[c] * sizeof(uint32_t);
}

uint64_t Workload::Retransmissions(const Rank& r) const {
  uint64_t total = 0;
  for (const auto& [peer, qps] : r.qp_to)
    for (const mrc::Qp* qp : qps) total += qp->stats().retransmissions;
  return total;
}

const Phase& Workload::CurrentPhase(Rank& r) const {
  if (r.current_collective != r.collective || r.current_phase != r.phase) {
    plan_.At(r.id, r.collective, r.phase, r.current);
    r.current_collective = r.collective;
    r.current_phase = r.phase;
  }
  return r.current;
}

void Workload::PostSends(Rank& r, const Phase& phase, mrc::Timestamp now) {
  const size_t c = r.collective;
  const bool virtual_payload = config_.payload == PayloadMode::kVirtual;
  for (const SendOp& s : phase.sends) {
    const Rank::PeerLink* link = r.links.Find(static_cast<uint32_t>(s.peer));
    if (!link) throw std::logic_error("rank " + std::to_string(r.id) + " has no QP to rank " + std::to_string(s.peer));
    const auto& input = r.data[c];  // (empty with virtual payload: its checksum is not computed)
    for (int lane = 0; lane < link->lane_count; ++lane) {
      // Virtual payload: every piece reads the start of the one shared chunk of zeros.
      const Piece piece = PieceOf(words_[c], config_.qps_per_peer, lane);
      const size_t from = InputOffset(c, s.chunk) + (virtual_payload ? 0 : piece.offset);
      mrc::WriteRequest wr;
      wr.wr_id = r.step;
      wr.lkey = r.send_lkey_hint = r.data_mr[c].lkey;
      r.send_peer_hint = s.peer;
      wr.local_addr = r.data_mr[c].va + from;
      wr.length = static_cast<uint32_t>(piece.bytes);
      wr.remote_addr = link->landing_va + LandingOffset(s.remote_slot) + (virtual_payload ? 0 : piece.offset);
      wr.rkey = link->landing_rkey;
      wr.immediate = Immediate(
          s.remote_slot,
          virtual_payload ? 0 : Checksum24(reinterpret_cast<const uint8_t*>(input.data()) + from, piece.bytes));
      if (link->Lane(lane)->PostWrite(wr) != mrc::PostResult::kOk) {
        Output(*r.host, WorkloadFailure{now, "rank " + std::to_string(r.id) + ": cannot post a write to rank " +
                                                 std::to_string(s.peer)});
        return;
      }
      ++r.sends_pending;
    }
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
    const Phase& phase = CurrentPhase(r);
    if (!r.phase_sent) {
      if (r.phase == 0) r.started[c] = now;
      r.phase_sent = true;
      PostSends(r, phase, now);
    }
    for (const RecvOp& recv : phase.recvs) {
      const Rank::Landed* l = r.landed.Find(static_cast<uint32_t>(recv.slot));
      if (!l || l->pieces < config_.qps_per_peer) return;
    }
    const uint64_t chunk_bytes = words_[c] * sizeof(uint32_t);
    const bool all_to_all = kinds_[c] == CollectiveKind::kAllToAll;
    const bool virtual_payload = config_.payload == PayloadMode::kVirtual;
    for (const RecvOp& recv : phase.recvs) {
      if (virtual_payload) {  // the chunk's checksum is all there is to check
        const Rank::Landed* l = r.landed.Find(static_cast<uint32_t>(recv.slot));
        (!l || l->ok ? r.bytes_ok : r.bytes_bad) += chunk_bytes;
      } else {
        const auto* src = reinterpret_cast<const uint32_t*>(r.landing.data() + LandingOffset(recv.slot));
        uint32_t* dst = (all_to_all ? r.output[c] : r.data[c]).data() + recv.chunk * words_[c];
        ApplyReceive(recv.reduce, src, dst, words_[c]);
      }
      r.landed.Erase(static_cast<uint32_t>(recv.slot));
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

EvControlResult Workload::SetEvDenied(int host, const std::string& peer_host, int ev, bool denied,
                                      mrc::Timestamp now) {
  EvControlResult out;
  const auto id = static_cast<uint16_t>(ev);
  for (Rank* r : hosts_[host]->ranks)
    for (auto& [peer, qps] : r->qp_to) {
      if (ranks_[peer]->host->name != peer_host) continue;
      for (mrc::Qp* qp : qps) {
        ++out.qps;
        if (!denied) qp->AllowEv(id, now);
        else if (!qp->DenyEv(id, now) && qp->SendsOn(id)) ++out.refused;
      }
    }
  return out;
}

int Workload::SetPortEnabled(int host, int plane, bool enabled, mrc::Timestamp now) {
  int touched = 0;
  for (Rank* r : hosts_[host]->ranks)
    for (auto& [peer, qps] : r->qp_to)
      for (mrc::Qp* qp : qps) {
        ++touched;
        enabled ? qp->EnablePlane(plane, now) : qp->DisablePlane(plane, now);
      }
  return touched;
}

void Workload::VisitEvs(int host, const std::function<void(const EvSnapshot&)>& visit) const {
  EvSnapshot e;
  for (const Rank* r : hosts_[host]->ranks)
    for (const auto& [peer, qps] : r->qp_to)
      for (size_t lane = 0; lane < qps.size(); ++lane) {
        e.qp = QpName(*r, peer, static_cast<int>(lane));
        for (const auto& s : qps[lane]->ListEvs()) {
          e.ev = s.id;
          e.plane = s.plane;
          e.state = mrc::ToString(s.state);
          e.tx_data = s.counters.tx_data;
          e.tx_retransmits = s.counters.tx_retransmits;
          e.losses = s.counters.losses;
          visit(e);
        }
      }
}

std::vector<nlohmann::json> Workload::DescribeUnfinished(int host) const {
  std::vector<nlohmann::json> out;
  for (const Rank* r : hosts_[host]->ranks) {
    if (!r->active) continue;
    nlohmann::json rank = {{"rank", r->id}, {"host", r->host->name}, {"computing", !r->compute_end.IsInfinite()},
                           {"sends_pending", r->sends_pending}};
    nlohmann::json waiting = nlohmann::json::array();
    if (r->collective < config_.collectives.size()) {
      rank["collective"] = ToString(kinds_[r->collective]);
      rank["phase"] = r->phase;
      rank["phases"] = plan_.phases(r->collective);
      for (const RecvOp& recv : plan_.At(r->id, r->collective, r->phase).recvs) {
        const Rank::Landed* l = r->landed.Find(static_cast<uint32_t>(recv.slot));
        if (!l || l->pieces < config_.qps_per_peer) waiting.push_back(recv.peer);
      }
    }
    rank["waiting_for"] = waiting;
    nlohmann::json qps = nlohmann::json::array();
    for (const auto& [peer, lanes] : r->qp_to)
      for (size_t lane = 0; lane < lanes.size(); ++lane) {
        const mrc::Qp& qp = *lanes[lane];
        if (qp.outstanding_work_requests() == 0) continue;
        std::map<std::string, int> evs;
        for (const auto& ev : qp.ListEvs()) ++evs[std::string(mrc::ToString(ev.state))];
        qps.push_back({{"qp", QpName(*r, peer, static_cast<int>(lane))}, {"state", mrc::ToString(qp.state())},
                       {"messages", qp.outstanding_work_requests()}, {"bytes_in_flight", qp.bytes_in_flight().count},
                       {"window", qp.congestion_window().count}, {"srtt_us", qp.srtt().nanoseconds() / 1000},
                       {"evs", evs}, {"sent", qp.stats().data_packets_sent},
                       {"retransmissions", qp.stats().retransmissions}, {"rto_fired", qp.stats().rto_fired},
                       {"acks_received", qp.stats().acks_received}, {"credits", qp.write_imm_credits()}});
      }
    rank["qps_with_work"] = qps;
    out.push_back(std::move(rank));
  }
  return out;
}

WatchdogReport MakeWatchdogReport(const std::string& job, double t_seconds, uint64_t step, int ranks_done,
                                  std::vector<nlohmann::json> unfinished) {
  std::sort(unfinished.begin(), unfinished.end(),
            [](const nlohmann::json& a, const nlohmann::json& b) { return a["rank"] < b["rank"]; });
  WatchdogReport report;
  nlohmann::json listed = nlohmann::json::array();
  for (size_t i = 0; i < unfinished.size() && i < 16; ++i) listed.push_back(unfinished[i]);
  report.event = {{"type", "watchdog"}, {"job", job}, {"t", t_seconds}, {"step", step}, {"ranks_done", ranks_done},
                  {"ranks_unfinished", unfinished.size()}, {"unfinished", listed}};
  size_t computing = 0;
  for (const auto& r : unfinished) computing += r["computing"].get<bool>();
  std::string& out = report.summary;
  if (computing) out = "; " + std::to_string(computing) + " still computing";
  std::unordered_map<int, const nlohmann::json*> by_rank;
  for (const auto& r : unfinished) by_rank[r["rank"].get<int>()] = &r;
  const auto state_of = [&](int rank) -> const nlohmann::json* {
    const auto it = by_rank.find(rank);
    return it == by_rank.end() ? nullptr : it->second;
  };
  // "rank A waits in ... for rank B" and what B's QP to A has outstanding. When B has nothing
  // outstanding to A, B is behind and waits itself: the wait is followed back (at most once
  // round) to the rank whose messages do not move, the one to look at.
  const auto wait = [&](const nlohmann::json& r, bool* follow) {
    const int rank = r["rank"], peer = r["waiting_for"][0];
    std::string text = "rank " + std::to_string(rank) + " waits in " + r.value("collective", "") + " phase " +
                       std::to_string(r.value("phase", 0) + 1) + "/" + std::to_string(r.value("phases", 0)) +
                       " for rank " + std::to_string(peer);
    const std::string to = "/" + std::to_string(rank);  // QpName: "hostA/2->hostB/3" (+ "#lane")
    const nlohmann::json* peer_state = state_of(peer);
    *follow = false;
    if (!peer_state) return text + " (which finished its step: all it sent was acknowledged)";
    bool found = false;
    for (const auto& qp : (*peer_state)["qps_with_work"]) {
      const std::string name = qp["qp"];
      if (!name.substr(0, name.find('#')).ends_with(to)) continue;
      found = true;
      text += ", whose QP to it has " + qp["messages"].dump() + " message(s) outstanding";
      if (qp.contains("window")) {  // our core's QPs; the kernel's show only what verbs tell
        text += ", " + qp["bytes_in_flight"].dump() + " B in flight (window " + qp["window"].dump() + " B), EVs " +
                qp["evs"].dump() + ", " + qp["retransmissions"].dump() + " retransmissions, " +
                qp["rto_fired"].dump() + " RTOs";
        if (qp["bytes_in_flight"] == 0 && qp.value("credits", 1) == 0)
          text += ", none started: it has no receive credit from rank " + std::to_string(rank);
      }
    }
    if (!found) {
      text += (*peer_state)["qps_with_work"].empty() ? " (which has no message outstanding)"
                                                     : " (which has no message outstanding to it)";
      *follow = !(*peer_state)["waiting_for"].empty();
    }
    return text;
  };
  for (const auto& r : unfinished) {
    if (r["waiting_for"].empty()) continue;
    bool follow = false;
    out += "; " + wait(r, &follow);
    const nlohmann::json* at = &r;
    std::string root;
    bool round = false;
    for (size_t hops = 0; follow && hops < unfinished.size(); ++hops) {
      at = state_of((*at)["waiting_for"][0]);
      if ((round = at && (*at)["rank"] == r["rank"])) break;
      root = wait(*at, &follow);
    }
    if (round)
      out += "; that wait goes round back to rank " + std::to_string(r["rank"].get<int>()) +
             ": no rank on it has a message outstanding to the next";
    else if (!root.empty())
      out += "; its wait goes back to: " + root;
    break;
  }
  return report;
}

}  // namespace mrclab::harness
