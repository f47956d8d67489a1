// The one reader of lab and scenario files, strict and bounded:
//
//   path ─► ReadInputFile: a regular file (not a FIFO, device or directory), at most
//           kMaxInputFileBytes, readable ─► text
//   text ─► LoadStrictYaml: valid YAML, exactly one document, no key twice in a mapping, no
//           mapping or list nested deeper than kMaxYamlDepth ─► YAML::Node
//
// Both throw LabError (file, field, reason), the one-line error every command prints.
#pragma once

#include <cstddef>
#include <string>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "emulator/lab_spec.h"

namespace mrclab::emulator {

constexpr size_t kMaxInputFileBytes = 1 << 20;  // 1 MiB: the shipped files are a few KiB
constexpr int kMaxYamlDepth = 32;                // the shipped files nest 4 deep

std::string ReadInputFile(const std::string& path);

// Looking up a path a user gave: one the system cannot even look up (too long, ...) counts as
// absent instead of throwing, so that the caller refuses it with the file and field named.
bool PathExists(const std::string& path);
bool IsRegularFile(const std::string& path);
YAML::Node LoadStrictYaml(const std::string& text, const std::string& source);

}  // namespace mrclab::emulator
