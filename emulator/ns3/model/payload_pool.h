// Payload and PayloadPool: the byte buffers SimPacket payloads live in. A simulated host sends one
// real datagram per packet; allocating and freeing a buffer for each showed up as a tenth of a
// step's time at 1,024 hosts, and a std::shared_ptr per packet (its control block allocated,
// its counts atomic) still cost a few percent at 8,192. A buffer handed out by Copy() returns to
// the pool when the last Payload holding it is gone, and the next Copy() reuses it (most
// recently freed first, so it is likely still in cache). Up to kInlineBytes (a virtual payload's
// headers, an ACK) sit in the buffer itself: the receiver reads them with the count, in the same
// cache lines.
//
// Contract:
//   - Copy(bytes) returns a Payload holding `bytes`, immutable; copies of a Payload share it.
//   - Payload::Own(bytes) makes one that belongs to no pool (freed with its last holder).
//   - A pool may go before its buffers: those still held are freed by their last holder.
//   - Not thread-safe (plain reference counts): one simulation, one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace mrclab::emulator::sim {

class PayloadPool;

class Payload {
 public:
  static constexpr size_t kInlineBytes = 96;

  Payload() = default;
  static Payload Own(std::span<const uint8_t> bytes) {
    Payload p(new Buffer);
    p.buffer_->Assign(bytes);
    return p;
  }
  Payload(const Payload& other) : buffer_(other.buffer_) {
    if (buffer_) ++buffer_->refs;
  }
  Payload(Payload&& other) noexcept : buffer_(std::exchange(other.buffer_, nullptr)) {}
  Payload& operator=(Payload other) noexcept {
    std::swap(buffer_, other.buffer_);
    return *this;
  }
  ~Payload() { reset(); }

  explicit operator bool() const { return buffer_ != nullptr; }
  std::span<const uint8_t> operator*() const { return buffer_->Bytes(); }
  // Which buffer it holds (null: none), to tell shared and reused buffers apart.
  const void* get() const { return buffer_; }
  // Inline for the common case, a moved-from Payload (every hop destroys a few).
  void reset() {
    if (buffer_ != nullptr) Release(std::exchange(buffer_, nullptr));
  }

 private:
  friend class PayloadPool;
  struct Shared;
  struct Buffer {
    uint32_t refs = 1;
    uint32_t size = 0;
    Shared* pool = nullptr;                  // null: no pool's
    std::unique_ptr<uint8_t[]> heap;         // when size > kInlineBytes
    size_t heap_capacity = 0;
    uint8_t inline_bytes[kInlineBytes];

    std::span<const uint8_t> Bytes() const { return {size <= kInlineBytes ? inline_bytes : heap.get(), size}; }
    void Assign(std::span<const uint8_t> bytes) {
      size = static_cast<uint32_t>(bytes.size());
      uint8_t* to = inline_bytes;
      if (bytes.size() > kInlineBytes) {
        if (heap_capacity < bytes.size()) {
          heap = std::make_unique_for_overwrite<uint8_t[]>(bytes.size());
          heap_capacity = bytes.size();
        }
        to = heap.get();
      }
      if (!bytes.empty()) std::memcpy(to, bytes.data(), bytes.size());
    }
  };
  explicit Payload(Buffer* buffer) : buffer_(buffer) {}
  // Drops a holder's reference: the last one returns the buffer to its pool (or frees it).
  static inline void Release(Buffer* b);
  Buffer* buffer_ = nullptr;
};

// What a pool's buffers point at; outlives the pool while any of them is held.
struct Payload::Shared {
  std::vector<Buffer*> free;
  size_t held = 0;        // buffers handed out and not back yet
  bool orphaned = false;  // the pool is gone
};

class PayloadPool {
 public:
  PayloadPool() : shared_(new Payload::Shared) {}
  ~PayloadPool() {
    for (Payload::Buffer* b : shared_->free) delete b;
    shared_->free.clear();
    if (shared_->held == 0) delete shared_;
    else shared_->orphaned = true;
  }
  PayloadPool(const PayloadPool&) = delete;
  PayloadPool& operator=(const PayloadPool&) = delete;

  Payload Copy(std::span<const uint8_t> bytes) {
    Payload::Buffer* buffer;
    if (shared_->free.empty()) {
      buffer = new Payload::Buffer;
      buffer->pool = shared_;
    } else {
      buffer = shared_->free.back();
      shared_->free.pop_back();
      buffer->refs = 1;
    }
    buffer->Assign(bytes);  // a reused buffer keeps its heap part: no allocation
    ++shared_->held;
    return Payload(buffer);
  }
  // Buffers waiting for reuse.
  size_t FreeBuffers() const { return shared_->free.size(); }

 private:
  Payload::Shared* shared_;
};

inline void Payload::Release(Buffer* b) {
  if (--b->refs > 0) return;
  Shared* pool = b->pool;
  if (pool == nullptr) {
    delete b;
    return;
  }
  --pool->held;
  if (!pool->orphaned) {
    pool->free.push_back(b);
    return;
  }
  delete b;
  if (pool->held == 0) delete pool;
}

}  // namespace mrclab::emulator::sim
