// Receive bitmap: which PSNs of a window [cumulative, cumulative + window) have arrived. The
// cumulative point advances over the contiguous prefix. Used by the MRC responder for
// duplicate detection and to build SACKs; the window bounds how far ahead a sender may run.
//
// It also keeps which arrivals beyond the cumulative point no ACK has reported yet
// (MarkReported clears them), so that the responder can report every one: an arrival no ACK
// reports looks lost to the requester once a packet sent after it is acknowledged.
//
// The bits live in a ring that starts at 64 PSNs and doubles when a PSN arrives beyond it, up
// to the window: a QP whose sender runs a few packets ahead keeps one word pair, not a whole
// window's (2 KiB at 8,192 packets, for each of a 1,024-host all-to-all's million QPs).
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
  // An ACK carried Sack(base) and echoed `echo`: those PSNs count as reported from now on.
  void MarkReported(uint64_t base, uint64_t echo);
  // Whether a PSN past the cumulative point arrived that no ACK has reported, and the
  // lowest such PSN (only when there is one).
  bool HasUnreported() const { return unreported_ > 0; }
  uint64_t FirstUnreported() const;
  // PSNs the ring holds now (64 up to the window).
  uint64_t ring_packets() const { return mask_ + 1; }
  // Prefetches the word pair the next PSN's bits are in (a hint; changes nothing).
  void Prefetch() const { PrefetchLine(&words_[Slot(next_)]); }

 private:
  // words_ holds a pair per 64 PSNs of the ring: arrived bits, then unreported bits (one line).
  size_t Slot(uint64_t psn) const { return ((psn & mask_) >> 6) * 2; }
  static uint64_t BitOf(uint64_t psn) { return uint64_t{1} << (psn & 63); }
  bool Bit(uint64_t psn) const { return words_[Slot(psn)] & BitOf(psn); }
  // The ring's 64 arrived bits from psn's on (bit i: psn + i), wrapping round the ring.
  uint64_t RingBits(uint64_t psn) const;
  // Clears the unreported bits of [from, from + n), n <= 64, all within the ring.
  void ClearUnreported(uint64_t from, uint64_t n);
  // Makes the ring hold at least `packets` PSNs from the cumulative point on.
  void Grow(uint64_t packets);
  uint64_t next_;
  uint64_t window_;
  uint64_t mask_ = 63;  // ring PSNs - 1; nothing at or past next_ + mask_ + 1 has arrived
  uint64_t unreported_ = 0;  // unreported bits set (all at or past next_)
  std::vector<uint64_t> words_ = std::vector<uint64_t>(2, 0);
};

}  // namespace mrclab::mrc
