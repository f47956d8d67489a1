#include "emulator/netns/router_solicitation.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emulator/netns/namespaces.h"

namespace mrclab::emulator::netns {

int SendRouterSolicitations(const std::string& netns, const std::vector<std::string>& interfaces) {
  int sent = 0;
  Fd ns = OpenNetns(netns);
  InNetns(ns.get(), [&] {
    const int fd = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6);  // the kernel sums it
    if (fd < 0) return;
    const int hops = 255;  // RFC 4861: a receiver drops neighbour discovery with any other
    setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof(hops));
    nd_router_solicit rs{};
    rs.nd_rs_type = ND_ROUTER_SOLICIT;
    for (const std::string& itf : interfaces) {
      const unsigned index = if_nametoindex(itf.c_str());
      if (index == 0) continue;
      sockaddr_in6 to{};
      to.sin6_family = AF_INET6;
      to.sin6_scope_id = index;
      inet_pton(AF_INET6, "ff02::2", &to.sin6_addr);
      const int ifindex = static_cast<int>(index);
      if (setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex, sizeof(ifindex)) != 0) continue;
      if (sendto(fd, &rs, sizeof(rs), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)) == sizeof(rs)) ++sent;
    }
    close(fd);
  });
  return sent;
}

}  // namespace mrclab::emulator::netns
