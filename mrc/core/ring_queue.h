// RingQueue: a FIFO of T in one power-of-two array used as a ring, for the queues a QP and a
// Context keep (work requests, packets in flight, the transmit log, receives, probe replies,
// completions, events). An empty queue that never held anything allocates nothing.
//
// Why not std::deque: libstdc++'s deque allocates a 64-byte map and a 512-byte block when it
// is constructed, empty or not. A QP kept seven of them, 4 KiB of its 9 KiB, so a 1,024-host
// all-to-all (a million QPs) spent 4 GiB on empty queues.
//
// Contract:
//   - push_back/emplace_back at the back, pop_front at the front; front(), back(), and
//     operator[](i) for the i-th element from the front. size(), empty(), clear(). Prefetch()
//     is a cache hint for the next of those.
//   - resize(n) appends default-constructed elements (it never shrinks).
//   - Iteration runs front to back (range-for).
//   - T must be default-constructible and movable. A popped slot is reset to T{}.
//   - Growing (a push into a full ring) moves every element, so references and iterators are
//     invalidated by any push or resize, unlike std::deque's references.
//   - The first push allocates 4 slots; a full ring doubles, up to 2^31 slots (one more push
//     throws std::length_error). A ring whose last element is popped keeps its array up to
//     kKeptSlots slots and frees a larger one, so a burst's peak is not held by an idle QP.
//   - Its header is 24 bytes (32-bit indexes): a QP holds seven rings, and their headers sit on
//     the lines every datagram reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <utility>

#include "mrc/core/prefetch.h"

namespace mrclab::mrc {

template <typename T>
class RingQueue {
 public:
  static constexpr size_t kFirstSlots = 4;
  static constexpr size_t kKeptSlots = 64;
  static constexpr size_t kMaxSlots = size_t{1} << 31;

  RingQueue() = default;
  // A moved-from queue is empty.
  RingQueue(RingQueue&& o) noexcept
      : slots_(std::move(o.slots_)), mask_(std::exchange(o.mask_, 0)), head_(std::exchange(o.head_, 0)),
        size_(std::exchange(o.size_, 0)) {}
  RingQueue& operator=(RingQueue&& o) noexcept {
    slots_ = std::move(o.slots_);
    mask_ = std::exchange(o.mask_, 0);
    head_ = std::exchange(o.head_, 0);
    size_ = std::exchange(o.size_, 0);
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return mask_ + (slots_ ? 1 : 0); }

  T& operator[](size_t i) { return slots_[(head_ + i) & mask_]; }
  const T& operator[](size_t i) const { return slots_[(head_ + i) & mask_]; }
  T& front() { return slots_[head_]; }
  const T& front() const { return slots_[head_]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(T value) { emplace_back(std::move(value)); }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity()) Grow(size_ + 1);
    T& slot = slots_[(head_ + size_) & mask_];
    slot = T{std::forward<Args>(args)...};
    ++size_;
    return slot;
  }
  void pop_front() {
    slots_[head_] = T{};
    head_ = (head_ + 1) & mask_;
    if (--size_ == 0) Reset();
  }
  void clear() {
    for (size_t i = 0; i < size_; ++i) (*this)[i] = T{};
    size_ = 0;
    Reset();
  }
  void resize(size_t n) {
    if (n > capacity()) Grow(n);
    while (size_ < n) emplace_back();
  }

  // Prefetches the slots the next pop_front and push_back touch (a hint; changes nothing).
  void Prefetch() const {
    if (!slots_) return;
    PrefetchLine(&slots_[head_]);
    PrefetchLine(&slots_[(head_ + size_) & mask_]);
  }

  template <typename Q, typename V>
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = V*;
    using reference = V&;
    Iterator(Q* q, size_t i) : q_(q), i_(i) {}
    V& operator*() const { return (*q_)[i_]; }
    V* operator->() const { return &(*q_)[i_]; }
    Iterator& operator++() { ++i_; return *this; }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }

   private:
    Q* q_;
    size_t i_;
  };
  Iterator<RingQueue, T> begin() { return {this, 0}; }
  Iterator<RingQueue, T> end() { return {this, size_}; }
  Iterator<const RingQueue, const T> begin() const { return {this, 0}; }
  Iterator<const RingQueue, const T> end() const { return {this, size_}; }

 private:
  // An empty ring starts over at slot 0 and drops an array larger than kKeptSlots.
  void Reset() {
    head_ = 0;
    if (capacity() > kKeptSlots) {
      slots_.reset();
      mask_ = 0;
    }
  }
  void Grow(size_t need) {
    if (need > kMaxSlots) throw std::length_error("RingQueue: more than 2^31 slots");
    size_t slots = capacity() == 0 ? kFirstSlots : capacity();
    while (slots < need) slots *= 2;
    auto grown = std::make_unique<T[]>(slots);
    for (size_t i = 0; i < size_; ++i) grown[i] = std::move((*this)[i]);
    slots_ = std::move(grown);
    head_ = 0;
    mask_ = static_cast<uint32_t>(slots - 1);
  }

  std::unique_ptr<T[]> slots_;
  uint32_t mask_ = 0;  // slots - 1 once allocated
  uint32_t head_ = 0;
  uint32_t size_ = 0;
};

}  // namespace mrclab::mrc
