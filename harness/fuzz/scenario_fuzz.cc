// libFuzzer target for scenario files: the strict YAML reader, the scenario parser, and the
// plan `mrclab drill --check` makes from it against a lab (job hosts, every fault's target and
// time windows). The invariant: any input is a scenario with a plan, or is refused with a
// LabError (ScenarioError) whose message is one line naming the file first ("fuzz.yaml: FIELD:
// REASON"). Any other exception, a crash, a leak or undefined behaviour ends the run.
//
//   build-fuzz/scenario_fuzz -max_total_time=600 -dict=harness/fuzz/scenario.dict CORPUS scenarios tests/corpus/scenarios
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "emulator/lab_spec.h"
#include "emulator/resolved_lab.h"
#include "harness/drill/fault_plan.h"
#include "harness/drill/scenario.h"

namespace {

using namespace mrclab;

// Every scenario is planned against this lab (labs/clos2.yaml's shape), whatever its `lab:`
// says: the fuzzer reads no files.
const emulator::ResolvedLab& Lab() {
  static const emulator::ResolvedLab lab = emulator::Resolve(emulator::ParseLabText(
      "name: clos2\nclos: {planes: 2, spines_per_plane: 2, leaves_per_plane: 4, hosts: 8, hosts_per_leaf: 2}\n",
      "clos2.yaml"));
  return lab;
}

void Refused(const std::exception& e) {
  const std::string what = e.what();
  if (what.rfind("fuzz.yaml: ", 0) != 0 || what.find('\n') != std::string::npos) {
    std::fprintf(stderr, "a refusal that is not one line naming the file: %s\n", what.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const emulator::ResolvedLab& lab = Lab();
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const harness::Scenario s = harness::ParseScenarioText(text, "fuzz.yaml", ".");
    std::vector<std::string> hosts;
    for (const auto* h : lab.Hosts()) hosts.push_back(h->name);
    harness::JobHosts(s, hosts);
    harness::PlanFaults(s, lab).ToJson();
  } catch (const emulator::LabError& e) {
    Refused(e);
  }
  return 0;
}
