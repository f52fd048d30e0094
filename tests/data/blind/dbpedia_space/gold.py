"""Compute gold answers for the dbpedia_space blind set.

Runs every SPARQL query below against kg.ttl (beside this file) with rdflib and
writes questions.jsonl. Answers are:
  * English rdfs:label of result entities (sorted, de-duplicated),
  * literal values (numbers as JSON numbers, xsd:date as "YYYY-MM-DD"),
  * [true] / [false] for ASK queries,
  * [] for the "unanswerable" shape (the query must return nothing).

Usage: python gold.py            (needs rdflib)
"""
import json
import sys
from pathlib import Path

import rdflib
from rdflib import Literal, URIRef
from rdflib.namespace import RDFS, XSD

HERE = Path(__file__).resolve().parent

PREFIXES = """PREFIX dbo: <http://dbpedia.org/ontology/>
PREFIX dbr: <http://dbpedia.org/resource/>
PREFIX dbp: <http://dbpedia.org/property/>
PREFIX foaf: <http://xmlns.com/foaf/0.1/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
"""

# (id, shape, question, sparql body without prefixes)
Q = [
    # ---------------- chain ----------------
    ("chain-01", "chain", "which country is the launch site of vostok 1 in?",
     "SELECT DISTINCT ?c WHERE { dbr:Vostok_1 dbo:launchSite ?s . ?s dbo:country ?c }"),
    ("chain-02", "chain", "who founded the company that makes the falcon 9 rocket",
     "SELECT DISTINCT ?p WHERE { dbr:Falcon_9 dbo:manufacturer ?co . ?co dbo:foundedBy ?p }"),
    ("chain-03", "chain", "which space agency has its headquarters in bengaluru",
     "SELECT DISTINCT ?a WHERE { dbr:Bengaluru dbo:wikiPageRedirects ?city . ?a a dbo:SpaceAgency ; dbo:headquarter ?city }"),
    ("chain-04", "chain", "in which country was michael collins born",
     "SELECT DISTINCT ?c WHERE { ?p foaf:name \"Michael Collins\"@en ; dbo:birthPlace ?b . ?b dbo:country ?c }"),
    ("chain-05", "chain", "what is the capital of the country whose space program launched vostok 1?",
     "SELECT DISTINCT ?x WHERE { dbr:Vostok_1 dbo:operator ?o . ?o dbo:country ?c . ?c dbo:capital ?x }"),
    ("chain-06", "chain", "who built the spacecraft used on apollo 11",
     "SELECT DISTINCT ?m WHERE { dbr:Apollo_11 dbp:spacecraft ?s . ?s dbo:manufacturer ?m }"),

    # ---------------- intersection ----------------
    ("inter-01", "intersection", "which astronauts were also politicians?",
     "SELECT DISTINCT ?p WHERE { ?p a dbo:Astronaut , dbo:Politician }"),
    ("inter-02", "intersection", "which missions launched from kennedy space center on a saturn v",
     "SELECT DISTINCT ?m WHERE { ?m dbo:launchSite dbr:Kennedy_Space_Center ; dbo:launchVehicle dbr:Saturn_V }"),
    ("inter-03", "intersection", "female cosmonauts from the soviet union",
     "SELECT DISTINCT ?p WHERE { ?p a dbo:Astronaut ; foaf:gender \"female\"@en ; dbo:nationality dbr:Soviet_Union }"),
    ("inter-04", "intersection", "which spacecraft went to mars and were launched from cape canaveral",
     "SELECT DISTINCT ?s WHERE { ?s dbp:target dbr:Mars ; dbo:launchSite dbr:Cape_Canaveral_Space_Force_Station }"),
    ("inter-05", "intersection", "moons of jupiter discovered by galileo",
     "SELECT DISTINCT ?m WHERE { ?m a dbo:Moon ; dbp:satelliteOf dbr:Jupiter ; dbo:discoverer dbr:Galileo_Galilei }"),
    ("inter-06", "intersection", "which american rockets had their first flight after 2000?",
     "SELECT DISTINCT ?r WHERE { ?r a dbo:Rocket ; dbo:country dbr:United_States ; dbo:maidenFlight ?d FILTER(YEAR(?d) > 2000) }"),

    # ---------------- count ----------------
    ("count-01", "count", "how many planets are there?",
     "SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p a dbo:Planet }"),
    ("count-02", "count", "how many astronauts flew on apollo 11",
     "SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE { dbr:Apollo_11 dbo:crewMember ?p }"),
    ("count-03", "count", "How many space agencies are there?",
     "SELECT (COUNT(DISTINCT ?a) AS ?n) WHERE { ?a a dbo:SpaceAgency }"),
    ("count-04", "count", "how many moons does mars have",
     "SELECT (COUNT(DISTINCT ?m) AS ?n) WHERE { ?m a dbo:Moon ; dbp:satelliteOf dbr:Mars }"),
    ("count-05", "count", "how many missions were launched from the baikonur cosmodrome?",
     "SELECT (COUNT(DISTINCT ?m) AS ?n) WHERE { ?m a dbo:SpaceMission ; dbo:launchSite dbr:Baikonur_Cosmodrome }"),
    ("count-06", "count", "how many missions did nasa fly",
     "SELECT (COUNT(DISTINCT ?m) AS ?n) WHERE { ?m a dbo:SpaceMission ; dbo:operator dbr:NASA }"),

    # ---------------- superlative ----------------
    ("super-01", "superlative", "what is the largest planet",
     "SELECT DISTINCT ?p WHERE { ?p a dbo:Planet ; dbo:meanRadius ?r . "
     "{ SELECT (MAX(?r2) AS ?mx) WHERE { ?q a dbo:Planet ; dbo:meanRadius ?r2 } } FILTER(?r = ?mx) }"),
    ("super-02", "superlative", "which city has the biggest population?",
     "SELECT DISTINCT ?c WHERE { ?c a dbo:City ; dbo:populationTotal ?v . "
     "{ SELECT (MAX(?v2) AS ?mx) WHERE { ?d a dbo:City ; dbo:populationTotal ?v2 } } FILTER(?v = ?mx) }"),
    ("super-03", "superlative", "what's the oldest space agency",
     "SELECT DISTINCT ?a WHERE { ?a a dbo:SpaceAgency ; dbo:foundingDate ?f . "
     "{ SELECT (MIN(?f2) AS ?mn) WHERE { ?b a dbo:SpaceAgency ; dbo:foundingDate ?f2 } } FILTER(?f = ?mn) }"),
    ("super-04", "superlative", "which is the heaviest rocket",
     "SELECT DISTINCT ?r WHERE { ?r a dbo:Rocket ; dbo:mass ?m . "
     "{ SELECT (MAX(xsd:double(STR(?m2))) AS ?mx) WHERE { ?q a dbo:Rocket ; dbo:mass ?m2 } } "
     "FILTER(xsd:double(STR(?m)) = ?mx) }"),
    ("super-05", "superlative", "who was the youngest member of the apollo 11 crew?",
     "SELECT DISTINCT ?p WHERE { dbr:Apollo_11 dbo:crewMember ?p . ?p dbo:birthDate ?b . "
     "{ SELECT (MAX(?b2) AS ?mx) WHERE { dbr:Apollo_11 dbo:crewMember ?q . ?q dbo:birthDate ?b2 } } FILTER(?b = ?mx) }"),
    ("super-06", "superlative", "which moon was discovered first",
     "SELECT DISTINCT ?m WHERE { ?m a dbo:Moon ; dbo:discovered ?d . "
     "{ SELECT (MIN(?d2) AS ?mn) WHERE { ?n a dbo:Moon ; dbo:discovered ?d2 } } FILTER(?d = ?mn) }"),

    # ---------------- comparison ----------------
    ("comp-01", "comparison", "which planets have a radius larger than 10000 km",
     "SELECT DISTINCT ?p WHERE { ?p a dbo:Planet ; dbo:meanRadius ?r FILTER(?r > 10000) }"),
    ("comp-02", "comparison", "was vostok 1 launched before friendship 7?",
     "ASK { dbr:Vostok_1 dbo:launchDate ?a . dbr:Friendship_7 dbo:wikiPageRedirects ?f . ?f dbo:launchDate ?b FILTER(?a < ?b) }"),
    ("comp-03", "comparison", "which cities have more than 5 million inhabitants",
     "SELECT DISTINCT ?c WHERE { ?c a dbo:City ; dbo:populationTotal ?v FILTER(?v > 5000000) }"),
    ("comp-04", "comparison", "which astronauts were born before 1930?",
     "SELECT DISTINCT ?p WHERE { ?p a dbo:Astronaut ; dbo:birthDate ?b FILTER(?b < \"1930-01-01\"^^xsd:date) }"),
    ("comp-05", "comparison", "which spacecraft weigh less than 1000 kg",
     "SELECT DISTINCT ?s WHERE { ?s a dbo:Spacecraft ; dbo:mass ?m FILTER(xsd:double(STR(?m)) < 1000) }"),
    ("comp-06", "comparison", "which missions lasted longer than apollo 13",
     "SELECT DISTINCT ?m WHERE { dbr:Apollo_13 dbo:missionDuration ?d0 . ?m a dbo:SpaceMission ; dbo:missionDuration ?d FILTER(?d > ?d0) }"),

    # ---------------- yes/no ----------------
    ("yesno-01", "yes/no", "did neil armstrong fly on apollo 11",
     "ASK { dbr:Apollo_11 dbo:crewMember dbr:Neil_Armstrong }"),
    ("yesno-02", "yes/no", "was buzz aldrin part of the apollo 13 crew?",
     "ASK { dbr:Apollo_13 dbo:crewMember dbr:Buzz_Aldrin }"),
    ("yesno-03", "yes/no", "is pluto a planet",
     "ASK { dbr:Pluto a dbo:Planet }"),
    ("yesno-04", "yes/no", "is the baikonur cosmodrome in russia?",
     "ASK { dbr:Baikonur_Cosmodrome dbo:country dbr:Russia }"),
    ("yesno-05", "yes/no", "was edwin aldrin born in 1930",
     "ASK { dbr:Edwin_Aldrin dbo:wikiPageRedirects ?a . ?a dbo:birthDate ?d FILTER(YEAR(?d) = 1930) }"),
    ("yesno-06", "yes/no", "is titan a moon of saturn?",
     "ASK { <http://dbpedia.org/resource/Titan_(moon)> a dbo:Moon ; dbp:satelliteOf dbr:Saturn }"),

    # ---------------- literal ----------------
    ("lit-01", "literal", "when was apollo 11 launched",
     "SELECT ?d WHERE { dbr:Apollo_11 dbo:launchDate ?d }"),
    ("lit-02", "literal", "how heavy is the iss?",
     "SELECT ?m WHERE { dbr:ISS dbo:wikiPageRedirects ?s . ?s dbo:mass ?m }"),
    ("lit-03", "literal", "what is the population of moscow",
     "SELECT ?v WHERE { dbr:Moscow dbo:populationTotal ?v }"),
    ("lit-04", "literal", "When was NASA founded?",
     "SELECT ?d WHERE { dbr:NASA dbo:foundingDate ?d }"),
    ("lit-05", "literal", "how tall is the saturn v",
     "SELECT ?h WHERE { dbr:Saturn_V dbo:height ?h }"),
    ("lit-06", "literal", "when was mangalyaan launched",
     "SELECT ?d WHERE { dbr:Mangalyaan dbo:wikiPageRedirects ?s . ?s dbo:launchDate ?d }"),

    # ---------------- negation ----------------
    ("neg-01", "negation", "which spacecraft sent to mars were not operated by nasa?",
     "SELECT DISTINCT ?s WHERE { ?s dbp:target dbr:Mars FILTER NOT EXISTS { ?s dbo:operator dbr:NASA } }"),
    ("neg-02", "negation", "which astronauts are not american",
     "SELECT DISTINCT ?p WHERE { ?p a dbo:Astronaut FILTER NOT EXISTS { ?p dbo:nationality dbr:United_States } }"),
    ("neg-03", "negation", "list the space agencies whose headquarters are not in moscow",
     "SELECT DISTINCT ?a WHERE { ?a a dbo:SpaceAgency FILTER NOT EXISTS { ?a dbo:headquarter dbr:Moscow } }"),
    ("neg-04", "negation", "which nasa missions did not launch from kennedy space center",
     "SELECT DISTINCT ?m WHERE { ?m a dbo:SpaceMission ; dbo:operator dbr:NASA FILTER NOT EXISTS { ?m dbo:launchSite dbr:Kennedy_Space_Center } }"),
    ("neg-05", "negation", "wich rockets were not built in the united states",
     "SELECT DISTINCT ?r WHERE { ?r a dbo:Rocket FILTER NOT EXISTS { ?r dbo:country dbr:United_States } }"),
    ("neg-06", "negation", "which soviet cosmonauts are still alive?",
     "SELECT DISTINCT ?p WHERE { ?p a dbo:Astronaut ; dbo:nationality dbr:Soviet_Union FILTER NOT EXISTS { ?p dbo:deathDate ?d } }"),

    # ---------------- union ----------------
    ("union-01", "union", "who flew on apollo 11 or apollo 13",
     "SELECT DISTINCT ?p WHERE { { dbr:Apollo_11 dbo:crewMember ?p } UNION { dbr:Apollo_13 dbo:crewMember ?p } }"),
    ("union-02", "union", "list the moons of mars or jupiter",
     "SELECT DISTINCT ?m WHERE { ?m a dbo:Moon . { ?m dbp:satelliteOf dbr:Mars } UNION { ?m dbp:satelliteOf dbr:Jupiter } }"),
    ("union-03", "union", "which missions launched from baikonur or jiuquan?",
     "SELECT DISTINCT ?m WHERE { ?m a dbo:SpaceMission . { ?m dbo:launchSite dbr:Baikonur_Cosmodrome } UNION { ?m dbo:launchSite dbr:Jiuquan_Satellite_Launch_Center } }"),
    ("union-04", "union", "which astronauts were born either in ohio or somewhere in italy",
     "SELECT DISTINCT ?p WHERE { ?p a dbo:Astronaut ; dbo:birthPlace ?b . { ?b dbo:isPartOf dbr:Ohio } UNION { ?b dbo:country dbr:Italy } }"),
    ("union-05", "union", "rockets from china or the ussr",
     "SELECT DISTINCT ?r WHERE { ?r a dbo:Rocket . { ?r dbo:country dbr:China } UNION { dbr:USSR dbo:wikiPageRedirects ?su . ?r dbo:country ?su } }"),
    ("union-06", "union", "give me the astronauts of esa or cnsa",
     "SELECT DISTINCT ?p WHERE { ?p a dbo:Astronaut . { ?p dbo:employer dbr:European_Space_Agency } UNION { ?p dbo:employer dbr:China_National_Space_Administration } }"),

    # ---------------- class-list ----------------
    ("class-01", "class-list", "list all space agencies",
     "SELECT DISTINCT ?a WHERE { ?a a dbo:SpaceAgency }"),
    ("class-02", "class-list", "give me all astronuats born in ohio",
     "SELECT DISTINCT ?p WHERE { ?p a dbo:Astronaut ; dbo:birthPlace ?b . ?b dbo:isPartOf dbr:Ohio }"),
    ("class-03", "class-list", "list all rockets",
     "SELECT DISTINCT ?r WHERE { ?r a dbo:Rocket }"),
    ("class-04", "class-list", "give me all female astronauts",
     "SELECT DISTINCT ?p WHERE { ?p a dbo:Astronaut ; foaf:gender \"female\"@en }"),
    ("class-05", "class-list", "list all launch sites in the united states",
     "SELECT DISTINCT ?s WHERE { ?s a dbo:LaunchPad ; dbo:country dbr:United_States }"),
    ("class-06", "class-list", "show me all the moons",
     "SELECT DISTINCT ?m WHERE { ?m a dbo:Moon }"),

    # ---------------- unanswerable ----------------
    ("unans-01", "unanswerable", "who was the first person to walk on mars",
     "SELECT DISTINCT ?p WHERE { ?m dbp:target dbr:Mars ; dbo:crewMember ?p }"),
    ("unans-02", "unanswerable", "what is nasa's annual budget?",
     "SELECT ?b WHERE { dbr:NASA dbo:budget ?b }"),
    ("unans-03", "unanswerable", "what is the capital of kazakhstan",
     "SELECT ?c WHERE { dbr:Kazakhstan dbo:capital ?c }"),
    ("unans-04", "unanswerable", "where was valentina tereshkova born?",
     "SELECT ?p WHERE { dbr:Valentina_Tereshkova dbo:birthPlace ?p }"),
    ("unans-05", "unanswerable", "what is the radius of deimos",
     "SELECT ?r WHERE { <http://dbpedia.org/resource/Deimos_(moon)> dbo:meanRadius ?r }"),
    ("unans-06", "unanswerable", "when did the space shuttle make its last flight",
     "SELECT ?d WHERE { dbr:Space_Shuttle dbo:finalFlight ?d }"),
]

