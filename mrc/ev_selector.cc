#include "mrc/ev_selector.h"

namespace mrclab::mrc {

std::optional<size_t> SprayingSelector::Pick(const EvTable& table, Timestamp now, int exclude) {
  const size_t n = table.size();
  if (n == 0) return std::nullopt;
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (cursor_ + k) % n;
    if (static_cast<int>(i) != exclude && table.Usable(i, now)) {
      cursor_ = i + 1;
      return i;
    }
  }
  // Nothing usable: the GOOD EV whose penalty ends first, preferring not `exclude`.
  std::optional<size_t> best;
  for (size_t i = 0; i < n; ++i) {
    if (table.at(i).state != EvState::kGood) continue;
    if (!best || (static_cast<int>(*best) == exclude && static_cast<int>(i) != exclude) ||
        ((static_cast<int>(i) != exclude || static_cast<int>(*best) == exclude) &&
         table.at(i).penalized_until < table.at(*best).penalized_until))
      best = i;
  }
  if (best) return best;
  // No GOOD EV at all (min_active = 0): keep trying ASSUMED_BAD ones round-robin.
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (cursor_ + k) % n;
    if (table.at(i).state == EvState::kAssumedBad &&
        (static_cast<int>(i) != exclude || k == n - 1 || n == 1)) {
      cursor_ = i + 1;
      return i;
    }
  }
  if (exclude >= 0 && table.at(exclude).state == EvState::kAssumedBad) return exclude;
  return std::nullopt;
}

size_t EcmpHashIndex(uint32_t local_qpn, uint32_t remote_qpn, size_t ev_count) {
  if (ev_count == 0) return 0;
  uint64_t h = (static_cast<uint64_t>(local_qpn) << 32) ^ remote_qpn;
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDULL;
  h ^= h >> 33;
  return static_cast<size_t>(h % ev_count);
}

}  // namespace mrclab::mrc
