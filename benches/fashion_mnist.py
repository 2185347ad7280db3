#!/usr/bin/env python3
"""Writes Fashion-MNIST (Debian's dataset-fashion-mnist, IDX format) as CSV.

    python3 benches/fashion_mnist.py OUT.csv [--classes A,B]

All 70,000 images (train then test), label first, then the 784 raw pixel
values 0..255. With --classes A,B only those two classes are kept (for
example 1,8 = trouser vs bag, a separable pair).
"""
import argparse
import gzip
import struct

ROOT = "/usr/share/datasets/fashion-mnist"


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, count = struct.unpack(">II", data[:8])
    dims = magic & 0xFF
    shape = struct.unpack(">" + "I" * dims, data[4 : 4 + 4 * dims])
    start = 4 + 4 * dims
    size = 1
    for d in shape[1:]:
        size *= d
    return [data[start + i * size : start + (i + 1) * size] for i in range(shape[0])]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--classes", default=None)
    args = ap.parse_args()
    keep = None if args.classes is None else {int(c) for c in args.classes.split(",")}
    rows = 0
    with open(args.out, "w") as out:
        for part in ("train", "t10k"):
            images = idx(f"{ROOT}/{part}-images-idx3-ubyte.gz")
            labels = idx(f"{ROOT}/{part}-labels-idx1-ubyte.gz")
            for img, lab in zip(images, labels):
                y = lab[0]
                if keep is not None and y not in keep:
                    continue
                out.write(str(y) + "," + ",".join(map(str, img)) + "\n")
                rows += 1
    print(f"wrote {rows} rows to {args.out}")


if __name__ == "__main__":
    main()
