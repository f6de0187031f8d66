"""Compute pipelines built once per device, keyed by (source hash, K, workgroup, entry point).

Rebuilding a pipeline per dispatch exhausted descriptor pools in the seed; here every
variant is compiled at start-up and lives as long as the device. All kernels share one
explicit bind group layout, so one bind group serves every entry point.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

PipelineKey = tuple[str, int, int, str]

# binding -> buffer binding type, the layout every HMM kernel shares (see shaders/hmm.py)
HMM_BINDINGS: tuple[str, ...] = (
    "uniform",
    "read-only-storage",
    "read-only-storage",
    "storage",
    "storage",
    "storage",
)


@functools.lru_cache(maxsize=64)
def source_hash(source: str) -> str:
    """A module's key; remembered, since every encode of a submission asks for it (the
    module builders return the same string object, whose own hash Python keeps)."""
    return hashlib.sha256(source.encode()).hexdigest()[:16]


class PipelineCache:
    def __init__(
        self, device: Any, bindings: tuple[str, ...] = HMM_BINDINGS, *more: tuple[str, ...]
    ) -> None:
        """One bind group layout per group: `bindings` for group 0, `more` for 1, 2, ..."""
        import wgpu  # noqa: PLC0415

        self._device = device
        self.bind_group_layouts = [
            device.create_bind_group_layout(
                entries=[
                    {"binding": i, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": kind}}
                    for i, kind in enumerate(group)
                ]
            )
            for group in (bindings, *more)
        ]
        self.bind_group_layout = self.bind_group_layouts[0]
        self._layout = device.create_pipeline_layout(bind_group_layouts=self.bind_group_layouts)
        self._modules: dict[str, Any] = {}
        self._pipelines: dict[PipelineKey, Any] = {}
        self.compiled = 0  # pipelines created: flat in steady state

    def get(self, source: str, K: int, workgroup: int, entry: str) -> Any:
        digest = source_hash(source)
        key = (digest, K, workgroup, entry)
        pipeline = self._pipelines.get(key)
        if pipeline is None:
            pipeline = self._build(digest, source, entry)
            self._pipelines[key] = pipeline
        return pipeline

    def _build(self, digest: str, source: str, entry: str) -> Any:
        module = self._modules.get(digest)
        if module is None:
            module = self._device.create_shader_module(label=digest, code=source)
            self._modules[digest] = module
        self.compiled += 1
        return self._device.create_compute_pipeline(
            layout=self._layout, compute={"module": module, "entry_point": entry}
        )

    def __len__(self) -> int:
        return len(self._pipelines)
