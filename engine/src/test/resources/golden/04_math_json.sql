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
