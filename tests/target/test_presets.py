"""Board presets reproduce the real files byte for byte (§7.2)."""

from __future__ import annotations

import pytest

from tilewright.errors import SystemDescError
from tilewright.target import BOARD_PRESETS, Arch, board_preset, encode_ttsys

from .helpers import BOARDS, real_bytes


def test_presets_are_exactly_the_real_boards():
    assert tuple(BOARD_PRESETS) == BOARDS


def test_preset_encodes_to_the_real_file(board):
    assert encode_ttsys(board_preset(board)) == real_bytes(board)


def test_board_facts():
    assert board_preset("n300").system_desc.num_chips == 2
    assert board_preset("n300-llmbox").system_desc.num_chips == 8
    assert board_preset("p150").get_chip_desc(0).arch is Arch.BLACKHOLE
    # Per-chip values differ on multi-chip boards: chip descriptors are not deduplicated.
    n300 = board_preset("n300").system_desc
    assert n300.chip_descs[0] != n300.chip_descs[1]


@pytest.mark.parametrize("name", ["N300_LLMBOX", " n300-llmbox ", "n300_llmbox"])
def test_name_normalisation(name):
    assert board_preset(name) is BOARD_PRESETS["n300-llmbox"]


def test_unknown_board():
    with pytest.raises(
        SystemDescError, match="unknown board 'n700'; known boards: n150, n300, n300-llmbox, p150"
    ):
        board_preset("n700")


def test_presets_mapping_is_read_only():
    with pytest.raises(TypeError):
        BOARD_PRESETS["x"] = board_preset("n150")  # type: ignore[index]
