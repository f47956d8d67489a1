// `mrclab drill SCENARIO.yaml`: run a chaos drill (see harness/drill/drill_runner.h).
#pragma once

namespace CLI {
class App;
}

namespace mrclab::harness {

void AddDrillCommand(CLI::App& app, int& exit_status);

}  // namespace mrclab::harness
