-- Nexmark q21, add channel id: the channel's id from a fixed list, else from the url.
-- Flink's REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) is regexp_match(...)[2] here: the
-- second group of the first match, NULL when nothing matches.
SELECT auction, bidder, price, channel,
       CASE
           WHEN lower(channel) = 'apple' THEN '0'
           WHEN lower(channel) = 'google' THEN '1'
           WHEN lower(channel) = 'facebook' THEN '2'
           WHEN lower(channel) = 'baidu' THEN '3'
           ELSE regexp_match(url, '(&|^)channel_id=([^&]*)')[2]
       END AS channel_id
FROM bid
WHERE regexp_match(url, '(&|^)channel_id=([^&]*)')[2] IS NOT NULL
   OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')
