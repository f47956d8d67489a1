#include "emulator/ns3/model/ecmp_hash.h"

#include <cstring>

namespace mrclab::emulator::sim {

namespace {

// MurmurHash3's 64-bit finaliser: every input bit affects every output bit.
uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

uint64_t Word(const Ipv6Address& address, int half) {
  uint64_t w;
  std::memcpy(&w, address.data() + 8 * half, sizeof w);
  return w;
}

constexpr uint64_t kNextHeaderUdp = 17;

}  // namespace

uint64_t SwitchHashSeed(std::string_view switch_name, uint64_t fabric_seed) {
  uint64_t fnv = 0xcbf29ce484222325ULL;  // FNV-1a
  for (char c : switch_name) {
    fnv ^= static_cast<uint8_t>(c);
    fnv *= 0x100000001b3ULL;
  }
  return Mix(fnv ^ Mix(fabric_seed));
}

uint32_t FlowHash(const SimPacket& packet, uint64_t seed) {
  uint64_t h = seed;
  h = Mix(h ^ Word(packet.src, 0));
  h = Mix(h ^ Word(packet.src, 1));
  h = Mix(h ^ Word(packet.dst, 0));
  h = Mix(h ^ Word(packet.dst, 1));
  h = Mix(h ^ (static_cast<uint64_t>(packet.src_port) << 32 |
               static_cast<uint64_t>(packet.dst_port) << 16 | kNextHeaderUdp));
  return static_cast<uint32_t>(h >> 32);
}

}  // namespace mrclab::emulator::sim
