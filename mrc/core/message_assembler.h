// Message assembler (MRC responder): counts the bytes placed for each message, whatever order
// its packets arrive in, and releases messages in message-sequence order once all their bytes
// are placed, so completions keep verbs' ordering. Duplicate packets must be filtered before
// (ReceiveBitmap), since bytes are counted, not tracked per byte.
#pragma once

#include <cstdint>
#include <optional>

#include "mrc/core/ring_queue.h"

namespace mrclab::mrc {

class MessageAssembler {
 public:
  explicit MessageAssembler(uint32_t max_ahead = 1u << 16) : max_ahead_(max_ahead) {}

  enum class Result { kOk, kOutOfRange, kInconsistent };
  // `message_length` is the RETH length; `immediate` is present on the packet carrying ImmDt.
  Result Add(uint32_t msg_seq, uint32_t message_length, uint32_t bytes,
             std::optional<uint32_t> immediate);

  struct Completed {
    uint32_t msg_seq;
    uint32_t length;
    std::optional<uint32_t> immediate;
  };
  std::optional<Completed> PopCompleted();
  uint32_t next() const { return next_; }
  // Prefetches the next message's slot (a hint; changes nothing).
  void Prefetch() const { msgs_.Prefetch(); }

 private:
  struct Msg {
    bool seen = false;
    uint32_t length = 0;
    uint64_t placed = 0;
    std::optional<uint32_t> immediate;
  };
  uint32_t max_ahead_;
  uint32_t next_ = 0;
  RingQueue<Msg> msgs_;  // msgs_[i] is message next_ + i
};

}  // namespace mrclab::mrc
