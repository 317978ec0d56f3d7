-- Nexmark q13, bounded side input join: each bid with the side table's row for its auction
-- (side_input: key BIGINT, value STRING, declared under the transform's `tables:`).
-- Flink joins FOR SYSTEM_TIME AS OF the bid's processing time; the table never changes here,
-- so the plain join gives the same rows.
SELECT B.auction, B.bidder, B.price, B.dateTime, S.value
FROM bid B JOIN side_input S ON B.auction % 10000 = S.key
