// CalendarQueue<T, Before>: items due at a time (T::at, in ns-3 time steps), taken out earliest
// first, ties in the order Before gives. The queue under ArrivalQueue (a fabric's packet
// arrivals) and BucketScheduler (ns-3's events).
//
// A calendar queue (Brown, CACM 1988): a ring of kRingBuckets buckets, each a power of two of
// time steps wide (SetBucketWidth), covers a window from the clock (SetNow). An item is appended
// to its bucket; a bucket is sorted only when it becomes the earliest one, and then taken from
// the front. Items beyond the window wait in a binary heap and move into the ring when the
// window reaches them. Appending and taking in order cost a sort of a bucket in cache instead
// of a heap's log(n) cache misses per item. A bucket holds its array only while it has items:
// an emptied one gives it to the next bucket that needs one, last given first taken, so the
// arrays in use are few and in cache (each bucket keeping its own, sized by the largest burst
// it ever held, made a big fabric's arrivals stream through over a hundred MiB).
//
// Contract:
//   - Every item in the ring lies within the window and every item in the far heap beyond it, so
//     the earliest item is the ring's when it has one. SetNow(t) moves the window to t's bucket;
//     nothing earlier than t may be pushed after it (t never goes back).
//   - Not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace mrclab::emulator::sim {

template <typename T, bool (*Before)(const T&, const T&)>
class CalendarQueue {
 public:
  static constexpr int64_t kRingBuckets = 1024;  // a power of two

  // Sets a bucket's width to the power of two at or below `steps` (at least 1). Throws
  // std::logic_error unless the queue is empty.
  void SetBucketWidth(int64_t steps) {
    if (size_ != 0) throw std::logic_error("CalendarQueue::SetBucketWidth with items queued");
    shift_ = 0;
    while (shift_ < 40 && (int64_t{2} << shift_) <= steps) ++shift_;
    base_ = 0;
  }
  int64_t BucketWidth() const { return int64_t{1} << shift_; }
  size_t Size() const { return size_; }
  bool Empty() const { return size_ == 0; }
  // Arrays allocated for the ring's buckets, in use or spare.
  size_t ArraysHeld() const {
    return spare_.size() + static_cast<size_t>(std::count_if(ring_.begin(), ring_.end(),
                                                             [](const std::vector<T>& b) { return b.capacity() > 0; }));
  }

  // Moves the window to start at `now`'s bucket and the far items it reaches into the ring.
  void SetNow(int64_t now) {
    base_ = BucketOf(now);
    while (!far_.empty() && BucketOf(far_.front().at) < base_ + kRingBuckets) {
      std::pop_heap(far_.begin(), far_.end(), kLater);
      const T item = far_.back();
      far_.pop_back();
      PutInRing(item);
    }
  }

  void Push(const T& item) {
    ++size_;
    if (BucketOf(item.at) < base_ + kRingBuckets) return PutInRing(item);
    far_.push_back(item);
    std::push_heap(far_.begin(), far_.end(), kLater);
  }

  // The earliest item, or null when the queue is empty. Valid until the next change.
  const T* Earliest() {
    if (front_ >= 0 || FindFront()) return &Slot(front_)[front_pos_];
    return far_.empty() ? nullptr : &far_.front();
  }
  // The earliest items in order, as far as the earliest's bucket is sorted already (empty when
  // it is not); sorts nothing (for prefetching what the next items point at while the last one
  // runs). Valid until the next change.
  std::span<const T> SortedFront() const {
    if (front_ < 0) return {};
    const std::vector<T>& slot = ring_[SlotIndex(front_)];
    return std::span<const T>(slot).subspan(front_pos_);
  }

  // Takes out the earliest item. The queue must not be empty.
  T PopEarliest() {
    --size_;
    if (front_ >= 0 || FindFront()) {
      std::vector<T>& slot = Slot(front_);
      const T item = slot[front_pos_];
      if (++front_pos_ == slot.size()) ClearBucket(front_);
      return item;
    }
    std::pop_heap(far_.begin(), far_.end(), kLater);
    const T item = far_.back();
    far_.pop_back();
    return item;
  }

