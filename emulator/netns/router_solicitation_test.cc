// Needs root: two namespaces joined by a veth pair; a Router Solicitation sent from one end
// arrives at the other as neighbour discovery (ICMPv6 type 133, hop limit 255).
#include "emulator/netns/router_solicitation.h"

#include <gtest/gtest.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "emulator/netns/namespaces.h"
#include "emulator/netns/netlink.h"

namespace mrclab::emulator::netns {
namespace {

// Two namespaces of this test, removed whatever happens.
struct TwoNamespaces {
  std::string a = "mrclab-rs-test-a-" + std::to_string(getpid());
  std::string b = "mrclab-rs-test-b-" + std::to_string(getpid());
  std::string dir = std::filesystem::temp_directory_path() / ("mrclab-rs-test-" + std::to_string(getpid()));
  TwoNamespaces() {
    std::filesystem::create_directories(dir);
    try {
      CreateNodeNamespaces(a, dir + "/a", "a");
      CreateNodeNamespaces(b, dir + "/b", "b");
    } catch (...) {
      Remove();
      throw;
    }
  }
  ~TwoNamespaces() { Remove(); }
  void Remove() {  // what is not there is fine
    std::string why;
    DeleteNodeNamespaces(a, dir + "/a", &why);
    DeleteNodeNamespaces(b, dir + "/b", &why);
    std::filesystem::remove_all(dir);
  }
};

TEST(RouterSolicitation, ArrivesAtTheOtherEndAsNeighbourDiscovery) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  TwoNamespaces ns;
  Fd a = OpenNetns(ns.a), b = OpenNetns(ns.b);
  for (int fd : {a.get(), b.get()}) WriteSysctl(fd, "net/ipv6/conf/default/accept_dad", "0");
  WriteSysctl(b.get(), "net/ipv6/conf/all/forwarding", "1");  // a router: it listens on ff02::2
  {
    RtnlSocket root;
    root.QueueVeth("tob", a.get(), "toa", b.get(), 1500, "add veth tob <-> toa");
    root.Flush();
  }
  for (auto [fd, itf] : {std::pair{a.get(), "tob"}, std::pair{b.get(), "toa"}}) {
    RtnlSocket rtnl(fd);
    rtnl.QueueLinkUp(itf);
    rtnl.Flush();
  }
  int listener = -1;
  InNetns(b.get(), [&] { listener = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6); });
  ASSERT_GE(listener, 0);
  icmp6_filter filter;
  ICMP6_FILTER_SETBLOCKALL(&filter);
  ICMP6_FILTER_SETPASS(ND_ROUTER_SOLICIT, &filter);
  setsockopt(listener, IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof(filter));
  const int on = 1;
  setsockopt(listener, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &on, sizeof(on));

  EXPECT_EQ(SendRouterSolicitations(ns.a, {"no-such-port"}), 0);
  // Until the link-local address exists the kernel has no source for it: poll, do not sleep.
  int hop_limit = -1, type = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (type < 0 && std::chrono::steady_clock::now() < deadline) {
    SendRouterSolicitations(ns.a, {"tob"});
    pollfd p{listener, POLLIN, 0};
    if (poll(&p, 1, 100) != 1) continue;
    unsigned char buf[256], control[128];
    iovec iov{buf, sizeof(buf)};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    if (recvmsg(listener, &msg, 0) < static_cast<ssize_t>(sizeof(nd_router_solicit))) continue;
    type = buf[0];
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
      if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT) hop_limit = *reinterpret_cast<int*>(CMSG_DATA(c));
  }
  close(listener);
  EXPECT_EQ(type, ND_ROUTER_SOLICIT);
  EXPECT_EQ(hop_limit, 255);
}

}  // namespace
}  // namespace mrclab::emulator::netns
