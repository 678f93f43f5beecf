# models/pt2/aten_schemas.py — writes src/aten/aten_schemas.txt: every aten:: operator schema the running torch
# registers (str(schema) of torch._C._jit_get_all_schemas()), one a line, sorted. The out= variants stay: a
# profiler trace records them (torch.compile's extern kernels call aten::mm.out, addmm.out, bmm.out).
# Run in the modern root: bash scripts/modern_torch.sh python3 models/pt2/aten_schemas.py
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "src", "aten", "aten_schemas.txt")


def main():
    lines = sorted({str(s) for s in torch._C._jit_get_all_schemas()
                    if s.name.startswith("aten::")})
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("".join(line + "\n" for line in lines))
    print(f"{os.path.normpath(OUT)}: {len(lines)} schemas, torch {torch.__version__}", file=sys.stderr)


if __name__ == "__main__":
    main()
