# Variable in data.
INSERT DATA { GRAPH ?g {<s> <p> <o> } }
