#!/usr/bin/python3
"""Kernel pieces of a VM host's guest image (used by build_guest_image.sh).

  vmlinux BZIMAGE OUT     the uncompressed ELF kernel inside a Debian vmlinuz (xz): qemu boots
                          it directly through its PVH entry, without a boot loader
  modules MODDIR NAME...  the modules NAME need, with everything they depend on (modules.dep),
                          dependencies first: one path per line, relative to MODDIR
"""
import lzma
import os
import sys


def vmlinux(bzimage, out):
    data = open(bzimage, "rb").read()
    start = data.find(b"\xfd7zXZ\x00")
    if start < 0:
        sys.exit(f"{bzimage}: no xz-compressed kernel inside (Debian's amd64 kernels are xz)")
    kernel = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data[start:])
    if not kernel.startswith(b"\x7fELF"):
        sys.exit(f"{bzimage}: the decompressed kernel is not an ELF file")
    with open(out, "wb") as f:
        f.write(kernel)


def modules(moddir, names):
    dep = {}
    with open(os.path.join(moddir, "modules.dep")) as f:
        for line in f:
            module, _, rest = line.partition(":")
            dep[module] = rest.split()
    by_name = {os.path.basename(m).split(".ko")[0].replace("-", "_"): m for m in dep}
    order, seen = [], set()

    def add(module):
        if module in seen:
            return
        seen.add(module)
        for d in dep[module]:
            add(d)
        order.append(module)

    for name in names:
        if name not in by_name:
            sys.exit(f"module {name} is not in {moddir}")
        add(by_name[name])
    print("\n".join(order))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "vmlinux":
        vmlinux(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 4 and sys.argv[1] == "modules":
        modules(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
