-- Date and time functions.
-- inputs: people
SELECT id,
       to_timestamp(born) AS born,
       date_part('year', to_timestamp(born)) AS year,
       date_trunc('month', to_timestamp(born)) AS month
FROM people
WHERE id IN (2, 4)
-- expected
