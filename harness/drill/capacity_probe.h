// Measures what this machine can forward (capacity_model.h), once per machine and MTU, cached
// in /var/cache/mrclab/capacity.json (or $MRCLAB_CACHE_DIR/capacity.json).
//
// The probe deploys a lab of its own, `mrclab-capacity` (1 plane, 1 spine, 2 leaves, 2 hosts,
// static routing, every link shaped at 100 Gbit/s so the shapers' CPU cost counts but never
// their rate), runs MRC between its two hosts through the spine (mrc::RunPerf: the drill's own
// endpoint code, SRv6 uSID paths, kernel forwarding) for three 1 s rounds and keeps the best,
// and destroys the lab on every way out. It needs root and takes about 6 s.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "harness/drill/capacity_model.h"

namespace mrclab::harness {

std::string MachineKey();  // hostname, kernel, CPU model and count
std::string CapacityCachePath();

MachineCapacity MeasureCapacity(uint32_t mtu, bool progress);

// The cached figure for this machine and MTU; nullopt when there is none.
std::optional<MachineCapacity> CachedCapacity(uint32_t mtu);
// The cached figure, else (or with `refresh`) a new measurement, which is then cached.
MachineCapacity CapacityFor(uint32_t mtu, bool refresh, bool progress);

}  // namespace mrclab::harness
