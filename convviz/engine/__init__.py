"""The numeric engine: NumPy and the standard library only.

- `spec.py`: `ConvSpec`, the one owner of shape arithmetic, padding forms and the cache key;
  `numbers.py`: the one reader of a number wherever it enters (strict or typed) and its message;
- `ops.py`: the story's transforms (pad/unpad, dilate/subsample, rot180, windows), each beside
  its adjoint; `conv.py`: the public API with PyTorch's semantics (read it first), on
  `fastpath.py`'s im2col + GEMM, split over the cores by `_threads.py`;
- `arrays.py`: every intermediate array and mask the app draws; `sweeps.py`: every step of a
  sliding window in one call; `terms.py` and `formulas.py`: a cell's sum, term by term;
- `matrix.py`: the convolution as a matrix; `reference.py`: the plain-loop twin; `checks.py`:
  the independent witnesses of a layer's numbers;
- `values.py`: example values (seeded small integers, named kernels, ∂L/∂y choices);
  `text.py`: the one rule that writes a number.
"""
