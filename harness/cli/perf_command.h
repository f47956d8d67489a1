// `mrclab perf LAB SRC_HOST DST_HOST`: an ib_write_bw-like measurement between two hosts of a
// deployed lab over MRC (or the RC baseline). This file maps the lab's plan onto the perf API:
// NIC ports per plane, and EVs spread evenly over the planes and spines both hosts share.
#pragma once

namespace CLI {
class App;
}

namespace mrclab::harness {

void AddPerfCommand(CLI::App& app, int& exit_status);

}  // namespace mrclab::harness
