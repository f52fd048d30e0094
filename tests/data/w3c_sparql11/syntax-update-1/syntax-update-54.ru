PREFIX : <http://www.example.org/>

INSERT DATA { _:b1 :p :o }
;
INSERT DATA { _:b1 :p :o } 
