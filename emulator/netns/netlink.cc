#include "emulator/netns/netlink.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/lwtunnel.h>
#include <linux/rtnetlink.h>
#include <linux/seg6_local.h>
#include <linux/veth.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "emulator/netns/namespaces.h"

namespace mrclab::emulator::netns {
namespace {

constexpr size_t kMaxBatchBytes = 32 * 1024;  // acks of a full batch fit the receive buffer

in6_addr ParseV6(const std::string& text) {
  in6_addr a{};
  if (inet_pton(AF_INET6, text.c_str(), &a) != 1)
    throw NetlinkError("not an IPv6 address: '" + text + "'");
  return a;
}

std::pair<in6_addr, int> ParsePrefix(const std::string& prefix) {
  auto slash = prefix.find('/');
  if (slash == std::string::npos) throw NetlinkError("prefix without length: '" + prefix + "'");
  return {ParseV6(prefix.substr(0, slash)), std::stoi(prefix.substr(slash + 1))};
}

std::string ExtAckMessage(const nlmsghdr* nlh) {
  if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS)) return {};
  const auto* err = static_cast<const nlmsgerr*>(mnl_nlmsg_get_payload(nlh));
  size_t offset = sizeof(nlmsgerr);
  if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) offset += err->msg.nlmsg_len - sizeof(nlmsghdr);
  std::string msg;
  mnl_attr_parse(
      nlh, offset,
      [](const nlattr* attr, void* data) {
        if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG)
          *static_cast<std::string*>(data) = mnl_attr_get_str(attr);
        return MNL_CB_OK;
      },
      &msg);
  return msg;
}

// libmnl's iteration macros rely on C's implicit void* conversion; these are their C++ form.
template <class F>
void ForEachAttr(const nlmsghdr* nlh, size_t offset, F f) {
  const char* tail = static_cast<const char*>(mnl_nlmsg_get_payload_tail(nlh));
  for (auto* a = static_cast<const nlattr*>(mnl_nlmsg_get_payload_offset(nlh, offset));
       mnl_attr_ok(a, static_cast<int>(tail - reinterpret_cast<const char*>(a)));
       a = mnl_attr_next(a))
    f(a);
}

template <class F>
void ForEachNested(const nlattr* nest, F f) {
  const char* tail = static_cast<const char*>(mnl_attr_get_payload(nest)) + mnl_attr_get_payload_len(nest);
  for (auto* a = static_cast<const nlattr*>(mnl_attr_get_payload(nest));
       mnl_attr_ok(a, static_cast<int>(tail - reinterpret_cast<const char*>(a)));
       a = mnl_attr_next(a))
    f(a);
}

}  // namespace

