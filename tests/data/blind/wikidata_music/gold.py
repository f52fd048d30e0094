#!/usr/bin/env python3
"""Compute gold answers for the wikidata_music blind set.

Runs every SPARQL query below against kg.ttl with rdflib and writes
questions.jsonl next to this file.  Answers are never typed by hand.

    python3 -m venv /tmp/blind-venv && /tmp/blind-venv/bin/pip install rdflib
    /tmp/blind-venv/bin/python gold.py
"""
import json
import os
import sys
from collections import Counter
from decimal import Decimal

import rdflib
from rdflib import Literal, URIRef
from rdflib.namespace import RDFS, XSD

HERE = os.path.dirname(os.path.abspath(__file__))

PREFIXES = """PREFIX wd: <http://www.wikidata.org/entity/>
PREFIX wdt: <http://www.wikidata.org/prop/direct/>
PREFIX p: <http://www.wikidata.org/prop/>
PREFIX ps: <http://www.wikidata.org/prop/statement/>
PREFIX pq: <http://www.wikidata.org/prop/qualifier/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
"""

# (shape, question, sparql body without prefixes)
ROWS = [
    # ---------------- chain ----------------
    ("chain", "who composed swan lake",
     "SELECT DISTINCT ?x WHERE { wd:Q189808 wdt:P86 ?x }"),
    ("chain", "where was the composer of the magic flute born",
     "SELECT DISTINCT ?x WHERE { wd:Q131110 wdt:P86 ?c . ?c wdt:P19 ?x }"),
    ("chain", "what's the capital of the country tchaikovsky was a citizen of",
     "SELECT DISTINCT ?x WHERE { wd:Q7315 wdt:P27 ?c . ?c wdt:P36 ?x }"),
    ("chain", "in which country is the hall where the new world symphony premiered",
     "SELECT DISTINCT ?x WHERE { wd:Q207651 wdt:P4647 ?h . ?h wdt:P131 ?city . ?city wdt:P17 ?x }"),
    ("chain", "where did gustav mahler's wife die",
     "SELECT DISTINCT ?x WHERE { wd:Q7304 wdt:P26 ?w . ?w wdt:P20 ?x }"),
    ("chain", "what record label does the orchestra from berlin record for",
     "SELECT DISTINCT ?x WHERE { ?o wdt:P31/wdt:P279* wd:Q42998 ; wdt:P159 wd:Q64 ; wdt:P264 ?x }"),

    # ---------------- intersection ----------------
    ("intersection", "I'm curious, which composers were born in Vienna and also died there?",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P106/wdt:P279* wd:Q36834 ; wdt:P19 wd:Q1741 ; wdt:P20 wd:Q1741 }"),
    ("intersection", "which composers wrote a symphony whose premiere was in vienna",
     "SELECT DISTINCT ?x WHERE { ?w wdt:P31 wd:Q9734 ; wdt:P86 ?x ; wdt:P4647 wd:Q1741 . "
     "?x wdt:P106/wdt:P279* wd:Q36834 }"),
    ("intersection", "german composers who died in vienna",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P106/wdt:P279* wd:Q36834 ; wdt:P27 wd:Q183 ; wdt:P20 wd:Q1741 }"),
    ("intersection", "which austrian composers were also conductors",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P106/wdt:P279* wd:Q36834 ; wdt:P106 wd:Q158852 ; wdt:P27 wd:Q40 }"),
    ("intersection", "which of wagner's operas premiered in munich",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31 wd:Q1344 ; wdt:P86 wd:Q1511 ; wdt:P4647 wd:Q1726 }"),
    ("intersection", "who won both the oscar for best original score and an honorary oscar",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P166 wd:Q488651 ; wdt:P166 wd:Q917808 }"),

    # ---------------- count ----------------
    ("count", "how many operas did wagner write",
     "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x wdt:P31 wd:Q1344 ; wdt:P86 wd:Q1511 }"),
    ("count", "how many operas premiered in the 1800s",
     "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x wdt:P31 wd:Q1344 ; wdt:P1191 ?d . "
     "FILTER(YEAR(?d) >= 1800 && YEAR(?d) <= 1899) }"),
    ("count", "how many times has john williams won the academy award for best original score",
     "SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { wd:Q131285 p:P166 ?s . ?s ps:P166 wd:Q488651 }"),
    ("count", "How many Oscars for best score did Hans Zimmer win?",
     "SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { wd:Q76364 p:P166 ?s . ?s ps:P166 wd:Q488651 }"),
    ("count", "how many composers died in vienna",
     "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x wdt:P106/wdt:P279* wd:Q36834 ; wdt:P20 wd:Q1741 }"),
    ("count", "how many students did salieri have",
     "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x wdt:P1066 wd:Q51088 }"),

    # ---------------- superlative ----------------
    ("superlative", "what is the most populous city",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31/wdt:P279* wd:Q515 ; wdt:P1082 ?p } ORDER BY DESC(?p) LIMIT 1"),
    ("superlative", "biggest city in germany",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31/wdt:P279* wd:Q515 ; wdt:P17 wd:Q183 ; wdt:P1082 ?p } "
     "ORDER BY DESC(?p) LIMIT 1"),
    ("superlative", "which concert hall has the largest capacity",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31 wd:Q1060829 ; wdt:P1083 ?c } ORDER BY DESC(?c) LIMIT 1"),
    ("superlative", "whats the longest film john willams wrote the score for",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31 wd:Q11424 ; wdt:P86 wd:Q131285 ; wdt:P2047 ?d } "
     "ORDER BY DESC(?d) LIMIT 1"),
    ("superlative", "which is the oldest orchestra",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31/wdt:P279* wd:Q42998 ; wdt:P571 ?d } ORDER BY ?d LIMIT 1"),
    ("superlative", "which city has the fewest inhabitants",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31/wdt:P279* wd:Q515 ; wdt:P1082 ?p . "
     "{ SELECT (MIN(?q) AS ?m) WHERE { ?y wdt:P31/wdt:P279* wd:Q515 ; wdt:P1082 ?q } } "
     "FILTER(?p = ?m) }"),

    # ---------------- comparison ----------------
    ("comparison", "which cities have more than 5 million inhabitants",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31/wdt:P279* wd:Q515 ; wdt:P1082 ?p . FILTER(?p > 5000000) }"),
    ("comparison", "was mozart born before beethoven",
     "ASK { wd:Q254 wdt:P569 ?a . wd:Q255 wdt:P569 ?b . FILTER(?a < ?b) }"),
    ("comparison", "which films are longer than 150 minutes",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31 wd:Q11424 ; wdt:P2047 ?d . FILTER(?d > 150) }"),
    ("comparison", "is the royal albert hall bigger than carnegie hall",
     "ASK { wd:Q194232 wdt:P1083 ?a . wd:Q200959 wdt:P1083 ?b . FILTER(?a > ?b) }"),
    ("comparison", "who was born first, verdi or wagner?",
     "SELECT DISTINCT ?x WHERE { VALUES ?x { wd:Q7317 wd:Q1511 } ?x wdt:P569 ?d } ORDER BY ?d LIMIT 1"),
    ("comparison", "which other works premiered in the same year as götterdämmerung",
     "SELECT DISTINCT ?x WHERE { wd:Q208317 wdt:P1191 ?d0 . ?x wdt:P1191 ?d . "
     "FILTER(YEAR(?d) = YEAR(?d0) && ?x != wd:Q208317) }"),

    # ---------------- yes/no ----------------
    ("yes/no", "did beethovan study with haydn",
     "ASK { wd:Q255 wdt:P1066 wd:Q7349 }"),
    ("yes/no", "is vienna the capital of austria",
     "ASK { wd:Q40 wdt:P36 wd:Q1741 }"),
    ("yes/no", "is hans zimmer german",
     "ASK { wd:Q76364 wdt:P27 wd:Q183 }"),
    ("yes/no", "did tchaikovksy write the magic flute",
     "ASK { wd:Q131110 wdt:P86 wd:Q7315 }"),
    ("yes/no", "was la traviata first performed in milan",
     "ASK { wd:Q178460 wdt:P4647 ?v . { FILTER(?v = wd:Q490) } UNION { ?v wdt:P131 wd:Q490 } }"),
    ("yes/no", "is ennio morricone still alive?",
     "ASK { wd:Q23848 wdt:P31 wd:Q5 . FILTER NOT EXISTS { wd:Q23848 wdt:P570 ?d } }"),

    # ---------------- literal ----------------
    ("literal", "when was mozart born",
     "SELECT DISTINCT ?v WHERE { wd:Q254 wdt:P569 ?v }"),
    ("literal", "what is the population of vienna",
     "SELECT DISTINCT ?v WHERE { wd:Q1741 wdt:P1082 ?v }"),
    ("literal", "how long is schindler's list",
     "SELECT DISTINCT ?v WHERE { wd:Q483941 wdt:P2047 ?v }"),
    ("literal", "when did swan lake premiere",
     "SELECT DISTINCT ?v WHERE { wd:Q189808 wdt:P1191 ?v }"),
    ("literal", "how many seats does carnegie hall have",
     "SELECT DISTINCT ?v WHERE { wd:Q200959 wdt:P1083 ?v }"),
    ("literal", "in which years did john williams win the oscar for best original score",
     "SELECT DISTINCT (YEAR(?d) AS ?v) WHERE { wd:Q131285 p:P166 ?s . ?s ps:P166 wd:Q488651 ; pq:P585 ?d }"),

    # ---------------- negation ----------------
    ("negation", "which conductors are not composers",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P106 wd:Q158852 . "
     "FILTER NOT EXISTS { ?x wdt:P106/wdt:P279* wd:Q36834 } }"),
    ("negation", "which composers are still alive",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P106/wdt:P279* wd:Q36834 . FILTER NOT EXISTS { ?x wdt:P570 ?d } }"),
    ("negation", "which of wagner's operas did not premiere in bayreuth",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31 wd:Q1344 ; wdt:P86 wd:Q1511 . "
     "FILTER NOT EXISTS { ?x wdt:P4647 ?v . { FILTER(?v = wd:Q3923) } UNION { ?v wdt:P131 wd:Q3923 } } }"),
    ("negation", "which cities in germany are not capital cities",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31/wdt:P279* wd:Q515 ; wdt:P17 wd:Q183 . "
     "FILTER NOT EXISTS { ?x wdt:P31 wd:Q5119 } }"),
    ("negation", "list the orchestras that don't have a record label",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31/wdt:P279* wd:Q42998 . FILTER NOT EXISTS { ?x wdt:P264 ?l } }"),
    ("negation", "which concert halls are not in a capital city",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31 wd:Q1060829 ; wdt:P131 ?c . "
     "FILTER NOT EXISTS { ?c wdt:P31/wdt:P279* wd:Q5119 } }"),

    # ---------------- union ----------------
    ("union", "which operas did verdi or wagner compose",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31 wd:Q1344 . { ?x wdt:P86 wd:Q7317 } UNION { ?x wdt:P86 wd:Q1511 } }"),
    ("union", "list people born in salzburg or bonn",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31 wd:Q5 . { ?x wdt:P19 wd:Q34713 } UNION { ?x wdt:P19 wd:Q586 } }"),
    ("union", "films scored by john williams or ennio morricone",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31 wd:Q11424 . { ?x wdt:P86 wd:Q131285 } UNION { ?x wdt:P86 wd:Q23848 } }"),
    ("union", "what works premiered in moscow or st. petersburg",
     "SELECT DISTINCT ?x WHERE { { ?x wdt:P4647 wd:Q649 } UNION { ?x wdt:P4647 wd:Q656 } }"),
    ("union", "give me the concert halls in london or new york",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31 wd:Q1060829 . { ?x wdt:P131 wd:Q84 } UNION { ?x wdt:P131 wd:Q60 } }"),
    ("union", "which composers are italian or polish",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P106/wdt:P279* wd:Q36834 . "
     "{ ?x wdt:P27 wd:Q38 } UNION { ?x wdt:P27 wd:Q36 } }"),

    # ---------------- class-list ----------------
    ("class-list", "list all operas",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31/wdt:P279* wd:Q1344 }"),
    ("class-list", "give me all orchestras in germany",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31/wdt:P279* wd:Q42998 ; wdt:P17 wd:Q183 }"),
    ("class-list", "list all concert halls",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31/wdt:P279* wd:Q1060829 }"),
    ("class-list", "Show me all the films.",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31/wdt:P279* wd:Q11424 }"),
    ("class-list", "what record labels are there",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P31/wdt:P279* wd:Q18127 }"),
    ("class-list", "list all film composers",
     "SELECT DISTINCT ?x WHERE { ?x wdt:P106/wdt:P279* wd:Q1415090 }"),

    # ---------------- unanswerable ----------------
    ("unanswerable", "what is the capital of the united states",
     "SELECT DISTINCT ?x WHERE { wd:Q30 wdt:P36 ?x }"),
    ("unanswerable", "where was hans zimmer born",
     "SELECT DISTINCT ?x WHERE { wd:Q76364 wdt:P19 ?x }"),
    ("unanswerable", "when was mozart's jupiter symphony first performed",
     "SELECT DISTINCT ?v WHERE { wd:Q217285 wdt:P1191 ?v }"),
    ("unanswerable", "what is the population of paris",
     "SELECT DISTINCT ?v WHERE { wd:Q90 wdt:P1082 ?v }"),
    ("unanswerable", "who is john williams married to",
     "SELECT DISTINCT ?x WHERE { wd:Q131285 wdt:P26 ?x }"),
    ("unanswerable", "how high above sea level is munich",
     "SELECT DISTINCT ?v WHERE { wd:Q1726 <http://www.wikidata.org/prop/direct/P2044> ?v }"),
]


