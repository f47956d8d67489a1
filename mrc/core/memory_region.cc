#include "mrc/core/memory_region.h"

namespace mrclab::mrc {

MemoryRegion MemoryRegistry::Register(std::span<uint8_t> buffer, uint32_t access) {
  Entry e;
  e.base = buffer.data();
  e.access = access;
  e.mr.lkey = next_index_++;
  // All 32 bits of an rkey are random (a NIC's 8-bit key over its table index can be guessed
  // in 256 tries, ReDMArk, USENIX Security 2021); never 0, never one in use.
  do e.mr.rkey = static_cast<uint32_t>(rng_->Next());
  while (e.mr.rkey == 0 || by_rkey_.Contains(e.mr.rkey));
  e.mr.va = reinterpret_cast<uint64_t>(buffer.data());
  e.mr.length = buffer.size();
  by_lkey_.Put(e.mr.lkey, e);
  by_rkey_.Put(e.mr.rkey, e);
  return e.mr;
}

bool MemoryRegistry::Deregister(uint32_t lkey) {
  const Entry* e = by_lkey_.Find(lkey);
  if (!e) return false;
  by_rkey_.Erase(e->mr.rkey);
  by_lkey_.Erase(lkey);
  return true;
}

uint8_t* MemoryRegistry::Within(const Entry& e, uint64_t va, uint64_t length) {
  if (va < e.mr.va) return nullptr;
  const uint64_t off = va - e.mr.va;
  if (off > e.mr.length || length > e.mr.length - off) return nullptr;
  return e.base + off;
}

MemoryRegistry::LocalBytes MemoryRegistry::ResolveLocal(uint32_t lkey, uint64_t va, uint64_t length) const {
  const Entry* e = by_lkey_.Find(lkey);
  if (!e) return {};
  return {Within(*e, va, length), (e->access & kZeroFilled) != 0};
}

uint8_t* MemoryRegistry::ResolveRemoteWrite(uint32_t rkey, uint64_t va, uint64_t length) const {
  const Entry* e = by_rkey_.Find(rkey);
  if (!e || !(e->access & kAccessRemoteWrite)) return nullptr;
  return Within(*e, va, length);
}

}  // namespace mrclab::mrc
