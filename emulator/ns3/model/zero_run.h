// Zero runs: how a simulated datagram travels without the bytes it need not store. A job with
// virtual payload (harness/job/job_types.h) sends chunks of zeros, so most of each datagram is
// one run of zero bytes between its headers and its ICRC. The sender stores the datagram
// without its longest zero run and records where the run was (SimPacket::zero_run_*); the
// receiver puts the zeros back before the MRC core reads the datagram, so the core still sees,
// and checks, every byte. Datagrams without such a run (real payload) travel whole.
//
//   Context::PollTransmit ─► SetPayload (cut the run, pooled buffer) ─► SimPacket ─► fabric
//   fabric ─► SimPacket ─► WholePayload (zeros back, in the receiver's scratch) ─► OnDatagram
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "emulator/ns3/model/payload_pool.h"
#include "emulator/ns3/model/sim_packet.h"

namespace mrclab::emulator::sim {

// Zero runs shorter than this travel as bytes (cutting them saves less than it costs).
inline constexpr uint32_t kMinZeroRunBytes = 64;

struct ZeroRun {
  uint32_t at = 0, bytes = 0;
};

// The longest run of zero bytes in `bytes` (the first of several equally long); {0, 0} when
// there is no zero byte.
ZeroRun LongestZeroRun(std::span<const uint8_t> bytes);

// Sets packet.payload (from `pool`), packet.zero_run_* and packet.payload_bytes for `datagram`:
// without its longest zero run when that is at least kMinZeroRunBytes long, whole otherwise.
void SetPayload(SimPacket& packet, std::span<const uint8_t> datagram, PayloadPool& pool);

// The packet's datagram byte for byte: its payload itself, or, when a zero run was cut out,
// rebuilt in `scratch` (resized as needed). Requires a non-null payload.
std::span<const uint8_t> WholePayload(const SimPacket& packet, std::vector<uint8_t>& scratch);

}  // namespace mrclab::emulator::sim
