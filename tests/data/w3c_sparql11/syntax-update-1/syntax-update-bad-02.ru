# Typo in keyword.
CREATE DEAFULT
