"""Proofs that the model and its sampler are right, shipped for users to run and imported
by no runtime module: simulation-based calibration (`sbc`) and the posteriordb ports
(`posteriordb`); see docs/validation.md."""
