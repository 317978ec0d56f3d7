-- String and regular-expression functions.
-- inputs: people
SELECT id,
       concat(split_part(name, ' ', 2), ', ', split_part(name, ' ', 1)) AS sortable,
       length(name) AS len,
       regexp_replace(name, '[aeiou]', '*', 'g') AS masked,
       regexp_like(name, '^[A-E]') AS early
FROM people
WHERE id <= 2 OR id = 4
-- expected
{"id":1,"sortable":"Lovelace, Ada","len":12,"masked":"Ad* L*v*l*c*","early":true}
{"id":2,"sortable":"Turing, Alan","len":11,"masked":"Al*n T*r*ng","early":true}
{"id":4,"sortable":"Dijkstra, Edsger","len":15,"masked":"Edsg*r D*jkstr*","early":true}
