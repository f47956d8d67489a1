#include "mrc/core/receive_bitmap.h"

#include <algorithm>
#include <bit>
#include <utility>

namespace mrclab::mrc {

ReceiveBitmap::ReceiveBitmap(uint64_t first_psn, size_t window_packets)
    : next_(first_psn), window_(std::bit_ceil(std::max<size_t>(window_packets, 64))) {}

void ReceiveBitmap::Grow(uint64_t packets) {
  const uint64_t ring = std::bit_ceil(packets);
  std::vector<uint64_t> words(ring / 64 * 2, 0);
  const uint64_t mask = ring - 1;
  // Every arrived PSN lies in [next_, next_ + old ring): move both its bits to its new slot.
  for (uint64_t psn = next_; psn <= next_ + mask_; ++psn) {
    const size_t from = Slot(psn), to = ((psn & mask) >> 6) * 2;
    words[to] |= words_[from] & BitOf(psn);
    words[to + 1] |= words_[from + 1] & BitOf(psn);
  }
  words_ = std::move(words);
  mask_ = mask;
}

ReceiveBitmap::Result ReceiveBitmap::Mark(uint64_t psn) {
  if (psn < next_) return Result::kDuplicate;
  if (psn - next_ >= window_) return Result::kOutOfWindow;
  if (psn - next_ > mask_) Grow(psn - next_ + 1);
  const size_t slot = Slot(psn);
  const uint64_t bit = BitOf(psn);
  if (words_[slot] & bit) return Result::kDuplicate;
  if (psn == next_) {
    // In order: the cumulative point reports it. Slide over the contiguous prefix, clearing
    // both bits so the slots can be reused one window on.
    ++next_;
    while (Bit(next_)) {
      const size_t s = Slot(next_);
      const uint64_t b = BitOf(next_);
      words_[s] &= ~b;
      if (words_[s + 1] & b) {
        words_[s + 1] &= ~b;
        --unreported_;
      }
      ++next_;
    }
  } else {
    words_[slot] |= bit;
    words_[slot + 1] |= bit;
    ++unreported_;
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

void ReceiveBitmap::MarkReported(uint64_t base, uint64_t echo) {
  if (unreported_ == 0) return;
  const uint64_t from = std::max(base, next_);
  const uint64_t end = std::min(base + 64, next_ + mask_ + 1);
  if (from < end) ClearUnreported(from, end - from);
  if (echo >= next_ && echo - next_ <= mask_) ClearUnreported(echo, 1);
}

void ReceiveBitmap::ClearUnreported(uint64_t from, uint64_t n) {
  while (n > 0) {
    const unsigned offset = from & 63;
    const uint64_t take = std::min<uint64_t>(n, 64 - offset);
    const uint64_t mask = (take == 64 ? ~uint64_t{0} : (uint64_t{1} << take) - 1) << offset;
    uint64_t& w = words_[Slot(from) + 1];
    unreported_ -= std::popcount(w & mask);
    w &= ~mask;
    from += take;
    n -= take;
  }
}

uint64_t ReceiveBitmap::FirstUnreported() const {
  // A word at a time from the cumulative point round the ring; unreported_ > 0 means one is set.
  for (uint64_t psn = next_;; psn = (psn | 63) + 1) {
    const uint64_t bits = words_[Slot(psn) + 1] >> (psn & 63);
    if (bits) return psn + std::countr_zero(bits);
  }
}

uint64_t ReceiveBitmap::RingBits(uint64_t psn) const {
  const uint64_t pos = psn & mask_;
  const size_t word = (pos >> 6) * 2;
  const unsigned offset = pos & 63;
  const uint64_t low = words_[word] >> offset;
  if (offset == 0) return low;
  return low | words_[(word + 2) % words_.size()] << (64 - offset);
}

}  // namespace mrclab::mrc
