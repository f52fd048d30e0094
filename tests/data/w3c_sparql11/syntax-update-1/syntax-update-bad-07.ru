# No separator
CREATE GRAPH <g>
LOAD <remote> INTO GRAPH <g>
