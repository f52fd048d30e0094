PREFIX : <http://example.org/>
ADD :g1 TO DEFAULT