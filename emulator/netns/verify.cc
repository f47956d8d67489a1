#include "emulator/netns/verify.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "emulator/netns/namespaces.h"
#include "emulator/netns/netlink.h"
#include "emulator/netns/vty_client.h"

namespace mrclab::emulator::netns {
namespace {

constexpr uint16_t kProbePort = 47999;
constexpr size_t kProbeBurst = 128;
constexpr size_t kProbesPerRound = 4096;
constexpr char kMagic[8] = {'M', 'R', 'C', 'L', 'A', 'B', 'P', 'R'};
#ifndef UDP_NO_CHECK6_TX
#define UDP_NO_CHECK6_TX 101
#define UDP_NO_CHECK6_RX 102
#endif

struct Probe {
  char magic[8];
  uint32_t kind;  // 0 = reachability, 1 = spine path
  uint32_t id;    // pair or path index
};

sockaddr_in6 SockAddr(const std::string& address, uint16_t port) {
  sockaddr_in6 sa{};
  sa.sin6_family = AF_INET6;
  sa.sin6_port = htons(port);
  inet_pton(AF_INET6, address.c_str(), &sa.sin6_addr);
  return sa;
}

// A UDP socket inside a host's namespace, bound to [::]:kProbePort, sending and accepting a
// zero UDP checksum (uSID shifts change the destination after the checksum was computed).
Fd OpenProbeSocket(const std::string& netns_name) {
  Fd ns = OpenNetns(netns_name);
  int fd = -1;
  InNetns(ns.get(), [&] { fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0); });
  if (fd < 0) throw std::runtime_error("probe socket in " + netns_name + ": " + std::strerror(errno));
  Fd sock(fd);
  int one = 1;
  setsockopt(fd, SOL_UDP, UDP_NO_CHECK6_TX, &one, sizeof(one));
  setsockopt(fd, SOL_UDP, UDP_NO_CHECK6_RX, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  int rcvbuf = 4 * 1024 * 1024;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
  sockaddr_in6 any = SockAddr("::", kProbePort);
  if (bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof(any)) != 0)
    throw std::runtime_error("bind probe socket in " + netns_name + ": " + std::strerror(errno));
  return sock;
}

}  // namespace

CheckStatus& CheckStatus::operator+=(const CheckStatus& other) {
  done += other.done;
  total += other.total;
  for (const std::string& m : other.missing)
    if (missing.size() < 4) missing.push_back(m);
  return *this;
}

std::string CheckStatus::Summary(const std::string& what) const {
  std::ostringstream out;
  out << what << " " << done << "/" << total;
  if (!missing.empty()) {
    out << " (not yet: ";
    for (size_t i = 0; i < missing.size(); ++i) out << (i ? ", " : "") << missing[i];
    if (total - done > static_cast<int>(missing.size())) out << ", ...";
    out << ")";
  }
  return out.str();
}

std::map<std::string, std::string> BgpPeerStates(const std::string& bgpd_vty_socket) {
  std::map<std::string, std::string> states;
  VtyReply reply = VtyCommand(bgpd_vty_socket, "show bgp ipv6 unicast summary json");
  auto doc = nlohmann::json::parse(reply.output, nullptr, false);
  if (doc.is_discarded() || !doc.contains("peers")) return states;
  for (auto& [peer, info] : doc["peers"].items()) states[peer] = info.value("state", "?");
  return states;
}

struct LabVerifier::Impl {
  const ResolvedLab& lab;
  const LabPaths& paths;
  std::vector<const ResolvedNode*> hosts;
  std::map<std::string, size_t> host_index;
  std::vector<Fd> sockets;  // one per host

  struct Pair {
    size_t src, dst;
    int plane;
    std::string address;
  };
  std::vector<Pair> pairs;
  std::vector<bool> pair_seen;
  size_t next_pair = 0;
  size_t pairs_seen = 0;

