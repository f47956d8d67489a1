#include "mrc/core/icrc.h"

#include "mrc/core/crc32_pclmul.h"

#include <array>
#include <cstring>
#include <immintrin.h>

#ifdef MRC_HAVE_ZLIB
#include <zlib.h>
#endif

namespace mrclab::mrc {
namespace {

// Slicing-by-8 tables: table[k][b] is the CRC contribution of byte b followed by k zero bytes.
struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t;
  constexpr Tables() : t{} {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t c = b;
      for (int i = 0; i < 8; ++i) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
      t[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; ++b)
      for (int k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
  }
};
constexpr Tables kTables;

// GF(2) polynomials modulo the CRC's, in its reflected bit order: bit 31 is x^0.
constexpr uint32_t kPolynomial = 0xEDB88320u;
constexpr uint32_t kOne = 0x80000000u;

constexpr uint32_t MultiplyModP(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t bit = kOne; bit != 0 && a != 0; bit >>= 1) {
    if (a & bit) {
      product ^= b;
      a ^= bit;
    }
    b = (b & 1) ? (b >> 1) ^ kPolynomial : b >> 1;  // b * x
  }
  return product;
}

// kPowers[k] = x^(2^k) mod P.
struct Powers {
  std::array<uint32_t, 64> p{};
  constexpr Powers() {
    p[0] = kOne >> 1;  // x
    for (size_t k = 1; k < p.size(); ++k) p[k] = MultiplyModP(p[k - 1], p[k - 1]);
  }
};
constexpr Powers kPowers;

// The same product by one carry-less multiplication: shifted left by one, its high 32 bits are
// the reflected x^0..x^31 of a*b and its low 32 bits x^32..x^63, which reduce as a register
// over 4 zero bytes does (the slicing tables).
__attribute__((target("pclmul,sse4.1"))) uint32_t MultiplyModPClmul(uint32_t a, uint32_t b) {
  const __m128i product = _mm_clmulepi64_si128(_mm_cvtsi32_si128(static_cast<int>(a)),
                                               _mm_cvtsi32_si128(static_cast<int>(b)), 0x00);
  const uint64_t r = static_cast<uint64_t>(_mm_cvtsi128_si64(product)) << 1;
  const uint32_t low = static_cast<uint32_t>(r >> 32), high = static_cast<uint32_t>(r);
  const auto& t = kTables.t;
  return low ^ t[3][high & 0xFF] ^ t[2][(high >> 8) & 0xFF] ^ t[1][(high >> 16) & 0xFF] ^ t[0][high >> 24];
}

// The register after the ICRC's 8 bytes of ones, the same for every packet.
constexpr uint32_t AfterOnes() {
  uint32_t crc = 0xFFFFFFFFu;
  for (int i = 0; i < 8; ++i) crc = (crc >> 8) ^ kTables.t[0][(crc ^ 0xFF) & 0xFF];
  return crc;
}
constexpr uint32_t kAfterOnes = AfterOnes();

}  // namespace

uint32_t Crc32Zeros(uint32_t state, uint64_t count) {
  // Appending one zero byte multiplies the register by x^8: count bytes, by x^(8 count).
  // One multiplication per bit set: bit b of count is x^(8 * 2^b) = kPowers.p[b + 3].
  const bool clmul = HavePclmul();
  for (; count != 0 && state != 0; count &= count - 1) {
    const size_t k = 3 + static_cast<size_t>(__builtin_ctzll(count));
    if (k >= kPowers.p.size()) break;
    state = clmul ? MultiplyModPClmul(kPowers.p[k], state) : MultiplyModP(kPowers.p[k], state);
  }
  return state;
}

uint32_t Crc32Update(uint32_t crc, std::span<const uint8_t> data) {
  if (data.size() >= 64 && HavePclmul()) {
    const size_t folded = data.size() & ~size_t{15};
    crc = Crc32FoldPclmul(crc, data.data(), folded);
    data = data.subspan(folded);
  }
#ifdef MRC_HAVE_ZLIB
  // zlib's crc32 is the same CRC-32, about twice as fast as slicing-by-8 here; it takes and
  // returns the inverted register.
  if (data.size() >= 64) return ~static_cast<uint32_t>(crc32(~crc, data.data(), static_cast<uInt>(data.size())));
#endif
  const uint8_t* p = data.data();
  size_t n = data.size();
  const auto& t = kTables.t;
  while (n >= 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= crc;  // little-endian host assumed (x86-64, aarch64); checked in icrc_test
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
          t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xFF];
  return crc;
}

uint32_t ComputeIcrc(std::span<const uint8_t> pkt) { return ComputeIcrc(pkt, 0, {}); }

uint32_t ComputeIcrc(std::span<const uint8_t> head, uint64_t zeros, std::span<const uint8_t> tail) {
  constexpr size_t kBth = 12, kResv8a = 4;  // resv8a (FECN/BECN in IB) may be rewritten in flight: masked
  uint32_t crc = kAfterOnes;
  if (head.size() < kBth) return ~Crc32Update(Crc32Zeros(Crc32Update(crc, head), zeros), tail);
  // Short heads (an ACK, a probe, the headers of an elided Write) in one pass over a masked
  // copy; longer ones as the masked BTH, then the rest.
  uint8_t copy[64];
  if (head.size() <= sizeof copy) {
    std::memcpy(copy, head.data(), head.size());
    copy[kResv8a] = 0xFF;
    crc = Crc32Update(crc, {copy, head.size()});
  } else {
    std::memcpy(copy, head.data(), kBth);
    copy[kResv8a] = 0xFF;
    crc = Crc32Update(Crc32Update(crc, {copy, kBth}), head.subspan(kBth));
  }
  if (zeros > 0) crc = Crc32Zeros(crc, zeros);
  if (!tail.empty()) crc = Crc32Update(crc, tail);
  return ~crc;
}

}  // namespace mrclab::mrc
