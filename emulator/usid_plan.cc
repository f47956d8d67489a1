#include "emulator/usid_plan.h"

#include <stdexcept>
#include <string>

namespace mrclab::emulator {
namespace {

uint16_t Make(int plane, int low12) {
  if (plane < 0 || plane >= kMaxPlanes) throw std::out_of_range("plane " + std::to_string(plane));
  return static_cast<uint16_t>(((plane + 1) << 12) | low12);
}

// First block: role nibble, index + 1 (0..254); then the role's overflow block of 1024.
int Low12(int first_block, int overflow_block, int index) {
  if (index < 0 || index >= kMaxSwitchesPerRole) throw std::out_of_range("index " + std::to_string(index));
  return index < 255 ? first_block + index + 1 : overflow_block + (index - 255);
}

}  // namespace

uint16_t SwitchUsid(int plane, SwitchRole role, int index) {
  return role == SwitchRole::kSpine ? Make(plane, Low12(0x100, 0x400, index))
                                    : Make(plane, Low12(0x200, 0x800, index));
}

uint16_t GlobalHostPortUsid(int plane, int host) {
  if (host < 0 || host >= kMaxGlobalHosts) throw std::out_of_range("host " + std::to_string(host));
  return Make(plane, 0x300 + host + 1);
}

uint16_t LeafLocalHostPortUsid(int plane, int position) {
  if (position < 0 || position >= kMaxHostPortsPerLeaf)
    throw std::out_of_range("position " + std::to_string(position));
  return Make(plane, 0xc00 + position);
}

}  // namespace mrclab::emulator
