-- Nexmark q1, currency conversion: bid prices in euros.
-- DataFusion reads 0.908 as a DOUBLE (Flink: DECIMAL(4,3)); the parity check compares
-- numbers at a fixed scale.
SELECT auction, bidder, 0.908 * price AS price, dateTime, extra FROM bid
