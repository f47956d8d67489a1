// Test support: two Contexts with one connected QP each over a LoopNetwork, a source buffer
// of seeded random bytes on A and a zeroed destination on B, helpers to post Writes A -> B and
// to run until they complete, and a byte-for-byte check of the destination.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "mrc/core/context.h"
#include "mrc/loop/loop_network.h"

namespace mrclab::mrc::testing {

inline QpConfig SmallConfig(TransportMode mode = TransportMode::kMrc, int evs = 8) {
  QpConfig c;
  c.mode = mode;
  c.evs = MakeEvProfile(evs, 2);
  c.mtu = 1024;
  c.cc.initial_window = Bytes{64 * 1024};
  c.rto.min_rto = Duration::Microseconds(200);
  c.rto.initial_rto = Duration::Microseconds(500);
  c.rc_ack_timeout = Duration::Microseconds(500);
  return c;
}

class LoopPair {
 public:
  explicit LoopPair(const QpConfig& config, size_t buffer_bytes = 1 << 20, uint64_t seed = 7)
      : a_(ContextConfig{seed}), b_(ContextConfig{seed + 1}), net_(seed + 2),
        src_(buffer_bytes), dst_(buffer_bytes, 0) {
    Rng rng(seed + 3);
    for (auto& byte : src_) byte = static_cast<uint8_t>(rng.Next());
    a_scq_ = &a_.CreateCq();
    a_rcq_ = &a_.CreateCq();
    b_scq_ = &b_.CreateCq();
    b_rcq_ = &b_.CreateCq();
    qa_ = &a_.CreateQp(config, *a_scq_, *a_rcq_);
    qb_ = &b_.CreateQp(config, *b_scq_, *b_rcq_);
    qa_->Connect(qb_->qpn(), qb_->config().initial_psn);
    qb_->Connect(qa_->qpn(), qa_->config().initial_psn);
    src_mr_ = a_.RegisterMemory(src_, kAccessLocal);
    dst_mr_ = b_.RegisterMemory(dst_, kAccessRemoteWrite);
    net_.AddHost(&a_);
    net_.AddHost(&b_);
  }

  // Posts `count` Writes of `size` bytes; message i goes from src[offset_i] to dst[offset_i].
  void PostWrites(int count, uint32_t size, bool immediate, uint64_t first_offset = 0) {
    for (int i = 0; i < count; ++i) {
      const uint64_t off = first_offset + static_cast<uint64_t>(i) * size;
      ASSERT_LE(off + size, src_.size());
      WriteRequest wr;
      wr.wr_id = next_wr_id_++;
      wr.lkey = src_mr_.lkey;
      wr.local_addr = src_mr_.va + off;
      wr.length = size;
      wr.remote_addr = dst_mr_.va + off;
      wr.rkey = dst_mr_.rkey;
      if (immediate) wr.immediate = static_cast<uint32_t>(wr.wr_id);
      ASSERT_EQ(qa_->PostWrite(wr), PostResult::kOk);
      ++posted_;
      written_end_ = std::max(written_end_, off + size);
    }
  }
  void PostRecvs(int count) {
    for (int i = 0; i < count; ++i) ASSERT_EQ(qb_->PostRecv(1000 + recvs_posted_++), PostResult::kOk);
  }

  void Drain() {
    while (auto c = a_scq_->Poll()) send_done_.push_back(*c);
    while (auto c = b_rcq_->Poll()) recv_done_.push_back(*c);
    while (auto e = a_.PollEvent()) events_a_.push_back(*e);
    while (auto e = b_.PollEvent()) events_b_.push_back(*e);
  }
  // Runs until every posted Write has a send completion (or the QP failed), or `limit` of
  // virtual time passes.
  bool RunToCompletion(Duration limit = Duration::Seconds(2)) {
    return net_.RunUntil([&] {
      Drain();
      return send_done_.size() >= posted_;
    }, net_.now() + limit);
  }
  bool RunUntil(const std::function<bool()>& pred, Duration limit) {
    return net_.RunUntil([&] { Drain(); return pred(); }, net_.now() + limit);
  }

  void ExpectAllSucceeded() const {
    ASSERT_EQ(send_done_.size(), posted_);
    for (size_t i = 0; i < send_done_.size(); ++i) {
      EXPECT_EQ(send_done_[i].status, WcStatus::kSuccess) << "wr " << i;
      EXPECT_EQ(send_done_[i].wr_id, i + 1) << "send completions out of order";
    }
  }
  void ExpectBytesDelivered() const {
    ASSERT_EQ(0, std::memcmp(src_.data(), dst_.data(), written_end_)) << FirstMismatch();
  }
  std::string FirstMismatch() const {
    for (size_t i = 0; i < written_end_; ++i)
      if (src_[i] != dst_[i]) return "first mismatch at byte " + std::to_string(i);
    return "";
  }
  int CountEvTransitions(uint16_t ev, EvState to) const {
    int n = 0;
    for (const auto& e : events_a_)
      if (auto* s = std::get_if<EvStateChanged>(&e); s && s->ev == ev && s->to == to) ++n;
    return n;
  }

  Context& a() { return a_; }
  Context& b() { return b_; }
  Qp& qa() { return *qa_; }
  Qp& qb() { return *qb_; }
  LoopNetwork& net() { return net_; }
  const std::vector<Completion>& send_done() const { return send_done_; }
  const std::vector<Completion>& recv_done() const { return recv_done_; }
  const std::vector<Event>& events_a() const { return events_a_; }
  std::vector<uint8_t>& src() { return src_; }
  std::vector<uint8_t>& dst() { return dst_; }
  size_t posted() const { return posted_; }

 private:
  Context a_, b_;
  LoopNetwork net_;
  std::vector<uint8_t> src_, dst_;
  CompletionQueue *a_scq_, *a_rcq_, *b_scq_, *b_rcq_;
  Qp *qa_, *qb_;
  MemoryRegion src_mr_, dst_mr_;
  uint64_t next_wr_id_ = 1;
  size_t posted_ = 0;
  int recvs_posted_ = 0;
  uint64_t written_end_ = 0;
  std::vector<Completion> send_done_, recv_done_;
  std::vector<Event> events_a_, events_b_;
};

}  // namespace mrclab::mrc::testing
