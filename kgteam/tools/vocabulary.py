"""Public schema vocabularies a KG may carry inside its data: what is schema, not instance.

A KG built by others often ships its own schema beside its facts: RDFS/OWL class and property
declarations, Wikibase's property entities (the relation ``wdt:P36`` is named on ``wd:P36`` through
``wikibase:directClaim``), DBpedia's wiki-page redirects and disambiguation pages. These IRIs are
W3C and Wikibase/DBpedia *ontology* terms, the way ``rdfs:label`` is: they say how a KG describes
itself, never what any question is about. Reading them as data answers "which city is largest"
with an ontology class, or follows a redirect as a relation; reading them as schema gives the
relation names, the class words and the aliases a question needs.
"""

from __future__ import annotations

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
WIKIBASE = "http://wikiba.se/ontology#"
DBO = "http://dbpedia.org/ontology/"

RDF_TYPE = RDF + "type"
RDFS_SUBCLASS_OF = RDFS + "subClassOf"

# A declaring node names a predicate it declares: ``wd:P36 wikibase:directClaim wdt:P36`` (the
# property entity carries the label "capital"; the direct, statement and qualifier forms do not).
DECLARING_PREDICATES: tuple[str, ...] = tuple(WIKIBASE + local for local in (
    "directClaim", "claim", "statementProperty", "statementValue", "qualifier", "qualifierValue",
    "reference", "referenceValue", "directClaimNormalized", "statementValueNormalized",
    "qualifierValueNormalized", "referenceValueNormalized", "novalue"))

# Predicates of the schema: never a relation a question walks between two instances.
SCHEMA_PREDICATES: frozenset[str] = frozenset({
    RDFS_SUBCLASS_OF, RDFS + "subPropertyOf", RDFS + "domain", RDFS + "range", RDFS + "isDefinedBy",
    RDFS + "seeAlso", OWL + "equivalentClass", OWL + "equivalentProperty", OWL + "inverseOf",
    OWL + "disjointWith", OWL + "versionInfo", OWL + "imports", OWL + "onProperty",
    WIKIBASE + "propertyType", WIKIBASE + "wikiGroup", WIKIBASE + "rank", WIKIBASE + "sitelinks",
    WIKIBASE + "statements", WIKIBASE + "identifiers", WIKIBASE + "timePrecision",
    WIKIBASE + "timeTimezone", WIKIBASE + "timeCalendarModel", WIKIBASE + "timeValue",
    *DECLARING_PREDICATES,
    DBO + "wikiPageRedirects", DBO + "wikiPageDisambiguates", DBO + "wikiPageID",
    DBO + "wikiPageRevisionID", DBO + "wikiPageLength", DBO + "wikiPageWikiLink",
    DBO + "wikiPageExternalLink", DBO + "wikiPageOutDegree",
})

# Types whose instances are properties or classes: schema nodes.
PROPERTY_TYPES: frozenset[str] = frozenset({
    RDF + "Property", OWL + "ObjectProperty", OWL + "DatatypeProperty", OWL + "AnnotationProperty",
    OWL + "FunctionalProperty", OWL + "InverseFunctionalProperty", OWL + "TransitiveProperty",
    OWL + "SymmetricProperty", WIKIBASE + "Property"})
CLASS_TYPES: frozenset[str] = frozenset({OWL + "Class", RDFS + "Class"})

# ``dbr:Edwin_Aldrin dbo:wikiPageRedirects dbr:Buzz_Aldrin``: the source is another name of the target.
REDIRECT_PREDICATES: tuple[str, ...] = (DBO + "wikiPageRedirects",)
# ``dbr:Mercury_(disambiguation) dbo:wikiPageDisambiguates dbr:Mercury_(planet)``: a list page, never an answer.
DISAMBIGUATION_PREDICATES: tuple[str, ...] = (DBO + "wikiPageDisambiguates",)

# What a KG calls its own typing predicates when it has some besides rdf:type (Wikidata's P31 and
# P279 are named so on their property entities). Only these exact names: a relation a user's KG
# calls "type" or "kind" relates a thing to a value, and walking it must stay possible.
TYPE_NAMES: frozenset[str] = frozenset({"instance of"})
SUBCLASS_NAMES: frozenset[str] = frozenset({"subclass of"})
