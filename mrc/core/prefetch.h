// PrefetchBytes: a cache hint that asks for every 64-byte line of [data, data + bytes), the
// one loop the core and the simulation's prefetch stages share. It changes nothing: a line
// not fetched in time is read later as it would have been without the hint.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mrclab::mrc {

inline constexpr size_t kCacheLineBytes = 64;

inline void PrefetchBytes(const void* data, size_t bytes) {
  const auto* begin = static_cast<const char*>(data);
  for (size_t at = 0; at < bytes; at += kCacheLineBytes) __builtin_prefetch(begin + at);
}

}  // namespace mrclab::mrc
