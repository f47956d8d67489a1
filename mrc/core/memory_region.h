// Registered memory regions, as in verbs: the application registers a buffer it owns and gets
// an lkey (for its own work requests) and an rkey (handed to the peer, who names it in RETHs).
// Addresses are the buffer's virtual addresses. The registry only resolves and bounds-checks;
// the buffer must outlive its registration and must not be changed while a Write reads it.
#pragma once

#include <cstdint>
#include <span>

#include "mrc/core/flat_id_map.h"
#include "mrc/core/rng.h"

namespace mrclab::mrc {

// kZeroFilled is not a right but the owner's promise that the region holds zeros for as long as
// it is registered (a simulation's virtual payload): Writes from it send zeros without reading it.
enum Access : uint32_t { kAccessLocal = 0, kAccessRemoteWrite = 1, kZeroFilled = 2 };

struct MemoryRegion {
  uint32_t lkey = 0;
  uint32_t rkey = 0;
  uint64_t va = 0;
  uint64_t length = 0;
};

class MemoryRegistry {
 public:
  explicit MemoryRegistry(Rng* rng) : rng_(rng) {}
  MemoryRegion Register(std::span<uint8_t> buffer, uint32_t access);
  bool Deregister(uint32_t lkey);
  // [va, va+length) inside lkey's region (data nullptr if out of bounds or unknown), and
  // whether the region was registered kZeroFilled: one lookup per posted Write.
  struct LocalBytes {
    const uint8_t* data = nullptr;
    bool zero_filled = false;
  };
  LocalBytes ResolveLocal(uint32_t lkey, uint64_t va, uint64_t length) const;
  uint8_t* ResolveRemoteWrite(uint32_t rkey, uint64_t va, uint64_t length) const;
  // Hints for the entries those look up (change nothing).
  void PrefetchLocal(uint32_t lkey) const { by_lkey_.PrefetchSlot(lkey); }
  void PrefetchRemote(uint32_t rkey) const { by_rkey_.PrefetchSlot(rkey); }

 private:
  struct Entry {
    MemoryRegion mr;
    uint8_t* base;
    uint32_t access;
  };
  static uint8_t* Within(const Entry& e, uint64_t va, uint64_t length);
  Rng* rng_;
  uint32_t next_index_ = 1;
  // The same entries by either key (an entry does not change once registered): a received
  // Write resolves its rkey in one lookup.
  FlatIdMap<Entry> by_lkey_;
  FlatIdMap<Entry> by_rkey_;
};

}  // namespace mrclab::mrc
