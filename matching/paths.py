"""Where the shipped files are: in a checkout and in a copy installed with `pip install .`.

In the repository, app.py, ui/, .streamlit/, pretrained/ and samples/ sit beside the `matching`
package. `pip install .` puts the same files inside the installed package, under `matching/_app/`
(see setup.py), so an installed copy finds its checkpoints and can start the app anywhere. Every
path to a shipped file is made here, from `app_dir()`.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
INSTALLED_APP = "_app"
"""The folder, inside the installed package, that holds the app and its data (setup.py's `APP`)."""
MODELS_VARIABLE = "MATCHLENS_MODELS"
"""Environment variable naming another folder of checkpoints (the app reads it too)."""


def app_dir() -> Path:
    """The folder holding app.py, ui/, .streamlit/, pretrained/ and samples/.

    The installed copy (`matching/_app/`) when there is one, else the checkout's root.
    """
    installed = PACKAGE_DIR / INSTALLED_APP
    return installed if (installed / "app.py").is_file() else PACKAGE_DIR.parent


def pretrained_dir() -> Path:
    """The shipped checkpoints (one folder per model, and defaults.json)."""
    return app_dir() / "pretrained"


def models_root() -> Path:
    """The checkpoints to load: $MATCHLENS_MODELS when set, else the shipped ones."""
    return Path(os.environ.get(MODELS_VARIABLE) or pretrained_dir())


def paper_tables_file() -> Path:
    """The ECIR paper's table beside the shipped checkpoints (`python -m matching paper-tables` writes it)."""
    return models_root() / "paper-tables.json"


def paper_tables_files() -> list[Path]:
    """Every paper's table beside the shipped checkpoints: paper-tables.json (ECIR, WikiQA), then the others
    `python -m matching paper-tables --reference ... --out pretrained/paper-tables-<name>.json` wrote."""
    return sorted(models_root().glob("paper-tables*.json"), key=lambda path: (path != paper_tables_file(), path.name))


def samples_dir() -> Path:
    """Small ranking files that ship with MatchLens (samples/sample-ranking.csv)."""
    return app_dir() / "samples"
