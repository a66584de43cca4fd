#!/usr/bin/env python3
"""An independent safetensors writer and reader using only json and struct (no numpy, no torch), to
check lazygrad's src/nn/safetensors.cpp against (tests/nn/safetensors_test.cpp runs it).

  safetensors_tool.py write PATH   writes the fixed tensors of SAMPLE (every dtype) plus metadata
  safetensors_tool.py read PATH    validates PATH and prints {"metadata": {...}, "tensors": {name:
                                   {"dtype", "shape", "values"}}} as JSON (values as numbers)
"""
import json
import struct
import sys

# name -> (dtype, shape, values); values are exactly representable in the dtype.
SAMPLE = {
    "model.embed_tokens.weight": ("F32", [2, 3], [0.5, -1.25, 3.0, 1e-3, -7.0, 65504.0]),
    "model.layers.0.input_layernorm.weight": ("BF16", [4], [1.0, -2.5, 0.0078125, 384.0]),
    "half": ("F16", [2, 2], [0.099975586, -1.0, 65504.0, 6.1035156e-05]),
    "double": ("F64", [3], [0.1, -1e300, 2.0 ** -1000]),
    "i64": ("I64", [2], [-(2 ** 40), 2 ** 53]),
    "i32": ("I32", [3], [-7, 0, 2 ** 31 - 1]),
    "i16": ("I16", [2], [-32768, 1234]),
    "i8": ("I8", [2], [-128, 127]),
    "u8": ("U8", [3], [0, 200, 255]),
    "u16": ("U16", [1], [65535]),
    "u32": ("U32", [1], [4000000000]),
    "u64": ("U64", [1], [2 ** 60]),
    "flags": ("BOOL", [4], [True, False, False, True]),
    "scalar": ("F32", [], [42.0]),
    "empty": ("F32", [0, 3], []),
}
METADATA = {"format": "pt", "written_by": "safetensors_tool.py"}

STRUCT = {"F64": "d", "F32": "f", "F16": "e", "I64": "q", "I32": "i", "I16": "h", "I8": "b",
          "U64": "Q", "U32": "I", "U16": "H", "U8": "B", "BOOL": "?"}
SIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
        "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1}


def encode(dtype, values):
    if dtype == "BF16":  # the top half of the float32 bits (values here are exact in bf16)
        return b"".join(struct.pack("<I", struct.unpack("<I", struct.pack("<f", v))[0])[2:] for v in values)
    return struct.pack("<%d%s" % (len(values), STRUCT[dtype]), *values)


def decode(dtype, raw):
    n = len(raw) // SIZE[dtype]
    if dtype == "BF16":
        return [struct.unpack("<f", b"\0\0" + raw[2 * i:2 * i + 2])[0] for i in range(n)]
    return list(struct.unpack("<%d%s" % (n, STRUCT[dtype]), raw))


def write(path):
    header, data = {"__metadata__": METADATA}, b""
    for name, (dtype, shape, values) in SAMPLE.items():
        raw = encode(dtype, values)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def read(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    out = {"metadata": header.pop("__metadata__", {}), "tensors": {}}
    for name, e in header.items():
        begin, end = e["data_offsets"]
        count = 1
        for d in e["shape"]:
            count *= d
        assert end - begin == count * SIZE[e["dtype"]], name
        assert end <= len(data), name
        values = decode(e["dtype"], data[begin:end])
        out["tensors"][name] = {"dtype": e["dtype"], "shape": e["shape"],
                                "values": [float(v) if e["dtype"][0] in "FB" and e["dtype"] != "BOOL" else int(v)
                                           for v in values]}
    print(json.dumps(out))


if __name__ == "__main__":
    {"write": write, "read": read}[sys.argv[1]](sys.argv[2])
