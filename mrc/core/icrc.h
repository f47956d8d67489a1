// ICRC: the RoCEv2 invariant CRC, CRC-32 (IEEE 802.3 polynomial, reflected) appended to every
// packet. RoCEv2 computes it over 64 bits of ones, the IP/UDP headers with their variant fields
// masked, and the BTH with its variant byte (resv8a) masked. mrclab's core never sees the IP and
// UDP headers, and with SRv6 uSID shift-and-forward the destination address changes in flight,
// so the ICRC here covers the ones prefix, the masked BTH and everything after it. It is
// transmitted little-endian, like the Ethernet FCS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace mrclab::mrc {

// Raw CRC-32 update over `data` (state is the running, non-inverted register).
uint32_t Crc32Update(uint32_t state, std::span<const uint8_t> data);
// The same over `count` zero bytes, without reading them: the register times x^(8 count) modulo
// the polynomial, a few carry-less products whatever the count (a datagram's elided zero run).
uint32_t Crc32Zeros(uint32_t state, uint64_t count);

// ICRC of a packet starting at the BTH, excluding the trailing 4 ICRC bytes themselves.
uint32_t ComputeIcrc(std::span<const uint8_t> bth_and_rest);
// The same for a packet held without a run of zeros: `head` (the BTH and on, at least 12
// bytes), then `zeros` zero bytes, then `tail`.
uint32_t ComputeIcrc(std::span<const uint8_t> head, uint64_t zeros, std::span<const uint8_t> tail);

}  // namespace mrclab::mrc
