"""WGSL sources, generated per K (array sizes are compile-time constants in WGSL)."""
