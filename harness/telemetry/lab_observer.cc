#include "harness/telemetry/lab_observer.h"

#include <sys/stat.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "emulator/netns/lab_state.h"
#include "emulator/netns/namespaces.h"
#include "emulator/netns/vty_client.h"
#include "emulator/wall_clock.h"
#include "harness/telemetry/metrics_exporter.h"

namespace mrclab::harness {
namespace {

namespace nx = emulator::netns;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kVtyTimeout{1000};

using emulator::UnixNow;

// The daemon answered, but not with what we can read: an observer_error, not "unreachable".
struct BadReply : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A kept connection to one FRR daemon's vty socket (nx::VtyConnection), in enable mode (bfdd
// installs its show commands only there): one connection serves every poll. Connection
// problems throw nx::VtyError; a kept connection that fails is retried once on a fresh one (the
// daemon may have restarted).
class VtySession {
 public:
  explicit VtySession(std::string path) : path_(std::move(path)) {}

  std::string Command(const std::string& command) {
    const bool kept = connection_ != nullptr;
    try {
      if (!kept) Connect();
      return Exchange(command);
    } catch (const nx::VtyError&) {
      connection_.reset();
      if (!kept) throw;
    }
    Connect();
    try {
      return Exchange(command);
    } catch (const nx::VtyError&) {
      connection_.reset();
      throw;
    }
  }

 private:
  void Connect() {
    connection_ = std::make_unique<nx::VtyConnection>(path_);
    try {
      Exchange("enable");
    } catch (...) {
      connection_.reset();
      throw;
    }
  }

  std::string Exchange(const std::string& command) {
    nx::VtyReply reply = connection_->Send(command, kVtyTimeout);
    if (reply.status != 0)
      throw BadReply("'" + command + "' failed (" + std::to_string(reply.status) + "): " + reply.output);
    return std::move(reply.output);
  }

  std::string path_;
  std::unique_ptr<nx::VtyConnection> connection_;
};

using PeerStates = std::map<std::string, std::string>;  // peer -> state

// `show bgp summary json`: {"ipv6Unicast": {"peers": {...}}, ...}, or {"peers": {...}} when
// asked for one address family.
PeerStates ParseBgpSummary(const std::string& text) {
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) throw BadReply("unreadable bgp summary: " + text.substr(0, 80));
  PeerStates states;
  auto take = [&](const json& af) {
    if (!af.is_object() || !af.contains("peers") || !af["peers"].is_object()) return;
    for (const auto& [peer, info] : af["peers"].items())
      if (info.is_object()) states.emplace(peer, info.value("state", "?"));
  };
  take(doc);
  for (const auto& [key, af] : doc.items()) take(af);
  return states;
}

// `show bfd peers json`: [{"peer": "fe80::..", "interface": "spine0", "status": "up"}, ...].
PeerStates ParseBfdPeers(const std::string& text, std::map<std::string, std::string>* addresses) {
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) throw BadReply("unreadable bfd peers: " + text.substr(0, 80));
  PeerStates states;
  for (const json& p : doc) {
    if (!p.is_object()) continue;
    const std::string address = p.value("peer", "");
    std::string name = p.value("interface", "");
    if (name.empty()) name = address;
    if (states.count(name)) name += "/" + address;  // two sessions on one interface
    states[name] = p.value("status", "?");
    (*addresses)[name] = address;
  }
  return states;
}

// The sessions of one daemon of one node, as of the last poll.
struct SessionTable {
  bool baseline = false;  // a poll has been recorded
  bool reachable = false;
  PeerStates states;      // kept while unreachable: the peers to report when it answers again
};

struct NodeWatch {
  const emulator::ResolvedNode* node = nullptr;
  std::unique_ptr<VtySession> bgpd, bfdd;
  SessionTable bgp, bfd;
  nx::Fd netns;
  unsigned long netns_inode = 0;
  std::unique_ptr<nx::RtnlSocket> rtnl;
  std::set<std::string> errors_reported;
};

}  // namespace

struct LabObserver::Impl {
  emulator::ResolvedLab lab;
  nx::LabPaths paths;
  ObserverOptions options;
  std::function<void(const json&)> on_event;
  DrillMetrics* metrics;
  std::vector<NodeWatch> nodes;  // observer thread only

