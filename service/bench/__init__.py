"""Measurement and proof tools, shipped for users but apart from the runtime code.

The daemon harness, the supervision and reload measurements, the chaos proof and the
soak. Only `service.commands` (lazily, inside a handler) and the tests import this
package; no runtime module does.
"""
