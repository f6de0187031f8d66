"""Measurement tools for the backends, shipped for users to run and imported by no runtime
module: `python -m gpu_backend.bench.model` (the trial-shape update), `python -m
gpu_backend.bench.ops` (one op at many lane counts; also `regime-trader bench --ops`)."""
