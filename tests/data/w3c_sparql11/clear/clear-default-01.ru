PREFIX     : <http://example.org/> 

CLEAR DEFAULT

