# Variable in data.
DELETE DATA { ?s <p> <o> }
