MOVE SILENT GRAPH <http://www.example.com/g1> TO DEFAULT
