// RingQueue<T>: a FIFO on one growable circular array. Ports keep their waiting and in-flight
// packets in it so that a steady stream of packets allocates nothing: the array only grows (to
// the next power of two) when it is full, and never shrinks. A queue that empties starts again
// at the first slot, so a port that mostly holds one packet keeps reusing the same memory.
//
// Contract: Front(), Back(), Pop() and PopBack() require !Empty(), operator[](i) requires i < Size().
// Pop() and PopBack() move the element out and leave a moved-from T in the slot (released
// when the slot is next overwritten or by Clear()).
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace mrclab::emulator::sim {

template <typename T>
class RingQueue {
 public:
  // True when no element is queued.
  bool Empty() const { return size_ == 0; }
  // Number of queued elements.
  size_t Size() const { return size_; }
  // The oldest element.
  const T& Front() const {
    assert(!Empty());
    return slots_[head_];
  }
  // Appends `value` at the back, growing the array when it is full.
  void Push(T&& value) {
    if (size_ == slots_.size()) Grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(value);
    ++size_;
  }
  // The newest element.
  T& Back() {
    assert(!Empty());
    return slots_[(head_ + size_ - 1) & (slots_.size() - 1)];
  }
  // Removes and returns the oldest element.
  T Pop() {
    assert(!Empty());
    T value = std::move(slots_[head_]);
    head_ = (head_ + 1) & (slots_.size() - 1);
    if (--size_ == 0) head_ = 0;
    return value;
  }
  // The element `i` places behind the oldest (i < Size()).
  T& operator[](size_t i) {
    assert(i < size_);
    return slots_[(head_ + i) & (slots_.size() - 1)];
  }
  const T& operator[](size_t i) const {
    assert(i < size_);
    return slots_[(head_ + i) & (slots_.size() - 1)];
  }
  // Removes and returns the newest element.
  T PopBack() {
    assert(!Empty());
    T value = std::move(slots_[(head_ + --size_) & (slots_.size() - 1)]);
    if (size_ == 0) head_ = 0;
    return value;
  }
  // Removes every element (and releases what they hold); keeps the capacity.
  void Clear() {
    for (T& slot : slots_) slot = T{};
    head_ = 0;
    size_ = 0;
  }

 private:
  void Grow() {
    std::vector<T> bigger(slots_.empty() ? 4 : 2 * slots_.size());
    for (size_t i = 0; i < size_; ++i) {
      bigger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    }
    slots_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;  // capacity is zero or a power of two
  uint32_t head_ = 0;
  uint32_t size_ = 0;
};

}  // namespace mrclab::emulator::sim
