// EV selection policies.
//   SprayingSelector (MRC): round-robin over GOOD EVs that are not penalized; a retransmission
//     passes the EV it was lost on as `exclude` so it goes out on a different path. When no EV
//     is usable it degrades gracefully (penalized GOOD, then the excluded one, then ASSUMED_BAD)
//     rather than stalling, so retry limits (not a hang) decide the QP's fate.
//   EcmpHashIndex (RC baseline): one EV per QP chosen by hashing the QP numbers, like a NIC's
//     ECMP source-port hash; its state is ignored, as a RoCEv2 RC QP knows nothing of paths.
#pragma once

#include <cstdint>
#include <optional>

#include "mrc/core/ev_profile.h"

namespace mrclab::mrc {

class SprayingSelector {
 public:
  std::optional<size_t> Pick(const EvTable& table, Timestamp now, int exclude = -1);
  // Where the next Pick starts looking (an index of the table, before the modulo).
  size_t cursor() const { return cursor_; }

 private:
  size_t cursor_ = 0;
};

size_t EcmpHashIndex(uint32_t local_qpn, uint32_t remote_qpn, size_t ev_count);
// The same for any flow key (QpConfig::flow_key).
size_t EcmpHashIndex(uint64_t flow_key, size_t ev_count);

}  // namespace mrclab::mrc
