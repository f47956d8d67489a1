// Receive bitmap: which PSNs of a window [cumulative, cumulative + window) have arrived. The
// cumulative point advances over the contiguous prefix. Used by the MRC responder for
// duplicate detection and to build SACKs; the window bounds how far ahead a sender may run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mrclab::mrc {

class ReceiveBitmap {
 public:
  // `window_packets` is rounded up to a power of two (at least 64).
  ReceiveBitmap(uint64_t first_psn, size_t window_packets);

  enum class Result { kNew, kDuplicate, kOutOfWindow };
  Result Mark(uint64_t psn);
  bool Received(uint64_t psn) const;
  // Every PSN below this has arrived.
  uint64_t cumulative() const { return next_; }
  uint64_t window() const { return mask_ + 1; }
  // Bit i set iff base + i has arrived.
  uint64_t Sack(uint64_t base) const;

 private:
  bool Bit(uint64_t psn) const { return words_[(psn & mask_) >> 6] >> (psn & 63) & 1; }
  // The ring's 64 bits from psn's on (bit i: psn + i), wrapping round the ring.
  uint64_t RingBits(uint64_t psn) const;
  uint64_t next_;
  uint64_t mask_;
  std::vector<uint64_t> words_;
};

}  // namespace mrclab::mrc
