PREFIX     : <http://example.org/> 

CLEAR NAMED
