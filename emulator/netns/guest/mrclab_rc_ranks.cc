// mrclab-rc-ranks: one VM host's ranks of a training job over the kernel's RC (libibverbs on
// rdma_rxe, connected with rdma_cm over the lab's IPv6). The harness (harness/job/kernel_rc_job.cc)
// starts it through the guest agent's attach (stdin and stdout are the agent port) and drives it
// one JSON line at a time:
//
//   ◄ {"type": "ready", "pid": P}   (the session ends it by PID: vm_guest_agent.h)
//   ► {"op": "open", plan}          listeners bound        ◄ {"type": "listening"}
//   ► {"op": "connect"}             each QP's lower rank connects, the other accepts
//                                                          ◄ {"type": "connected", "qps": N}
//   ► {"op": "step", "step": S}     compute, then every collective's phases; per rank:
//        ◄ {"type": "rank_done", "rank": R, "step": S, "started": [..], "finished": [..],
//           "bytes_ok": B, "bytes_bad": B, "retries": N}   (seconds since the step op, per collective)
//        ◄ {"type": "qp_error", "qp": NAME, "status": "...", "step": S, "after_s": X}  (once per QP)
//   ► {"op": "describe"}            ◄ {"type": "unfinished", "ranks": [...]}  (the watchdog's view)
//   end of file on stdin: exit.    Anything wrong: ◄ {"type": "error", "message": "..."}, exit 1.
//
// The plan (computed by the harness from the job's collective plan): per rank, per collective,
// its phases as sends [peer, remote slot] and receives [peer, slot]; the QPs (rank, peer, lane,
// local and remote address, which side connects); chunk pieces per lane. A phase ends when its
// writes are acknowledged and its receives have landed. Every write carries (step, collective,
// phase) in its immediate value and a pattern of (seed, step, collective, phase, sender,
// receiver); every byte that lands is checked against it.
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "emulator/netns/guest/port_output.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr uint32_t kMagic = 0x6d72636b;  // "mrck"
constexpr int kRecvDepth = 64;           // receives kept posted per QP
constexpr uint64_t kSendTag = 1ull << 32, kRecvTag = 2ull << 32;

struct PrivateData {  // in the connect request and its accept
  uint32_t magic;
  int32_t from_rank, to_rank, lane;
  uint64_t va;
  uint32_t rkey;
} __attribute__((packed));

mrclab::guest::PortOutput out;

[[noreturn]] void Fail(const std::string& what) { out.Fail(what); }

uint32_t PatternWord(uint64_t key, uint64_t i) {
  uint64_t x = key + (i + 1) * 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return static_cast<uint32_t>(x ^ (x >> 31));
}

struct Device {
  ibv_pd* pd = nullptr;
  ibv_comp_channel* channel = nullptr;
  ibv_cq* cq = nullptr;
};

struct Rank;

struct Qp {
  int rank = 0, peer = 0, lane = 0;
  Rank* owner = nullptr;
  std::string local, remote, name;
  bool active = false, established = false, failed = false;
  rdma_cm_id* id = nullptr;
  uint64_t remote_va = 0;
  uint32_t remote_rkey = 0;
  int outstanding = 0;  // writes not completed
};

struct PhasePlan {
  std::vector<std::pair<int, int>> sends, recvs;  // [peer, remote slot], [peer, slot]
};

struct Rank {
  int id = 0, index = 0;
  std::vector<std::vector<PhasePlan>> phases;  // [collective][phase]
  std::vector<uint8_t> landing, send;
  std::map<ibv_pd*, std::pair<ibv_mr*, ibv_mr*>> mrs;  // landing, send
  // The step.
  bool computing = false, done = true;
  Clock::time_point compute_end;
  size_t collective = 0, phase = 0;
  int sends_pending = 0;
  std::map<std::tuple<size_t, size_t, int>, int> arrived;  // (collective, phase, peer) -> pieces
  std::vector<double> started, finished;
  uint64_t bytes_ok = 0, bytes_bad = 0;
};

struct Collective {
  std::string kind;
  std::vector<std::pair<uint64_t, uint64_t>> pieces;  // per lane: offset, bytes (0: nothing on that lane)
  int nonempty = 0;
};

