"""Two sets of ten factoid probes the project wrote: does each model put the answer first?

The lexical-adversarial set: each probe has one answer that shares few words with the question among
distractors that share many (a topical sentence, a sentence repeating the question, a number that
answers something else), the failure modes seen on text unlike the training data. The section set:
the kind of question the issue's held-out collection holds, written from one sentence of an
encyclopedia section whose other sentences are the distractors, so the answer shares the question's
words as a crowd-written question's does. Prints, per set and model, how often the answer comes
first (ties count as their expected value, like the metrics).

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

SECTION_PROBES: list[tuple[str, list[str]]] = [  # the kind of the held-out questions: a question
    # written from one sentence of an encyclopedia section, every sentence of the section a candidate
    ("What did Marie Curie discover together with her husband in 1898?",
     ["In 1898 Marie Curie and her husband Pierre discovered the elements polonium and radium.",
      "Marie Curie was born in Warsaw in 1867.",
      "She moved to Paris in 1891 to study physics and mathematics at the Sorbonne.",
      "Curie was the first woman to win a Nobel Prize.",
      "She died in 1934 of aplastic anaemia, probably caused by her exposure to radiation."]),
    ("Which river flows through the city of Budapest?",
     ["The Danube flows through Budapest and divides the city into Buda and Pest.",
      "Budapest is the capital and most populous city of Hungary.",
      "The city was formed in 1873 by the union of Buda, Obuda and Pest.",
      "Budapest is known for its thermal baths.",
      "The Hungarian Parliament Building was completed in 1904."]),
    ("How many players does a rugby union team have on the field?",
     ["A rugby union team has fifteen players on the field at one time.",
      "Rugby union is a contact sport that began in England in the early 19th century.",
      "The ball is oval and may be carried, kicked or passed backwards.",
      "The Rugby World Cup has been held every four years since 1987.",
      "Points are scored by a try, a conversion, a penalty kick or a drop goal."]),
    ("What is the main ingredient of guacamole?",
     ["Guacamole is made mainly from mashed avocado.",
      "The dish comes from Mexico and was first made by the Aztecs.",
      "Lime juice, salt, onion and coriander are often added.",
      "It is commonly served with tortilla chips.",
      "Some recipes include tomato or garlic."]),
    ("Who directed the film Jaws?",
     ["Jaws was directed by Steven Spielberg and released in 1975.",
      "The film is based on the 1974 novel by Peter Benchley.",
      "It tells of a great white shark that attacks swimmers at a summer resort.",
      "Jaws was the highest-grossing film until Star Wars in 1977.",
      "The score by John Williams won an Academy Award."]),
    ("When did the Titanic sink?",
     ["The Titanic sank in the early hours of 15 April 1912 after striking an iceberg.",
      "The ship was built in Belfast by Harland and Wolff.",
      "Titanic was the largest ship afloat when it entered service.",
      "More than 1,500 people died in the disaster.",
      "The wreck was found in 1985 at a depth of about 3,800 metres."]),
    ("What language is spoken in Brazil?",
     ["The official language of Brazil is Portuguese.",
      "Brazil is the largest country in South America.",
      "Its capital is Brasilia, and its largest city is Sao Paulo.",
      "Brazil was a colony of Portugal until 1822.",
      "The Amazon rainforest covers much of the north of the country."]),
    ("What instrument did Jimi Hendrix play?",
     ["Jimi Hendrix played the electric guitar and is widely seen as one of its greatest players.",
      "He was born in Seattle in 1942.",
      "Hendrix became famous in England in 1966 with the Jimi Hendrix Experience.",
      "His performance at Woodstock in 1969 included The Star-Spangled Banner.",
      "He died in London in 1970 at the age of 27."]),
    ("What is the largest organ of the human body?",
     ["The skin is the largest organ of the human body.",
      "The human body has 206 bones in adulthood.",
      "The heart pumps blood through the body.",
      "The liver is the largest internal organ.",
      "The brain uses about a fifth of the body's energy."]),
    ("In which country did the Olympic Games begin?",
     ["The Olympic Games began in ancient Greece, at Olympia, in 776 BC.",
      "The modern Games were first held in Athens in 1896.",
      "The Winter Olympics were added in 1924.",
      "The Olympic rings represent five continents.",
      "The Games are held every four years."]),
]
"""Written before any model was run on them, and not used to choose anything."""


def first_places(probes: list[tuple[str, list[str]]], models: dict) -> dict[str, float]:
    """How often each model and baseline puts the first candidate first (ties: their expected value)."""
    first = {name: 0.0 for name in [*models, "word overlap", "BM25"]}
    for question, candidates in probes:
        ranking = rank(question, candidates, models)
        places = {name: result.ranks for name, result in ranking.models.items()}
        places.update({name: ranks for name, ranks in ranking.baseline_ranks.items() if name in first})
        for name, ranks in places.items():
            ranks = np.asarray(ranks)
            first[name] += float(ranks[0] == ranks.min()) / int((ranks == ranks.min()).sum())
    return first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pretrained", default=str(ROOT / "pretrained"))
    parser.add_argument("--models", nargs="*")
    args = parser.parse_args()
    models, _ = load_all(args.pretrained)
    if args.models:
        models = {name: models[name] for name in args.models}
    for title, probes in (("Lexical-adversarial probes (few shared words, distractors sharing many)", PROBES),
                          ("Section probes (a question written from one sentence of a section)", SECTION_PROBES)):
        print(title)
        for name, count in sorted(first_places(probes, models).items(), key=lambda item: -item[1]):
            print(f"  {name:<28} answer first in {count:.1f} of {len(probes)} probes")

if __name__ == "__main__":
    main()
