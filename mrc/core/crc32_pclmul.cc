#include "mrc/core/crc32_pclmul.h"

#include <immintrin.h>

namespace mrclab::mrc {
namespace {

// Folding constants for the reflected polynomial 0x104C11DB7 (x^n mod P, bit-reflected):
// k1/k2 fold 512 bits, k3/k4 fold 128 bits, k5 folds 64 to 32, then Barrett with mu and P'.
constexpr uint64_t kK1 = 0x154442bd4, kK2 = 0x1c6e41596;
constexpr uint64_t kK3 = 0x1751997d0, kK4 = 0x0ccaa009e;
constexpr uint64_t kK5 = 0x163cd6124;
constexpr uint64_t kPoly = 0x1db710641, kMu = 0x1f7011641;

__attribute__((target("pclmul,sse4.1"))) inline __m128i Fold(__m128i x, __m128i k, __m128i next) {
  const __m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
  const __m128i hi = _mm_clmulepi64_si128(x, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

__attribute__((target("pclmul,sse4.1"))) inline __m128i Load(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

}  // namespace

bool HavePclmul() {
  static const bool have = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return have;
}

__attribute__((target("pclmul,sse4.1"))) uint32_t Crc32FoldPclmul(uint32_t crc, const uint8_t* p, size_t n) {
  __m128i x1 = _mm_xor_si128(Load(p), _mm_cvtsi32_si128(static_cast<int>(crc)));
  __m128i x2 = Load(p + 16), x3 = Load(p + 32), x4 = Load(p + 48);
  p += 64;
  n -= 64;
  const __m128i k12 = _mm_set_epi64x(kK2, kK1);
  while (n >= 64) {
    x1 = Fold(x1, k12, Load(p));
    x2 = Fold(x2, k12, Load(p + 16));
    x3 = Fold(x3, k12, Load(p + 32));
    x4 = Fold(x4, k12, Load(p + 48));
    p += 64;
    n -= 64;
  }
  const __m128i k34 = _mm_set_epi64x(kK4, kK3);
  x1 = Fold(x1, k34, x2);
  x1 = Fold(x1, k34, x3);
  x1 = Fold(x1, k34, x4);
  while (n >= 16) {
    x1 = Fold(x1, k34, Load(p));
    p += 16;
    n -= 16;
  }
  // 128 -> 64 bits: the low half times k4, added to the high half shifted down.
  x1 = _mm_xor_si128(_mm_clmulepi64_si128(x1, k34, 0x10), _mm_srli_si128(x1, 8));
  // 64 -> 32 bits with k5.
  const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
  const __m128i k5 = _mm_set_epi64x(0, kK5);
  x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00), _mm_srli_si128(x1, 4));
  // Barrett reduction to the 32-bit remainder.
  const __m128i poly_mu = _mm_set_epi64x(kMu, kPoly);
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly_mu, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), poly_mu, 0x00);
  return static_cast<uint32_t>(_mm_extract_epi32(_mm_xor_si128(t, x1), 1));
}

}  // namespace mrclab::mrc
