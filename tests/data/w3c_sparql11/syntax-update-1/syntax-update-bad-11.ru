# BNode in DELETE template
DELETE { <s> <p> [] } WHERE { ?x <p> <o> }
