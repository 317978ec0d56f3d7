-- WHERE with OR and NULLs, computed columns, CAST, CASE, a string function.
-- inputs: people
SELECT id,
       upper(name) AS name,
       CAST(score AS INT) AS score_int,
       CASE WHEN score >= 90 THEN 'A' WHEN score >= 80 THEN 'B' ELSE 'C' END AS grade
FROM people
WHERE city = 'London' OR score > 90
-- expected
{"id":1,"name":"ADA LOVELACE","score_int":91,"grade":"A"}
{"id":2,"name":"ALAN TURING","score_int":88,"grade":"B"}
{"id":5,"name":"BARBARA LISKOV","score_int":95,"grade":"A"}
