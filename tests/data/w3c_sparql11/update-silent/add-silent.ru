ADD SILENT GRAPH <http://www.example.com/g1> TO GRAPH <http://www.example.com/g2>