INT_TYPES = {XSD.integer, XSD.nonNegativeInteger, XSD.positiveInteger, XSD.int, XSD.long}


def en_label(g, node):
    labels = [o for o in g.objects(node, RDFS.label) if isinstance(o, Literal) and o.language == "en"]
    if not labels:
        raise SystemExit(f"no English label for {node}")
    return str(labels[0])


def to_answer(g, term):
    if isinstance(term, URIRef):
        return en_label(g, term)
    if isinstance(term, Literal):
        dt = term.datatype
        if dt == XSD.date:
            return str(term)
        if dt in INT_TYPES:
            return int(str(term))
        if dt is not None and (dt in (XSD.double, XSD.float, XSD.decimal) or "dbpedia.org/datatype" in str(dt)):
            v = float(str(term))
            return v
        return str(term)
    raise SystemExit(f"unexpected term {term!r}")


def main():
    g = rdflib.Graph()
    g.parse(HERE / "kg.ttl", format="turtle")
    rows, errors = [], []
    for qid, shape, question, body in Q:
        sparql = PREFIXES + body
        res = g.query(sparql)
        if res.type == "ASK":
            answers = [bool(res.askAnswer)]
        else:
            vals = [to_answer(g, r[0]) for r in res if r[0] is not None]
            # de-duplicate, stable sort (strings alphabetically, numbers numerically)
            uniq = []
            for v in vals:
                if v not in uniq:
                    uniq.append(v)
            answers = sorted(uniq, key=lambda v: (isinstance(v, str), v))
        if shape == "unanswerable" and answers:
            errors.append(f"{qid}: unanswerable but got {answers}")
        if shape != "unanswerable" and not answers:
            errors.append(f"{qid}: empty gold")
        rows.append({"id": qid, "question": question, "answers": answers,
                     "sparql": sparql, "tags": {"shape": shape}})
        print(f"{qid:10s} {question!r:75s} -> {answers}")
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "duplicate ids"
    if errors:
        print("\n".join(errors), file=sys.stderr)
        raise SystemExit(1)
    with open(HERE / "questions.jsonl", "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"\n{len(g)} triples, {len(rows)} questions written to questions.jsonl")


if __name__ == "__main__":
    main()
