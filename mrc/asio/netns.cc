#include "mrc/asio/netns.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>

#ifndef UDP_NO_CHECK6_TX
#define UDP_NO_CHECK6_TX 101
#endif
#ifndef UDP_NO_CHECK6_RX
#define UDP_NO_CHECK6_RX 102
#endif

namespace mrclab::mrc {
namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

int RunInNetns(const std::string& netns, const std::function<int()>& fn) {
  if (netns.empty()) return fn();
  int result = -1;
  std::exception_ptr error;
  // setns() affects only the calling thread; a dedicated thread keeps the caller untouched.
  std::thread t([&] {
    try {
      const int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
      if (self < 0) throw NetnsError(Errno("open own netns"));
      const std::string path = "/run/netns/" + netns;
      const int target = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (target < 0) {
        close(self);
        throw NetnsError(Errno("open " + path));
      }
      if (setns(target, CLONE_NEWNET) != 0) {
        close(self);
        close(target);
        throw NetnsError(Errno("setns " + netns));
      }
      close(target);
      try {
        result = fn();
      } catch (...) {
        error = std::current_exception();
      }
      setns(self, CLONE_NEWNET);
      close(self);
    } catch (...) {
      error = std::current_exception();
    }
  });
  t.join();
  if (error) std::rethrow_exception(error);
  return result;
}

sockaddr_in6 ParseIpv6(const std::string& address, uint16_t port) {
  sockaddr_in6 sa{};
  sa.sin6_family = AF_INET6;
  sa.sin6_port = htons(port);
  const std::string a = address.empty() ? "::" : address;
  if (inet_pton(AF_INET6, a.c_str(), &sa.sin6_addr) != 1)
    throw NetnsError("not an IPv6 address: " + address);
  return sa;
}

int OpenUdpSocket(const UdpSocketOptions& o) {
  const sockaddr_in6 local = ParseIpv6(o.local_address, o.local_port);
  return RunInNetns(o.netns, [&] {
    int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | (o.nonblocking ? SOCK_NONBLOCK : 0), 0);
    if (fd < 0) throw NetnsError(Errno("socket"));
    auto fail = [&](const std::string& what) {
      const std::string msg = Errno(what);
      close(fd);
      throw NetnsError(msg);
    };
    int one = 1;
    if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0) fail("IPV6_V6ONLY");
    if (o.zero_checksum) {
      if (setsockopt(fd, IPPROTO_UDP, UDP_NO_CHECK6_TX, &one, sizeof one) != 0) fail("UDP_NO_CHECK6_TX");
      if (setsockopt(fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, &one, sizeof one) != 0) fail("UDP_NO_CHECK6_RX");
    }
    if (o.buffer_bytes > 0) {
      int b = o.buffer_bytes;
      if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &b, sizeof b) != 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &b, sizeof b);
      if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &b, sizeof b) != 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &b, sizeof b);
    }
    if (bind(fd, reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0)
      fail("bind [" + o.local_address + "]:" + std::to_string(o.local_port));
    if (!o.connect_address.empty()) {
      const sockaddr_in6 peer = ParseIpv6(o.connect_address, o.connect_port);
      if (connect(fd, reinterpret_cast<const sockaddr*>(&peer), sizeof peer) != 0)
        fail("connect " + o.connect_address);
    }
    return fd;
  });
}

}  // namespace mrclab::mrc
