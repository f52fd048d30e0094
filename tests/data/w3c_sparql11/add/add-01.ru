PREFIX : <http://example.org/>
ADD DEFAULT TO :g1