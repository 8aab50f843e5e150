"""Media preparation: synthetic or user video → CMAF renditions plus `manifest.json`.

The server only needs `load_manifest(media_dir)` (see `pccstream.media.manifest`); the rest
of this package produces media directories through `pccstream media synth|package|info`.
"""

from pccstream.media.manifest import (
    InitSegment,
    Manifest,
    ManifestError,
    Rendition,
    Segment,
    load_manifest,
)

__all__ = ["InitSegment", "Manifest", "ManifestError", "Rendition", "Segment", "load_manifest"]
