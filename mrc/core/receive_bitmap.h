// Receive bitmap: which PSNs of a window [cumulative, cumulative + window) have arrived. The
// cumulative point advances over the contiguous prefix. Used by the MRC responder for
// duplicate detection and to build SACKs; the window bounds how far ahead a sender may run.
//
// The bits live in a ring that starts at 64 PSNs and doubles when a PSN arrives beyond it, up
// to the window: a QP whose sender runs a few packets ahead keeps one word, not a whole
// window's (1 KiB at 8,192 packets, for each of a 1,024-host all-to-all's million QPs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mrc/core/prefetch.h"

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
  uint64_t window() const { return window_; }
  // Bit i set iff base + i has arrived.
  uint64_t Sack(uint64_t base) const;
  // PSNs the ring holds now (64 up to the window).
  uint64_t ring_packets() const { return mask_ + 1; }
  // Prefetches the word the next PSN's bit is in (a hint; changes nothing).
  void Prefetch() const { PrefetchLine(&words_[(next_ & mask_) >> 6]); }

 private:
  bool Bit(uint64_t psn) const { return words_[(psn & mask_) >> 6] >> (psn & 63) & 1; }
  // The ring's 64 bits from psn's on (bit i: psn + i), wrapping round the ring.
  uint64_t RingBits(uint64_t psn) const;
  // Makes the ring hold at least `packets` PSNs from the cumulative point on.
  void Grow(uint64_t packets);
  uint64_t next_;
  uint64_t window_;
  uint64_t mask_ = 63;  // ring PSNs - 1; nothing at or past next_ + mask_ + 1 has arrived
  std::vector<uint64_t> words_ = std::vector<uint64_t>(1, 0);
};

}  // namespace mrclab::mrc
