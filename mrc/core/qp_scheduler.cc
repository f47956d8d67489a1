#include "mrc/core/qp_scheduler.h"

#include <algorithm>
#include <bit>

#include "mrc/core/qp.h"

namespace mrclab::mrc {

void QpScheduler::Add(Qp* qp) {
  qps_.push_back(qp);
  if (ready_.size() * 64 < qps_.size()) ready_.push_back(0);
  if (summary_.size() * 64 < ready_.size()) summary_.push_back(0);
  queued_.push_back(false);
  deadline_.push_back(Timestamp::Infinite());
  if (scanning_ && qps_.size() <= kScanQps) return;
  // Kept from now on: every QP reports its changes, and starts out ready and to be asked.
  const auto first = static_cast<uint32_t>(scanning_ ? 0 : qps_.size() - 1);
  scanning_ = false;
  for (uint32_t i = first; i < qps_.size(); ++i) {
    qps_[i]->Watch(this, i);
    Touched(i);
  }
}

void QpScheduler::ClearReady(uint32_t i) {
  uint64_t& word = ready_[i >> 6];
  word &= ~(uint64_t{1} << (i & 63));
  if (word == 0) summary_[i >> 12] &= ~(uint64_t{1} << ((i >> 6) & 63));
}

size_t QpScheduler::NextReady(size_t from) const {
  size_t w = from >> 6;
  if (w >= ready_.size()) return kNone;
  if (const uint64_t bits = ready_[w] & (~uint64_t{0} << (from & 63)))
    return (w << 6) | static_cast<size_t>(std::countr_zero(bits));
  ++w;  // the words after w, found through the summary
  for (size_t s = w >> 6; s < summary_.size(); ++s) {
    const uint64_t words = s == (w >> 6) ? summary_[s] & (~uint64_t{0} << (w & 63)) : summary_[s];
    if (words == 0) continue;
    const size_t found = (s << 6) | static_cast<size_t>(std::countr_zero(words));
    return (found << 6) | static_cast<size_t>(std::countr_zero(ready_[found]));
  }
  return kNone;
}

void QpScheduler::MarkDueReady(Timestamp now) {
  // The heap's entries at or before `now` form a subtree at its root: walked, not popped (their
  // QPs still time out when the driver calls OnTimeout). A stale one only costs a wasted ask.
  if (heap_.empty() || heap_.front().at > now) return;
  walk_.assign(1, 0);
  while (!walk_.empty()) {
    const size_t k = walk_.back();
    walk_.pop_back();
    if (k >= heap_.size() || heap_[k].at > now) continue;
    SetReady(heap_[k].index);
    walk_.push_back(2 * k + 1);
    walk_.push_back(2 * k + 2);
  }
}

std::optional<Transmit> QpScheduler::PollTransmit(Timestamp now, std::span<uint8_t> out, bool elide_zeros) {
  if (scanning_) {
    const size_t n = qps_.size();
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (cursor_ + k) % n;
      if (auto t = qps_[i]->PollTransmit(now, out, elide_zeros)) {
        cursor_ = (i + 1) % n;
        return t;
      }
    }
    return std::nullopt;
  }
  MarkDueReady(now);
  const size_t start = cursor_;
  bool wrapped = false;
  for (size_t from = start;;) {
    size_t i = NextReady(from);
    if (i == kNone && !wrapped) {
      wrapped = true;
      i = NextReady(0);
    }
    if (i == kNone || (wrapped && i >= start)) return std::nullopt;
    if (auto t = qps_[i]->PollTransmit(now, out, elide_zeros)) {
      cursor_ = (i + 1) % qps_.size();
      return t;
    }
    ClearReady(static_cast<uint32_t>(i));
    from = i + 1;
  }
}

void QpScheduler::Refresh() {
  for (const uint32_t i : touched_) {
    queued_[i] = false;
    const Timestamp at = qps_[i]->NextTimeout();
    if (at == deadline_[i]) continue;
    deadline_[i] = at;
    if (!at.IsInfinite()) Push({at, i});
  }
  touched_.clear();
  // Stale entries pile up below the top when deadlines move; rebuilt when they outnumber QPs.
  if (heap_.size() > 4 * qps_.size() + 64) {
    heap_.clear();
    for (uint32_t i = 0; i < qps_.size(); ++i)
      if (!deadline_[i].IsInfinite()) heap_.push_back({deadline_[i], i});
    std::make_heap(heap_.begin(), heap_.end(), Later);
  }
  while (!heap_.empty() && heap_.front().at != deadline_[heap_.front().index]) Pop();
}

Timestamp QpScheduler::NextTimeout() {
  if (scanning_) {
    Timestamp t = Timestamp::Infinite();
    for (const Qp* qp : qps_) t = Min(t, qp->NextTimeout());
    return t;
  }
  Refresh();
  return heap_.empty() ? Timestamp::Infinite() : heap_.front().at;
}

void QpScheduler::RunDue(Timestamp now) {
  due_.clear();
  if (scanning_) {
    for (uint32_t i = 0; i < qps_.size(); ++i)
      if (qps_[i]->NextTimeout() <= now) due_.push_back(i);
  } else {
    Refresh();
    while (!heap_.empty() && heap_.front().at <= now) {
      const Deadline d = Pop();
      if (d.at != deadline_[d.index]) continue;  // stale, or a duplicate of one taken
      due_.push_back(d.index);
      // Out of the heap until asked again (its OnTimeout touches it; asked anyway).
      deadline_[d.index] = Timestamp::Infinite();
      Queue(d.index);
    }
    std::sort(due_.begin(), due_.end());
  }
  for (const uint32_t i : due_) qps_[i]->OnTimeout(now);
}

void QpScheduler::Push(Deadline d) {
  heap_.push_back(d);
  std::push_heap(heap_.begin(), heap_.end(), Later);
}

QpScheduler::Deadline QpScheduler::Pop() {
  std::pop_heap(heap_.begin(), heap_.end(), Later);
  const Deadline d = heap_.back();
  heap_.pop_back();
  return d;
}

}  // namespace mrclab::mrc
