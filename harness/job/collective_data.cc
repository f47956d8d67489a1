#include "harness/job/collective_data.h"

#include <cstring>

#include "mrc/core/rng.h"

namespace mrclab::harness {
namespace {

bool ChunkIs(const uint32_t* chunk, size_t words, uint32_t first, uint32_t multiplier) {
  for (size_t j = 0; j < words; ++j)
    if (chunk[j] != (first + static_cast<uint32_t>(j)) * multiplier) return false;
  return true;
}

}  // namespace

uint32_t PatternBase(uint64_t seed, uint64_t step, int collective) {
  return static_cast<uint32_t>(mrc::SplitMix64(seed * 0x9e3779b97f4a7c15ULL + step * 131 + collective));
}

void FillInput(CollectiveKind kind, uint32_t base, int rank, int ranks, size_t words, uint32_t* data) {
  const uint32_t m = static_cast<uint32_t>(rank + 1);
  const size_t total = words * ranks;
  if (kind == CollectiveKind::kAllGather) {
    std::memset(data, 0, total * sizeof(uint32_t));
    for (size_t j = 0; j < words; ++j) {
      const size_t i = rank * words + j;
      data[i] = (base + static_cast<uint32_t>(i)) * m;
    }
    return;
  }
  for (size_t i = 0; i < total; ++i) data[i] = (base + static_cast<uint32_t>(i)) * m;
}

void ApplyReceive(bool reduce, const uint32_t* src, uint32_t* dst, size_t words) {
  if (!reduce) {
    std::memcpy(dst, src, words * sizeof(uint32_t));
    return;
  }
  for (size_t i = 0; i < words; ++i) dst[i] += src[i];
}

int CountBadChunks(CollectiveKind kind, uint32_t base, int rank, int ranks, size_t words,
                   const uint32_t* data, const uint32_t* output) {
  const uint32_t sum = static_cast<uint32_t>(ranks * (ranks + 1) / 2);
  auto first = [&](int chunk) { return base + static_cast<uint32_t>(chunk * words); };
  int bad = 0;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      for (int c = 0; c < ranks; ++c) bad += !ChunkIs(data + c * words, words, first(c), sum);
      break;
    case CollectiveKind::kReduceScatter: {
      const int owned = (rank + 1) % ranks;
      bad += !ChunkIs(data + owned * words, words, first(owned), sum);
      break;
    }
    case CollectiveKind::kAllGather:
      for (int c = 0; c < ranks; ++c)
        bad += !ChunkIs(data + c * words, words, first(c), static_cast<uint32_t>(c + 1));
      break;
    case CollectiveKind::kAllToAll:
      // Chunk s of the output came from rank s: its chunk `rank`, V(s, rank*words + j).
      for (int s = 0; s < ranks; ++s) {
        const uint32_t* got = s == rank ? data + rank * words : output + s * words;
        bad += !ChunkIs(got, words, first(rank), static_cast<uint32_t>(s + 1));
      }
      break;
  }
  return bad;
}

uint32_t Checksum24(const uint8_t* bytes, size_t length) {
  uint64_t h = 0x243f6a8885a308d3ULL ^ length;
  size_t i = 0;
  for (; i + 8 <= length; i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes + i, 8);
    h = (h ^ w) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  for (; i < length; ++i) h = (h ^ bytes[i]) * 0x100000001b3ULL;
  h = mrc::SplitMix64(h);
  return static_cast<uint32_t>(h ^ (h >> 24) ^ (h >> 48)) & 0xffffff;
}

}  // namespace mrclab::harness
