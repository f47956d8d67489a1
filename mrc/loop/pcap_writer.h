// Minimal pcap writer (LINKTYPE_RAW, IPv6): wraps UDP payloads in IPv6 + UDP headers with a
// correct UDP checksum, so captures of the core's datagrams open in tshark/Wireshark
// (`tshark -d udp.port==4791,infiniband`). For tests and debugging, not for the data path.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "mrc/core/units.h"

namespace mrclab::mrc {

using Ipv6Address = std::array<uint8_t, 16>;

class PcapWriter {
 public:
  explicit PcapWriter(const std::string& path);
  ~PcapWriter();
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;
  bool ok() const { return file_ != nullptr; }
  void WriteUdp(Timestamp at, const Ipv6Address& src, uint16_t src_port, const Ipv6Address& dst,
                uint16_t dst_port, std::span<const uint8_t> payload);

 private:
  std::FILE* file_;
};

}  // namespace mrclab::mrc
