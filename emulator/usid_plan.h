// The SRv6 uSID plan (labs/README.md, "uSIDs"): every uSID is 16 bits in the block fcbb:0::/32,
// the top nibble is P+1 for plane P and the low 12 bits say who it is:
//
//   0x101-0x1ff  spine 0..254 of the plane          (index + 1, as small labs have always read)
//   0x201-0x2ff  leaf 0..254
//   0x301-0x3ff  host port, global: host 0..254     (labs of at most 255 hosts)
//   0x400-0x7ff  spine 255..1278                    (larger planes continue here)
//   0x800-0xbff  leaf 255..1278
//   0xc00-0xfff  host port, leaf-local: position 0..1023 among its leaf's host ports (labs of
//                more than 255 hosts; like an adjacency SID it means something only to that
//                leaf, which is always the uSID before it in a path)
//
// p0-spine0 = 1101, p1-leaf2 = 2203, host6's plane-1 port = 2307; p0-leaf300 = 182d; in a lab
// of 1,024 hosts the third host of any plane-0 leaf has port uSID 1c02.
#pragma once

#include <cstdint>

#include "emulator/lab_spec.h"

namespace mrclab::emulator {

inline constexpr int kMaxPlanes = 15;                // the top nibble holds P+1
inline constexpr int kMaxSwitchesPerRole = 255 + 1024;
inline constexpr int kMaxGlobalHosts = 255;          // beyond: host-port uSIDs are leaf-local
inline constexpr int kMaxHostPortsPerLeaf = 1024;    // leaf-local positions

uint16_t SwitchUsid(int plane, SwitchRole role, int index);
uint16_t GlobalHostPortUsid(int plane, int host);
uint16_t LeafLocalHostPortUsid(int plane, int position);
// Whether a uSID names a host port only its leaf knows (0xc00-0xfff of its plane).
constexpr bool IsLeafLocalUsid(uint16_t usid) { return (usid & 0x0c00) == 0x0c00; }

}  // namespace mrclab::emulator
