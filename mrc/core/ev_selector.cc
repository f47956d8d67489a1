#include "mrc/core/ev_selector.h"

namespace mrclab::mrc {

std::optional<size_t> SprayingSelector::Pick(const EvTable& table, Timestamp now, int exclude) {
  const size_t n = table.size();
  if (n == 0) return std::nullopt;
  // A retransmission first tries another plane: when a whole plane fails (a leaf loses its
  // routes, a NIC port dies) its EVs are only marked one loss at a time, and a packet must not
  // spend its retries walking the dead plane's EVs.
  if (exclude >= 0 && static_cast<size_t>(exclude) < n) {
    const int lost_plane = table.at(exclude).desc.plane;
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (cursor_ + k) % n;
      if (table.at(i).desc.plane != lost_plane && table.Usable(i, now)) {
        cursor_ = i + 1;
        return i;
      }
    }
  }
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (cursor_ + k) % n;
    if (static_cast<int>(i) != exclude && table.Usable(i, now)) {
      cursor_ = i + 1;
      return i;
    }
  }
  // Nothing usable: spray over GOOD EVs ignoring penalties, then allow `exclude`, then (no
  // GOOD EV at all, min_active = 0) keep trying ASSUMED_BAD ones.
  for (EvState state : {EvState::kGood, EvState::kAssumedBad}) {
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (cursor_ + k) % n;
      if (static_cast<int>(i) != exclude && table.at(i).state == state) {
        cursor_ = i + 1;
        return i;
      }
    }
    if (exclude >= 0 && static_cast<size_t>(exclude) < n && table.at(exclude).state == state)
      return static_cast<size_t>(exclude);
  }
  return std::nullopt;
}

size_t EcmpHashIndex(uint32_t local_qpn, uint32_t remote_qpn, size_t ev_count) {
  return EcmpHashIndex((static_cast<uint64_t>(local_qpn) << 32) ^ remote_qpn, ev_count);
}

size_t EcmpHashIndex(uint64_t flow_key, size_t ev_count) {
  if (ev_count == 0) return 0;
  uint64_t h = flow_key;
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDULL;
  h ^= h >> 33;
  return static_cast<size_t>(h % ev_count);
}

}  // namespace mrclab::mrc
