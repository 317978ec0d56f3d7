-- Nexmark q22, get URL directories: the url's 4th to 6th '/'-separated parts.
-- Flink's SPLIT_INDEX(url, '/', 3) is 0-based and NULL past the end; split_part is 1-based and
-- gives '' there, hence NULLIF. (An empty part inside the url would be '' in Flink and NULL
-- here; the generator's urls have none.)
SELECT auction, bidder, price, channel,
       NULLIF(split_part(url, '/', 4), '') AS dir1,
       NULLIF(split_part(url, '/', 5), '') AS dir2,
       NULLIF(split_part(url, '/', 6), '') AS dir3
FROM bid