  mutable std::mutex samples_mu;
  std::map<std::pair<int, std::string>, LinkSample> samples;
  std::atomic<uint64_t> polls{0};

  std::mutex run_mu;
  std::condition_variable run_cv;
  bool stop = false;
  std::thread thread;

  Impl(const emulator::ResolvedLab& l, ObserverOptions o, std::function<void(const json&)> f,
       DrillMetrics* m)
      : lab(l), paths(l.name), options(o), on_event(std::move(f)), metrics(m) {
    for (const emulator::ResolvedNode& node : lab.nodes) nodes.emplace_back().node = &node;
  }

  void Emit(json event) {
    if (!on_event) return;
    try {
      on_event(event);
    } catch (...) {
      // The callback's problem: the observer keeps polling.
    }
  }

  void ReportError(NodeWatch& w, const std::string& error) {
    if (w.errors_reported.insert(error).second)
      Emit({{"t", UnixNow()}, {"type", "observer_error"}, {"node", w.node->name}, {"error", error}});
  }

  // Compares one daemon's sessions with the last poll and emits the changes.
  void Update(const std::string& type, NodeWatch& w, SessionTable& table, bool reachable,
              const PeerStates& now, const std::map<std::string, std::string>& addresses) {
    if (table.baseline) {
      auto state_of = [](bool reach, const PeerStates& states, const std::string& peer) {
        if (!reach) return std::string("unreachable");
        auto it = states.find(peer);
        return it == states.end() ? std::string("absent") : it->second;
      };
      std::set<std::string> peers;
      for (const auto& [peer, state] : table.states) peers.insert(peer);
      for (const auto& [peer, state] : now) peers.insert(peer);
      const double t = UnixNow();
      for (const std::string& peer : peers) {
        const std::string from = state_of(table.reachable, table.states, peer);
        const std::string to = state_of(reachable, now, peer);
        if (from == to) continue;
        json event = {{"t", t}, {"type", type}, {"node", w.node->name}, {"peer", peer},
                      {"from", from}, {"to", to}};
        if (auto it = addresses.find(peer); it != addresses.end() && it->second != peer)
          event["address"] = it->second;
        Emit(event);
      }
      if (peers.empty() && table.reachable != reachable)
        Emit({{"t", t}, {"type", type}, {"node", w.node->name},
              {"from", table.reachable ? "reachable" : "unreachable"},
              {"to", reachable ? "reachable" : "unreachable"}});
    }
    table.baseline = true;
    table.reachable = reachable;
    if (reachable) table.states = now;
  }

  void PollDaemon(const std::string& type, NodeWatch& w, std::unique_ptr<VtySession>& session,
                  const std::string& daemon, SessionTable& table) {
    if (!session) session = std::make_unique<VtySession>(paths.NodeDir(w.node->name) + "/" + daemon + ".vty");
    PeerStates now;
    std::map<std::string, std::string> addresses;
    bool reachable = true;
    try {
      if (type == "bgp")
        now = ParseBgpSummary(session->Command("show bgp summary json"));
      else
        now = ParseBfdPeers(session->Command("show bfd peers json"), &addresses);
    } catch (const nx::VtyError&) {
      reachable = false;
    } catch (const std::exception& e) {
      ReportError(w, daemon + ": " + e.what());
      return;  // a reply we cannot read says nothing about the sessions
    }
    Update(type, w, table, reachable, now, addresses);
  }

