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

// The same folding 256 bytes at a time with VPCLMULQDQ on 512-bit registers (4 x 4 lanes):
// k6/k7 fold 2048 bits.
constexpr uint64_t kK6 = 0x11542778a, kK7 = 0x1322d1430;
constexpr size_t kWideMinBytes = 512;  // below this the wide set-up costs more than it saves

__attribute__((target("pclmul,sse4.1"))) inline __m128i Load(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

#define MRC_WIDE_TARGET __attribute__((target("pclmul,sse4.1,avx512f,vpclmulqdq")))

MRC_WIDE_TARGET inline __m512i Fold512(__m512i x, __m512i k, __m512i next) {
  const __m512i lo = _mm512_clmulepi64_epi128(x, k, 0x00);
  const __m512i hi = _mm512_clmulepi64_epi128(x, k, 0x11);
  return _mm512_ternarylogic_epi64(lo, hi, next, 0x96);  // lo ^ hi ^ next
}

MRC_WIDE_TARGET inline __m512i Load512(const uint8_t* p) { return _mm512_loadu_si512(p); }

// Folds the first n - n % 256 bytes (n >= 256) and leaves the state as the four 128-bit lanes
// that the 64-byte loop continues from; p and n are advanced past what it consumed.
MRC_WIDE_TARGET void FoldWide(uint32_t crc, const uint8_t*& p, size_t& n, __m128i x[4]) {
  __m512i z1 = _mm512_xor_si512(Load512(p), _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, crc));
  __m512i z2 = Load512(p + 64), z3 = Load512(p + 128), z4 = Load512(p + 192);
  p += 256;
  n -= 256;
  const __m512i k67 = _mm512_set_epi64(kK7, kK6, kK7, kK6, kK7, kK6, kK7, kK6);
  while (n >= 256) {
    z1 = Fold512(z1, k67, Load512(p));
    z2 = Fold512(z2, k67, Load512(p + 64));
    z3 = Fold512(z3, k67, Load512(p + 128));
    z4 = Fold512(z4, k67, Load512(p + 192));
    p += 256;
    n -= 256;
  }
  // Four registers 64 bytes apart into one: its lanes are the 64-byte loop's x1..x4.
  const __m512i k12 = _mm512_set_epi64(kK2, kK1, kK2, kK1, kK2, kK1, kK2, kK1);
  z1 = Fold512(z1, k12, z2);
  z1 = Fold512(z1, k12, z3);
  z1 = Fold512(z1, k12, z4);
  alignas(64) uint8_t lanes[64];
  _mm512_store_si512(lanes, z1);
  for (int i = 0; i < 4; ++i) x[i] = Load(lanes + 16 * i);
}

bool HaveVpclmul() {
  static const bool have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq");
  return have;
}

}  // namespace

bool HavePclmul() {
  static const bool have = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return have;
}

__attribute__((target("pclmul,sse4.1"))) uint32_t Crc32FoldPclmul(uint32_t crc, const uint8_t* p, size_t n) {
  __m128i x1, x2, x3, x4;
  if (n >= kWideMinBytes && HaveVpclmul()) {
    __m128i x[4];
    FoldWide(crc, p, n, x);
    x1 = x[0], x2 = x[1], x3 = x[2], x4 = x[3];
  } else {
    x1 = _mm_xor_si128(Load(p), _mm_cvtsi32_si128(static_cast<int>(crc)));
    x2 = Load(p + 16), x3 = Load(p + 32), x4 = Load(p + 48);
    p += 64;
    n -= 64;
  }
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
