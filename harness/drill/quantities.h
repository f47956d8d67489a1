// Human quantities in scenario files and options: sizes ("1MiB", "512KiB", "4096"), durations
// ("50ms", "2s", "1.5m", "250us") and ratios ("2%", "0.02"). Each throws std::invalid_argument
// with the reason; callers add the file and field.
#pragma once

#include <cstdint>
#include <string>

namespace mrclab::harness {

uint64_t ParseBytes(const std::string& text);    // B, KB/MB/GB (10^3), KiB/MiB/GiB (2^10)
constexpr double kMaxDrillSeconds = 24 * 3600;  // any time a scenario gives is at most a day
double ParseSeconds(const std::string& text);    // us, ms, s, m; a bare number is seconds; <= a day
double ParseFraction(const std::string& text);   // "2%" -> 0.02, "0.02" -> 0.02; within 0..1
double ParseBound(const std::string& text);      // a plain finite number, 0 or more ("3.0", "0")
std::string FormatBytes(uint64_t bytes);          // 1048576 -> "1MiB"

}  // namespace mrclab::harness
