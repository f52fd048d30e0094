LOAD <http://example.org/faraway> ;
