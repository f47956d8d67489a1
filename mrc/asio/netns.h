// Network-namespace helpers for the Asio driver. A socket belongs to the namespace it was
// created in, forever; so OpenUdpSocket creates it on a short-lived thread that setns()es into
// /run/netns/NAME and back, and one process can hold sockets in many hosts' namespaces.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include <netinet/in.h>

namespace mrclab::mrc {

class NetnsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs `fn` on a thread inside namespace `netns` ("" = the caller's) and returns its result.
int RunInNetns(const std::string& netns, const std::function<int()>& fn);

struct UdpSocketOptions {
  std::string netns;          // "" = current namespace
  std::string local_address;  // IPv6 literal; "" or "::" = any
  uint16_t local_port = 0;
  std::string connect_address;  // optional: connect() to [address]:connect_port
  uint16_t connect_port = 0;
  bool zero_checksum = true;    // UDP_NO_CHECK6_TX and _RX (uSID rewriting breaks checksums)
  int buffer_bytes = 8 << 20;   // SO_SNDBUF/SO_RCVBUF (FORCE variants when root)
  bool nonblocking = true;
};

// Opens an IPv6 UDP socket with the options above; throws NetnsError with errno text.
int OpenUdpSocket(const UdpSocketOptions& options);

sockaddr_in6 ParseIpv6(const std::string& address, uint16_t port);

}  // namespace mrclab::mrc
