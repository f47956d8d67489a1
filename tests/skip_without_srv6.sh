#!/usr/bin/env bash
# Runs its arguments, or exits 77 (ctest's SKIP_RETURN_CODE for the lab suites) when this
# kernel cannot forward SRv6 uSIDs: it refuses one seg6local End route with the NEXT-C-SID
# flavor, as every lab switch installs (emulator/netns/kernel_srv6.h), in a throwaway network
# namespace, as not supported (kernels built without CONFIG_IPV6_SEG6_LWTUNNEL). Any other
# outcome runs the suite, which then fails or passes on its own.
set -u
probe='ip link set lo up && ip -6 route add fcbb:0:1::/48 encap seg6local action End flavors next-csid lblen 32 nflen 16 count dev lo'
if ! why=$(unshare --net sh -c "$probe" 2>&1) && [[ $why == *"not supported"* ]]; then
  why=${why#Error: }
  echo "SKIPPED: this kernel cannot forward SRv6 uSIDs (${why%.}; it needs CONFIG_IPV6_SEG6_LWTUNNEL): no lab can be emulated here" >&2
  exit 77
fi
exec "$@"
