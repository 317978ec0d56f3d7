-- UNNEST of a list column: one row per element, none for an empty or NULL list.
-- inputs: people
SELECT id, UNNEST(tags) AS tag FROM people WHERE id <= 4
-- expected
{"id":1,"tag":"math"}
{"id":1,"tag":"poetry"}
{"id":2,"tag":"math"}
{"id":4,"tag":"graphs"}
{"id":4,"tag":"math"}
{"id":4,"tag":"essays"}
