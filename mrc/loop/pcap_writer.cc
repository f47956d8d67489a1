#include "mrc/loop/pcap_writer.h"

#include <vector>

namespace mrclab::mrc {
namespace {

void Put16(std::vector<uint8_t>& v, uint16_t x) { v.push_back(x >> 8); v.push_back(x & 0xFF); }

template <typename T>
void WriteLe(std::FILE* f, T v) {
  uint8_t b[sizeof(T)];
  for (size_t i = 0; i < sizeof(T); ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  std::fwrite(b, 1, sizeof(T), f);
}

}  // namespace

PcapWriter::PcapWriter(const std::string& path) : file_(std::fopen(path.c_str(), "wb")) {
  if (!file_) return;
  WriteLe<uint32_t>(file_, 0xA1B23C4D);  // nanosecond-resolution pcap
  WriteLe<uint16_t>(file_, 2);
  WriteLe<uint16_t>(file_, 4);
  WriteLe<uint32_t>(file_, 0);
  WriteLe<uint32_t>(file_, 0);
  WriteLe<uint32_t>(file_, 65535);
  WriteLe<uint32_t>(file_, 101);  // LINKTYPE_RAW
}

PcapWriter::~PcapWriter() {
  if (file_) std::fclose(file_);
}

void PcapWriter::WriteUdp(Timestamp at, const Ipv6Address& src, uint16_t src_port,
                          const Ipv6Address& dst, uint16_t dst_port,
                          std::span<const uint8_t> payload) {
  if (!file_) return;
  const uint16_t udp_len = static_cast<uint16_t>(8 + payload.size());
  std::vector<uint8_t> pkt;
  pkt.reserve(40 + udp_len);
  pkt.insert(pkt.end(), {0x60, 0, 0, 0});
  Put16(pkt, udp_len);
  pkt.push_back(17);  // UDP
  pkt.push_back(64);
  pkt.insert(pkt.end(), src.begin(), src.end());
  pkt.insert(pkt.end(), dst.begin(), dst.end());
  Put16(pkt, src_port);
  Put16(pkt, dst_port);
  Put16(pkt, udp_len);
  Put16(pkt, 0);
  pkt.insert(pkt.end(), payload.begin(), payload.end());
  // UDP checksum over the IPv6 pseudo-header and the datagram.
  uint32_t sum = udp_len + 17;
  for (size_t i = 8; i < 40; i += 2) sum += (pkt[i] << 8) | pkt[i + 1];
  for (size_t i = 40; i < pkt.size(); i += 2)
    sum += (pkt[i] << 8) | (i + 1 < pkt.size() ? pkt[i + 1] : 0);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  uint16_t csum = static_cast<uint16_t>(~sum);
  if (csum == 0) csum = 0xFFFF;
  pkt[46] = csum >> 8;
  pkt[47] = csum & 0xFF;

  const int64_t ns = at.nanoseconds();
  WriteLe<uint32_t>(file_, static_cast<uint32_t>(ns / 1000000000));
  WriteLe<uint32_t>(file_, static_cast<uint32_t>(ns % 1000000000));
  WriteLe<uint32_t>(file_, static_cast<uint32_t>(pkt.size()));
  WriteLe<uint32_t>(file_, static_cast<uint32_t>(pkt.size()));
  std::fwrite(pkt.data(), 1, pkt.size(), file_);
}

}  // namespace mrclab::mrc
