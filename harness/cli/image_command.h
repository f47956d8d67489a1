// `mrclab image build|list|load|rm`: the router images a lab's switches can run from
// (emulator/netns/router_images.h), in mrclab's own image store.
#pragma once

namespace CLI {
class App;
}

namespace mrclab::harness {

void AddImageCommand(CLI::App& app, int& exit_status);

}  // namespace mrclab::harness
