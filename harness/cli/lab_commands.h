// The lab subcommands of `mrclab`: deploy, destroy, inspect, exec, graph, list, demo.
// Each returns the process exit status: 0 success, 1 the operation failed (e.g. not ready),
// 2 bad input or environment. Errors are printed as one line "mrclab: error: ...".
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace mrclab::harness {

// Values of the options; subcommands are exclusive, so they share one set.
struct LabArgs {
  std::string target;   // lab file or lab name
  std::string node;
  std::string demo_lab;
  std::vector<std::string> command;
  int timeout_s = 120;
  bool json = false;
  bool quiet = false;
  bool keep_failed = false;
  bool check = false;
  bool pass_stdin = false;         // exec -i: a VM host's command gets this standard input
  std::string frr_config_node;     // deploy --frr-config NODE: print its FRR configuration
  std::string frr_variables_node;  // deploy --frr-variables NODE: print its template variables
};

void AddLabCommands(CLI::App& app, LabArgs& args, int& exit_status);

}  // namespace mrclab::harness
