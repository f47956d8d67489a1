#include "mrc/core/qp_scheduler.h"

#include <algorithm>
#include <array>
#include <bit>

#include "mrc/core/qp.h"

namespace mrclab::mrc {

void QpScheduler::Add(Qp* qp) {
  qps_.push_back(qp);
  if (!book_ && qps_.size() <= kScanQps) return;
  // Kept from now on: every QP reports its changes, and starts out ready and to be asked.
  if (!book_) book_ = std::make_unique<Bookkeeping>();
  Bookkeeping& b = *book_;
  for (auto i = static_cast<uint32_t>(b.queued_.size()); i < qps_.size(); ++i) {
    if (b.ready_.size() * 64 <= i) b.ready_.push_back(0);
    if (b.summary_.size() * 64 < b.ready_.size()) b.summary_.push_back(0);
    b.queued_.push_back(false);
    b.deadline_.push_back(Timestamp::Infinite());
    qps_[i]->Watch(this, i);
    Touched(i);
  }
}

void QpScheduler::ClearReady(uint32_t i) {
  Bookkeeping& b = *book_;
  uint64_t& word = b.ready_[i >> 6];
  word &= ~(uint64_t{1} << (i & 63));
  if (word == 0) b.summary_[i >> 12] &= ~(uint64_t{1} << ((i >> 6) & 63));
}

size_t QpScheduler::NextReady(size_t from) const {
  const Bookkeeping& b = *book_;
  size_t w = from >> 6;
  if (w >= b.ready_.size()) return kNone;
  if (const uint64_t bits = b.ready_[w] & (~uint64_t{0} << (from & 63)))
    return (w << 6) | static_cast<size_t>(std::countr_zero(bits));
  ++w;  // the words after w, found through the summary
  for (size_t s = w >> 6; s < b.summary_.size(); ++s) {
    const uint64_t words = s == (w >> 6) ? b.summary_[s] & (~uint64_t{0} << (w & 63)) : b.summary_[s];
    if (words == 0) continue;
    const size_t found = (s << 6) | static_cast<size_t>(std::countr_zero(words));
    return (found << 6) | static_cast<size_t>(std::countr_zero(b.ready_[found]));
  }
  return kNone;
}

void QpScheduler::MarkDueReady(Timestamp now) {
  Bookkeeping& b = *book_;
  // The heap's entries at or before `now` form a subtree at its root: walked, not popped (their
  // QPs still time out when the driver calls OnTimeout). A stale one only costs a wasted ask.
  if (b.heap_.empty() || b.heap_.front().at > now) return;
  b.walk_.assign(1, 0);
  while (!b.walk_.empty()) {
    const size_t k = b.walk_.back();
    b.walk_.pop_back();
    if (k >= b.heap_.size() || b.heap_[k].at > now) continue;
    SetReady(b.heap_[k].index);
    b.walk_.push_back(2 * k + 1);
    b.walk_.push_back(2 * k + 2);
  }
}

void QpScheduler::PrefetchScanned(int stage, const Qp* skip) const {
  if (book_ || qps_.empty()) return;
  if (stage == 0) return PrefetchBytes(qps_.data(), qps_.size() * sizeof(Qp*));
  for (const Qp* qp : qps_)
    if (qp != skip) qp->Prefetch();
}

std::optional<Transmit> QpScheduler::PollTransmit(Timestamp now, std::span<uint8_t> out, bool elide_zeros) {
  if (!book_) {
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
  Bookkeeping& b = *book_;
  for (const uint32_t i : b.touched_) {
    b.queued_[i] = false;
    const Timestamp at = qps_[i]->NextTimeout();
    if (at == b.deadline_[i]) continue;
    b.deadline_[i] = at;
    if (!at.IsInfinite()) Push({at, i});
  }
  b.touched_.clear();
  // Stale entries pile up below the top when deadlines move; rebuilt when they outnumber QPs.
  if (b.heap_.size() > 4 * qps_.size() + 64) {
    b.heap_.clear();
    for (uint32_t i = 0; i < qps_.size(); ++i)
      if (!b.deadline_[i].IsInfinite()) b.heap_.push_back({b.deadline_[i], i});
    std::make_heap(b.heap_.begin(), b.heap_.end(), Later);
  }
  while (!b.heap_.empty() && b.heap_.front().at != b.deadline_[b.heap_.front().index]) Pop();
}

Timestamp QpScheduler::NextTimeout() {
  if (!book_) {
    Timestamp t = Timestamp::Infinite();
    for (const Qp* qp : qps_) t = Min(t, qp->NextTimeout());
    return t;
  }
  Refresh();
  return book_->heap_.empty() ? Timestamp::Infinite() : book_->heap_.front().at;
}

void QpScheduler::RunDue(Timestamp now) {
  if (!book_) {
    std::array<uint32_t, kScanQps> due;
    size_t n = 0;
    for (uint32_t i = 0; i < qps_.size(); ++i)
      if (qps_[i]->NextTimeout() <= now) due[n++] = i;
    for (size_t k = 0; k < n; ++k) qps_[due[k]]->OnTimeout(now);
    return;
  }
  Refresh();
  Bookkeeping& b = *book_;
  b.due_.clear();
  while (!b.heap_.empty() && b.heap_.front().at <= now) {
    const Deadline d = Pop();
    if (d.at != b.deadline_[d.index]) continue;  // stale, or a duplicate of one taken
    b.due_.push_back(d.index);
    // Out of the heap until asked again (its OnTimeout touches it; asked anyway).
    b.deadline_[d.index] = Timestamp::Infinite();
    Queue(d.index);
  }
  std::sort(b.due_.begin(), b.due_.end());
  for (const uint32_t i : b.due_) qps_[i]->OnTimeout(now);
}

void QpScheduler::Push(Deadline d) {
  Bookkeeping& b = *book_;
  b.heap_.push_back(d);
  std::push_heap(b.heap_.begin(), b.heap_.end(), Later);
}

QpScheduler::Deadline QpScheduler::Pop() {
  Bookkeeping& b = *book_;
  std::pop_heap(b.heap_.begin(), b.heap_.end(), Later);
  const Deadline d = b.heap_.back();
  b.heap_.pop_back();
  return d;
}

}  // namespace mrclab::mrc
