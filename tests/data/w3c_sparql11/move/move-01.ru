PREFIX : <http://example.org/>
MOVE DEFAULT TO :g1