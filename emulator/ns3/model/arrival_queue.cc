#include "emulator/ns3/model/arrival_queue.h"

#include <algorithm>
#include <stdexcept>

#include "emulator/ns3/model/sim_port.h"
#include "ns3/simulator.h"

namespace mrclab::emulator::sim {
namespace {

constexpr int64_t kNone = std::numeric_limits<int64_t>::max();

int64_t NowSteps() { return ns3::Simulator::Now().GetTimeStep(); }

}  // namespace

ArrivalQueue::~ArrivalQueue() { event_.Cancel(); }

void ArrivalQueue::SetBucketWidth(int64_t steps) {
  if (size_ != 0) throw std::logic_error("ArrivalQueue::SetBucketWidth with arrivals pending");
  shift_ = 0;
  while (shift_ < 40 && (int64_t{2} << shift_) <= steps) ++shift_;
  base_ = 0;
}

void ArrivalQueue::Push(int64_t at, SimPort* port, uint64_t seq, QueuedPacket* node) {
  const Arrival a{at, next_order_++, port, seq, node};
  ++size_;
  const int64_t bucket = BucketOf(at);
  if (bucket < base_ + kRingBuckets) {
    PutInRing(bucket, a);
  } else {
    far_.push_back(a);
    std::push_heap(far_.begin(), far_.end(), Later);
  }
  if (!firing_ && at < event_at_) Arm();
}

void ArrivalQueue::PutInRing(int64_t bucket, const Arrival& a) {
  if (ring_.empty()) {
    ring_.resize(kRingBuckets);
    occupied_.assign(kRingBuckets / 64, 0);
  }
  std::vector<Arrival>& slot = Slot(bucket);
  if (bucket == front_) {
    // The front is sorted from front_pos_; `a` was pushed last, so it goes after its equals.
    slot.insert(std::upper_bound(slot.begin() + static_cast<std::ptrdiff_t>(front_pos_), slot.end(), a, Before), a);
  } else {
    // An earlier bucket than the front one (which then has run nothing: a bucket that ran an
    // arrival is the clock's) takes over as the earliest; it is sorted when it is looked at.
    if (bucket < front_) {
      front_ = -1;
      front_pos_ = 0;
    }
    slot.push_back(a);
  }
  const auto s = static_cast<size_t>(bucket & (kRingBuckets - 1));
  occupied_[s / 64] |= uint64_t{1} << (s % 64);
}

void ArrivalQueue::MigrateFar() {
  while (!far_.empty() && BucketOf(far_.front().at) < base_ + kRingBuckets) {
    std::pop_heap(far_.begin(), far_.end(), Later);
    const Arrival a = far_.back();
    far_.pop_back();
    PutInRing(BucketOf(a.at), a);
  }
}

bool ArrivalQueue::FindFront() {
  if (occupied_.empty()) return false;
  const size_t words = occupied_.size();
  const auto start = static_cast<size_t>(base_ & (kRingBuckets - 1));
  size_t w = start / 64;
  uint64_t bits = occupied_[w] & (~uint64_t{0} << (start % 64));
  for (size_t k = 0; k <= words; ++k) {
    if (bits != 0) {
      const size_t s = w * 64 + static_cast<size_t>(__builtin_ctzll(bits));
      front_ = base_ + static_cast<int64_t>((s - start) & (kRingBuckets - 1));
      front_pos_ = 0;
      std::vector<Arrival>& slot = Slot(front_);
      std::sort(slot.begin(), slot.end(), Before);
      return true;
    }
    w = (w + 1) % words;
    bits = occupied_[w];
  }
  return false;
}

void ArrivalQueue::ClearFront() {
  Slot(front_).clear();
  const auto s = static_cast<size_t>(front_ & (kRingBuckets - 1));
  occupied_[s / 64] &= ~(uint64_t{1} << (s % 64));
  front_ = -1;
  front_pos_ = 0;
}

const ArrivalQueue::Arrival* ArrivalQueue::Earliest() {
  const Arrival* best = nullptr;
  if (front_ >= 0 || FindFront()) best = &Slot(front_)[front_pos_];
  if (!far_.empty() && (best == nullptr || Before(far_.front(), *best))) best = &far_.front();
  return best;
}

void ArrivalQueue::Arm() {
  const int64_t now = NowSteps();
  base_ = BucketOf(now);
  const Arrival* first = Earliest();
  if (first == nullptr || first->at == event_at_) return;
  event_.Cancel();
  event_at_ = first->at;
  event_ = ns3::Simulator::Schedule(ns3::TimeStep(std::max<int64_t>(0, event_at_ - now)), &ArrivalQueue::Fire, this);
}

void ArrivalQueue::Prefetch() {
  const Arrival& next = Slot(front_)[front_pos_];
  __builtin_prefetch(next.port);
  __builtin_prefetch(next.node);
  __builtin_prefetch(reinterpret_cast<const char*>(next.node) + 64);
}

void ArrivalQueue::Fire() {
  event_at_ = kNone;
  firing_ = true;
  const int64_t now = NowSteps();
  base_ = BucketOf(now);
  MigrateFar();
  while (front_ >= 0 || FindFront()) {
    std::vector<Arrival>& slot = Slot(front_);
    const Arrival a = slot[front_pos_];
    if (a.at > now) break;
    --size_;
    if (++front_pos_ == slot.size()) {
      ClearFront();
    } else {
      Prefetch();  // the next one's lines load while this one runs
    }
    a.port->Deliver(a.node, a.seq);
  }
  firing_ = false;
  Arm();
}

}  // namespace mrclab::emulator::sim
