-- Nexmark q2, selection: bids on a few auctions (Flink: MOD(auction, 123) = 0).
SELECT auction, price FROM bid WHERE auction % 123 = 0
