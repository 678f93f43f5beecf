# models/pt2/py_export.py OUT_DIR — exports torchvision's ResNet-18 through the Python package's own path
# (flopwise.export_program: what flopwise.analyze(module, x) runs on torch >= 2.4), with a dynamic batch, to
# OUT_DIR/py_export.pt2. Run in the modern root by scripts/test_modern.sh; the host's tests then analyse the
# file against torchvision's published figures (tests/test_export_programs.cc).
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import torch  # noqa: E402
import torchvision  # noqa: E402

import flopwise  # noqa: E402


def main():
    out = os.path.abspath(sys.argv[1])
    os.makedirs(out, exist_ok=True)
    model = torchvision.models.resnet18(weights=None).eval()
    batch = torch.export.Dim("batch", max=64)
    path = flopwise.export_program(model, torch.randn(2, 3, 224, 224), os.path.join(out, "py_export.pt2"),
                                   dynamic_shapes=({0: batch},))
    print(f"{path}: {os.path.getsize(path)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
