"""Multi-chip systems: presets as descriptors, mesh layouts from Ethernet links, placements."""

from __future__ import annotations

import collections

import pytest

from tilewright.device.topology import MeshError, SystemMesh
from tilewright.target import Arch, encode_ttsys, validate
from tilewright.target.presets import (
    BOARD_PRESETS,
    DERIVED_PRESETS,
    board_mesh_shape,
    board_names,
    board_preset,
)
from tilewright.target.ttsys import decode_ttsys

MULTI = ("n300", "t3k", "galaxy", "p300", "quietbox")


@pytest.mark.parametrize("name", [*BOARD_PRESETS, *DERIVED_PRESETS])
def test_every_preset_passes_the_descriptor_validator(name):
    root = board_preset(name)
    assert validate(root) == []
    assert decode_ttsys(encode_ttsys(root)) == root  # and round-trips through .ttsys


def test_derived_systems():
    galaxy = board_preset("galaxy").system_desc
    assert galaxy.num_chips == 32 and len(galaxy.chip_channels) == 256
    # A 2-D torus with 4 links to each of 4 neighbours: 16 Ethernet cores per chip, each once.
    ends = collections.Counter()
    for ch in galaxy.chip_channels:
        ends[(ch.device_id0, ch.ethernet_core_coord0)] += 1
        ends[(ch.device_id1, ch.ethernet_core_coord1)] += 1
    assert set(ends.values()) == {1} and len(ends) == 32 * 16
    # Its chips are n150 chips, so a single-chip program sees exactly the n150.
    assert galaxy.chip_descs[5] == board_preset("n150").system_desc.chip_descs[0]
    p300 = board_preset("p300").system_desc
    assert p300.num_chips == 2 and p300.get_chip_desc(1).arch is Arch.BLACKHOLE
    assert board_preset("quietbox").system_desc.num_chips == 4
    assert board_preset("t3k") is board_preset("LoudBox") is BOARD_PRESETS["n300-llmbox"]
    assert {n: board_mesh_shape(n) for n in MULTI} == {
        "n300": (1, 2),
        "t3k": (2, 4),
        "galaxy": (4, 8),
        "p300": (1, 2),
        "quietbox": (1, 4),
    }
    assert {"galaxy", "t3k", "quietbox"} <= set(board_names())


@pytest.mark.parametrize("name", MULTI)
def test_system_layout_is_a_mesh_of_linked_chips(name):
    sd = board_preset(name).system_desc
    system = SystemMesh(sd, board_mesh_shape(name), name)
    assert system.shape == board_mesh_shape(name)
    assert sorted(c for row in system.layout for c in row) == list(range(sd.num_chips))
    assert system.is_mesh(system.layout)
    # A descriptor from a file (no shape given) finds a mesh of the same size from its links.
    inferred = SystemMesh(sd)
    assert sorted(inferred.shape) == sorted(system.shape) and inferred.is_mesh(inferred.layout)


def test_t3k_layout_comes_from_the_real_llmbox_links():
    system = SystemMesh(board_preset("t3k").system_desc, (2, 4), "t3k")
    position = {chip: (r, c) for r, row in enumerate(system.layout) for c, chip in enumerate(row)}
    # Each n300 card (an MMIO chip 0-3 and its remote chip) sits on two neighbouring places.
    for a, b in [(0, 6), (1, 5), (2, 7), (3, 4)]:
        (ra, ca), (rb, cb) = position[a], position[b]
        assert abs(ra - rb) + abs(ca - cb) == 1
    assert system.link_count(0, 1) == 2 and system.link_count(0, 6) == 1


def test_placements():
    system = SystemMesh(board_preset("t3k").system_desc, (2, 4), "t3k")
    line = system.place(1, 8)[0]
    assert all(system.linked(a, b) for a, b in zip(line, line[1:]))
    assert system.linked(line[0], line[-1])  # the snake through a 2x4 closes: a ring of 8
    column = system.place(8, 1)
    assert [row[0] for row in column] == list(line)
    assert system.place(4, 2) == tuple(zip(*system.layout))  # the transpose
    assert system.place(1, 2, offset=(1, 2)) == (system.layout[1][2:4],)
    assert system.place(2, 2, device_ids=[3, 2, 1, 0]) == ((3, 2), (1, 0))
    galaxy = SystemMesh(board_preset("galaxy").system_desc, (4, 8), "galaxy")
    assert len(galaxy.place(1, 32)[0]) == 32 and galaxy.is_mesh(galaxy.place(8, 4))


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (dict(rows=3, cols=3), "needs 9 chips but t3k has 8"),
        (dict(rows=2, cols=2, offset=(1, 3)), "reaches outside the 2x4 mesh of t3k"),
        (dict(rows=1, cols=2, device_ids=[0, 0]), "must be 2 distinct chips of t3k"),
        (dict(rows=1, cols=2, device_ids=[0, 9]), "must be 2 distinct chips of t3k"),
    ],
)
def test_bad_placements(request_, message):
    system = SystemMesh(board_preset("t3k").system_desc, (2, 4), "t3k")
    with pytest.raises(MeshError, match=message):
        system.place(**request_)


def test_a_shape_the_links_cannot_hold():
    system = SystemMesh(board_preset("quietbox").system_desc, (1, 4), "quietbox")
    with pytest.raises(
        MeshError, match="mesh shape 2x2 does not fit the Ethernet links of quietbox"
    ):
        system.place(2, 2)
    with pytest.raises(MeshError, match="do not form a 2x2 mesh"):
        SystemMesh(board_preset("quietbox").system_desc, (2, 2), "quietbox")


def test_channels_to_unknown_devices_are_rejected():
    from dataclasses import replace

    sd = board_preset("n300").system_desc
    bad = replace(sd, chip_channels=(replace(sd.chip_channels[0], device_id1=7),))
    with pytest.raises(MeshError, match=r"chip_channels\[0\] links device 7, but the system has 2"):
        SystemMesh(bad)
