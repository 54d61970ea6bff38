"""Checkpoints: safetensors weights, a JSON config and a JSON model card.

A checkpoint folder holds
- `model.safetensors`: the weights (no word-vector matrix; nothing is ever unpickled),
- `config.json`: format and version, the model's full parameter set, the vocabulary
  source and fingerprint it was trained with,
- `card.json`: model-card metadata (metrics, training log, seed, data fingerprint,
  date, code version), rendered for people as `README.md`.
Loading checks each of these and raises `CheckpointError` naming the file and the
problem, never a stack of torch internals.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from matching.explain.matcher import Matcher
from matching.models import build_model, params_from_dict
from matching.models.base import refresh_answer_types
from matching.models.params import ParamsError, params_to_dict
from matching.text.embeddings import WordVectors, load_glove

FORMAT = "matchlens-checkpoint"
FORMAT_VERSION = 1
WEIGHTS, CONFIG, CARD = "model.safetensors", "config.json", "card.json"


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be loaded; the message names the file and the problem."""


def save_checkpoint(matcher: Matcher, folder: Path, card: dict[str, Any] | None = None) -> None:
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    config = {"format": FORMAT, "format_version": FORMAT_VERSION, "name": matcher.name,
              "params": params_to_dict(matcher.params), "vocabulary": matcher.vectors.describe()}
    state = {key: value.detach().cpu().contiguous() for key, value in matcher.model.state_dict().items()}
    save_file(state, str(folder / WEIGHTS), metadata={"format": FORMAT, "format_version": str(FORMAT_VERSION)})
    (folder / CONFIG).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    if card is not None:
        (folder / CARD).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
        matcher.card = card


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise CheckpointError(f"{path}: file missing")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"{path}: not valid JSON ({error})") from error
    if not isinstance(data, dict):
        raise CheckpointError(f"{path}: expected a JSON object")
    return data


def _read_weights(path: Path) -> dict[str, torch.Tensor]:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    if not path.is_file():
        raise CheckpointError(f"{path}: file missing")
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as error:
        raise CheckpointError(f"{path}: corrupt or truncated weights ({error})") from error


def load_checkpoint(folder: str | Path, vectors: WordVectors | None = None) -> Matcher:
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(f"{folder}: checkpoint folder not found")
    config_path = folder / CONFIG
    config = _read_json(config_path)
    if config.get("format") != FORMAT:
        raise CheckpointError(f"{config_path}: not a MatchLens checkpoint (format {config.get('format')!r})")
    if config.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{config_path}: unknown format version {config.get('format_version')!r}; "
                              f"this MatchLens reads version {FORMAT_VERSION}")
    try:
        params = params_from_dict(config.get("params"))  # type: ignore[arg-type]
    except ParamsError as error:
        raise CheckpointError(f"{config_path}: {error}") from error
    vectors = vectors or load_glove()
    vocabulary = config.get("vocabulary")
    if not isinstance(vocabulary, dict):
        vocabulary = {}
    if vocabulary.get("fingerprint") != vectors.fingerprint or vocabulary.get("dim") != params.embedding_dim:
        raise CheckpointError(f"{config_path}: trained with vocabulary {vocabulary.get('source')!r} "
                              f"{vocabulary.get('fingerprint')!r}, but {vectors.source!r} "
                              f"{vectors.fingerprint!r} is installed")
    model = build_model(params)
    expected = model.state_dict()
    weights_path = folder / WEIGHTS
    weights = _read_weights(weights_path)
    missing, extra = sorted(set(expected) - set(weights)), sorted(set(weights) - set(expected))
    if missing or extra:
        raise CheckpointError(f"{weights_path}: weights do not match the config "
                              f"(missing {missing[:5]}, unexpected {extra[:5]})")
    wrong = [f"{key} {tuple(weights[key].shape)} != {tuple(value.shape)}"
             for key, value in expected.items() if weights[key].shape != value.shape]
    if wrong:
        raise CheckpointError(f"{weights_path}: wrong shapes: {'; '.join(wrong[:5])}")
    bad = [key for key, value in weights.items() if not torch.isfinite(value).all()]
    if bad:
        raise CheckpointError(f"{weights_path}: non-finite values in {bad[:5]}")
    model.load_state_dict(weights)
    refresh_answer_types(model, vectors)
    card = _read_json(folder / CARD) if (folder / CARD).exists() else {}
    return Matcher(name=str(config.get("name") or folder.name), model=model, vectors=vectors,
                   card=card, path=folder)


def checkpoint_folders(root: str | Path) -> list[Path]:
    """The folders under `root` that `load_all` reads as checkpoints, sorted (hidden and "_" folders left out)."""
    return sorted(p for p in Path(root).iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def load_all(root: str | Path, vectors: WordVectors | None = None
             ) -> tuple[dict[str, Matcher], dict[str, str]]:
    """Every checkpoint under `root`: (loaded models by name, load errors by folder name).

    A broken checkpoint disables only itself; the others still load. A name given twice (the seeds
    of one configuration side by side) hides no model: the later ones are named by their folders.
    """
    root = Path(root)
    loaded: dict[str, Matcher] = {}
    errors: dict[str, str] = {}
    if not root.is_dir():
        return loaded, {str(root): f"{root}: folder of checkpoints not found"}
    for folder in checkpoint_folders(root):
        try:
            matcher = load_checkpoint(folder, vectors)
        except CheckpointError as error:
            errors[folder.name] = str(error)
        else:
            if matcher.name in loaded:
                if folder.name in loaded:
                    errors[folder.name] = f"{folder}: the name {matcher.name!r} and the folder's are both taken"
                    continue
                matcher.name = folder.name
            loaded[matcher.name] = matcher
    return loaded, errors
