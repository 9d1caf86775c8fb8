"""What the pytest plugin checks its options with, loaded only when the plugin is on:
board presets and system descriptors (``target``), and whether a device can be built
from one (``device.requirements``)."""

from tilewright.device.requirements import check_runnable
from tilewright.target import board_preset, read_system_desc

__all__ = ["board_preset", "check_runnable", "read_system_desc"]