class Ranks {
 public:
  void Open(const json& plan) {
    seed_ = plan.at("seed");
    compute_ = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(plan.at("compute_s").get<double>()));
    ack_timeout_ = plan.at("ack_timeout");
    retry_count_ = plan.at("retry_count");
    port_ = plan.at("port");
    slot_bytes_ = plan.at("slot_bytes");
    const uint64_t slots = plan.at("slots");
    for (const json& c : plan.at("collectives")) {
      Collective col{c.at("kind"), {}, 0};
      for (const json& p : c.at("pieces")) {
        col.pieces.emplace_back(p[0], p[1]);
        col.nonempty += p[1].get<uint64_t>() > 0;
      }
      collectives_.push_back(col);
    }
    for (const json& r : plan.at("ranks")) {
      auto rank = std::make_unique<Rank>();
      rank->id = r.at("rank");
      rank->index = static_cast<int>(ranks_.size());
      size_t most_sends = 1;
      for (const json& c : r.at("phases")) {
        rank->phases.emplace_back();
        for (const json& p : c) {
          PhasePlan ph;
          for (const json& s : p.at("sends")) ph.sends.emplace_back(s[0], s[1]);
          for (const json& s : p.at("recvs")) ph.recvs.emplace_back(s[0], s[1]);
          most_sends = std::max(most_sends, ph.sends.size());
          rank->phases.back().push_back(ph);
        }
      }
      rank->landing.assign(slots * slot_bytes_, 0);
      rank->send.assign(most_sends * slot_bytes_, 0);
      rank_of_[rank->id] = rank.get();
      ranks_.push_back(std::move(rank));
    }
    for (const json& q : plan.at("qps")) {
      auto qp = std::make_unique<Qp>();
      qp->rank = q.at("rank");
      qp->peer = q.at("peer");
      qp->lane = q.at("lane");
      qp->local = q.at("local");
      qp->remote = q.at("remote");
      qp->active = q.at("active");
      qp->name = q.at("name");
      if (!rank_of_.count(qp->rank)) Fail("QP " + qp->name + " of a rank this host does not run");
      qp->owner = rank_of_[qp->rank];
      qp_of_[{qp->rank, qp->peer, qp->lane}] = qp.get();
      qps_.push_back(std::move(qp));
    }
    channel_ = rdma_create_event_channel();
    if (!channel_) Fail(std::string("rdma_create_event_channel: ") + std::strerror(errno));
    fcntl(channel_->fd, F_SETFL, fcntl(channel_->fd, F_GETFL) | O_NONBLOCK);
    std::map<std::string, bool> listening;
    for (const auto& qp : qps_) {
      if (qp->active || listening[qp->local]) continue;
      listening[qp->local] = true;
      rdma_cm_id* listener = nullptr;
      sockaddr_in6 sa = Address(qp->local, port_);
      if (rdma_create_id(channel_, &listener, nullptr, RDMA_PS_TCP) != 0 ||
          rdma_bind_addr(listener, reinterpret_cast<sockaddr*>(&sa)) != 0 || rdma_listen(listener, 64) != 0)
        Fail("listen on [" + qp->local + "]:" + std::to_string(port_) + ": " + std::strerror(errno));
    }
    out.Line({{"type", "listening"}});
  }

  void Connect() {
    for (const auto& qp : qps_) {
      if (!qp->active) continue;
      sockaddr_in6 src = Address(qp->local, 0), dst = Address(qp->remote, port_);
      if (rdma_create_id(channel_, &qp->id, qp.get(), RDMA_PS_TCP) != 0 ||
          rdma_resolve_addr(qp->id, reinterpret_cast<sockaddr*>(&src), reinterpret_cast<sockaddr*>(&dst), 5000) != 0)
        Fail("QP " + qp->name + ": rdma_resolve_addr: " + std::strerror(errno));
    }
    connecting_ = true;
    CheckConnected();
  }

  void Step(uint64_t step) {
    step_ = step;
    step_start_ = Clock::now();
    retries_at_start_ = Retries();
    for (auto& r : ranks_) {
      r->computing = true;
      r->done = false;
      r->compute_end = step_start_ + compute_;
      r->collective = r->phase = 0;
      r->sends_pending = 0;
      r->arrived.clear();
      r->started.assign(collectives_.size(), 0);
      r->finished.assign(collectives_.size(), 0);
      r->bytes_ok = r->bytes_bad = 0;
    }
    first_report_ = true;
    for (auto& r : ranks_) Advance(*r);
  }

  void Describe() {
    json ranks = json::array();
    for (const auto& r : ranks_) {
      if (r->done) continue;
      json rank = {{"rank", r->id}, {"computing", r->computing}, {"sends_pending", r->sends_pending}};
      json waiting = json::array(), qps = json::array();
      if (!r->computing && r->collective < collectives_.size()) {
        rank["collective"] = collectives_[r->collective].kind;
        rank["phase"] = r->phase;
        rank["phases"] = r->phases[r->collective].size();
        for (const auto& [peer, slot] : r->phases[r->collective][r->phase].recvs)
          if (Arrived(*r, peer) < collectives_[r->collective].nonempty) waiting.push_back(peer);
      }
      for (const auto& qp : qps_)
        if (qp->owner == r.get() && qp->outstanding > 0)
          qps.push_back({{"qp", qp->name}, {"messages", qp->outstanding}, {"failed", qp->failed}});
      rank["waiting_for"] = waiting;
      rank["qps_with_work"] = qps;
      ranks.push_back(rank);
    }
    out.Line({{"type", "unfinished"}, {"ranks", ranks}});
  }

  // poll() set: the CM channel, every CQ's channel; the rest is the caller's.
  void AddFds(std::vector<pollfd>& fds) const {
    if (channel_) fds.push_back({channel_->fd, POLLIN, 0});
    for (const auto& [ctx, d] : devices_) fds.push_back({d.channel->fd, POLLIN, 0});
  }

  int TimeoutMs() const {
    int ms = 100;
    const auto now = Clock::now();
    for (const auto& r : ranks_)
      if (!r->done && r->computing)
        ms = std::min<int>(ms, std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(
                                                        r->compute_end - now).count() + 1));
    return ms;
  }

  void Work() {
    if (channel_) CmEvents();
    for (auto& [ctx, d] : devices_) Completions(ctx, d);
    for (auto& r : ranks_) Advance(*r);
  }

 private:
  static sockaddr_in6 Address(const std::string& text, int port) {
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(port);
    if (inet_pton(AF_INET6, text.c_str(), &sa.sin6_addr) != 1) Fail("bad IPv6 address '" + text + "'");
    return sa;
  }

  Device& DeviceOf(ibv_context* ctx) {
    auto it = devices_.find(ctx);
    if (it != devices_.end()) return it->second;
    Device d;
    d.pd = ibv_alloc_pd(ctx);
    d.channel = d.pd ? ibv_create_comp_channel(ctx) : nullptr;
    d.cq = d.channel ? ibv_create_cq(ctx, 4096, nullptr, d.channel, 0) : nullptr;
    if (!d.cq || ibv_req_notify_cq(d.cq, 0) != 0) Fail(std::string("PD/CQ on an rxe device: ") + std::strerror(errno));
    fcntl(d.channel->fd, F_SETFL, fcntl(d.channel->fd, F_GETFL) | O_NONBLOCK);
    return devices_[ctx] = d;
  }

  std::pair<ibv_mr*, ibv_mr*> MrsOf(Rank& r, ibv_pd* pd) {
    auto it = r.mrs.find(pd);
    if (it != r.mrs.end()) return it->second;
    ibv_mr* landing = ibv_reg_mr(pd, r.landing.data(), r.landing.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    ibv_mr* send = ibv_reg_mr(pd, r.send.data(), r.send.size(), IBV_ACCESS_LOCAL_WRITE);
    if (!landing || !send) Fail(std::string("ibv_reg_mr: ") + std::strerror(errno));
    return r.mrs[pd] = {landing, send};
  }

  // The QP on its cm id, receives posted; what this side tells the other in private data.
  PrivateData CreateQp(Qp& qp) {
    uint8_t timeout = static_cast<uint8_t>(ack_timeout_);
    if (rdma_set_option(qp.id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof timeout) != 0)
      Fail("QP " + qp.name + ": rdma_set_option ACK_TIMEOUT: " + std::strerror(errno));
    Device& d = DeviceOf(qp.id->verbs);
    ibv_qp_init_attr qa{};
    qa.send_cq = qa.recv_cq = d.cq;
    qa.qp_type = IBV_QPT_RC;
    qa.cap.max_send_wr = 256;
    qa.cap.max_recv_wr = kRecvDepth + 1;
    qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
    if (rdma_create_qp(qp.id, d.pd, &qa) != 0) Fail("QP " + qp.name + ": rdma_create_qp: " + std::strerror(errno));
    by_qpn_[{qp.id->verbs, qp.id->qp->qp_num}] = &qp;
    for (int i = 0; i < kRecvDepth; ++i) PostRecv(qp);
    ibv_mr* landing = MrsOf(*qp.owner, d.pd).first;
    return {kMagic, qp.rank, qp.peer, qp.lane, reinterpret_cast<uint64_t>(qp.owner->landing.data()), landing->rkey};
  }

  void PostRecv(Qp& qp) {
    ibv_recv_wr wr{}, *bad = nullptr;  // a write with immediate consumes a receive without data
    wr.wr_id = kRecvTag;  // completions find their QP by device and qp_num
    if (ibv_post_recv(qp.id->qp, &wr, &bad) != 0 && !qp.failed)
      Fail("QP " + qp.name + ": ibv_post_recv: " + std::strerror(errno));
  }

  rdma_conn_param ConnParam(const PrivateData& pd) const {
    rdma_conn_param cp{};
    cp.private_data = &pd;
    cp.private_data_len = sizeof pd;
    cp.responder_resources = cp.initiator_depth = 1;
    cp.retry_count = static_cast<uint8_t>(retry_count_);
    cp.rnr_retry_count = 7;
    return cp;
  }

  void CmEvents() {
    rdma_cm_event* e = nullptr;
    while (rdma_get_cm_event(channel_, &e) == 0) {
      const rdma_cm_event_type type = e->event;
      Qp* qp = static_cast<Qp*>(e->id->context);
      if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
        PrivateData theirs{};
        if (e->param.conn.private_data_len >= sizeof theirs) std::memcpy(&theirs, e->param.conn.private_data, sizeof theirs);
        auto it = qp_of_.find({int{theirs.to_rank}, int{theirs.from_rank}, int{theirs.lane}});
        if (theirs.magic != kMagic || it == qp_of_.end() || it->second->active || it->second->id) {
          rdma_reject(e->id, nullptr, 0);
        } else {
          qp = it->second;
          qp->id = e->id;
          e->id->context = qp;
          qp->remote_va = theirs.va;
          qp->remote_rkey = theirs.rkey;
          const PrivateData mine = CreateQp(*qp);
          rdma_conn_param cp = ConnParam(mine);
          if (rdma_accept(e->id, &cp) != 0) Fail("QP " + qp->name + ": rdma_accept: " + std::strerror(errno));
        }
      } else if (qp && type == RDMA_CM_EVENT_ADDR_RESOLVED) {
        if (rdma_resolve_route(qp->id, 5000) != 0) Fail("QP " + qp->name + ": rdma_resolve_route: " + std::strerror(errno));
      } else if (qp && type == RDMA_CM_EVENT_ROUTE_RESOLVED) {
        const PrivateData mine = CreateQp(*qp);
        rdma_conn_param cp = ConnParam(mine);
        if (rdma_connect(qp->id, &cp) != 0) Fail("QP " + qp->name + ": rdma_connect: " + std::strerror(errno));
      } else if (qp && type == RDMA_CM_EVENT_ESTABLISHED) {
        if (qp->active) {
          PrivateData theirs{};
          if (e->param.conn.private_data_len >= sizeof theirs)
            std::memcpy(&theirs, e->param.conn.private_data, sizeof theirs);
          if (theirs.magic != kMagic) Fail("QP " + qp->name + ": the accept carried no landing region");
          qp->remote_va = theirs.va;
          qp->remote_rkey = theirs.rkey;
        }
        qp->established = true;
      } else if (qp && type == RDMA_CM_EVENT_DISCONNECTED) {
        qp->established = false;  // the peer's process went away
      } else if (qp && connecting_) {
        Fail("QP " + qp->name + ": " + rdma_event_str(type) + " (status " + std::to_string(e->status) + ")");
      }
      rdma_ack_cm_event(e);
    }
    if (connecting_) CheckConnected();
  }

  void CheckConnected() {
    for (const auto& qp : qps_)
      if (!qp->established) return;
    connecting_ = false;
    out.Line({{"type", "connected"}, {"qps", qps_.size()}});
  }

  void Completions(ibv_context* ctx, Device& d) {
    ibv_cq* cq = nullptr;
    void* cq_context = nullptr;
    if (ibv_get_cq_event(d.channel, &cq, &cq_context) == 0) {
      ibv_ack_cq_events(cq, 1);
      ibv_req_notify_cq(d.cq, 0);
    }
    ibv_wc wc[64];
    for (int n; (n = ibv_poll_cq(d.cq, 64, wc)) > 0;)
      for (int i = 0; i < n; ++i) OnCompletion(ctx, wc[i]);
  }

  void OnCompletion(ibv_context* device, const ibv_wc& wc) {
    auto it = by_qpn_.find({device, wc.qp_num});
    if (it == by_qpn_.end()) return;
    Qp& qp = *it->second;
    Rank& r = *qp.owner;
    const bool send = (wc.wr_id & ~0xffffffffull) == kSendTag;
    if (send) {
      --qp.outstanding;
      --r.sends_pending;
    }
    if (wc.status != IBV_WC_SUCCESS) {
      if (!qp.failed)
        out.Line({{"type", "qp_error"}, {"qp", qp.name}, {"status", ibv_wc_status_str(wc.status)}, {"step", step_},
                  {"after_s", Since(step_start_)}});
      qp.failed = true;
      return;
    }
    if (send) return;
    PostRecv(qp);
    const uint32_t imm = ntohl(wc.imm_data);
    const size_t c = (imm >> 16) & 0xff, k = imm & 0xffff;
    int slot = -1;
    if (((imm >> 24) & 0xff) == (step_ & 0xff) && c < r.phases.size() && k < r.phases[c].size())
      for (const auto& [peer, s] : r.phases[c][k].recvs)
        if (peer == qp.peer) slot = s;
    if (slot < 0 || qp.lane >= static_cast<int>(collectives_[c].pieces.size())) {
      r.bytes_bad += wc.byte_len;
      return;
    }
    const auto [offset, bytes] = collectives_[c].pieces[qp.lane];
    const uint64_t key = Key(step_, c, k, qp.peer, r.id);
    const uint32_t* words = reinterpret_cast<const uint32_t*>(r.landing.data() + slot * slot_bytes_ + offset);
    bool ok = wc.byte_len == bytes;
    for (uint64_t w = 0; ok && w < bytes / 4; ++w) ok = words[w] == PatternWord(key, offset / 4 + w);
    (ok ? r.bytes_ok : r.bytes_bad) += bytes;
    ++r.arrived[{c, k, qp.peer}];
  }

  uint64_t Key(uint64_t step, size_t c, size_t k, int from, int to) const {
    return seed_ * 0x100000001B3ull ^ (step << 40) ^ (uint64_t{c} << 32) ^ (uint64_t{k} << 16) ^
           (static_cast<uint64_t>(from) << 48) ^ static_cast<uint64_t>(to) * 0x9E3779B1ull;
  }

  int Arrived(const Rank& r, int peer) const {
    auto it = r.arrived.find({r.collective, r.phase, peer});
    return it == r.arrived.end() ? 0 : it->second;
  }

  void Advance(Rank& r) {
    while (!r.done) {
      if (r.computing) {
        if (Clock::now() < r.compute_end) return;
        r.computing = false;
        StartPhase(r);
        continue;
      }
      if (r.sends_pending > 0) return;
      for (const auto& [peer, slot] : r.phases[r.collective][r.phase].recvs)
        if (Arrived(r, peer) < collectives_[r.collective].nonempty) return;
      if (++r.phase == r.phases[r.collective].size()) {
        r.finished[r.collective] = Since(step_start_);
        r.phase = 0;
        if (++r.collective == collectives_.size()) {
          Report(r);
          return;
        }
      }
      StartPhase(r);
    }
  }

  void StartPhase(Rank& r) {
    const size_t c = r.collective, k = r.phase;
    if (k == 0) r.started[c] = Since(step_start_);
    const auto& sends = r.phases[c][k].sends;
    for (size_t i = 0; i < sends.size(); ++i) {
      const auto [peer, remote_slot] = sends[i];
      const uint64_t key = Key(step_, c, k, r.id, peer);
      for (size_t lane = 0; lane < collectives_[c].pieces.size(); ++lane) {
        const auto [offset, bytes] = collectives_[c].pieces[lane];
        if (bytes == 0) continue;
        auto it = qp_of_.find({r.id, peer, static_cast<int>(lane)});
        if (it == qp_of_.end()) Fail("rank " + std::to_string(r.id) + " has no QP to rank " + std::to_string(peer));
        Qp& qp = *it->second;
        uint8_t* data = r.send.data() + i * slot_bytes_ + offset;
        uint32_t* words = reinterpret_cast<uint32_t*>(data);
        for (uint64_t w = 0; w < bytes / 4; ++w) words[w] = PatternWord(key, offset / 4 + w);
        ibv_sge sge{reinterpret_cast<uint64_t>(data), static_cast<uint32_t>(bytes),
                    MrsOf(r, qp.id->pd).second->lkey};
        ibv_send_wr wr{}, *bad = nullptr;
        wr.wr_id = kSendTag | static_cast<uint32_t>(r.index);
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.imm_data = htonl(static_cast<uint32_t>(((step_ & 0xff) << 24) | (c << 16) | k));
        wr.wr.rdma.remote_addr = qp.remote_va + remote_slot * slot_bytes_ + offset;
        wr.wr.rdma.rkey = qp.remote_rkey;
        if (qp.failed) continue;  // its error was reported; the job ends
        if (ibv_post_send(qp.id->qp, &wr, &bad) != 0) Fail("QP " + qp.name + ": ibv_post_send: " + std::strerror(errno));
        ++qp.outstanding;
        ++r.sends_pending;
      }
    }
  }

  void Report(Rank& r) {
    r.done = true;
    // The devices' retries (rxe's completer_retry_err, every QP of this VM) go with its first report.
    const uint64_t retries = first_report_ ? Retries() - retries_at_start_ : 0;
    first_report_ = false;
    out.Line({{"type", "rank_done"}, {"rank", r.id}, {"step", step_}, {"started", r.started}, {"finished", r.finished},
              {"bytes_ok", r.bytes_ok}, {"bytes_bad", r.bytes_bad}, {"retries", retries}});
  }

  static uint64_t Retries() {
    uint64_t sum = 0;
    DIR* dir = opendir("/sys/class/infiniband");
    while (dirent* e = dir ? readdir(dir) : nullptr) {
      std::ifstream in(std::string("/sys/class/infiniband/") + e->d_name + "/ports/1/hw_counters/completer_retry_err");
      uint64_t v = 0;
      if (in >> v) sum += v;
    }
    if (dir) closedir(dir);
    return sum;
  }

  double Since(Clock::time_point t) const { return std::chrono::duration<double>(Clock::now() - t).count(); }

  uint64_t seed_ = 1, slot_bytes_ = 0, step_ = 0, retries_at_start_ = 0;
  Clock::duration compute_{};
  int ack_timeout_ = 14, retry_count_ = 7, port_ = 18600;
  bool connecting_ = false, first_report_ = true;
  Clock::time_point step_start_;
  std::vector<Collective> collectives_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  std::map<int, Rank*> rank_of_;
  std::vector<std::unique_ptr<Qp>> qps_;
  std::map<std::tuple<int, int, int>, Qp*> qp_of_;  // (rank, peer, lane)
  std::map<std::pair<ibv_context*, uint32_t>, Qp*> by_qpn_;  // QPNs are per device
  rdma_event_channel* channel_ = nullptr;
  std::map<ibv_context*, Device> devices_;
};

}  // namespace

