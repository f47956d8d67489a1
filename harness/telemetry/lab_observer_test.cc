// LabObserver against a real lab (root, real kernel, real FRR): deploys a small BGP fabric named
// t-obs-<pid> in-process, faults a fabric link and a daemon, sends traffic, and destroys the
// lab at the end whatever happens.
#include "harness/telemetry/lab_observer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "emulator/lab_spec.h"
#include "emulator/netns/deploy.h"
#include "emulator/netns/kernel_srv6.h"
#include "emulator/netns/lab_state.h"
#include "emulator/netns/namespaces.h"
#include "emulator/netns/netlink.h"
#include "harness/telemetry/metrics_exporter.h"
#include "harness/telemetry/test_http.h"

namespace mrclab::harness {
namespace {

namespace nx = emulator::netns;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// One plane, two spines, two leaves, one host per leaf: 4 switches, 8 BGP session ends.
std::string LabText(const std::string& name) {
  return "name: " + name +
         "\nclos: {planes: 1, spines_per_plane: 2, leaves_per_plane: 2, hosts: 2, "
         "hosts_per_leaf: 1}\nrouting: bgp\n";
}

bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// Events from the observer thread, readable from the test.
class EventLog {
 public:
  void Add(const json& event) {
    std::lock_guard lock(mu_);
    events_.push_back(event);
  }
  std::vector<json> All() const {
    std::lock_guard lock(mu_);
    return events_;
  }
  // An event of this type, node and peer; an empty from or to matches any state.
  bool Has(const std::string& type, const std::string& node, const std::string& peer,
           const std::string& from, const std::string& to) const {
    std::lock_guard lock(mu_);
    for (const json& e : events_)
      if (e.value("type", "") == type && e.value("node", "") == node &&
          e.value("peer", "") == peer && (from.empty() || e.value("from", "") == from) &&
          (to.empty() || e.value("to", "") == to))
        return true;
    return false;
  }
  std::string Dump() const {
    std::string out;
    for (const json& e : All()) out += "  " + e.dump() + "\n";
    return out.empty() ? "  (none)\n" : out;
  }

 private:
  mutable std::mutex mu_;
  std::vector<json> events_;
};

// The deployed lab; destroyed when the test ends, passed or not.
class TestLab {
 public:
  explicit TestLab(const std::string& name) : name_(name) {
    const std::string text = LabText(name);
    lab_ = emulator::Resolve(emulator::ParseLabText(text, name + ".yaml"));
    nx::DeployOptions options;
    options.timeout = std::chrono::seconds(60);
    options.progress = false;
    options.lab_text = text;
    nx::Deploy(lab_, options);  // rolls back by itself when it fails
  }
  ~TestLab() {
    if (!std::filesystem::exists(nx::LabPaths(name_).root)) return;
    try {
      nx::DestroyReport r = nx::Destroy(name_);
      for (const auto& p : r.problems) ADD_FAILURE() << "destroy " << name_ << ": " << p;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "destroy " << name_ << ": " << e.what();
    }
  }
  const emulator::ResolvedLab& lab() const { return lab_; }

  // Deploy returns when BGP is verified; BFD sessions may still be coming up then.
  bool WaitForBfd() const {
    return WaitFor([&] {
      for (const emulator::ResolvedNode* sw : lab_.Switches()) {
        std::map<std::string, std::string> states;
        try {
          states = BfdPeerStates(nx::LabPaths(name_).NodeDir(sw->name) + "/bfdd.vty");
        } catch (const std::exception&) {
          return false;
        }
        size_t fabric_ports = 0;
        for (const auto& itf : sw->interfaces)
          fabric_ports += lab_.FindNode(itf.peer_node)->kind == emulator::NodeKind::kSwitch;
        if (states.size() != fabric_ports) return false;
        for (const auto& [peer, state] : states)
          if (state != "up") return false;
      }
      return true;
    }, std::chrono::seconds(10));
  }

