#include "mrc/core/receive_bitmap.h"

#include <algorithm>
#include <bit>
#include <utility>

namespace mrclab::mrc {

ReceiveBitmap::ReceiveBitmap(uint64_t first_psn, size_t window_packets)
    : next_(first_psn), window_(std::bit_ceil(std::max<size_t>(window_packets, 64))) {}

void ReceiveBitmap::Grow(uint64_t packets) {
  const uint64_t ring = std::bit_ceil(packets);
  std::vector<uint64_t> words(ring / 64, 0);
  const uint64_t mask = ring - 1;
  // Every arrived PSN lies in [next_, next_ + old ring): place each set bit at its new slot.
  for (uint64_t psn = next_; psn <= next_ + mask_; ++psn)
    if (Bit(psn)) words[(psn & mask) >> 6] |= uint64_t{1} << (psn & 63);
  words_ = std::move(words);
  mask_ = mask;
}

ReceiveBitmap::Result ReceiveBitmap::Mark(uint64_t psn) {
  if (psn < next_) return Result::kDuplicate;
  if (psn - next_ >= window_) return Result::kOutOfWindow;
  if (psn - next_ > mask_) Grow(psn - next_ + 1);
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
  // A word at a time (a bit at a time was 5% of a simulated ring step): every PSN below the
  // cumulative point has arrived, and the window's bits are read from the ring.
  uint64_t bits = 0;
  if (base < next_) bits = next_ - base >= 64 ? ~uint64_t{0} : (uint64_t{1} << (next_ - base)) - 1;
  const uint64_t from = std::max(base, next_);
  const uint64_t end = std::min(base + 64, next_ + mask_ + 1);  // past the ring nothing has arrived
  if (from < end) {
    const uint64_t n = end - from;
    bits |= (RingBits(from) & (n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1)) << (from - base);
  }
  return bits;
}

uint64_t ReceiveBitmap::RingBits(uint64_t psn) const {
  const uint64_t pos = psn & mask_;
  const size_t word = pos >> 6;
  const unsigned offset = pos & 63;
  const uint64_t low = words_[word] >> offset;
  if (offset == 0) return low;
  return low | words_[(word + 1) % words_.size()] << (64 - offset);
}

}  // namespace mrclab::mrc
