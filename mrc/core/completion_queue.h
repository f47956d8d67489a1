// Completion queue: work completions in the order the QPs produced them. Send completions
// arrive in posting order per QP; receive completions (Write-with-Immediate) in message order.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "mrc/core/prefetch.h"
#include "mrc/core/ring_queue.h"

namespace mrclab::mrc {

enum class WcStatus : uint8_t { kSuccess, kRetryExceeded, kRemoteAccessError, kFlushed };
enum class WcOpcode : uint8_t { kWrite, kWriteWithImm, kRecvWriteWithImm };
std::string_view ToString(WcStatus s);

struct Completion {
  uint64_t wr_id = 0;
  uint32_t qpn = 0;
  WcStatus status = WcStatus::kSuccess;
  WcOpcode opcode = WcOpcode::kWrite;
  uint32_t byte_len = 0;
  std::optional<uint32_t> immediate;
};

class CompletionQueue {
 public:
  void Push(const Completion& c) { q_.push_back(c); }
  std::optional<Completion> Poll() {
    if (q_.empty()) return std::nullopt;
    Completion c = q_.front();
    q_.pop_front();
    return c;
  }
  size_t size() const { return q_.size(); }
  bool empty() const { return q_.empty(); }
  // Prefetches the CQ and the slots the next Push and Poll touch (a hint; changes nothing).
  void Prefetch() const {
    PrefetchLine(this);
    q_.Prefetch();
  }

 private:
  RingQueue<Completion> q_;
};

}  // namespace mrclab::mrc