int main() {
  Ranks ranks;
  std::string in;
  out.Line({{"type", "ready"}, {"pid", getpid()}});
  for (;;) {
    std::vector<pollfd> fds = {{0, POLLIN, 0}, {1, static_cast<short>(out.Waiting() ? POLLOUT : 0), 0}};
    ranks.AddFds(fds);
    poll(fds.data(), fds.size(), ranks.TimeoutMs());
    out.Flush();
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      char chunk[65536];
      const ssize_t n = read(0, chunk, sizeof chunk);
      if (n == 0) return 0;  // the host went away: the job is over
      if (n > 0) in.append(chunk, n);
    }
    for (size_t nl; (nl = in.find('\n')) != std::string::npos;) {
      const json request = json::parse(in.substr(0, nl), nullptr, false);
      in.erase(0, nl + 1);
      const std::string op = request.is_object() ? request.value("op", "") : "";
      try {
        if (op == "open") ranks.Open(request);
        else if (op == "connect") ranks.Connect();
        else if (op == "step") ranks.Step(request.at("step"));
        else if (op == "describe") ranks.Describe();
        else Fail("unknown request (op " + op + ")");
      } catch (const json::exception& e) {
        Fail("bad " + op + " request: " + e.what());
      }
    }
    ranks.Work();
  }
}