  // Takes out the first item due at `at` for which same(item) holds; false if there is none.
  template <typename Pred>
  bool Remove(int64_t at, Pred same) {
    const int64_t bucket = BucketOf(at);
    if (bucket < base_ + kRingBuckets) {
      if (ring_.empty()) return false;
      std::vector<T>& slot = Slot(bucket);
      const auto from = slot.begin() + static_cast<std::ptrdiff_t>(bucket == front_ ? front_pos_ : 0);
      const auto it = std::find_if(from, slot.end(), [&](const T& item) { return item.at == at && same(item); });
      if (it == slot.end()) return false;
      slot.erase(it);  // keeps a sorted front sorted
      if (bucket == front_ ? front_pos_ == slot.size() : slot.empty()) ClearBucket(bucket);
    } else {
      const auto it = std::find_if(far_.begin(), far_.end(), [&](const T& item) { return item.at == at && same(item); });
      if (it == far_.end()) return false;
      far_.erase(it);
      std::make_heap(far_.begin(), far_.end(), kLater);
    }
    --size_;
    return true;
  }

 private:
  // As function objects, not pointers, so that the sorts and heaps inline them.
  static constexpr auto kBefore = [](const T& a, const T& b) { return Before(a, b); };
  static constexpr auto kLater = [](const T& a, const T& b) { return Before(b, a); };
  int64_t BucketOf(int64_t at) const { return at >> shift_; }
  static size_t SlotIndex(int64_t bucket) { return static_cast<size_t>(bucket & (kRingBuckets - 1)); }
  std::vector<T>& Slot(int64_t bucket) { return ring_[SlotIndex(bucket)]; }

  void PutInRing(const T& item) {
    if (ring_.empty()) {
      ring_.resize(kRingBuckets);
      occupied_.assign(kRingBuckets / 64, 0);
    }
    const int64_t bucket = BucketOf(item.at);
    std::vector<T>& slot = Slot(bucket);
    if (slot.capacity() == 0 && !spare_.empty()) {
      slot.swap(spare_.back());
      spare_.pop_back();
    }
    if (bucket == front_) {
      // The front is sorted from front_pos_: the item goes after its equals.
      slot.insert(std::upper_bound(slot.begin() + static_cast<std::ptrdiff_t>(front_pos_), slot.end(), item, kBefore),
                  item);
    } else {
      // An earlier bucket than the front one (which then has taken nothing out: a bucket that
      // has is the clock's) becomes the earliest; it is sorted when it is looked at.
      if (bucket < front_) {
        front_ = -1;
        front_pos_ = 0;
      }
      slot.push_back(item);
    }
    const size_t s = SlotIndex(bucket);
    occupied_[s / 64] |= uint64_t{1} << (s % 64);
  }

  // Makes the earliest occupied bucket the sorted front; false when the ring is empty.
  bool FindFront() {
    if (occupied_.empty()) return false;
    const size_t words = occupied_.size();
    const size_t start = SlotIndex(base_);
    size_t w = start / 64;
    uint64_t bits = occupied_[w] & (~uint64_t{0} << (start % 64));
    for (size_t k = 0; k <= words; ++k) {
      if (bits != 0) {
        const size_t s = w * 64 + static_cast<size_t>(__builtin_ctzll(bits));
        front_ = base_ + static_cast<int64_t>((s - start) & (kRingBuckets - 1));
        front_pos_ = 0;
        std::vector<T>& slot = Slot(front_);
        std::sort(slot.begin(), slot.end(), kBefore);
        return true;
      }
      w = (w + 1) % words;
      bits = occupied_[w];
    }
    return false;
  }

  void ClearBucket(int64_t bucket) {
    std::vector<T>& slot = Slot(bucket);
    slot.clear();
    spare_.push_back(std::move(slot));
    slot = {};
    const size_t s = SlotIndex(bucket);
    occupied_[s / 64] &= ~(uint64_t{1} << (s % 64));
    if (bucket == front_) {
      front_ = -1;
      front_pos_ = 0;
    }
  }

  int shift_ = 6;  // log2 of a bucket's width in time steps
  std::vector<std::vector<T>> ring_;  // kRingBuckets buckets, allocated by the first push
  std::vector<uint64_t> occupied_;    // a bit per bucket that holds items
  std::vector<std::vector<T>> spare_;  // emptied buckets' arrays, the last emptied last
  int64_t base_ = 0;      // the window's first bucket (the clock's)
  int64_t front_ = -1;    // the sorted bucket taken from next (-1: not chosen yet)
  size_t front_pos_ = 0;  // items of the front bucket already taken
  std::vector<T> far_;    // a binary min-heap (by kLater) of items beyond the window
  size_t size_ = 0;
};

}  // namespace mrclab::emulator::sim
