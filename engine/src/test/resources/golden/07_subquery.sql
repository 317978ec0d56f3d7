-- A derived table and an IN list: subqueries that stay stateless.
-- inputs: people
SELECT id, name
FROM (SELECT id, name, score FROM people WHERE score IS NOT NULL) AS scored
WHERE score > 85 AND id IN (1, 2, 4, 5)
-- expected
{"id":1,"name":"Ada Lovelace"}
{"id":2,"name":"Alan Turing"}
{"id":5,"name":"Barbara Liskov"}