  void PollLinks(NodeWatch& w) {
    const std::string path = nx::NetnsPath(w.node->netns);
    const unsigned long inode = nx::NamespaceInode(path);
    if (inode == 0) {
      w.rtnl.reset();
      w.netns = nx::Fd();
      ReportError(w, "namespace " + w.node->netns + " is gone");
      return;
    }
    if (!w.rtnl || inode != w.netns_inode) {  // first poll, or the namespace was made anew
      w.rtnl.reset();
      w.netns = nx::OpenNetns(w.node->netns);
      struct stat st;
      w.netns_inode = fstat(w.netns.get(), &st) == 0 ? st.st_ino : 0;
      w.rtnl = std::make_unique<nx::RtnlSocket>(w.netns.get());
    }
    const std::map<std::string, nx::LinkCounters> stats = w.rtnl->LinkStats();
    for (const emulator::ResolvedInterface& itf : w.node->interfaces) {
      auto it = stats.find(itf.name);
      if (it == stats.end()) {
        ReportError(w, "interface " + itf.name + " is missing");
        continue;
      }
      LinkSample sample{itf.link, w.node->name + ":" + itf.name, it->second};
      if (metrics)
        metrics->LinkCounters(std::to_string(itf.link), sample.end, sample.counters.rx_packets,
                              sample.counters.tx_packets, sample.counters.rx_dropped,
                              sample.counters.tx_dropped);
      std::lock_guard lock(samples_mu);
      samples[{itf.link, sample.end}] = std::move(sample);
    }
  }

  // False when Stop() cut it short.
  bool Poll() {
    const bool bgp_lab = lab.routing == emulator::Routing::kBgp;
    for (NodeWatch& w : nodes) {
      if (Stopping()) return false;  // a poll waiting on hung daemons must not hold up Stop()
      const bool is_switch = w.node->kind == emulator::NodeKind::kSwitch;
      try {
        if (bgp_lab && is_switch && options.bgp) PollDaemon("bgp", w, w.bgpd, "bgpd", w.bgp);
        if (bgp_lab && is_switch && options.bfd) PollDaemon("bfd", w, w.bfdd, "bfdd", w.bfd);
        if (options.links) PollLinks(w);
      } catch (const std::exception& e) {
        w.rtnl.reset();  // start afresh next poll
        ReportError(w, e.what());
      } catch (...) {
        ReportError(w, "unknown error");
      }
    }
    return true;
  }

  bool Stopping() {
    std::lock_guard lock(run_mu);
    return stop;
  }

  void Run() {
    auto next = Clock::now();
    for (;;) {
      if (!Poll()) return;
      ++polls;
      next += options.interval;
      const auto now = Clock::now();
      if (next < now) next = now;  // a slow poll: the next one starts right away
      std::unique_lock lock(run_mu);
      if (run_cv.wait_until(lock, next, [&] { return stop; })) return;
    }
  }
};

std::chrono::milliseconds PollInterval(const emulator::ResolvedLab& lab) {
  const std::chrono::milliseconds fastest{250};
  if (lab.routing != emulator::Routing::kBgp) return fastest;
  const auto needed = std::chrono::milliseconds(2 * 1000 * lab.Switches().size() / kMaxDaemonQueriesPerSecond);
  return std::max(fastest, needed);
}

std::map<std::string, std::string> BfdPeerStates(const std::string& bfdd_vty_socket) {
  VtySession session(bfdd_vty_socket);
  std::map<std::string, std::string> addresses;
  return ParseBfdPeers(session.Command("show bfd peers json"), &addresses);
}

LabObserver::LabObserver(const emulator::ResolvedLab& lab, ObserverOptions options,
                         std::function<void(const nlohmann::json&)> on_event,
                         DrillMetrics* metrics)
    : impl_(std::make_unique<Impl>(lab, options, std::move(on_event), metrics)) {}

LabObserver::~LabObserver() { Stop(); }

void LabObserver::Start() {
  if (impl_->thread.joinable()) return;
  {
    std::lock_guard lock(impl_->run_mu);
    impl_->stop = false;
  }
  impl_->thread = std::thread([this] { impl_->Run(); });
}

void LabObserver::Stop() {
  if (!impl_->thread.joinable()) return;
  {
    std::lock_guard lock(impl_->run_mu);
    impl_->stop = true;
  }
  impl_->run_cv.notify_all();
  impl_->thread.join();
}

std::vector<LabObserver::LinkSample> LabObserver::LastLinkSamples() const {
  std::lock_guard lock(impl_->samples_mu);
  std::vector<LinkSample> out;
  out.reserve(impl_->samples.size());
  for (const auto& [key, sample] : impl_->samples) out.push_back(sample);
  return out;
}

uint64_t LabObserver::polls() const { return impl_->polls.load(); }

}  // namespace mrclab::harness
