PREFIX     : <http://example.org/> 

DELETE
 { _:a :p 12 .
   _:a :q _:b .
 }
WHERE {}