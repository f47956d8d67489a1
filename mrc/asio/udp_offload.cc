#include "mrc/asio/udp_offload.h"

#include <netinet/in.h>
#include <netinet/udp.h>

#include <cstring>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

namespace mrclab::mrc {

std::vector<GsoRun> UdpGsoRuns(std::span<const size_t> lengths) {
  std::vector<GsoRun> runs;
  for (size_t i = 0; i < lengths.size(); ++i) {
    GsoRun* run = runs.empty() ? nullptr : &runs.back();
    const bool joins = run && run->count < kMaxGsoSegments && lengths[i] <= run->segment_bytes &&
                       lengths[i - 1] == run->segment_bytes &&  // only the last may be shorter
                       run->count * run->segment_bytes + lengths[i] <= kMaxGsoBytes;
    if (joins)
      ++run->count;
    else
      runs.push_back({i, 1, lengths[i]});
  }
  return runs;
}

bool SocketSupportsGso(int fd) {
  int off = 0;
  return setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &off, sizeof off) == 0;
}

bool EnableUdpGro(int fd) {
  int on = 1;
  return setsockopt(fd, IPPROTO_UDP, UDP_GRO, &on, sizeof on) == 0;
}

void SetGsoSegment(msghdr& msg, unsigned char* control, size_t segment_bytes) {
  std::memset(control, 0, kUdpOffloadControlBytes);
  msg.msg_control = control;
  msg.msg_controllen = kUdpOffloadControlBytes;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = IPPROTO_UDP;
  c->cmsg_type = UDP_SEGMENT;
  c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
  const uint16_t size = static_cast<uint16_t>(segment_bytes);
  std::memcpy(CMSG_DATA(c), &size, sizeof size);
  msg.msg_controllen = CMSG_SPACE(sizeof(uint16_t));
}

size_t GroSegmentSize(const msghdr& msg) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(const_cast<msghdr*>(&msg), c)) {
    if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO) {
      int size = 0;
      std::memcpy(&size, CMSG_DATA(c), sizeof size);
      return size > 0 ? static_cast<size_t>(size) : 0;
    }
  }
  return 0;
}

}  // namespace mrclab::mrc
