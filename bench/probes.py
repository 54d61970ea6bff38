"""Ten factoid probes the project wrote: does each model put the answer first?

Each probe has one answer among distractors that share the question's words (a topical sentence, a
sentence repeating the question, a number that answers something else), the failure modes seen on
text unlike the training data. Prints, per model, which probes it gets right at rank 1 (ties count
as their expected value, like the metrics).

    python bench/probes.py [--pretrained pretrained] [--models ...]
"""

from __future__ import annotations

import argparse

import numpy as np
from common import ROOT

from matching.explain.ranking import rank
from matching.training.checkpoint import load_all

PROBES: list[tuple[str, list[str]]] = [  # (question, candidates): the first candidate is the answer
    ("How tall is Mount Everest?",
     ["Mount Everest's summit stands 8,849 metres above sea level.",
      "How tall Mount Everest is has been measured many times.",
      "Mount Everest is in the Mahalangur Himal range of the Himalayas.",
      "Many climbers attempt Mount Everest every spring."]),
    ("How are glaciers formed?",
     ["Snow that piles up over many years is pressed into ice, which begins to flow under its own weight.",
      "Glaciers are found on every continent except Australia.",
      "Glaciers are large and are formed in cold places.",
      "The largest glaciers are in Antarctica and Greenland."]),
    ("Who painted the Mona Lisa?",
     ["Leonardo da Vinci worked on the portrait from about 1503.",
      "The Mona Lisa hangs in the Louvre in Paris.",
      "Who painted the Mona Lisa is a question every tourist can answer.",
      "The Mona Lisa was stolen in 1911."]),
    ("When did the Berlin Wall fall?",
     ["The wall was opened on 9 November 1989 after weeks of protest.",
      "The Berlin Wall divided the city for decades.",
      "Parts of the Berlin Wall stand in museums around the world.",
      "Berlin is the capital of Germany."]),
    ("What is the boiling point of water at sea level?",
     ["At normal atmospheric pressure it boils at 100 degrees Celsius.",
      "Water covers about 71 percent of the surface of the Earth.",
      "Sea level is rising by about 3 millimetres a year.",
      "The point of water boiling is used in cooking."]),
    ("How many legs does a spider have?",
     ["Spiders have eight legs, and most have eight eyes.",
      "A spider uses silk to build webs.",
      "Many people are afraid of spiders.",
      "Insects have six legs and three body parts."]),
    ("What is the capital of Australia?",
     ["Canberra was chosen as a compromise between Sydney and Melbourne.",
      "Sydney is the largest city in Australia.",
      "Australia is both a country and a continent.",
      "The capital of a country is often its largest city."]),
    ("Who discovered penicillin?",
     ["Alexander Fleming noticed in 1928 that a mould killed the bacteria in his dish.",
      "Penicillin is an antibiotic used against infections.",
      "Who discovered penicillin is sometimes disputed.",
      "Penicillin was mass-produced during the Second World War."]),
    ("How long is the Nile river?",
     ["It flows about 6,650 kilometres from its sources to the Mediterranean.",
      "The Nile river passes through eleven countries.",
      "The Nile river was central to ancient Egyptian life.",
      "How long the Nile river is depends on where its source is taken to be."]),
    ("What gas do plants absorb from the air?",
     ["They take in carbon dioxide and release oxygen during photosynthesis.",
      "Plants need water and light to grow.",
      "The air is mostly nitrogen.",
      "Some plants absorb nutrients through their leaves."]),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pretrained", default=str(ROOT / "pretrained"))
    parser.add_argument("--models", nargs="*")
    args = parser.parse_args()
    models, _ = load_all(args.pretrained)
    if args.models:
        models = {name: models[name] for name in args.models}
    first = {name: 0.0 for name in [*models, "word overlap", "BM25"]}
    for question, candidates in PROBES:
        ranking = rank(question, candidates, models)
        for name, result in ranking.models.items():
            ranks = np.asarray(result.ranks)
            first[name] += float(ranks[0] == ranks.min()) / int((ranks == ranks.min()).sum())
        for name, ranks in ranking.baseline_ranks.items():
            if name in first:
                ranks = np.asarray(ranks)
                first[name] += float(ranks[0] == ranks.min()) / int((ranks == ranks.min()).sum())
    for name, count in sorted(first.items(), key=lambda item: -item[1]):
        print(f"{name:<28} answer first in {count:.1f} of {len(PROBES)} probes")


if __name__ == "__main__":
    main()
