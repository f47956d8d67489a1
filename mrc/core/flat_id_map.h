// FlatIdMap: a map from 32-bit ids (QPNs, memory keys) to values, in one flat array with linear
// probing. Every received packet looks up its QP and its memory key: a lookup here is one or
// two cache lines, where std::map chased a pointer per tree level and std::unordered_map a
// bucket and then a node (together 4-7% of a simulated 8,192-host step).
//
// Contract:
//   - Find(id): the value stored under id, or null. Put(id, value): stores or replaces.
//     Erase(id): removes it; false when absent. Size(): ids stored.
//   - A pointer from Find stays valid until the next Put or Erase (they may move values).
//   - Unordered: nothing may iterate it for output (there is no iteration).
//   - The table is at most half full; a slot's index is a Fibonacci hash of the id, so counted
//     ids spread as well as random ones.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "mrc/core/prefetch.h"

namespace mrclab::mrc {

template <typename V>
class FlatIdMap {
 public:
  V* Find(uint32_t id) {
    if (size_ == 0) return nullptr;
    Slot& s = slots_[SlotOf(id)];
    return s.used ? &s.value : nullptr;
  }
  const V* Find(uint32_t id) const { return const_cast<FlatIdMap*>(this)->Find(id); }
  bool Contains(uint32_t id) const { return Find(id) != nullptr; }

  V& Put(uint32_t id, V value) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    const size_t i = SlotOf(id);
    if (slots_[i].used) return slots_[i].value = std::move(value);
    slots_[i] = Slot{id, true, std::move(value)};
    ++size_;
    return slots_[i].value;
  }

  bool Erase(uint32_t id) {
    if (size_ == 0) return false;
    size_t hole = SlotOf(id);
    if (!slots_[hole].used) return false;
    slots_[hole] = Slot{};
    --size_;
    // Backward shift: an entry further along the probe run moves into the hole when its home
    // is not between the hole and itself, so that every entry stays reachable from its home.
    for (size_t j = Next(hole); slots_[j].used; j = Next(j)) {
      const size_t from_home = (j - Home(slots_[j].id)) & Mask();
      if (from_home >= ((j - hole) & Mask())) {
        slots_[hole] = std::move(slots_[j]);
        slots_[j] = Slot{};
        hole = j;
      }
    }
    return true;
  }

  size_t Size() const { return size_; }
  // Prefetches the slots when they span at most `max_lines` cache lines (a hint; changes nothing).
  void Prefetch(size_t max_lines = 8) const {
    const size_t bytes = slots_.size() * sizeof(Slot);
    if (bytes > max_lines * 64) return;
    PrefetchBytes(slots_.data(), bytes);
  }

  // Prefetches the slot where id's probe run starts (where a Find of it most likely ends).
  void PrefetchSlot(uint32_t id) const {
    if (slots_.empty()) return;
    PrefetchBytes(&slots_[Home(id)], sizeof(Slot));
  }

 private:
  struct Slot {
    uint32_t id = 0;
    bool used = false;
    V value{};
  };

  size_t Mask() const { return slots_.size() - 1; }
  size_t Next(size_t i) const { return (i + 1) & Mask(); }
  size_t Home(uint32_t id) const { return static_cast<size_t>((uint64_t{id} * 0x9E3779B97F4A7C15ull) >> shift_); }
  // The slot holding id, or the free slot where its probe run ends (the table must have slots).
  size_t SlotOf(uint32_t id) const {
    size_t i = Home(id);
    while (slots_[i].used && slots_[i].id != id) i = Next(i);
    return i;
  }

  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    const size_t slots = old.empty() ? 8 : 2 * old.size();
    slots_ = std::vector<Slot>(slots);
    shift_ = 64 - std::countr_zero(slots);
    size_ = 0;
    for (Slot& s : old)
      if (s.used) Put(s.id, std::move(s.value));
  }

  std::vector<Slot> slots_;  // a power of two of them, or none
  int shift_ = 64;
  size_t size_ = 0;
};

}  // namespace mrclab::mrc
