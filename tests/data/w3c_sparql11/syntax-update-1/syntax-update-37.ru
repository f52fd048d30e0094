CREATE GRAPH <g> ;
LOAD <remote> INTO GRAPH <g> ;
