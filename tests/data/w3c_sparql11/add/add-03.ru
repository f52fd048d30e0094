PREFIX : <http://example.org/>
ADD :g1 TO :g2