#include "mrc/core/ev_route.h"

namespace mrclab::mrc {

std::string_view ToString(EvMode m) { return m == EvMode::kSrv6 ? "srv6" : "udp"; }

std::optional<EvMode> ParseEvMode(std::string_view text) {
  if (text == "srv6") return EvMode::kSrv6;
  if (text == "udp") return EvMode::kUdp;
  return std::nullopt;
}

}  // namespace mrclab::mrc
