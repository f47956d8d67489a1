// The mrc::PerfConfig for one QP between two hosts of a lab (EVs planned as a job plans them):
// used by `mrclab perf` and by the capacity probe.
#pragma once

#include <string>

#include "emulator/resolved_lab.h"
#include "mrc/asio/perf.h"

namespace mrclab::harness {

mrc::PerfConfig PerfConfigBetween(const emulator::ResolvedLab& lab, const std::string& client,
                                  const std::string& server, mrc::TransportMode transport, mrc::EvMode ev_mode,
                                  int evs);

}  // namespace mrclab::harness
