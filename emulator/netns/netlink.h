// A NETLINK_ROUTE socket (libmnl) bound to one network namespace, with batched requests.
//
// Contract: Queue*() calls only append a request to the batch; Flush() sends the batch and
// reads one acknowledgement per request, then throws NetlinkError for the first request the
// kernel refused, naming that request ("add veth p0-leaf0:spine0 <-> p0-spine0:leaf0: File
// exists"). Dump calls flush first. A socket serves one namespace for its whole life.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

struct mnl_socket;
struct nlmsghdr;

namespace mrclab::emulator::netns {

class NetlinkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LinkCounters {
  uint64_t rx_packets = 0, tx_packets = 0, rx_bytes = 0, tx_bytes = 0;
  uint64_t rx_dropped = 0, tx_dropped = 0;
  bool up = false;        // operational state (carrier)
  bool admin_up = false;  // administrative state (IFF_UP)
};

struct Seg6LocalCounters {
  uint64_t packets = 0, bytes = 0, errors = 0;
};

class RtnlSocket {
 public:
  // netns_fd: an open /run/netns/NAME; -1 for the caller's own namespace.
  explicit RtnlSocket(int netns_fd = -1);
  ~RtnlSocket();
  RtnlSocket(const RtnlSocket&) = delete;
  RtnlSocket& operator=(const RtnlSocket&) = delete;

  // A veth pair whose two ends are created directly inside the given namespaces, both with
  // this MTU (bytes). Both ends carry single packets, as a real link does: gso_max_segs 1, so a
  // UDP GSO super-packet a host sends is cut into its datagrams at the host's own interface
  // (after its qdisc), and every hop, fault and capture sees packets.
  void QueueVeth(const std::string& name, int ns_fd, const std::string& peer_name,
                 int peer_ns_fd, uint32_t mtu, const std::string& description);
  // An ifb interface in this socket's namespace: a device with no link partner, so it never
  // loses carrier (this kernel has no dummy driver).
  void QueueIfb(const std::string& name, uint32_t mtu);
  void QueueLinkUp(const std::string& ifname, bool up = true);
  void QueueAddress(int ifindex, const std::string& address, int prefix_len);
  // Unicast route via next hops (ECMP when several); next hop = (gateway, ifindex).
  void QueueRoute(const std::string& prefix, const std::vector<std::pair<std::string, int>>& hops);
  // SRv6 End with the NEXT-C-SID flavor (uN), with behaviour counters enabled.
  void QueueUsidEnd(const std::string& prefix, int oif, int block_bits, int node_bits);
  void Flush();

  std::map<std::string, int> LinkIndexes();
  std::map<std::string, LinkCounters> LinkStats();
  // Counters of the seg6local route whose destination is exactly `prefix`.
  Seg6LocalCounters UsidCounters(const std::string& prefix);

 private:
  struct Pending {
    uint32_t seq;
    std::string description;
  };
  nlmsghdr* Begin(uint16_t type, uint16_t flags, const std::string& description);
  void Dump(nlmsghdr* request, const std::function<void(const nlmsghdr*)>& each);

  mnl_socket* sock_ = nullptr;
  uint32_t port_id_ = 0;
  uint32_t seq_ = 1;
  std::vector<char> batch_;
  size_t batch_len_ = 0;
  std::vector<Pending> pending_;
};

}  // namespace mrclab::emulator::netns
