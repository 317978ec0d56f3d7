-- Nexmark q14, calculation: a bid's time of day and the 'c's in its extra field, for mid-range
-- prices. HOUR(dateTime) is date_part('hour', ...) here; count_char is Sluice's built-in.
SELECT auction, bidder, 0.908 * price AS price,
       CASE
           WHEN date_part('hour', dateTime) >= 8 AND date_part('hour', dateTime) <= 18 THEN 'dayTime'
           WHEN date_part('hour', dateTime) <= 6 OR date_part('hour', dateTime) >= 20 THEN 'nightTime'
           ELSE 'otherTime'
       END AS bidTimeType,
       dateTime, extra, count_char(extra, 'c') AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000
