#!/usr/bin/env python3
"""An independent writer of Megatron MMIDIDX v1 datasets (json, struct, array only), for tests.

usage: write_megatron.py PREFIX DTYPE_CODE '[[ids of doc 0], [ids of doc 1], ...]'
writes PREFIX.bin and PREFIX.idx the way Megatron's MMapIndexedDataset.Index.writer does.
"""
import array
import json
import struct
import sys

TYPECODES = {1: "B", 2: "b", 3: "h", 4: "i", 5: "q", 8: "H"}


def main():
    prefix, code, docs = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
    typecode = TYPECODES[code]
    itemsize = array.array(typecode).itemsize
    with open(prefix + ".bin", "wb") as f:
        for doc in docs:
            f.write(array.array(typecode, doc).tobytes())
    sizes = [len(d) for d in docs]
    pointers, offset = [], 0
    for s in sizes:
        pointers.append(offset)
        offset += s * itemsize
    with open(prefix + ".idx", "wb") as f:
        f.write(b"MMIDIDX\x00\x00")
        f.write(struct.pack("<Q", 1))
        f.write(struct.pack("<B", code))
        f.write(struct.pack("<Q", len(sizes)))
        f.write(struct.pack("<Q", len(sizes) + 1))
        f.write(array.array("i", sizes).tobytes())
        f.write(array.array("q", pointers).tobytes())
        f.write(array.array("q", range(len(sizes) + 1)).tobytes())


if __name__ == "__main__":
    main()
