// Strong types with their unit in the name. The core never reads a clock: every call that needs
// the time takes a Timestamp, which is nanoseconds since an epoch the driver chooses (virtual
// time in the loop driver, steady_clock in the Asio driver).
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace mrclab::mrc {

class Duration {
 public:
  constexpr Duration() = default;
  static constexpr Duration Nanoseconds(int64_t ns) { return Duration(ns); }
  static constexpr Duration Microseconds(int64_t us) { return Duration(us * 1000); }
  static constexpr Duration Milliseconds(int64_t ms) { return Duration(ms * 1000000); }
  static constexpr Duration Seconds(double s) { return Duration(static_cast<int64_t>(s * 1e9)); }
  static constexpr Duration Zero() { return Duration(0); }
  static constexpr Duration Infinite() { return Duration(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t nanoseconds() const { return ns_; }
  constexpr double seconds() const { return static_cast<double>(ns_) * 1e-9; }
  constexpr double microseconds() const { return static_cast<double>(ns_) * 1e-3; }
  constexpr bool IsInfinite() const { return ns_ == std::numeric_limits<int64_t>::max(); }

  constexpr auto operator<=>(const Duration&) const = default;
  constexpr Duration operator+(Duration o) const { return Duration(ns_ + o.ns_); }
  constexpr Duration operator-(Duration o) const { return Duration(ns_ - o.ns_); }
  constexpr Duration operator*(int64_t k) const { return Duration(ns_ * k); }
  constexpr Duration operator/(int64_t k) const { return Duration(ns_ / k); }
  constexpr Duration& operator+=(Duration o) { ns_ += o.ns_; return *this; }
  constexpr Duration& operator-=(Duration o) { ns_ -= o.ns_; return *this; }
  constexpr Duration Scaled(double f) const { return Duration(static_cast<int64_t>(ns_ * f)); }

 private:
  constexpr explicit Duration(int64_t ns) : ns_(ns) {}
  int64_t ns_ = 0;
};

class Timestamp {
 public:
  constexpr Timestamp() = default;
  static constexpr Timestamp FromNanoseconds(int64_t ns) { return Timestamp(ns); }
  static constexpr Timestamp Infinite() { return Timestamp(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t nanoseconds() const { return ns_; }
  constexpr bool IsInfinite() const { return ns_ == std::numeric_limits<int64_t>::max(); }

  constexpr auto operator<=>(const Timestamp&) const = default;
  constexpr Timestamp operator+(Duration d) const {
    if (IsInfinite() || d.IsInfinite()) return Infinite();
    return Timestamp(ns_ + d.nanoseconds());
  }
  constexpr Timestamp operator-(Duration d) const { return Timestamp(ns_ - d.nanoseconds()); }
  constexpr Duration operator-(Timestamp o) const { return Duration::Nanoseconds(ns_ - o.ns_); }
  constexpr Timestamp& operator+=(Duration d) { *this = *this + d; return *this; }

 private:
  constexpr explicit Timestamp(int64_t ns) : ns_(ns) {}
  int64_t ns_ = 0;
};

struct Bytes {
  uint64_t count = 0;
  constexpr auto operator<=>(const Bytes&) const = default;
  constexpr Bytes operator+(Bytes o) const { return Bytes{count + o.count}; }
  constexpr Bytes operator-(Bytes o) const { return Bytes{count - o.count}; }
  constexpr Bytes& operator+=(Bytes o) { count += o.count; return *this; }
  constexpr Bytes& operator-=(Bytes o) { count -= o.count; return *this; }
};

struct BitsPerSecond {
  uint64_t count = 0;
  constexpr auto operator<=>(const BitsPerSecond&) const = default;
  static constexpr BitsPerSecond Gbps(double g) { return {static_cast<uint64_t>(g * 1e9)}; }
  static constexpr BitsPerSecond Mbps(double m) { return {static_cast<uint64_t>(m * 1e6)}; }
  // Time to serialize `b` at this rate; zero rate means "infinitely fast".
  constexpr Duration TransmitTime(Bytes b) const {
    if (count == 0) return Duration::Zero();
    return Duration::Nanoseconds(static_cast<int64_t>(
        (static_cast<unsigned __int128>(b.count) * 8 * 1000000000ULL) / count));
  }
  static constexpr BitsPerSecond FromBytesPer(Bytes b, Duration d) {
    if (d.nanoseconds() <= 0) return {0};
    return {static_cast<uint64_t>(static_cast<double>(b.count) * 8e9 / d.nanoseconds())};
  }
};

inline constexpr Timestamp Min(Timestamp a, Timestamp b) { return a < b ? a : b; }
inline constexpr Timestamp Max(Timestamp a, Timestamp b) { return a < b ? b : a; }
inline constexpr Duration Min(Duration a, Duration b) { return a < b ? a : b; }
inline constexpr Duration Max(Duration a, Duration b) { return a < b ? b : a; }

}  // namespace mrclab::mrc