  std::vector<UsidPath> paths_to_prove;
  std::vector<bool> path_arrived, path_proven;
  std::vector<uint64_t> counter_before;
  std::vector<bool> counter_read;
  std::map<std::string, std::unique_ptr<RtnlSocket>> spine_sockets;

  Impl(const ResolvedLab& l, const LabPaths& p) : lab(l), paths(p) {
    // VM hosts are checked through their agents (vm_hosts.h): their ports are not in this kernel.
    for (const ResolvedNode* h : lab.Hosts())
      if (!h->vm) hosts.push_back(h);
    for (size_t i = 0; i < hosts.size(); ++i) host_index[hosts[i]->name] = i;
    for (size_t a = 0; a < hosts.size(); ++a)
      for (size_t b = 0; b < hosts.size(); ++b) {
        if (a == b) continue;
        for (const auto& [pa, pb] : SharedPorts(*hosts[a], *hosts[b])) pairs.push_back({a, b, pa->plane, pb->address});
      }
    pair_seen.assign(pairs.size(), false);
    for (const UsidPath& path : lab.SpineProofPaths())
      if (host_index.count(path.src_host) && host_index.count(path.dst_host)) paths_to_prove.push_back(path);
    path_arrived.assign(paths_to_prove.size(), false);
    path_proven.assign(paths_to_prove.size(), false);
    counter_before.assign(paths_to_prove.size(), 0);
    counter_read.assign(paths_to_prove.size(), false);
  }

  void EnsureSockets() {
    if (!sockets.empty()) return;
    for (const ResolvedNode* h : hosts) sockets.push_back(OpenProbeSocket(h->netns));
  }

