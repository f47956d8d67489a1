// `mrclab fault apply|list|revert`: inject faults into a deployed lab from the command line
// (emulator/netns/faults.h does the work). A fault applied here stays active after the command
// exits, until `mrclab fault revert` (any later process) or `mrclab destroy`.
#pragma once

namespace CLI {
class App;
}

namespace mrclab::harness {

void AddFaultCommand(CLI::App& app, int& exit_status);

}  // namespace mrclab::harness
