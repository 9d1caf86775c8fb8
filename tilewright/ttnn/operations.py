"""ttnn operations (filled by the op-registry work)."""

__all__: list[str] = []
