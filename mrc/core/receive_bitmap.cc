#include "mrc/core/receive_bitmap.h"

#include <algorithm>
#include <bit>

namespace mrclab::mrc {

ReceiveBitmap::ReceiveBitmap(uint64_t first_psn, size_t window_packets)
    : next_(first_psn), mask_(std::bit_ceil(std::max<size_t>(window_packets, 64)) - 1),
      words_((mask_ + 1) / 64, 0) {}

ReceiveBitmap::Result ReceiveBitmap::Mark(uint64_t psn) {
  if (psn < next_) return Result::kDuplicate;
  if (psn - next_ > mask_) return Result::kOutOfWindow;
  uint64_t& w = words_[(psn & mask_) >> 6];
  const uint64_t bit = uint64_t{1} << (psn & 63);
  if (w & bit) return Result::kDuplicate;
  w |= bit;
  // Slide over the contiguous prefix, clearing bits so the slots can be reused one window on.
  while (Bit(next_)) {
    words_[(next_ & mask_) >> 6] &= ~(uint64_t{1} << (next_ & 63));
    ++next_;
  }
  return Result::kNew;
}

bool ReceiveBitmap::Received(uint64_t psn) const {
  if (psn < next_) return true;
  if (psn - next_ > mask_) return false;
  return Bit(psn);
}

uint64_t ReceiveBitmap::Sack(uint64_t base) const {
  uint64_t bits = 0;
  for (int i = 0; i < 64; ++i)
    if (Received(base + i)) bits |= uint64_t{1} << i;
  return bits;
}

}  // namespace mrclab::mrc