  void Send(size_t src, const std::string& address, uint32_t kind, uint32_t id) {
    Probe p{};
    std::memcpy(p.magic, kMagic, sizeof(kMagic));
    p.kind = kind;
    p.id = id;
    sockaddr_in6 to = SockAddr(address, kProbePort);
    // Errors (no route yet) are expected while the fabric converges: the next round retries.
    sendto(sockets[src].get(), &p, sizeof(p), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
  }

  // Collects probes for up to `wait`, stopping early once `done()` holds.
  void Receive(std::chrono::milliseconds wait, const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    std::vector<pollfd> pfds;
    for (const Fd& s : sockets) pfds.push_back({s.get(), POLLIN, 0});
    while (!done()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      if (poll(pfds.data(), pfds.size(), static_cast<int>(left.count())) <= 0) continue;
      for (size_t i = 0; i < pfds.size(); ++i) {
        if (!(pfds[i].revents & POLLIN)) continue;
        Probe p;
        ssize_t n;
        while ((n = recv(pfds[i].fd, &p, sizeof(p), 0)) == sizeof(p)) {
          if (std::memcmp(p.magic, kMagic, sizeof(kMagic)) != 0) continue;
          if (p.kind == 0 && p.id < pairs.size() && pairs[p.id].dst == i && !pair_seen[p.id]) {
            pair_seen[p.id] = true;
            ++pairs_seen;
          }
          if (p.kind == 1 && p.id < paths_to_prove.size() &&
              host_index[paths_to_prove[p.id].dst_host] == i)
            path_arrived[p.id] = true;
        }
      }
    }
  }

  RtnlSocket& SpineSocket(const std::string& spine) {
    auto& sock = spine_sockets[spine];
    if (!sock) {
      Fd ns = OpenNetns(lab.FindNode(spine)->netns);
      sock = std::make_unique<RtnlSocket>(ns.get());
    }
    return *sock;
  }

  uint64_t SpineCounter(const std::string& spine) {
    const ResolvedNode* node = lab.FindNode(spine);
    return SpineSocket(spine).UsidCounters("fcbb:0:" + UsidHex(node->usid) + "::/48").packets;
  }
};

LabVerifier::LabVerifier(const ResolvedLab& lab, const LabPaths& paths)
    : impl_(std::make_unique<Impl>(lab, paths)) {}
LabVerifier::~LabVerifier() = default;

CheckStatus LabVerifier::CheckBgp() {
  CheckStatus status;
  status.total = impl_->lab.ExpectedBgpSessions();
  for (const ResolvedNode* sw : impl_->lab.Switches()) {
    std::map<std::string, std::string> states;
    try {
      states = BgpPeerStates(impl_->paths.NodeDir(sw->name) + "/bgpd.vty");
    } catch (const VtyError&) {
      // bgpd not listening yet: all its sessions count as missing.
    }
    for (const ResolvedInterface& itf : sw->interfaces) {
      if (!impl_->lab.IsFabric(itf)) continue;
      auto it = states.find(itf.name);
      const std::string state = it == states.end() ? "no session" : it->second;
      if (state == "Established")
        ++status.done;
      else if (status.missing.size() < 4)
        status.missing.push_back(sw->name + ":" + itf.name + " " + state);
    }
  }
  return status;
}

CheckStatus LabVerifier::CheckReachability() {
  Impl& d = *impl_;
  d.EnsureSockets();
  auto all_seen = [&] { return d.pairs_seen == d.pairs.size(); };
  // Probes go out in small bursts with the receivers drained in between: a burst of thousands
  // would overflow the per-CPU backlog of the veths and the receivers' socket buffers.
  size_t sent = 0;
  const size_t first = d.next_pair;
  for (size_t k = 0; k < d.pairs.size() && sent < kProbesPerRound; ++k) {
    size_t i = (first + k) % d.pairs.size();
    if (d.pair_seen[i]) continue;
    d.Send(d.pairs[i].src, d.pairs[i].address, 0, static_cast<uint32_t>(i));
    if (++sent % kProbeBurst == 0) d.Receive(std::chrono::milliseconds(1), [] { return false; });
    d.next_pair = (i + 1) % d.pairs.size();
  }
  d.Receive(std::chrono::milliseconds(100), all_seen);
  CheckStatus status;
  status.total = static_cast<int>(d.pairs.size());
  for (size_t i = 0; i < d.pairs.size(); ++i) {
    if (d.pair_seen[i]) {
      ++status.done;
    } else if (status.missing.size() < 4) {
      const auto& p = d.pairs[i];
      status.missing.push_back(d.hosts[p.src]->name + "->" + d.hosts[p.dst]->name + " plane " +
                               std::to_string(p.plane));
    }
  }
  return status;
}

CheckStatus LabVerifier::CheckSpinePaths() {
  Impl& d = *impl_;
  d.EnsureSockets();
  for (size_t i = 0; i < d.paths_to_prove.size(); ++i) {
    if (d.path_proven[i]) continue;
    const UsidPath& path = d.paths_to_prove[i];
    if (!d.counter_read[i]) {
      d.counter_before[i] = d.SpineCounter(path.spine);
      d.counter_read[i] = true;
    }
    d.Send(d.host_index[path.src_host], path.destination, 1, static_cast<uint32_t>(i));
  }
  auto all_arrived = [&] {
    for (size_t i = 0; i < d.paths_to_prove.size(); ++i)
      if (!d.path_proven[i] && !d.path_arrived[i]) return false;
    return true;
  };
  d.Receive(std::chrono::milliseconds(100), all_arrived);
  CheckStatus status;
  status.total = static_cast<int>(d.paths_to_prove.size());
  for (size_t i = 0; i < d.paths_to_prove.size(); ++i) {
    const UsidPath& path = d.paths_to_prove[i];
    if (!d.path_proven[i] && d.path_arrived[i] && d.SpineCounter(path.spine) > d.counter_before[i])
      d.path_proven[i] = true;
    if (d.path_proven[i])
      ++status.done;
    else if (status.missing.size() < 4)
      status.missing.push_back(path.src_host + "->" + path.dst_host + " via " + path.spine + " [" +
                               path.destination + "]");
  }
  return status;
}

}  // namespace mrclab::emulator::netns
