-- Nexmark q0, pass-through: every bid, as it came.
SELECT auction, bidder, price, dateTime, extra FROM bid
