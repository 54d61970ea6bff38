"""Sanity checks: does an explanation say something about the model, and does the model use what it shows?

- `randomisation`: cascading model randomisation (Adebayo et al., NeurIPS 2018), on one example
  or averaged over a data set;
- `ablation`: every attention gate made uniform or shuffled, on one example or on a data set's MAP;
- `curves`: deletion curves, comprehensiveness and sufficiency with their AOPC (DeYoung et al., 2020).
"""

from matching.evaluation.sanity.ablation import (
    ABLATIONS,
    ablated_attention,
    ablation_map,
    attention_ablation,
    has_attention,
)
from matching.evaluation.sanity.common import TRAINED, Progress
from matching.evaluation.sanity.curves import FRACTIONS, ORDERS, DeletionCurves, deletion_curves
from matching.evaluation.sanity.randomisation import (
    MEASURES,
    RandomisationCheck,
    RandomisationStage,
    layer_stages,
    randomisation_check,
    randomisation_on_data,
    randomised,
)

__all__ = ["ABLATIONS", "FRACTIONS", "MEASURES", "ORDERS", "TRAINED", "DeletionCurves", "Progress",
           "RandomisationCheck", "RandomisationStage", "ablated_attention", "ablation_map", "attention_ablation",
           "deletion_curves", "has_attention", "layer_stages", "randomisation_check", "randomisation_on_data",
           "randomised"]
