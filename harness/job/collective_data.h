// The data a synthetic training step moves: known patterns that every rank writes, the
// reduction applied on receive, and the checks that prove nothing was lost or corrupted.
//
// Buffers are uint32 words, N chunks of `words` each. Word i (of the whole buffer) of rank r's
// input is V(r, i) = (base + i) * (r + 1) mod 2^32, base derived from (seed, step, collective),
// so every expected result has a closed form: a sum over ranks is (base + i) * N(N+1)/2.
// For all_to_all rank r's chunk d (for rank d) holds V(r, d*words + j).
#pragma once

#include <cstddef>
#include <cstdint>

#include "harness/job/collective_plan.h"

namespace mrclab::harness {

uint32_t PatternBase(uint64_t seed, uint64_t step, int collective);

// Writes rank `rank`'s input for the collective into `data` (N * words words). For all_gather
// only the rank's own chunk is meaningful; the others are cleared.
void FillInput(CollectiveKind kind, uint32_t base, int rank, int ranks, size_t words, uint32_t* data);

// dst[i] += src[i] (reduce) or dst[i] = src[i].
void ApplyReceive(bool reduce, const uint32_t* src, uint32_t* dst, size_t words);

// Number of chunks of the rank's result that differ from the expected values. `output` is the
// separate all_to_all output buffer (ignored for the other kinds).
int CountBadChunks(CollectiveKind kind, uint32_t base, int rank, int ranks, size_t words,
                   const uint32_t* data, const uint32_t* output);

// 24-bit checksum of a chunk, carried in the Write-with-Immediate's immediate value.
uint32_t Checksum24(const uint8_t* bytes, size_t length);

}  // namespace mrclab::harness