RtnlSocket::RtnlSocket(int netns_fd) {
  auto open_socket = [&] {
    sock_ = mnl_socket_open(NETLINK_ROUTE);
    if (!sock_) throw NetlinkError(std::string("netlink socket: ") + std::strerror(errno));
  };
  if (netns_fd >= 0)
    InNetns(netns_fd, open_socket);
  else
    open_socket();
  int one = 1;
  mnl_socket_setsockopt(sock_, NETLINK_EXT_ACK, &one, sizeof(one));
  mnl_socket_setsockopt(sock_, NETLINK_CAP_ACK, &one, sizeof(one));
  int rcvbuf = 4 * 1024 * 1024;
  setsockopt(mnl_socket_get_fd(sock_), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
  if (mnl_socket_bind(sock_, 0, MNL_SOCKET_AUTOPID) < 0) {
    mnl_socket_close(sock_);
    throw NetlinkError(std::string("netlink bind: ") + std::strerror(errno));
  }
  port_id_ = mnl_socket_get_portid(sock_);
  batch_.resize(kMaxBatchBytes + MNL_SOCKET_BUFFER_SIZE);
}

RtnlSocket::~RtnlSocket() {
  if (sock_) mnl_socket_close(sock_);
}

nlmsghdr* RtnlSocket::Begin(uint16_t type, uint16_t flags, const std::string& description) {
  if (batch_len_ > kMaxBatchBytes) Flush();
  nlmsghdr* nlh = mnl_nlmsg_put_header(batch_.data() + batch_len_);
  nlh->nlmsg_type = type;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
  nlh->nlmsg_seq = seq_++;
  pending_.push_back({nlh->nlmsg_seq, description});
  return nlh;
}

void RtnlSocket::Flush() {
  if (pending_.empty()) return;
  if (mnl_socket_sendto(sock_, batch_.data(), batch_len_) < 0)
    throw NetlinkError(std::string("netlink send: ") + std::strerror(errno));
  size_t acked = 0;
  std::string first_error;
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE * 4);
  while (acked < pending_.size()) {
    ssize_t n = mnl_socket_recvfrom(sock_, buf.data(), buf.size());
    if (n < 0) throw NetlinkError(std::string("netlink receive: ") + std::strerror(errno));
    for (auto* nlh = reinterpret_cast<nlmsghdr*>(buf.data()); mnl_nlmsg_ok(nlh, static_cast<int>(n));
         nlh = mnl_nlmsg_next(nlh, reinterpret_cast<int*>(&n))) {
      if (nlh->nlmsg_type != NLMSG_ERROR) continue;
      ++acked;
      const auto* err = static_cast<const nlmsgerr*>(mnl_nlmsg_get_payload(nlh));
      if (err->error == 0 || !first_error.empty()) continue;
      std::string what;
      for (const Pending& p : pending_)
        if (p.seq == nlh->nlmsg_seq) what = p.description;
      first_error = what + ": " + std::strerror(-err->error);
      std::string ext = ExtAckMessage(nlh);
      if (!ext.empty()) first_error += " (" + ext + ")";
    }
  }
  pending_.clear();
  batch_len_ = 0;
  if (!first_error.empty()) throw NetlinkError(first_error);
}

void RtnlSocket::QueueVeth(const std::string& name, int ns_fd, const std::string& peer_name,
                           int peer_ns_fd, uint32_t mtu, const std::string& description) {
  nlmsghdr* nlh = Begin(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, description);
  auto* ifm = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
  ifm->ifi_family = AF_UNSPEC;
  mnl_attr_put_strz(nlh, IFLA_IFNAME, name.c_str());
  mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, static_cast<uint32_t>(ns_fd));
  mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
  mnl_attr_put_u32(nlh, IFLA_GSO_MAX_SEGS, 1);
  nlattr* linkinfo = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
  mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
  nlattr* data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
  nlattr* peer = mnl_attr_nest_start(nlh, VETH_INFO_PEER);
  auto* peer_ifm = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
  peer_ifm->ifi_family = AF_UNSPEC;
  mnl_attr_put_strz(nlh, IFLA_IFNAME, peer_name.c_str());
  mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, static_cast<uint32_t>(peer_ns_fd));
  mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
  mnl_attr_put_u32(nlh, IFLA_GSO_MAX_SEGS, 1);
  mnl_attr_nest_end(nlh, peer);
  mnl_attr_nest_end(nlh, data);
  mnl_attr_nest_end(nlh, linkinfo);
  batch_len_ += NLMSG_ALIGN(nlh->nlmsg_len);
}

void RtnlSocket::QueueIfb(const std::string& name, uint32_t mtu) {
  nlmsghdr* nlh = Begin(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, "add ifb " + name);
  auto* ifm = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
  ifm->ifi_family = AF_UNSPEC;
  mnl_attr_put_strz(nlh, IFLA_IFNAME, name.c_str());
  mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
  nlattr* linkinfo = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
  mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "ifb");
  mnl_attr_nest_end(nlh, linkinfo);
  batch_len_ += NLMSG_ALIGN(nlh->nlmsg_len);
}

