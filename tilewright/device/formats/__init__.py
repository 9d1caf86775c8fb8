"""Data formats of the virtual device: tile geometry, tilize/untilize and byte codecs.

The tt-metal analogue of ``tt_metal/impl/data_format/`` (reference/tt-metal.md §1-§2):
device ``DataFormat`` and ttnn ``DataType`` enums, tile shapes and tile sizes, the
row-major <-> TILED_NFACES layout conversion, and bit-exact encoders/decoders between
numpy values and on-device bytes (bf16 round-to-nearest-even, block floats, plain floats
and integers).  Everything is vectorised numpy; the compute engine uses
``decode_block`` / ``encode_block`` on its hot path.

Modules: ``dataformat`` (enums and format tables), ``tile`` (shapes and sizes),
``tilize`` (layout), ``bf16``, ``blockfloat``, ``plain`` (codecs), ``codec`` (dispatch).
"""

from .bf16 import bf16_bits_to_float32, float32_to_bf16_bits, float32_to_bf16_bits_truncate
from .codec import (
    decode_block,
    decode_elements,
    decode_tiles,
    encode_block,
    encode_elements,
    encode_tiles,
)
from .dataformat import (
    BLOCK_FLOAT,
    DATA_TYPE_NAMES,
    FLOAT_FORMATS,
    INTEGER_DTYPE,
    TTNN_TO_DATA_FORMAT,
    BlockFloatSpec,
    DataFormat,
    ExponentKind,
    TtnnDataType,
    data_type_name,
    data_type_named,
    decoded_dtype,
    element_size,
    is_block_float,
    is_integer,
)
from .tile import DEFAULT_TILE, TILE_32x32, TileShape, tile_size_bytes
from .tilize import pad_to_tiles, padded_shape, tile_view, tilize, untilize

__all__ = [
    "BLOCK_FLOAT",
    "DATA_TYPE_NAMES",
    "FLOAT_FORMATS",
    "INTEGER_DTYPE",
    "DEFAULT_TILE",
    "TTNN_TO_DATA_FORMAT",
    "BlockFloatSpec",
    "DataFormat",
    "ExponentKind",
    "TILE_32x32",
    "TileShape",
    "TtnnDataType",
    "bf16_bits_to_float32",
    "data_type_name",
    "data_type_named",
    "decode_block",
    "decode_elements",
    "decode_tiles",
    "decoded_dtype",
    "element_size",
    "encode_block",
    "encode_elements",
    "encode_tiles",
    "float32_to_bf16_bits",
    "float32_to_bf16_bits_truncate",
    "is_block_float",
    "is_integer",
    "pad_to_tiles",
    "padded_shape",
    "tile_size_bytes",
    "tile_view",
    "tilize",
    "untilize",
]
