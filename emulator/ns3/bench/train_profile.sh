#!/usr/bin/env bash
# Trains the profile of the simulator's profile-guided build (CMakeLists.txt: MRCLAB_PGO):
# runs the programs of a tree configured with MRCLAB_PGO=generate on small simulations that
# take the paths a simulated packet takes (MRC on srv6 EVs with virtual payload, as the scale
# bench; MRC and RC on udp EVs through a link failure, as drills; the fabric alone under
# all-to-all load), so that their profile lands in MRCLAB_PGO_DIR.
#
#   emulator/ns3/bench/train_profile.sh TRAIN_BUILD_DIR     (about 5 s on one core)
#
# Exit status: 0 when every run completed, 1 otherwise (a profile of a failed run is not one
# to build by).
set -euo pipefail
source_dir="$(cd "$(dirname "$0")/../../.." && pwd)"
build="${1:?usage: train_profile.sh TRAIN_BUILD_DIR}"

run() {
  echo "train_profile: $*" >&2
  "$@" >/dev/null
}

# MRCLAB_HUGE_PAGES=0: no re-exec, so each run writes its profile once.
export MRCLAB_HUGE_PAGES=0
# The ring all-reduce of the scale bench: 2 KiB messages (as at 8,192 hosts), then 4 KiB packets.
run "$build/mrclab_ns3_scale_bench" --hosts 512 --hosts-per-leaf 16 --size-mib 1 --json
run "$build/mrclab_ns3_scale_bench" --hosts 64 --planes 4 --hosts-per-leaf 8 --size-mib 4 --json
# Drills' paths: losses, retransmission on other EVs, RC's go-back-N, ECMP, a routing reaction.
for transport in mrc rc; do
  run "$build/mrclab-clos-allreduce" --lab="$source_dir/labs/clos4.yaml" --transport=$transport --evMode=udp \
      --sizeKib=256 --failAt=0.02 --stopTime=0.08
done
run "$build/mrclab-clos-allreduce" --lab="$source_dir/labs/clos4.yaml" --transport=mrc --evMode=srv6 \
    --sizeKib=256 --failAt=0.02 --stopTime=0.08
# The fabric alone under load.
run "$build/mrclab_ns3_model_bench" --lab="$source_dir/labs/clos4.yaml" --packets=20