void RtnlSocket::QueueLinkUp(const std::string& ifname, bool up) {
  nlmsghdr* nlh = Begin(RTM_NEWLINK, 0, (up ? "set up " : "set down ") + ifname);
  auto* ifm = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
  ifm->ifi_family = AF_UNSPEC;
  ifm->ifi_change = IFF_UP;
  ifm->ifi_flags = up ? IFF_UP : 0;
  mnl_attr_put_strz(nlh, IFLA_IFNAME, ifname.c_str());
  batch_len_ += NLMSG_ALIGN(nlh->nlmsg_len);
}

void RtnlSocket::QueueAddress(int ifindex, const std::string& address, int prefix_len) {
  nlmsghdr* nlh = Begin(RTM_NEWADDR, NLM_F_CREATE | NLM_F_REPLACE,
                        "add address " + address + "/" + std::to_string(prefix_len));
  auto* ifa = static_cast<ifaddrmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifaddrmsg)));
  ifa->ifa_family = AF_INET6;
  ifa->ifa_prefixlen = static_cast<uint8_t>(prefix_len);
  ifa->ifa_flags = IFA_F_NODAD;
  ifa->ifa_index = static_cast<uint32_t>(ifindex);
  in6_addr a = ParseV6(address);
  mnl_attr_put(nlh, IFA_LOCAL, sizeof(a), &a);
  mnl_attr_put(nlh, IFA_ADDRESS, sizeof(a), &a);
  mnl_attr_put_u32(nlh, IFA_FLAGS, IFA_F_NODAD);
  batch_len_ += NLMSG_ALIGN(nlh->nlmsg_len);
}

void RtnlSocket::QueueRoute(const std::string& prefix,
                            const std::vector<std::pair<std::string, int>>& hops) {
  if (hops.empty()) throw NetlinkError("route " + prefix + " has no next hop");
  nlmsghdr* nlh = Begin(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, "add route " + prefix);
  auto* rtm = static_cast<rtmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(rtmsg)));
  auto [dst, len] = ParsePrefix(prefix);
  rtm->rtm_family = AF_INET6;
  rtm->rtm_dst_len = static_cast<uint8_t>(len);
  rtm->rtm_table = RT_TABLE_MAIN;
  rtm->rtm_protocol = RTPROT_STATIC;
  rtm->rtm_scope = RT_SCOPE_UNIVERSE;
  rtm->rtm_type = RTN_UNICAST;
  mnl_attr_put(nlh, RTA_DST, sizeof(dst), &dst);
  if (hops.size() == 1) {
    in6_addr gw = ParseV6(hops[0].first);
    mnl_attr_put(nlh, RTA_GATEWAY, sizeof(gw), &gw);
    mnl_attr_put_u32(nlh, RTA_OIF, static_cast<uint32_t>(hops[0].second));
  } else {
    nlattr* mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
    for (const auto& [gateway, oif] : hops) {
      auto* rtnh = static_cast<rtnexthop*>(mnl_nlmsg_get_payload_tail(nlh));
      nlh->nlmsg_len += MNL_ALIGN(sizeof(rtnexthop));
      std::memset(rtnh, 0, sizeof(*rtnh));
      rtnh->rtnh_ifindex = oif;
      in6_addr gw = ParseV6(gateway);
      mnl_attr_put(nlh, RTA_GATEWAY, sizeof(gw), &gw);
      rtnh->rtnh_len = static_cast<unsigned short>(
          reinterpret_cast<char*>(mnl_nlmsg_get_payload_tail(nlh)) - reinterpret_cast<char*>(rtnh));
    }
    mnl_attr_nest_end(nlh, mp);
  }
  batch_len_ += NLMSG_ALIGN(nlh->nlmsg_len);
}

