"""Storage and services behind the tools: Oxigraph, SPARQL endpoints, tantivy, Elasticsearch."""
