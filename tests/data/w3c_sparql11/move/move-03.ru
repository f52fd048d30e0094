PREFIX : <http://example.org/>
MOVE :g1 TO :g2