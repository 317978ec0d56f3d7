-- count_char, Sluice's built-in (Nexmark q14's UDF): occurrences of the first character of the
-- second argument; a NULL string counts 0.
-- inputs: people
SELECT id,
       count_char(name, 'a') AS a_count,
       count_char(lower(name), 'l') AS l_count,
       count_char(city, 'o') AS o_in_city
FROM people
-- expected
{"id":1,"a_count":2,"l_count":2,"o_in_city":2}
{"id":2,"a_count":1,"l_count":1,"o_in_city":2}
{"id":3,"a_count":1,"l_count":0,"o_in_city":1}
{"id":4,"a_count":1,"l_count":0,"o_in_city":1}
{"id":5,"a_count":3,"l_count":1,"o_in_city":0}
