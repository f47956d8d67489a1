#include "mrc/core/message_assembler.h"

namespace mrclab::mrc {

MessageAssembler::Result MessageAssembler::Add(uint32_t msg_seq, uint32_t message_length,
                                               uint32_t bytes, std::optional<uint32_t> immediate) {
  const uint32_t ahead = msg_seq - next_;  // serial arithmetic: old messages wrap to huge values
  if (ahead >= max_ahead_) return Result::kOutOfRange;
  if (msgs_.size() <= ahead) msgs_.resize(ahead + 1);
  Msg& m = msgs_[ahead];
  if (!m.seen) {
    m.seen = true;
    m.length = message_length;
  } else if (m.length != message_length) {
    return Result::kInconsistent;
  }
  if (m.placed + bytes > m.length) return Result::kInconsistent;
  m.placed += bytes;
  if (immediate) m.immediate = immediate;
  return Result::kOk;
}

std::optional<MessageAssembler::Completed> MessageAssembler::PopCompleted() {
  if (msgs_.empty() || !msgs_.front().seen || msgs_.front().placed < msgs_.front().length)
    return std::nullopt;
  Completed c{next_, msgs_.front().length, msgs_.front().immediate};
  msgs_.pop_front();
  ++next_;
  return c;
}

}  // namespace mrclab::mrc
