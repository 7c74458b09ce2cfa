"""``python -m embeddings``: make this user's ONNX export of the packaged model now (the
install does, so the first solve does not pay for torch) and print where it is."""

from __future__ import annotations

from embeddings.onnx_model import export, export_path


def main() -> None:
    path = export_path()
    print(path if path.exists() else export(path))


if __name__ == "__main__":
    main()