void RtnlSocket::QueueUsidEnd(const std::string& prefix, int oif, int block_bits, int node_bits) {
  nlmsghdr* nlh = Begin(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE,
                        "add SRv6 uN (End, next-csid) " + prefix);
  auto* rtm = static_cast<rtmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(rtmsg)));
  auto [dst, len] = ParsePrefix(prefix);
  rtm->rtm_family = AF_INET6;
  rtm->rtm_dst_len = static_cast<uint8_t>(len);
  rtm->rtm_table = RT_TABLE_MAIN;
  rtm->rtm_protocol = RTPROT_STATIC;
  rtm->rtm_scope = RT_SCOPE_UNIVERSE;
  rtm->rtm_type = RTN_UNICAST;
  mnl_attr_put(nlh, RTA_DST, sizeof(dst), &dst);
  mnl_attr_put_u32(nlh, RTA_OIF, static_cast<uint32_t>(oif));
  mnl_attr_put_u16(nlh, RTA_ENCAP_TYPE, LWTUNNEL_ENCAP_SEG6_LOCAL);
  nlattr* encap = mnl_attr_nest_start(nlh, RTA_ENCAP);
  mnl_attr_put_u32(nlh, SEG6_LOCAL_ACTION, SEG6_LOCAL_ACTION_END);
  nlattr* counters = mnl_attr_nest_start(nlh, SEG6_LOCAL_COUNTERS);
  mnl_attr_put_u64(nlh, SEG6_LOCAL_CNT_PACKETS, 0);
  mnl_attr_put_u64(nlh, SEG6_LOCAL_CNT_BYTES, 0);
  mnl_attr_put_u64(nlh, SEG6_LOCAL_CNT_ERRORS, 0);
  mnl_attr_nest_end(nlh, counters);
  nlattr* flavors = mnl_attr_nest_start(nlh, SEG6_LOCAL_FLAVORS);
  mnl_attr_put_u32(nlh, SEG6_LOCAL_FLV_OPERATION, 1u << SEG6_LOCAL_FLV_OP_NEXT_CSID);
  mnl_attr_put_u8(nlh, SEG6_LOCAL_FLV_LCBLOCK_BITS, static_cast<uint8_t>(block_bits));
  mnl_attr_put_u8(nlh, SEG6_LOCAL_FLV_LCNODE_FN_BITS, static_cast<uint8_t>(node_bits));
  mnl_attr_nest_end(nlh, flavors);
  mnl_attr_nest_end(nlh, encap);
  batch_len_ += NLMSG_ALIGN(nlh->nlmsg_len);
}

void RtnlSocket::Dump(nlmsghdr* request, const std::function<void(const nlmsghdr*)>& each) {
  Flush();
  request->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request->nlmsg_seq = seq_++;
  if (mnl_socket_sendto(sock_, request, request->nlmsg_len) < 0)
    throw NetlinkError(std::string("netlink dump: ") + std::strerror(errno));
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE * 4);
  struct Ctx {
    const std::function<void(const nlmsghdr*)>* each;
  } ctx{&each};
  for (;;) {
    ssize_t n = mnl_socket_recvfrom(sock_, buf.data(), buf.size());
    if (n < 0) throw NetlinkError(std::string("netlink dump receive: ") + std::strerror(errno));
    int rc = mnl_cb_run(
        buf.data(), static_cast<size_t>(n), request->nlmsg_seq, port_id_,
        [](const nlmsghdr* nlh, void* data) {
          (*static_cast<Ctx*>(data)->each)(nlh);
          return MNL_CB_OK;
        },
        &ctx);
    if (rc == MNL_CB_STOP) return;
    if (rc < 0) throw NetlinkError(std::string("netlink dump: ") + std::strerror(errno));
  }
}