def en_label(g, node):
    labels = [str(o) for o in g.objects(node, RDFS.label) if getattr(o, "language", None) == "en"]
    if len(labels) != 1:
        raise ValueError(f"{node} has {len(labels)} English labels")
    return labels[0]


def convert(g, value):
    if isinstance(value, URIRef):
        return en_label(g, value)
    if isinstance(value, Literal):
        if value.datatype == XSD.dateTime:
            return str(value)[:10]
        py = value.toPython()
        if isinstance(py, bool):
            return py
        if isinstance(py, (int, Decimal, float)):
            if py == int(py):
                return int(py)
            return float(py)
        return str(py)
    raise TypeError(f"unexpected value {value!r}")


def main():
    g = rdflib.Graph()
    g.parse(os.path.join(HERE, "kg.ttl"), format="turtle")
    problems = []
    out = []
    shapes = Counter()
    for i, (shape, question, body) in enumerate(ROWS, 1):
        sparql = PREFIXES + body
        res = g.query(sparql)
        if res.type == "ASK":
            answers = [bool(res.askAnswer)]
        else:
            answers = []
            for row in res:
                vals = [v for v in row if v is not None]
                if len(vals) != 1:
                    problems.append(f"{i}: row with {len(vals)} bound values")
                    continue
                answers.append(convert(g, vals[0]))
            if "ORDER BY" not in body:
                answers = sorted(answers, key=lambda a: (str(type(a)), a))
        if shape == "unanswerable":
            if answers:
                problems.append(f"{i}: unanswerable question has answers {answers}")
        elif not answers:
            problems.append(f"{i}: empty gold for {question!r}")
        dup = [a for a, c in Counter(map(str, answers)).items() if c > 1]
        if dup:
            problems.append(f"{i}: duplicate answer labels {dup} for {question!r}")
        shapes[shape] += 1
        out.append({
            "id": f"wdmusic-{i:03d}",
            "question": question,
            "answers": answers,
            "sparql": sparql,
            "tags": {"shape": shape},
        })
    with open(os.path.join(HERE, "questions.jsonl"), "w", encoding="utf-8") as f:
        for row in out:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"triples: {len(g)}")
    print(f"questions: {len(out)}  shapes: {dict(shapes)}")
    for row in out:
        print(f"{row['id']} [{row['tags']['shape']}] {row['question']} -> {row['answers']}")
    if problems:
        print("PROBLEMS:", *problems, sep="\n  ")
        sys.exit(1)


if __name__ == "__main__":
    main()
