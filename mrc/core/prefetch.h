// PrefetchLine and PrefetchBytes: cache hints, for one line or for every 64-byte line of
// [data, data + bytes), that the core, the workload and the simulation's prefetch stages all
// go through. They change nothing: a line not fetched in time is read later as it would have
// been without the hint.
//
// Built with -DMRCLAB_PREFETCH_AS_LOADS (CMake option MRCLAB_PREFETCH_AS_LOADS), every hint is
// a load instead, so that a cache simulator without prefetches (cachegrind) counts the lines a
// run fetches, read or only asked for (emulator/ns3/PERFORMANCE.md). Not for timing.
// Built with -DMRCLAB_PREFETCH_NONE (CMAKE_CXX_FLAGS), every hint is nothing, to time what the
// hints buy.
//
// Why a hint is an asm statement and not __builtin_prefetch: GCC counts __builtin_prefetch as
// no side effect, so a function whose only work is hints (RingQueue::Prefetch, Qp::PrefetchState,
// Context::Prefetch, ...) is found pure and every call to it that is not inlined is deleted as
// dead code; the simulation's later prefetch stages had silently vanished that way
// (tests/prefetch_codegen.sh checks that such a call keeps its prefetches). A volatile asm is
// kept where it is written.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mrclab::mrc {

inline constexpr size_t kCacheLineBytes = 64;

inline void PrefetchLine(const void* line) {
#ifdef MRCLAB_PREFETCH_AS_LOADS
  if (line != nullptr) (void)*static_cast<const volatile char*>(line);
#elif defined(MRCLAB_PREFETCH_NONE)
  (void)line;
#elif defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 (%0)" : : "r"(line));
#elif defined(__aarch64__)
  asm volatile("prfm pldl1keep, [%0]" : : "r"(line));
#else
  __builtin_prefetch(line);
#endif
}

inline void PrefetchBytes(const void* data, size_t bytes) {
  const auto* begin = static_cast<const char*>(data);
  for (size_t at = 0; at < bytes; at += kCacheLineBytes) PrefetchLine(begin + at);
}

// Every line of [begin, end), whether or not begin starts a line (PrefetchBytes steps from
// begin: its callers' objects start on a line, or their sizes are constants it unrolls).
inline void PrefetchSpan(const void* begin, const void* end) {
  const auto first = reinterpret_cast<uintptr_t>(begin) & ~uintptr_t{kCacheLineBytes - 1};
  const auto last = reinterpret_cast<uintptr_t>(end);
  if (last > first) PrefetchBytes(reinterpret_cast<const void*>(first), last - first);
}

}  // namespace mrclab::mrc
