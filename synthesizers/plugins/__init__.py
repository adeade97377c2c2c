"""Synthesizer plug-ins that run in their own venv: one folder each (contracts/plugin_env.py finds them).

A plug-in folder `<name>/` holds its Synthesizer classes (`__init__.py`, subclasses of
`holdbench.synthesizers._isolated.IsolatedSynthesizer`), its `worker.py` (run inside the venv by
`holdbench_worker.py`, the worker side every plug-in shares), its pinned `requirements.txt` and its
`plugin.toml` (why it is isolated, the import packages its venv must have). The recipe:
docs/extending/plugin-synthesizer.md.
"""

from holdbench.synthesizers._isolated import IsolatedSynthesizer

__all__ = ["IsolatedSynthesizer"]
