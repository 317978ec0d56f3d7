-- Date and time functions.
-- inputs: people
SELECT id,
       to_timestamp(born) AS born,
       date_part('year', to_timestamp(born)) AS year,
       date_trunc('month', to_timestamp(born)) AS month
FROM people
WHERE id IN (2, 4)
-- expected
{"id":2,"born":"1912-06-23T04:30:00","year":1912,"month":"1912-06-01T00:00:00"}
{"id":4,"born":"1930-05-11T23:59:59","year":1930,"month":"1930-05-01T00:00:00"}
