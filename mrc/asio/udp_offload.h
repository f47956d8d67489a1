// UDP segmentation offload for the Asio driver (Linux >= 4.18 GSO, >= 5.0 GRO).
//
//   send  UdpGsoRuns splits a socket's packets (in core order) into runs that one sendmsg
//         with a UDP_SEGMENT control message can carry: equal-size packets, only the last of
//         a run shorter, at most kMaxGsoSegments and kMaxGsoBytes. The kernel builds one
//         super-packet and cuts it into the original datagrams at the device (or, over a
//         veth, at the receiving socket). GSO needs a real UDP checksum: zero-checksum
//         sockets (srv6 mode, whose uSID rewrites would break it) send one packet per message.
//   recv  a UDP_GRO socket receives such a super-packet whole, with its segment size in a
//         UDP_GRO control message; GroSegmentSize reads it and the driver cuts it up again.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <span>
#include <vector>

namespace mrclab::mrc {

constexpr size_t kMaxGsoSegments = 64;         // UDP_MAX_SEGMENTS on every kernel with GSO
constexpr size_t kMaxGsoBytes = 65535 - 8;     // one IPv6 payload, less the UDP header
constexpr size_t kUdpOffloadControlBytes = CMSG_SPACE(sizeof(int));

struct GsoRun {
  size_t first = 0;  // index into the lengths given
  size_t count = 0;
  size_t segment_bytes = 0;  // UDP_SEGMENT value: the run's first (largest) packet
};

// Runs over packets of the given lengths, all for one destination, in order.
std::vector<GsoRun> UdpGsoRuns(std::span<const size_t> lengths);

// Tries UDP_SEGMENT on the socket (a probe that changes nothing); false if the kernel lacks it.
bool SocketSupportsGso(int fd);
// Sets UDP_GRO; false if the kernel lacks it (the socket then receives single datagrams).
bool EnableUdpGro(int fd);

// Writes a UDP_SEGMENT control message into `control` (kUdpOffloadControlBytes) and points
// `msg` at it.
void SetGsoSegment(msghdr& msg, unsigned char* control, size_t segment_bytes);
// The segment size of a received UDP_GRO super-packet, or 0 for a single datagram.
size_t GroSegmentSize(const msghdr& msg);

}  // namespace mrclab::mrc
