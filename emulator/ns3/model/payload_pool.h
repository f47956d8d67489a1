// PayloadPool: recycled byte buffers for SimPacket payloads. A simulated host sends one real
// datagram per packet; allocating and freeing a buffer for each showed up as a tenth of a
// step's time at 1,024 hosts. A buffer handed out by Copy() returns to the pool when the last
// SimPacket holding it is gone, and the next Copy() reuses it (most recently freed first, so
// it is likely still in cache).
//
// Contract: Copy(bytes) returns an immutable shared buffer holding `bytes`. The pool lives
// as long as any of its buffers (each holds a reference to it). Not thread-safe: one
// simulation, one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace mrclab::emulator::sim {

class PayloadPool : public std::enable_shared_from_this<PayloadPool> {
 public:
  // Construct with std::make_shared (the buffers keep the pool alive).
  std::shared_ptr<const std::vector<uint8_t>> Copy(std::span<const uint8_t> bytes) {
    std::unique_ptr<std::vector<uint8_t>> buffer;
    if (free_.empty()) {
      buffer = std::make_unique<std::vector<uint8_t>>();
    } else {
      buffer = std::move(free_.back());
      free_.pop_back();
    }
    buffer->assign(bytes.begin(), bytes.end());  // within its capacity: no allocation
    return {buffer.release(), [pool = shared_from_this()](const std::vector<uint8_t>* b) {
              pool->free_.emplace_back(const_cast<std::vector<uint8_t>*>(b));
            }};
  }
  // Buffers waiting for reuse.
  size_t FreeBuffers() const { return free_.size(); }

 private:
  std::vector<std::unique_ptr<std::vector<uint8_t>>> free_;
};

}  // namespace mrclab::emulator::sim
