#include "harness/drill/quantities.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <stdexcept>

namespace mrclab::harness {
namespace {

// Splits "12.5ms" into 12.5 and "ms"; throws if there is no leading number.
std::pair<double, std::string> NumberAndUnit(const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  // (strtod also reads hexadecimal, "inf" and "nan": none is a quantity in a scenario)
  const bool hex = text.find_first_of("xX") < static_cast<size_t>(end - begin);
  if (end == begin || hex || !std::isfinite(value)) throw std::invalid_argument("'" + text + "' is not a number");
  std::string unit(end);
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  return {value, unit};
}

}  // namespace

uint64_t ParseBytes(const std::string& text) {
  static const std::map<std::string, double> units = {
      {"", 1}, {"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
      {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}};
  auto [value, unit] = NumberAndUnit(text);
  auto it = units.find(unit);
  if (it == units.end()) throw std::invalid_argument("unknown size unit '" + unit + "' (use B, KiB, MiB, GiB, KB, MB, GB)");
  if (value < 0) throw std::invalid_argument("size must not be negative");
  const double bytes = value * it->second;
  if (bytes > 1e15) throw std::invalid_argument("size '" + text + "' is too large");
  return static_cast<uint64_t>(std::llround(bytes));
}

double ParseSeconds(const std::string& text) {
  static const std::map<std::string, double> units = {{"", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"m", 60}};
  auto [value, unit] = NumberAndUnit(text);
  auto it = units.find(unit);
  if (it == units.end()) throw std::invalid_argument("unknown time unit '" + unit + "' (use us, ms, s, m)");
  if (value < 0) throw std::invalid_argument("'" + text + "' is negative: times are 0 or more");
  const double seconds = value * it->second;
  if (!(seconds <= kMaxDrillSeconds))
    throw std::invalid_argument("'" + text + "' is longer than a day, the longest time a drill may take");
  return seconds;
}

double ParseBound(const std::string& text) {
  auto [value, unit] = NumberAndUnit(text);
  if (!unit.empty()) throw std::invalid_argument("'" + text + "' is not a number");
  if (value < 0) throw std::invalid_argument("'" + text + "' is negative: a bound is 0 or more");
  return value;
}

double ParseFraction(const std::string& text) {
  auto [value, unit] = NumberAndUnit(text);
  if (unit == "%") value /= 100;
  else if (!unit.empty()) throw std::invalid_argument("'" + text + "' is not a fraction (use 2% or 0.02)");
  if (value < 0 || value > 1) throw std::invalid_argument("'" + text + "' is outside 0..100%");
  return value;
}

std::string FormatBytes(uint64_t bytes) {
  for (auto [unit, size] : {std::pair{"GiB", 1ull << 30}, {"MiB", 1ull << 20}, {"KiB", 1ull << 10}})
    if (bytes >= size && bytes % size == 0) return std::to_string(bytes / size) + unit;
  return std::to_string(bytes) + "B";
}

}  // namespace mrclab::harness
