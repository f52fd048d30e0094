PREFIX : <http://example.org/>
COPY :g1 TO DEFAULT