 private:
  std::string name_;
  emulator::ResolvedLab lab_;
};

void SetLink(const emulator::ResolvedLab& lab, const std::string& node, const std::string& ifname,
             bool up) {
  nx::Fd ns = nx::OpenNetns(lab.FindNode(node)->netns);
  nx::RtnlSocket rtnl(ns.get());
  rtnl.QueueLinkUp(ifname, up);
  rtnl.Flush();
}

// Sends `count` UDP datagrams from inside a node's namespace (to the discard port).
void SendUdp(const std::string& netns, const std::string& address, int count) {
  nx::Fd ns = nx::OpenNetns(netns);
  int fd = -1;
  nx::InNetns(ns.get(), [&] { fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0); });
  ASSERT_GE(fd, 0);
  nx::Fd sock(fd);
  sockaddr_in6 to{};
  to.sin6_family = AF_INET6;
  to.sin6_port = htons(9);
  ASSERT_EQ(inet_pton(AF_INET6, address.c_str(), &to.sin6_addr), 1) << address;
  const char payload[64] = "mrclab observer test";
  int sent = 0;
  for (int i = 0; i < count * 50 && sent < count; ++i) {  // the first may wait for ND
    if (sendto(fd, payload, sizeof(payload), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)) ==
        static_cast<ssize_t>(sizeof(payload)))
      ++sent;
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(sent, count);
}

std::optional<LabObserver::LinkSample> Sample(const LabObserver& observer, const std::string& end) {
  for (const auto& s : observer.LastLinkSamples())
    if (s.end == end) return s;
  return std::nullopt;
}

TEST(LabObserver, NotDeployedLabGivesOneErrorPerNode) {
  const std::string name = "t-obs-none" + std::to_string(getpid() % 100000);
  emulator::ResolvedLab lab = emulator::Resolve(emulator::ParseLabText(LabText(name), "x.yaml"));
  ASSERT_FALSE(std::filesystem::exists(nx::LabPaths(name).root));
  EventLog events;
  LabObserver observer(lab, {std::chrono::milliseconds(20)}, [&](const json& e) { events.Add(e); },
                       nullptr);
  observer.Start();
  ASSERT_TRUE(WaitFor([&] { return observer.polls() >= 4; }, std::chrono::seconds(10)));
  observer.Stop();
  const uint64_t polls = observer.polls();
  std::map<std::string, int> errors;
  for (const json& e : events.All()) {
    EXPECT_EQ(e.value("type", ""), "observer_error") << e.dump();
    EXPECT_NE(e.value("error", "").find("namespace " + name + "-"), std::string::npos) << e.dump();
    EXPECT_GT(e.value("t", 0.0), 1.7e9);
    ++errors[e.value("node", "")];
  }
  EXPECT_EQ(errors.size(), lab.nodes.size()) << events.Dump();
  for (const auto& [node, n] : errors) EXPECT_EQ(n, 1) << node;
  EXPECT_TRUE(observer.LastLinkSamples().empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_EQ(observer.polls(), polls);  // stopped means stopped
}

TEST(LabObserver, SeesBgpBfdAndLinkCountersOfARealLab) {
  ASSERT_EQ(geteuid(), 0) << "needs root (it deploys a lab)";
  if (auto missing = emulator::netns::KernelSrv6Missing()) GTEST_SKIP() << "this kernel has no SRv6: " << *missing;
  const std::string name = "t-obs-" + std::to_string(getpid() % 1000000);
  TestLab test_lab(name);
  const emulator::ResolvedLab& lab = test_lab.lab();
  ASSERT_TRUE(test_lab.WaitForBfd()) << "BFD sessions not all up 10 s after deploy";

  DrillMetrics metrics({"127.0.0.1:0"});
  EventLog events;
  LabObserver observer(lab, {std::chrono::milliseconds(100)}, [&](const json& e) { events.Add(e); },
                       &metrics);
  observer.Start();

  // Baseline: a healthy, verified lab gives no events.
  ASSERT_TRUE(WaitFor([&] { return observer.polls() >= 3; }, std::chrono::seconds(10)));
  EXPECT_TRUE(events.All().empty()) << events.Dump();
  EXPECT_EQ(observer.LastLinkSamples().size(), 2 * lab.links.size());

  // A fabric link goes down at one end: both ends' BGP sessions leave Established, and BFD
  // reports the session down.
  SetLink(lab, "p0-leaf0", "spine0", false);
  EXPECT_TRUE(WaitFor([&] {
    return events.Has("bgp", "p0-leaf0", "spine0", "Established", "") &&
           events.Has("bgp", "p0-spine0", "leaf0", "Established", "") &&
           events.Has("bfd", "p0-leaf0", "spine0", "up", "down");
  }, std::chrono::seconds(10))) << events.Dump();

  // Up again: back to Established and up.
  SetLink(lab, "p0-leaf0", "spine0", true);
  EXPECT_TRUE(WaitFor([&] {
    return events.Has("bgp", "p0-leaf0", "spine0", "", "Established") &&
           events.Has("bgp", "p0-spine0", "leaf0", "", "Established") &&
           events.Has("bfd", "p0-leaf0", "spine0", "", "up");
  }, std::chrono::seconds(10))) << events.Dump();

  // A daemon that stops answering: its sessions become "unreachable", then come back.
  pid_t bgpd = 0;
  std::ifstream(nx::LabPaths(name).NodeDir("p0-leaf1") + "/bgpd.pid") >> bgpd;
  ASSERT_GT(bgpd, 0);
  {
    struct Resume {
      pid_t pid;
      ~Resume() { kill(pid, SIGCONT); }
    } resume{bgpd};
    ASSERT_EQ(kill(bgpd, SIGSTOP), 0);
    EXPECT_TRUE(WaitFor([&] {
      return events.Has("bgp", "p0-leaf1", "spine0", "Established", "unreachable") &&
             events.Has("bgp", "p0-leaf1", "spine1", "Established", "unreachable");
    }, std::chrono::seconds(10))) << events.Dump();
  }
  EXPECT_TRUE(WaitFor([&] {
    return events.Has("bgp", "p0-leaf1", "spine0", "unreachable", "Established") &&
           events.Has("bgp", "p0-leaf1", "spine1", "unreachable", "Established");
  }, std::chrono::seconds(10))) << events.Dump();

  // Only the faulted nodes had events, each one well formed; no observer errors.
  for (const json& e : events.All()) {
    EXPECT_TRUE(e.value("type", "") == "bgp" || e.value("type", "") == "bfd") << e.dump();
    const std::string node = e.value("node", "");
    EXPECT_TRUE(node == "p0-leaf0" || node == "p0-spine0" || node == "p0-leaf1") << e.dump();
    EXPECT_TRUE(e.contains("peer") && e.contains("from") && e.contains("to")) << e.dump();
    EXPECT_GT(e.value("t", 0.0), 1.7e9) << e.dump();
  }

  // Traffic on a host link: host0 sends to its leaf's address; both ends count it, and the
  // exporter shows the same counters.
  const emulator::ResolvedNode* host0 = lab.FindNode("host0");
  const emulator::ResolvedInterface& port = host0->interfaces.at(0);
  const std::string host_end = "host0:" + port.name;
  const std::string leaf_end = port.peer_node + ":" + port.peer_interface;
  const auto before_host = Sample(observer, host_end);
  const auto before_leaf = Sample(observer, leaf_end);
  ASSERT_TRUE(before_host && before_leaf);
  EXPECT_EQ(before_host->link, port.link);
  constexpr int kPackets = 50;
  SendUdp(host0->netns, port.peer_address, kPackets);
  EXPECT_TRUE(WaitFor([&] {
    auto h = Sample(observer, host_end);
    auto l = Sample(observer, leaf_end);
    return h->counters.tx_packets >= before_host->counters.tx_packets + kPackets &&
           l->counters.rx_packets >= before_leaf->counters.rx_packets + kPackets;
  }, std::chrono::seconds(5)));
  const uint64_t tx_seen = Sample(observer, host_end)->counters.tx_packets;
  const std::string series = "mrclab_link_tx_packets_total{end=\"" + host_end + "\",link=\"" +
                             std::to_string(port.link) + "\"}";
  auto exported = testing::SampleValue(testing::HttpGet(metrics.port(), "/metrics").body, series);
  ASSERT_TRUE(exported) << series;
  EXPECT_GE(*exported, static_cast<double>(tx_seen));
  EXPECT_GE(*exported, static_cast<double>(before_host->counters.tx_packets + kPackets));

  observer.Stop();  // before the lab goes: the observer's sockets hold its namespaces
}

}  // namespace
}  // namespace mrclab::harness
