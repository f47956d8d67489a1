// libFuzzer target for lab files: the strict YAML reader, the lab parser (with the clos
// generator) and the resolver (addressing, ASNs, uSID plan, routes), as `mrclab deploy` and
// every drill run them. The invariant: any input is a lab, or is refused with a LabError whose
// message is one line naming the file first ("fuzz.yaml: FIELD: REASON"). Any other exception,
// a crash, a leak or undefined behaviour (ASan, UBSan) ends the run.
//
//   build-fuzz/lab_fuzz -max_total_time=600 -dict=emulator/fuzz/lab.dict CORPUS labs tests/corpus/labs
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "emulator/lab_spec.h"
#include "emulator/resolved_lab.h"
#include "emulator/strict_yaml.h"

namespace {

using namespace mrclab::emulator;

// A few bytes can ask for a fabric of millions of links, legal up to kMaxClosLinks and planned
// in seconds: such inputs are skipped, so the fuzzer spends its time on the parser's logic
// (ParseLabErrorTest.ClosLimitsOfTheUsidPlan and the scale benchmark cover the big ones).
// Routes grow as switches x links: bigger labs are resolved without them, as the simulator does.
constexpr long kMaxFuzzedClosLinks = 20000;
constexpr size_t kMaxNodesWithRoutes = 256;

bool HugeClos(const std::string& text) {
  try {
    const YAML::Node clos = LoadStrictYaml(text, "fuzz.yaml")["clos"];
    if (!clos.IsMap()) return false;
    // Read by the lab parser's own rule ("0319" is 319; to yaml-cpp it is no number, and such a
    // lab of 2.9 M links once slipped past this filter).
    auto get = [&](const char* key) {
      const YAML::Node v = clos[key];
      const std::optional<int> n = v.IsScalar() ? ParseLabInteger(v.Scalar(), std::numeric_limits<int>::max()) : std::nullopt;
      return std::min(static_cast<long>(n.value_or(0)), 1L << 20);
    };
    return get("planes") * (get("spines_per_plane") * get("leaves_per_plane") + get("hosts")) > kMaxFuzzedClosLinks;
  } catch (const std::exception&) {
    return false;  // the parser will say what is wrong
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (HugeClos(text)) return -1;  // not added to the corpus
  try {
    const LabSpec spec = ParseLabText(text, "fuzz.yaml");
    Resolve(spec, {.routes = spec.nodes.size() <= kMaxNodesWithRoutes});
  } catch (const LabError& e) {
    const std::string what = e.what();
    if (what.rfind("fuzz.yaml: ", 0) != 0 || what.find('\n') != std::string::npos) {
      std::fprintf(stderr, "a refusal that is not one line naming the file: %s\n", what.c_str());
      std::abort();
    }
  }
  return 0;
}
