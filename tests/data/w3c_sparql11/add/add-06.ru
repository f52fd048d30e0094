PREFIX : <http://example.org/>
ADD SILENT :g4 TO :g1