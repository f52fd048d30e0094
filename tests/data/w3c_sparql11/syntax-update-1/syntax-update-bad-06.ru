# Missing template
INSERT WHERE { ?s ?p ?o }
