"""Model cards for people: `card.json` rendered as Markdown (each checkpoint's README.md)."""

from __future__ import annotations

from typing import Any

from .metrics import METRICS

KNOWN_LIMITS = [
    "Trained on WikiQA only (873 questions): Wikipedia-style factoid questions in English.",
    "GloVe 6B 50d is lowercased and English; other scripts (CJK, Arabic, emoji) are unknown words "
    "and all share one vector.",
    "Questions longer than max_question_len and answers longer than max_answer_len tokens are "
    "truncated (the app greys the unseen tokens).",
    "Dev has 126 questions, so selection by dev MAP is noisy; see the seed study.",
]


def _fmt(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def metrics_rows(card: dict[str, Any], split: str) -> list[dict[str, Any]]:
    """This model, the baselines and the paper's figure for one split (the Models page table)."""
    rows = [{"system": card["name"], **card["metrics"][split]}]
    rows += [{"system": name, **values} for name, values in card["baselines"][split].items()]
    if split == "test" and card.get("paper"):
        paper = card["paper"]
        rows.append({"system": f"paper: {paper.get('system', card['name'])}",
                     **{m: paper[m] for m in METRICS if m in paper}})
    return rows


def _table(rows: list[dict[str, Any]]) -> str:
    lines = ["| system | " + " | ".join(METRICS) + " |", "|---|" + "---:|" * len(METRICS)]
    lines += ["| " + str(r["system"]) + " | " + " | ".join(_fmt(r[m]) if m in r else "-" for m in METRICS) + " |"
              for r in rows]
    return "\n".join(lines)


def render_card(card: dict[str, Any]) -> str:
    params = "\n".join(f"| {k} | {v} |" for k, v in card["params"].items())
    training = "\n".join(f"| {k} | {v} |" for k, v in card["training"].items())
    log = "\n".join(f"| {e['epoch']} | {e['train_loss']:.4f} | {e['dev_MAP']:.4f} | {e['seconds']} |"
                    f"{' selected' if e.get('selected') else ''} |" for e in card["log"])
    data = "\n".join(f"| {split} | {d['questions']} | {d['pairs']} | `{d['fingerprint']}` |"
                     for split, d in card["data"].items() if isinstance(d, dict))
    seeds = ""
    if card.get("seed_study"):
        study = card["seed_study"]
        seeds = (f"\n## Seed study\nTest MAP over seeds {study['seeds']}: "
                 f"{' '.join(f'{x:.4f}' for x in study['test_MAP'])} -> mean {study['mean']:.4f} "
                 f"± {study['std']:.4f} (std). Dev MAP: {' '.join(f'{x:.4f}' for x in study['dev_MAP'])}. "
                 f"Shipped: seed {card['seed']} (best dev MAP).\n")
    limits = "\n".join(f"- {line}" for line in KNOWN_LIMITS)
    return f"""# Model card: {card['name']}

{card.get('description', '')}

**Architecture.** {card['architecture']}

## Metrics (WikiQA; ties scored as the mean over tie orders)
### Test (read once, after selection)
{_table(metrics_rows(card, 'test'))}

### Dev (used for early stopping and seed selection)
{_table(metrics_rows(card, 'dev'))}
{seeds}
## Hyperparameters
| parameter | value |
|---|---|
{params}

## Training
| setting | value |
|---|---|
{training}

Seed {card['seed']}; {card['epochs_run']} epochs run, epoch {card['best_epoch']} kept (best dev MAP);
{card['training_seconds']} s. Reproduce: `{card['command']}`

| epoch | train loss | dev MAP | seconds | |
|---:|---:|---:|---:|---|
{log}

## Data
| split | questions | pairs | fingerprint |
|---|---:|---:|---|
{data}

Vocabulary: {card['vocabulary']['source']} `{card['vocabulary']['fingerprint']}`.
Trained {card['date']} with MatchLens {card['code_version']}.

## Known limits
{limits}
"""