std::map<std::string, int> RtnlSocket::LinkIndexes() {
  std::map<std::string, int> out;
  char buf[256];
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf);
  nlh->nlmsg_type = RTM_GETLINK;
  auto* ifm = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
  ifm->ifi_family = AF_UNSPEC;
  Dump(nlh, [&](const nlmsghdr* msg) {
    const auto* info = static_cast<const ifinfomsg*>(mnl_nlmsg_get_payload(msg));
    ForEachAttr(msg, sizeof(ifinfomsg), [&](const nlattr* attr) {
      if (mnl_attr_get_type(attr) == IFLA_IFNAME) out[mnl_attr_get_str(attr)] = info->ifi_index;
    });
  });
  return out;
}

std::map<std::string, LinkCounters> RtnlSocket::LinkStats() {
  std::map<std::string, LinkCounters> out;
  char buf[256];
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf);
  nlh->nlmsg_type = RTM_GETLINK;
  auto* ifm = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
  ifm->ifi_family = AF_UNSPEC;
  Dump(nlh, [&](const nlmsghdr* msg) {
    const auto* info = static_cast<const ifinfomsg*>(mnl_nlmsg_get_payload(msg));
    std::string name;
    LinkCounters c;
    c.up = (info->ifi_flags & IFF_LOWER_UP) != 0;
    c.admin_up = (info->ifi_flags & IFF_UP) != 0;
    ForEachAttr(msg, sizeof(ifinfomsg), [&](const nlattr* attr) {
      switch (mnl_attr_get_type(attr)) {
        case IFLA_IFNAME:
          name = mnl_attr_get_str(attr);
          break;
        case IFLA_STATS64: {
          rtnl_link_stats64 s;
          std::memcpy(&s, mnl_attr_get_payload(attr),
                      std::min<size_t>(sizeof(s), mnl_attr_get_payload_len(attr)));
          c.rx_packets = s.rx_packets;
          c.tx_packets = s.tx_packets;
          c.rx_bytes = s.rx_bytes;
          c.tx_bytes = s.tx_bytes;
          c.rx_dropped = s.rx_dropped;
          c.tx_dropped = s.tx_dropped;
          break;
        }
      }
    });
    if (!name.empty()) out[name] = c;
  });
  return out;
}

Seg6LocalCounters RtnlSocket::UsidCounters(const std::string& prefix) {
  auto [want, want_len] = ParsePrefix(prefix);
  Seg6LocalCounters result;
  char buf[256];
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf);
  nlh->nlmsg_type = RTM_GETROUTE;
  auto* rtm = static_cast<rtmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(rtmsg)));
  rtm->rtm_family = AF_INET6;
  Dump(nlh, [&](const nlmsghdr* msg) {
    const auto* r = static_cast<const rtmsg*>(mnl_nlmsg_get_payload(msg));
    if (r->rtm_dst_len != want_len) return;
    bool match = false;
    const nlattr* encap = nullptr;
    ForEachAttr(msg, sizeof(rtmsg), [&](const nlattr* attr) {
      if (mnl_attr_get_type(attr) == RTA_DST && mnl_attr_get_payload_len(attr) == sizeof(in6_addr))
        match = std::memcmp(mnl_attr_get_payload(attr), &want, sizeof(want)) == 0;
      if (mnl_attr_get_type(attr) == RTA_ENCAP) encap = attr;
    });
    if (!match || !encap) return;
    ForEachNested(encap, [&](const nlattr* inner) {
      if (mnl_attr_get_type(inner) != SEG6_LOCAL_COUNTERS) return;
      ForEachNested(inner, [&](const nlattr* cnt) {
        uint64_t v;
        std::memcpy(&v, mnl_attr_get_payload(cnt), sizeof(v));
        switch (mnl_attr_get_type(cnt)) {
          case SEG6_LOCAL_CNT_PACKETS: result.packets = v; break;
          case SEG6_LOCAL_CNT_BYTES: result.bytes = v; break;
          case SEG6_LOCAL_CNT_ERRORS: result.errors = v; break;
        }
      });
    });
  });
  return result;
}

}  // namespace mrclab::emulator::netns
