-- Math functions and JSON access (datafusion-functions-json), with NULLs and bad JSON.
-- inputs: people
SELECT id,
       abs(score - 90) AS dist,
       power(id, 2) AS sq,
       json_get_str(doc, 'lang') AS lang,
       json_get_int(doc, 'level') AS level,
       doc->>'lang' AS lang_op
FROM people
-- expected
{"id":1,"dist":1.5,"sq":1.0,"lang":"en","level":3,"lang_op":"en"}
{"id":2,"dist":1.75,"sq":4.0,"lang":"en","level":5,"lang_op":"en"}
{"id":3,"dist":null,"sq":9.0,"lang":"cobol","level":null,"lang_op":"cobol"}
{"id":4,"dist":11.0,"sq":16.0,"lang":null,"level":null,"lang_op":null}
{"id":5,"dist":5.0,"sq":25.0,"lang":null,"level":null,"lang_op":null}
