"""The ground floor: contracts every layer shares (column kinds and schema, atomic file writes).

Imports nothing of holdbench; benchmark/, synthesizers/ and metrics/ all build on it.
"""
